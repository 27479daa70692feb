// The Communicator a context owns: the one it was made with (MPI), else one made on first use for
// its one-process mesh (the automatic transport: comm/transport_choice.hpp over a CUDA context's
// devices, the threads transport over CPU devices), or the one use_transport() asked for.
#include <algorithm>
#include <cstdlib>
#include <thread>

#include "comm/threads_transport.hpp"
#include "core/context_state.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#if defined(RXM_HAS_CUDA)
#include "comm/transport_choice.hpp"
#endif

namespace radixmesh {

namespace {

// RXM_TRANSPORT, when set, replaces `automatic`.
comm::Transport resolve(comm::Transport t) {
  if (t != comm::Transport::automatic) return t;
  const char* forced = std::getenv("RXM_TRANSPORT");
  return forced && *forced ? comm::transport_from_name(forced) : t;
}

std::shared_ptr<comm::Communicator> make_transport(const Context& ctx, comm::Transport t) {
#if defined(RXM_HAS_CUDA)
  if (ctx.backend() == Backend::cuda) return comm::make_gpu_transport(ctx, t);
#endif
  if (t != comm::Transport::automatic && t != comm::Transport::threads)
    throw_error(ErrorCode::unsupported,
                std::string("the ") + comm::name_of(t) + " transport moves GPU memory, and this context's devices are "
                                                          "CPU devices",
                "use auto or threads on a CPU mesh (Context::cpu_mesh), or Context::mpi for MPI ranks");
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return std::make_shared<comm::ThreadsTransport>(ctx.state().mesh.size, threads);
}

}  // namespace

comm::Communicator& communicator(const Context& ctx) {
  detail::MeshState& mesh = ctx.state().mesh;
  if (!mesh.communicator) mesh.communicator = make_transport(ctx, resolve(comm::Transport::automatic));
  return *mesh.communicator;
}

comm::Communicator& use_transport(const Context& ctx, comm::Transport t) {
  detail::MeshState& mesh = ctx.state().mesh;
  if (mesh.local.count != mesh.size) {  // MPI: the transport was fixed when the context was made
    comm::Communicator& made = *mesh.communicator;
    require(t == comm::Transport::automatic || t == made.transport(),
            std::string("use_transport: an MPI context keeps its ") + comm::name_of(made.transport()) +
                " transport; " + comm::name_of(t) + " was asked for",
            "use auto on MPI contexts");
    return made;
  }
  mesh.communicator = make_transport(ctx, resolve(t));
  return *mesh.communicator;
}

}  // namespace radixmesh
