// The state behind a Context, shared by copies of it. Backends keep their own resources in the
// slots below, created on first use.
#pragma once
#include <memory>
#include <string>

#include "radixmesh/context.hpp"

namespace radixmesh::detail {

struct CudaResources;  // src/cuda/runtime/cuda_resources.hpp

struct ContextState {
  Backend backend = Backend::cpu;
  Topology topology;  // devices in use, in the order the caller gave
  unsigned cpu_threads = 1;
  std::string cpu_fallback_reason;
  std::shared_ptr<CudaResources> cuda;  // streams per device; null on the CPU backend
  ~ContextState();
};

// Made by the CUDA backend (or the no-CUDA stub): streams for every device in `topology`.
std::shared_ptr<CudaResources> make_cuda_resources(const Topology& topology);

}  // namespace radixmesh::detail
