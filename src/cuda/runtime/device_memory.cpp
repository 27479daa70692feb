#include <cuda_runtime_api.h>

#include <string>

#include "core/byte_size.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

namespace detail {

CudaResources::~CudaResources() {
  for (auto& d : devices) {
    cudaSetDevice(d.device);
    // The stream's queued frees land first; destroying the pool then gives its memory back.
    if (d.stream) {
      cudaStreamSynchronize(d.stream);
      cudaStreamDestroy(d.stream);
    }
    if (d.scratch_pool) cudaMemPoolDestroy(d.scratch_pool);
  }
}

CudaResources::PerDevice& CudaResources::of_device(int device) {
  for (auto& d : devices)
    if (d.device == device) return d;
  throw_error(ErrorCode::internal, "device " + std::to_string(device) + " has no stream in this context",
              "report this as a bug: the call should have checked the device against the context");
}

const CudaResources::PerDevice& context_device(const Context& ctx, int device, const std::string& what) {
  for (const auto& d : cuda_resources(ctx).devices)
    if (d.device == device) return d;
  std::string used;
  for (const auto& d : cuda_resources(ctx).devices) used += (used.empty() ? "" : ", ") + std::to_string(d.device);
  throw_error(ErrorCode::invalid_argument,
              what + " on CUDA device " + std::to_string(device) + ", which this context does not use (it uses " +
                  used + ")",
              "make the context with that device, or move the data to one of the context's devices");
}

std::shared_ptr<CudaResources> make_cuda_resources(const Topology& topology) {
  auto r = std::make_shared<CudaResources>();
  for (const auto& info : topology.devices) {
    DeviceGuard guard(info.id);
    CudaResources::PerDevice& d = r->devices.emplace_back();  // pushed first: the destructor cleans up on a throw
    d.device = info.id;
    RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamDefault));  // blocking: cuda_resources.hpp
    d.scratch_pool = make_scratch_pool(info.id, info.total_memory);
  }
  enable_peer_access(topology);
  // Peer access does not reach memory-pool allocations: each pool grants it to the context's
  // other GPUs that have it, so the mesh's kernels (peer-sm, the channel) can store into scratch
  // buffers of another GPU.
  for (std::size_t i = 0; i < topology.devices.size(); ++i)
    for (std::size_t j = 0; j < topology.devices.size(); ++j) {
      const auto& pool_owner = r->devices[j];
      const int reader = topology.devices[i].id;
      if (reader == pool_owner.device || !pool_owner.scratch_pool || !topology.peers[i][j].access) continue;
      cudaMemAccessDesc access{};
      access.location.type = cudaMemLocationTypeDevice;
      access.location.id = reader;
      access.flags = cudaMemAccessFlagsProtReadWrite;
      RXM_CUDA_CHECK(cudaMemPoolSetAccess(pool_owner.scratch_pool, &access, 1));
    }
  return r;
}

void enable_peer_access(const Topology& topology) {
  for (std::size_t i = 0; i < topology.devices.size(); ++i)
    for (std::size_t j = 0; j < topology.devices.size(); ++j) {
      const int from = topology.devices[i].id, to = topology.devices[j].id;
      if (from == to || !topology.peers[i][j].access) continue;
      DeviceGuard guard(from);
      const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // enabled by an earlier context: not an error
        continue;
      }
      RXM_CUDA_CHECK(status);
    }
}

void throw_device_allocation_failure(int device, std::size_t bytes) {
  cudaGetLastError();  // an allocation failure is not sticky; clear it so later calls start clean
  std::size_t free_bytes = 0, total_bytes = 0;
  {
    DeviceGuard guard(device);
    cudaMemGetInfo(&free_bytes, &total_bytes);
  }
  throw_error(ErrorCode::out_of_memory,
              "device " + std::to_string(device) + " could not allocate " + detail::format_bytes(bytes) + ": only " +
                  detail::format_bytes(free_bytes) + " of " + detail::format_bytes(total_bytes) + " is free",
              "use a smaller input, free device memory, or spread the work over more GPUs");
}

CudaResources& cuda_resources(const Context& ctx) {
  if (ctx.backend() != Backend::cuda || !ctx.state().cuda)
    throw_error(ErrorCode::invalid_argument, "a CUDA operation was given a CPU context",
                "make the context with Context::local() on a machine with a GPU");
  return *ctx.state().cuda;
}

DeviceGuard::DeviceGuard(int device) {
  RXM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) RXM_CUDA_CHECK(cudaSetDevice(device));
}
DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

int device_of_pointer(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged ? attributes.device : -1;
}

}  // namespace detail

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  detail::DeviceGuard guard(device);
  cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status == cudaErrorMemoryAllocation) {
    ptr_ = nullptr;
    detail::throw_device_allocation_failure(device, bytes);
  }
  RXM_CUDA_CHECK(status);
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_) return;
  int previous = -1;  // no DeviceGuard here: a destructor must not throw
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaFree(ptr_);
  if (previous >= 0) cudaSetDevice(previous);
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  cudaError_t status = cudaMallocHost(&ptr_, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw_error(ErrorCode::out_of_memory, "could not pin " + detail::format_bytes(bytes) + " of host memory (" +
                                              cudaGetErrorString(status) + ")",
                "use a smaller input or a machine with more memory");
  }
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}

}  // namespace radixmesh
