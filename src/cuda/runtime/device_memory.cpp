#include <cuda_runtime_api.h>

#include <string>

#include "core/byte_size.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

namespace detail {

CudaResources::~CudaResources() {
  for (auto& d : devices)
    if (d.stream) {
      cudaSetDevice(d.device);
      cudaStreamDestroy(d.stream);
    }
}

std::shared_ptr<CudaResources> make_cuda_resources(const Topology& topology) {
  auto r = std::make_shared<CudaResources>();
  for (const auto& info : topology.devices) {
    DeviceGuard guard(info.id);
    CudaResources::PerDevice d;
    d.device = info.id;
    RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    r->devices.push_back(d);
  }
  return r;
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
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    ptr_ = nullptr;
    throw_error(ErrorCode::out_of_memory,
                "device " + std::to_string(device) + " could not allocate " + detail::format_bytes(bytes) + ": only " +
                    detail::format_bytes(free_bytes) + " of " + detail::format_bytes(total_bytes) + " is free",
                "use a smaller input, free device memory, or spread the work over more GPUs");
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
