#include "cuda/runtime/pinned_pool.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace {

struct Pool {
  std::mutex mutex;
  std::vector<void*> free;
};
Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: its blocks live until the process ends
  return *p;
}

}  // namespace

PooledPinned::PooledPinned(std::size_t bytes) {
  require(bytes <= pinned_pool_block_bytes,
          "a pooled pinned block of " + std::to_string(bytes) + " bytes (at most " +
              std::to_string(pinned_pool_block_bytes) + ")",
          "a bug in radixmesh: report it");
  {
    std::lock_guard lock(pool().mutex);
    if (!pool().free.empty()) {
      block_ = pool().free.back();
      pool().free.pop_back();
      return;
    }
  }
  const cudaError_t status = cudaMallocHost(&block_, pinned_pool_block_bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    block_ = nullptr;
    throw_error(ErrorCode::out_of_memory, std::string("could not pin 512 KiB of host memory (") +
                                              cudaGetErrorString(status) + ")",
                "free host memory, or raise the locked-memory limit (ulimit -l)");
  }
}

PooledPinned::~PooledPinned() {
  if (!block_) return;
  std::lock_guard lock(pool().mutex);
  pool().free.push_back(block_);
}

PooledPinned& PooledPinned::operator=(PooledPinned&& o) noexcept {
  std::swap(block_, o.block_);
  return *this;
}

}  // namespace radixmesh::detail
