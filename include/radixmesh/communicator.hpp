// radixmesh/communicator.hpp — the mesh's communication layer: one Communicator per Context,
// shaped like an NCCL communicator. rxm::shuffle, sort and top-k run over it; users building
// their own distributed operators (a join's exchange) can call it directly:
//   auto& comm = rxm::communicator(ctx);  comm.all_to_all_v(entries, sizeof(Key));
//
// Participants. A mesh has `size()` participants ("mesh devices"): GPUs, logical devices on one
// GPU, or CPU devices (host threads or MPI ranks), numbered 0..size()-1 globally, rank-major. One
// process drives `local_count()` consecutive participants starting at `first_local()`: all of
// them for the threads and peer transports, one for MPI and NCCL (one process per device).
//
// Calling convention. Every operation is collective: each process calls it once, with one
// argument entry per local participant (entry i belongs to participant first_local() + i), and it
// returns when this process's part is complete. Small collectives (all_gather, all_reduce,
// barrier) work on host memory. all_to_all_v moves host memory on CPU participants and device
// memory on GPU participants; on GPUs it is ordered on each participant's stream (`stream`). GPU
// ranks of an MPI context (the nccl transport) also move host memory (Location::cuda_device -1 on
// every rank), through MPI.
//
// Failure. An operation that cannot complete throws rxm::Error on every process that reaches it:
// counts that disagree between senders and receivers, a receive buffer that is too small, a
// participant that failed (see fail()), or a peer that did not arrive within timeout() (the
// message names the participant or rank that is missing). No operation waits forever. Every
// operation first agrees on these verdicts, so every process throws at the same step and the
// communicator stays usable afterwards; only a timeout leaves it broken (later calls throw).
#pragma once
#include "radixmesh/context.hpp"
#include "radixmesh/export.hpp"
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace radixmesh::comm {

// How an all-to-all-v's bytes move. peer: device copies by the copy engines (GPUs and logical
// devices of one process); peer_sm: the same pairs copied by a kernel on each sender, its SMs
// storing into the destinations (peer memory over NVLink); nccl: grouped ncclSend/ncclRecv (GPUs
// of one process, or one GPU per MPI rank); mpi: MPI point-to-point (CPU ranks); threads: host
// copies (CPU devices of one process). automatic: the measured choice (see use_transport).
enum class Transport { automatic, peer, nccl, mpi, threads, peer_sm };
RXM_API const char* name_of(Transport t);
RXM_API Transport transport_from_name(const std::string& name);  // throws Error naming the choices

// Where one participant's buffer lives.
struct Location {
  int cuda_device = -1;        // CUDA ordinal; -1: host memory
  void* stream = nullptr;      // cudaStream_t of the participant, when cuda_device >= 0
};

// One local participant's side of an all-to-all-v. Counts and displacements are in elements of
// elem_bytes bytes, one entry per participant (size() entries each). send_counts[j] elements
// starting at send + send_displs[j] go to participant j, which receives them at its
// recv + recv_displs[i] (i = this participant); recv_counts[i] there must equal send_counts[j]
// here, which every transport checks before any byte moves.
struct AllToAllV {
  Location where;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t recv_capacity = 0;  // elements recv can hold
  std::span<const std::uint64_t> send_counts;
  std::span<const std::uint64_t> send_displs;
  std::span<const std::uint64_t> recv_counts;
  std::span<const std::uint64_t> recv_displs;
};

// An exchange whose receive layout the senders know (every process holds the counts, e.g. after
// an all_gather): piece k of a participant's send buffer, `count` elements from send + from, goes
// straight to participant `to`'s receive buffer at element `at`. recv_counts[s] (size() entries)
// is what this participant receives from participant s in all, checked against the senders'
// pieces as all_to_all_v checks its counts. A receiver's pieces must not overlap.
struct PlacedPiece {
  int to = 0;
  std::uint64_t from = 0, at = 0, count = 0;  // in elements
};
struct AllToAllPlaced {
  Location where;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t recv_capacity = 0;  // elements recv can hold
  std::span<const PlacedPiece> pieces;
  std::span<const std::uint64_t> recv_counts;
};

class RXM_API Communicator {
 public:
  virtual ~Communicator() = default;
  virtual Transport transport() const = 0;
  virtual int size() const = 0;
  virtual int first_local() const = 0;
  virtual int local_count() const = 0;

  // out (size() * bytes_per_participant bytes, the same on every local participant's behalf)
  // receives every participant's `local_in[i]` (each bytes_per_participant bytes) in
  // participant order.
  virtual void all_gather(std::span<const std::span<const std::byte>> local_in,
                          std::span<std::byte> out) = 0;
  // Element-wise sum of every participant's array into `out` (same length as each local_in[i]).
  virtual void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in,
                              std::span<std::uint64_t> out) = 0;
  virtual void barrier() = 0;
  // Moves elem_bytes-sized elements; one entry per local participant.
  virtual void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) = 0;
  // The placed exchange (see AllToAllPlaced), where places_pieces() says the transport has it:
  // the transports of one process write each piece straight into its place, so a receiver needs
  // no regroup after an all_to_all_v. Others throw unsupported.
  virtual bool places_pieces() const { return false; }
  virtual void all_to_all_placed(std::span<const AllToAllPlaced> local, std::size_t elem_bytes);

  // Marks local participant `participant` (a global number in [first_local(), first_local() +
  // local_count())) as failed with `message`: the next collective, on every process, throws
  // rxm::Error naming the participant and quoting the message instead of running. The failing
  // process still makes that call (it is how the others learn), then throws its own error. Called
  // by the mesh algorithms when a local step throws. The failure is consumed by that collective.
  virtual void fail(int participant, const std::string& message) = 0;

  // How long a collective waits for the other processes before it throws, naming who is missing.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  // 300 s, or the environment variable RXM_COMM_TIMEOUT_S (seconds, may be fractional).
  static std::chrono::milliseconds default_timeout();

 private:
  std::chrono::milliseconds timeout_ = default_timeout();
};

}  // namespace radixmesh::comm

namespace radixmesh {
// The context's Communicator: the one it was made with (MPI, NCCL), else one made on first use for
// its one-process mesh (the peer transport over a CUDA context's devices, the threads transport
// over CPU devices).
RXM_API comm::Communicator& communicator(const Context& ctx);

// Makes the context's communicator use transport `t` and returns it; call it before the
// context's first multi-device operation, or between operations (the old communicator goes; it
// must have no collective in flight). One-process meshes: peer, peer_sm or nccl over GPUs (nccl
// needs one GPU per mesh device, so no logical devices), threads over CPU devices. An MPI
// context keeps the transport it was made with (nccl for GPU ranks, mpi for CPU ranks).
// automatic is what communicator(ctx) picks on first use: the environment variable
// RXM_TRANSPORT (a transport's name) when set; else peer for logical devices and CPU devices;
// else, for distinct GPUs, the transport that moved an all-to-all fastest on this machine
// (timed once with 64 MiB per GPU, then kept in the machine cache beside the link rates, keyed
// by the GPUs' UUIDs and the driver). Throws invalid_argument or unsupported, naming the
// transports that would work.
RXM_API comm::Communicator& use_transport(const Context& ctx, comm::Transport t);
}  // namespace radixmesh
