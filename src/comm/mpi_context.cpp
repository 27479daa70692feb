// Context::mpi: one mesh device per rank, the CPU backend, the MPI transport.
#include <algorithm>
#include <cstring>
#include <thread>

#include "comm/mpi_transport.hpp"
#include "core/context_state.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh {

Context Context::mpi_from_handle(const void* handle, std::size_t handle_bytes, Backend backend) {
  require(handle_bytes == sizeof(MPI_Comm), "Context::mpi: the MPI_Comm given has another size than radixmesh's MPI",
          "build your program with the MPI radixmesh was built with");
  if (backend == Backend::cuda)
    throw_error(ErrorCode::unsupported, "Context::mpi: GPU ranks (NCCL between them) are not built yet",
                "use Backend::cpu (or automatic) for CPU ranks");
  MPI_Comm comm;
  std::memcpy(&comm, handle, sizeof comm);
  auto transport = std::make_shared<comm::MpiTransport>(comm);

  // Ranks on one host share its hardware threads.
  MPI_Comm host;
  int ranks_on_host = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    MPI_Comm_size(host, &ranks_on_host);
    MPI_Comm_free(&host);
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency() / unsigned(std::max(1, ranks_on_host)));
  Context c = cpu(threads);
  c.state_->cpu_fallback_reason = "MPI ranks run the CPU backend";
  detail::MeshState& mesh = c.state_->mesh;
  mesh.size = transport->size();
  mesh.process_rank = transport->first_local();
  mesh.local = {transport->first_local(), 1};
  mesh.backends.assign(std::size_t(mesh.size), Backend::cpu);
  mesh.communicator = std::move(transport);
  return c;
}

}  // namespace radixmesh
