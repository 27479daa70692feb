// The transports of a one-process GPU mesh, made by name, and the automatic choice among them:
// each candidate times an all-to-all of the same bytes on this machine, the fastest wins, and the
// verdict is kept in the machine cache (cuda/mesh/machine_cache.hpp) so later runs reuse it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "radixmesh/communicator.hpp"

namespace radixmesh::comm {

// A transport of kind t over ctx's GPU mesh devices; throws unsupported naming why t cannot run
// here (NCCL missing or logical devices for nccl; threads or mpi on GPUs).
std::shared_ptr<Communicator> make_gpu_transport(const Context& ctx, Transport t);

struct TransportTiming {
  Transport transport = Transport::peer;
  double median_ms = 0;       // one uniform all-to-all of bytes_per_device per device
  std::string unavailable;    // why it could not run here (then median_ms is 0)
};

// Times every transport that can run on ctx's GPUs (peer, peer_sm, and nccl where it loads) on a
// uniform all-to-all of bytes_per_device per device: a warm-up, then the median of `reps`.
std::vector<TransportTiming> time_transports(const Context& ctx, std::uint64_t bytes_per_device, int reps);

// The automatic choice for ctx's GPU mesh: peer for one GPU or logical devices, else the cached
// verdict for these GPUs, else time_transports now (1 GiB per GPU, at most 1/32 of the smallest
// GPU's memory) and cache the verdict: peer unless another is more than 5% faster.
Transport choose_gpu_transport(const Context& ctx);

}  // namespace radixmesh::comm
