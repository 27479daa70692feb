// Scratch device memory of host-level calls (rxm::sort on device spans, rxm::multisplit), reused
// from call to call through a stream-ordered memory pool that the context keeps per device.
//
// Why: a host-level call that cudaMallocs its scratch (for a sort of 2^28 u32 keys, a 1 GiB
// double-buffer half plus the engine's temp) and cudaFrees it on return synchronizes the device
// in cudaFree. On the H200 that made rxm::sort(ctx, device_span) 7.40 ms against CUB SortKeys'
// 6.32 (0.85x; pairs 9.63 against 7.45, 0.77x; bench_sort_cuda --type u32) while the device-level
// entry with caller-provided temp ran at 1.00x CUB. A ScratchBuffer takes its memory with cudaMallocFromPoolAsync and gives
// it back with cudaFreeAsync, both on the context's stream for the device: once the pool holds
// the memory, a call in a loop pays a few microseconds for it instead of an allocation and a
// device synchronization. Measured with the pool (H200, bench_sort_cuda --type u32 --values 0|4 at
// 6812eb98de4b): u32 keys 5.944 ms against the device-level entry's 5.456, pairs 8.370 against
// 7.453.
//
// Footprint. The pool keeps what calls gave back up to a release threshold of a quarter of the
// device's memory (scratch_keep_fraction); above it the driver releases the rest at the next
// synchronization. Context::release_scratch() gives everything back at once, and destroying the
// context (its last copy) destroys the pools. A call that finds too little free device memory
// first gives the pool's idle memory back (make_room_for_scratch), so memory the pool holds never
// turns into a false out-of-memory error of our own calls; other code on the device sees the
// held memory as used until it is released.
//
// Ordering. The memory is valid on the context's stream for the device only: every use of a
// ScratchBuffer must be queued on that stream (no synchronous cudaMemcpy, which runs on the
// legacy stream), since the pool may hand out memory whose previous user is still queued ahead
// on the same stream. Kernels on other devices reach pool memory only where the pool grants them
// access: the context's pools grant it to its other GPUs with peer access (device_memory.cpp), which
// peer-sm, the channel and the mesh sort's merge rounds rely on.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// The pool's release threshold: it keeps up to total device memory / scratch_keep_fraction.
inline constexpr std::size_t scratch_keep_fraction = 4;

// A device's scratch pool (null where the device has no memory pools); made with the context.
cudaMemPool_t make_scratch_pool(int device, std::size_t total_memory);

// `bytes` of device memory from the pool of `device`, valid on device.stream from the point the
// constructor queued it until the destructor queues its release. Aligned to 256 bytes (what
// cudaMalloc gives, and what CUB and 16-byte vector loads assume). When the pool cannot give
// them even after releasing its idle memory, cudaMalloc is tried (freed with cudaFree then); when
// that fails too, throws Error(out_of_memory) naming the bytes asked for and the bytes free.
class RXM_API ScratchBuffer {  // exported for tests/gpu/test_gpu_scratch.cu (cuda_resources.hpp)
 public:
  static constexpr std::size_t alignment = 256;

  ScratchBuffer() = default;
  ScratchBuffer(const CudaResources::PerDevice& device, std::size_t bytes);
  ~ScratchBuffer();
  ScratchBuffer(ScratchBuffer&& o) noexcept { swap(o); }
  ScratchBuffer& operator=(ScratchBuffer&& o) noexcept {
    ScratchBuffer(std::move(o)).swap(*this);
    return *this;
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  void* data() const { return aligned_; }
  template <class T> T* as() const { return static_cast<T*>(aligned_); }
  std::size_t bytes() const { return bytes_; }
  void swap(ScratchBuffer& o) noexcept;

 private:
  void* base_ = nullptr;     // what the pool (or cudaMalloc) returned
  void* aligned_ = nullptr;  // base_ rounded up to `alignment`
  std::size_t bytes_ = 0;
  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
};

// Before a check of free device memory (require_device_memory): when the device's free memory
// alone is short of `bytes`, waits for the device's stream and gives the pool's idle memory back,
// so the check sees all the memory a call can get.
void make_room_for_scratch(const CudaResources::PerDevice& device, std::size_t bytes);

// Device memory the pool of `device` holds now (in use or kept for reuse).
std::size_t scratch_reserved_bytes(const CudaResources::PerDevice& device);
// The part of it kept for reuse, not in use: the pool hands it out again without asking the device.
std::size_t scratch_idle_bytes(const CudaResources::PerDevice& device);

// Waits for the device's stream and gives every byte the pool keeps back to the device.
void release_scratch(const CudaResources::PerDevice& device);

}  // namespace radixmesh::detail
