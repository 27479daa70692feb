// Stand-ins for the CUDA backend in a build without CUDA (RXM_ENABLE_CUDA=OFF).
#include "core/context_state.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

CudaDiscovery discover_cuda() {
  CudaDiscovery d;
  d.reason = "this build of radixmesh has no CUDA backend (configured with RXM_ENABLE_CUDA=OFF)";
  return d;
}

namespace detail {
struct CudaResources {};
std::shared_ptr<CudaResources> make_cuda_resources(const Topology&) { return nullptr; }
}  // namespace detail

namespace {
[[noreturn]] void no_cuda() {
  throw_error(ErrorCode::unsupported, "device memory was asked for in a build without CUDA",
              "rebuild with -DRXM_ENABLE_CUDA=ON on a machine with nvcc");
}
}  // namespace

DeviceBuffer::DeviceBuffer(int, std::size_t bytes) { if (bytes) no_cuda(); }
DeviceBuffer::~DeviceBuffer() = default;
PinnedBuffer::PinnedBuffer(std::size_t bytes) { if (bytes) no_cuda(); }
PinnedBuffer::~PinnedBuffer() = default;

}  // namespace radixmesh
