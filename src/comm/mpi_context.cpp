// Context::mpi: one mesh device per rank. GPU ranks (every rank has a GPU and NCCL loads) use the
// NCCL transport, with MPI as its control plane; CPU ranks use the MPI transport.
#include <algorithm>
#include <cstring>
#include <thread>

#include "comm/mpi_transport.hpp"
#if defined(RXM_HAS_NCCL)
#include "comm/nccl_library.hpp"
#include "comm/nccl_transport.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#endif
#include "core/context_state.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh {

namespace {

// Whether this rank can run a GPU mesh device: a GPU of its own (NCCL refuses two ranks on one
// GPU) and a loadable NCCL; why not, else.
std::string gpu_rank_problem([[maybe_unused]] int ranks_on_host) {
#if defined(RXM_HAS_NCCL)
  const CudaDiscovery cuda = discover_cuda();
  if (cuda.topology.devices.empty()) return cuda.reason;
  const int gpus = int(cuda.topology.devices.size());
  if (ranks_on_host > gpus)
    return std::to_string(ranks_on_host) + " ranks share this host's " + std::to_string(gpus) +
           " GPU(s), and NCCL needs one GPU per rank (run at most " + std::to_string(gpus) + " ranks per host)";
  try {
    (void)comm::nccl();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
#elif defined(RXM_HAS_CUDA)
  return "this build of radixmesh has no NCCL transport (RXM_ENABLE_NCCL=OFF)";
#else
  return "this build of radixmesh has no CUDA backend";
#endif
}

// The mesh of one device per rank that `transport` spans, every device on `backend`.
void one_device_per_rank(detail::MeshState& mesh, std::shared_ptr<comm::Communicator> transport, Backend backend) {
  mesh.size = transport->size();
  mesh.process_rank = transport->first_local();
  mesh.local = {transport->first_local(), 1};
  mesh.backends.assign(std::size_t(mesh.size), backend);
  mesh.communicator = std::move(transport);
}

// This rank's index among the ranks of its host.
int host_rank(MPI_Comm comm, int& ranks_on_host) {
  MPI_Comm host;
  int rank = 0;
  ranks_on_host = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    MPI_Comm_size(host, &ranks_on_host);
    MPI_Comm_rank(host, &rank);
    MPI_Comm_free(&host);
  }
  return rank;
}

}  // namespace

Context Context::mpi_from_handle(const void* handle, std::size_t handle_bytes, Backend backend) {
  require(handle_bytes == sizeof(MPI_Comm), "Context::mpi: the MPI_Comm given has another size than radixmesh's MPI",
          "build your program with the MPI radixmesh was built with");
  MPI_Comm comm;
  std::memcpy(&comm, handle, sizeof comm);
  int ranks_on_host = 1;
  [[maybe_unused]] const int local_rank = host_rank(comm, ranks_on_host);

  // Every rank must agree on the backend: GPUs (with NCCL) only if every rank has them.
  const std::string problem =
      backend == Backend::cpu ? std::string("the CPU backend was asked for") : gpu_rank_problem(ranks_on_host);
  int can_gpu = problem.empty() ? 1 : 0, all_gpu = 0;
  MPI_Allreduce(&can_gpu, &all_gpu, 1, MPI_INT, MPI_MIN, comm);
  if (backend == Backend::cuda && !all_gpu)
    throw_error(ErrorCode::unsupported,
                "Context::mpi: GPU ranks were asked for, but " +
                    (problem.empty() ? std::string("another rank cannot run one") : "this rank cannot: " + problem),
                "give every rank a GPU and NCCL, or use Backend::cpu");
#if defined(RXM_HAS_NCCL)
  if (all_gpu) {
    // Rank r of a host takes that host's GPU r (mod the GPUs it sees).
    const int gpus = int(discover_cuda().topology.devices.size());
    Context c = local({local_rank % gpus}, Backend::cuda);
    const auto& d = detail::cuda_resources(c).devices.front();
    one_device_per_rank(c.state_->mesh, std::make_shared<comm::NcclTransport>(comm, d.device, d.stream), Backend::cuda);
    return c;
  }
#endif
  auto transport = std::make_shared<comm::MpiTransport>(comm);
  // Ranks on one host share its hardware threads.
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency() / unsigned(std::max(1, ranks_on_host)));
  Context c = cpu(threads);
  c.state_->cpu_fallback_reason = "MPI ranks run the CPU backend: " + problem;
  one_device_per_rank(c.state_->mesh, std::move(transport), Backend::cpu);
  return c;
}

}  // namespace radixmesh
