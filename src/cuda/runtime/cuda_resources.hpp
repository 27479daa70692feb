// Per-device resources a CUDA context owns: one stream per device, device made current by
// DeviceGuard for the span of a call.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "core/context_state.hpp"
#include "radixmesh/context.hpp"

namespace radixmesh::detail {

struct CudaResources {
  struct PerDevice {
    int device = -1;
    cudaStream_t stream = nullptr;
  };
  std::vector<PerDevice> devices;  // same order as Topology::devices
  ~CudaResources();
};

// The resources of a CUDA context; throws if the context is on the CPU backend.
CudaResources& cuda_resources(const Context& ctx);

// Makes `device` current and restores the previous one on scope exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Which device owns `ptr`: its ordinal, or -1 for host memory (pageable or pinned).
int device_of_pointer(const void* ptr);

}  // namespace radixmesh::detail
