// Small page-locked host blocks, reused: a queued split's results (at most 8 + 4 (65536 + 1) bytes)
// come back into pinned memory so that queuing never blocks the host, but cudaMallocHost costs
// about 1 ms and cudaFreeHost synchronizes the device, which serialized the mesh's splits on
// distinct GPUs. Blocks come in power-of-two sizes from 4 KiB (a split of m buckets needs the size
// of its own results, so many queued splits of few buckets stay small); one goes back to the pool
// when its handle goes, and the pool keeps what it made until the process ends (the driver
// releases pinned memory then).
#pragma once
#include <cstddef>

namespace radixmesh::detail {

class PooledPinned {
 public:
  PooledPinned() = default;
  explicit PooledPinned(std::size_t bytes);  // at most pinned_pool_largest_block
  ~PooledPinned();
  PooledPinned(PooledPinned&& o) noexcept : block_(o.block_), bytes_(o.bytes_) { o.block_ = nullptr; }
  PooledPinned& operator=(PooledPinned&& o) noexcept;
  PooledPinned(const PooledPinned&) = delete;
  PooledPinned& operator=(const PooledPinned&) = delete;
  void* data() const { return block_; }

 private:
  void* block_ = nullptr;
  std::size_t bytes_ = 0;  // the block's size class
};

inline constexpr std::size_t pinned_pool_largest_block = std::size_t(1) << 19;  // 512 KiB

}  // namespace radixmesh::detail
