// The context's per-device scratch pools (scratch.hpp) and Context's calls on them.
#include "cuda/runtime/scratch.hpp"

#include <cstdint>
#include <utility>

#include "core/context_state.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

cudaMemPool_t make_scratch_pool(int device, std::size_t total_memory) {
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess || !supported) {
    cudaGetLastError();
    return nullptr;
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  RXM_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = total_memory / scratch_keep_fraction;
  const cudaError_t status = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  if (status != cudaSuccess) {
    cudaMemPoolDestroy(pool);
    RXM_CUDA_CHECK(status);
  }
  return pool;
}

namespace {

// One attempt: the pool's memory (stream-ordered) or, without a pool, cudaMalloc.
cudaError_t try_allocate(void** ptr, std::size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  return pool ? cudaMallocFromPoolAsync(ptr, bytes, pool, stream) : cudaMalloc(ptr, bytes);
}

}  // namespace

ScratchBuffer::ScratchBuffer(const CudaResources::PerDevice& device, std::size_t bytes)
    : bytes_(bytes), device_(device.device), stream_(device.stream), pool_(device.scratch_pool) {
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  const std::size_t padded = bytes + alignment - 1;  // room to round the pointer up, whatever the pool gives
  cudaError_t status = try_allocate(&base_, padded, pool_, stream_);
  if (status != cudaSuccess && pool_) {
    // The pool's idle memory may be what is missing. And whatever limit the pool has, what
    // cudaMalloc would give must still be given: then from cudaMalloc (and freed with cudaFree).
    cudaGetLastError();
    release_scratch(device);
    status = try_allocate(&base_, padded, pool_, stream_);
    if (status != cudaSuccess) {
      cudaGetLastError();
      pool_ = nullptr;
      status = cudaMalloc(&base_, padded);
    }
  }
  if (status == cudaErrorMemoryAllocation) {
    base_ = nullptr;
    throw_device_allocation_failure(device_, bytes);
  }
  RXM_CUDA_CHECK(status);
  const auto address = reinterpret_cast<std::uintptr_t>(base_);
  aligned_ = reinterpret_cast<void*>((address + alignment - 1) / alignment * alignment);
}

ScratchBuffer::~ScratchBuffer() {
  if (!base_) return;
  int previous = -1;  // no DeviceGuard here: a destructor must not throw
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  if (pool_)
    cudaFreeAsync(base_, stream_);  // back to the pool once the stream's queued work that uses it is done
  else
    cudaFree(base_);
  if (previous >= 0) cudaSetDevice(previous);
}

void ScratchBuffer::swap(ScratchBuffer& o) noexcept {
  std::swap(base_, o.base_);
  std::swap(aligned_, o.aligned_);
  std::swap(bytes_, o.bytes_);
  std::swap(device_, o.device_);
  std::swap(stream_, o.stream_);
  std::swap(pool_, o.pool_);
}

void make_room_for_scratch(const CudaResources::PerDevice& device, std::size_t bytes) {
  if (!device.scratch_pool) return;
  DeviceGuard guard(device.device);
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes && scratch_reserved_bytes(device) > 0) release_scratch(device);
}

std::size_t scratch_reserved_bytes(const CudaResources::PerDevice& device) {
  if (!device.scratch_pool) return 0;
  std::uint64_t reserved = 0;
  RXM_CUDA_CHECK(cudaMemPoolGetAttribute(device.scratch_pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  return std::size_t(reserved);
}

std::size_t scratch_idle_bytes(const CudaResources::PerDevice& device) {
  if (!device.scratch_pool) return 0;
  std::uint64_t used = 0;
  RXM_CUDA_CHECK(cudaMemPoolGetAttribute(device.scratch_pool, cudaMemPoolAttrUsedMemCurrent, &used));
  const std::size_t reserved = scratch_reserved_bytes(device);
  return reserved > used ? reserved - std::size_t(used) : 0;
}

void release_scratch(const CudaResources::PerDevice& device) {
  if (!device.scratch_pool) return;
  DeviceGuard guard(device.device);
  // Memory freed with cudaFreeAsync goes back only once the stream has passed the free.
  RXM_CUDA_CHECK(cudaStreamSynchronize(device.stream));
  RXM_CUDA_CHECK(cudaMemPoolTrimTo(device.scratch_pool, 0));
}

std::size_t cuda_scratch_bytes(const CudaResources& resources) {
  std::size_t total = 0;
  for (const auto& d : resources.devices) total += scratch_reserved_bytes(d);
  return total;
}

void release_cuda_scratch(const CudaResources& resources) {
  for (const auto& d : resources.devices) release_scratch(d);
}

}  // namespace radixmesh::detail
