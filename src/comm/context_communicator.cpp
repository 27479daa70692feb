// The Communicator a context owns: the one it was made with (MPI), else one made on first use for
// its one-process mesh: the peer transport over a CUDA context's devices (their streams), the
// threads transport over CPU devices.
#include <algorithm>
#include <thread>

#include "comm/threads_transport.hpp"
#include "radixmesh/communicator.hpp"
#include "core/context_state.hpp"
#if defined(RXM_HAS_CUDA)
#include "comm/peer_transport.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#endif

namespace radixmesh {

comm::Communicator& communicator(const Context& ctx) {
  detail::MeshState& mesh = ctx.state().mesh;
  if (mesh.communicator) return *mesh.communicator;
#if defined(RXM_HAS_CUDA)
  if (ctx.backend() == Backend::cuda) {
    std::vector<comm::PeerParticipant> participants;
    for (const auto& d : detail::cuda_resources(ctx).devices) participants.push_back({d.device, d.stream});
    mesh.communicator = std::make_shared<comm::PeerTransport>(std::move(participants));
    return *mesh.communicator;
  }
#endif
  mesh.communicator =
      std::make_shared<comm::ThreadsTransport>(mesh.size, std::max(1u, std::thread::hardware_concurrency()));
  return *mesh.communicator;
}

}  // namespace radixmesh
