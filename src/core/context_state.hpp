// The state behind a Context, shared by copies of it. Backends keep their own resources in the
// slots below, created on first use.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "radixmesh/context.hpp"

namespace radixmesh::detail {

struct CudaResources;  // src/cuda/runtime/cuda_resources.hpp
}  // namespace radixmesh::detail
namespace radixmesh::comm {
class Communicator;  // radixmesh/communicator.hpp
}
namespace radixmesh::detail {

// The mesh a context spans: participants, the ones this process drives, and the Communicator
// between them (made on first use for one-process meshes, at construction for MPI).
struct MeshState {
  int size = 1;
  int process_rank = 0;
  MeshDevices local;
  std::vector<Backend> backends = {Backend::cpu};  // per participant
  std::shared_ptr<comm::Communicator> communicator;
};

struct ContextState {
  Backend backend = Backend::cpu;
  Topology topology;  // devices in use, in the order the caller gave
  unsigned cpu_threads = 1;
  std::string cpu_fallback_reason;
  std::shared_ptr<CudaResources> cuda;  // streams per device; null on the CPU backend
  MeshState mesh;
  ~ContextState();
};


// Made by the CUDA backend (or the no-CUDA stub): streams for every device in `topology`.
std::shared_ptr<CudaResources> make_cuda_resources(const Topology& topology);

// The scratch pools' memory over all devices, and giving it back (src/cuda/runtime/scratch.cpp;
// called by Context only in a build with CUDA).
std::size_t cuda_scratch_bytes(const CudaResources& resources);
void release_cuda_scratch(const CudaResources& resources);

}  // namespace radixmesh::detail
