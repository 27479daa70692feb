// Per-device resources a CUDA context owns: one stream per device, one stream-ordered memory pool
// per device for the scratch of host-level calls (scratch.hpp), device made current by DeviceGuard
// for the span of a call.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/context_state.hpp"
#include "radixmesh/context.hpp"

namespace radixmesh::detail {

struct CudaResources {
  struct PerDevice {
    int device = -1;
    // A blocking stream (cudaStreamDefault flags): a host-level call on device spans starts after
    // the work queued before it on the legacy default stream and on the caller's blocking streams
    // (a kernel that wrote the keys, a pageable cudaMemcpy whose DMA is still landing), as CUDA
    // libraries called without a stream do. The mesh's side streams stay non-blocking and are
    // ordered after this one by events.
    cudaStream_t stream = nullptr;
    // Where ScratchBuffer takes its memory (cudaMallocFromPoolAsync on `stream`); null where the
    // device has no memory pools, and ScratchBuffer then falls back to cudaMalloc/cudaFree.
    cudaMemPool_t scratch_pool = nullptr;
  };
  std::vector<PerDevice> devices;  // same order as Topology::devices
  // The entry of CUDA ordinal `device`; throws (internal) if the context does not use it.
  RXM_API PerDevice& of_device(int device);
  ~CudaResources();
};

// Enables peer access from every GPU of `topology` to every other that allows it (pairs without
// it keep topology.peers[i][j].access false: copies between them go through host memory). Called
// when a context is made; enabling is per process and stays on.
void enable_peer_access(const Topology& topology);

// The resources of a CUDA context; throws if the context is on the CPU backend. Exported, with
// CudaResources::of_device and ScratchBuffer, for tests/gpu/test_gpu_scratch.cu alone, which
// checks the pool's own out-of-memory error (no public call reaches it: rxm::sort checks the free
// memory first).
RXM_API CudaResources& cuda_resources(const Context& ctx);

// The context's entry for CUDA ordinal `device` (the first, where logical devices share it);
// throws invalid_argument naming `what`, the device and the context's devices when the context
// does not use it. A copy with `stream` set to the caller's stream queues a call's work and its
// ScratchBuffers there (the C API's stream-ordered calls).
const CudaResources::PerDevice& context_device(const Context& ctx, int device, const std::string& what);

// Makes `device` current and restores the previous one on scope exit.
class RXM_API DeviceGuard {  // exported for the GPU tests and mesh benchmarks
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Throws Error(out_of_memory): `device` could not allocate `bytes`, naming how much is free. For
// DeviceBuffer and ScratchBuffer, after an allocation failed.
[[noreturn]] void throw_device_allocation_failure(int device, std::size_t bytes);

// Which device owns `ptr`: its ordinal, or -1 for host memory (pageable or pinned).
int device_of_pointer(const void* ptr);

}  // namespace radixmesh::detail
