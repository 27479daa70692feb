#include "cuda/runtime/pinned_pool.hpp"

#include <cuda_runtime_api.h>

#include <bit>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace {

constexpr std::size_t smallest_block = 4096;

struct Pool {
  std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> free;  // by size class
};
Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: its blocks live until the process ends
  return *p;
}

}  // namespace

PooledPinned::PooledPinned(std::size_t bytes) {
  require(bytes <= pinned_pool_largest_block,
          "a pooled pinned block of " + std::to_string(bytes) + " bytes (at most " +
              std::to_string(pinned_pool_largest_block) + ")",
          "a bug in radixmesh: report it");
  bytes_ = std::bit_ceil(bytes < smallest_block ? smallest_block : bytes);
  {
    std::lock_guard lock(pool().mutex);
    auto& blocks = pool().free[bytes_];
    if (!blocks.empty()) {
      block_ = blocks.back();
      blocks.pop_back();
      return;
    }
  }
  const cudaError_t status = cudaMallocHost(&block_, bytes_);
  if (status != cudaSuccess) {
    cudaGetLastError();
    block_ = nullptr;
    throw_error(ErrorCode::out_of_memory, "could not pin " + std::to_string(bytes_) + " bytes of host memory (" +
                                              cudaGetErrorString(status) + ")",
                "free host memory, or raise the locked-memory limit (ulimit -l)");
  }
}

PooledPinned::~PooledPinned() {
  if (!block_) return;
  std::lock_guard lock(pool().mutex);
  pool().free[bytes_].push_back(block_);
}

PooledPinned& PooledPinned::operator=(PooledPinned&& o) noexcept {
  std::swap(block_, o.block_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

}  // namespace radixmesh::detail
