#include <algorithm>
#include <thread>

#include "comm/threads_transport.hpp"
#include "core/context_state.hpp"

namespace radixmesh::detail {

comm::Communicator& communicator(const Context& ctx) {
  MeshState& mesh = ctx.state().mesh;
  if (!mesh.communicator)
    mesh.communicator = std::make_shared<comm::ThreadsTransport>(mesh.size, std::max(1u, std::thread::hardware_concurrency()));
  return *mesh.communicator;
}

}  // namespace radixmesh::detail
