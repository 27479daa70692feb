// Small page-locked host blocks, reused: a queued split's results (at most 8 + 4 (65536 + 1) bytes)
// come back into pinned memory so that queuing never blocks the host, but cudaMallocHost costs
// about 1 ms and cudaFreeHost synchronizes the device, which serialized the mesh's splits on
// distinct GPUs. A block goes back to the pool when its handle goes; the pool keeps what it made
// until the process ends (the driver releases pinned memory then).
#pragma once
#include <cstddef>

namespace radixmesh::detail {

class PooledPinned {
 public:
  PooledPinned() = default;
  explicit PooledPinned(std::size_t bytes);  // at most pinned_pool_block_bytes
  ~PooledPinned();
  PooledPinned(PooledPinned&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
  PooledPinned& operator=(PooledPinned&& o) noexcept;
  PooledPinned(const PooledPinned&) = delete;
  PooledPinned& operator=(const PooledPinned&) = delete;
  void* data() const { return block_; }

 private:
  void* block_ = nullptr;
};

inline constexpr std::size_t pinned_pool_block_bytes = std::size_t(1) << 19;  // 512 KiB

}  // namespace radixmesh::detail
