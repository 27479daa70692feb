// The peer transport: several GPUs, or several logical devices on one GPU, in one process. An
// all-to-all-v is a set of device-to-device copies, stream-ordered on every participant's stream
// and issued without a host synchronization:
//   1. an event on every participant's stream marks its earlier work (what it sends is written,
//      what it receives into is free);
//   2. each sender copies its segments after the events of both ends of each pair;
//   3. every receiver's stream waits for the copies into it, and every sender's for the copies out
//      of it (its send buffer is free again then).
// Two ways to move the bytes (PeerCopy):
//   - copy_engines ("peer"): one cudaMemcpyPeerAsync per pair, each on its own stream, so copies to
//     different destinations run concurrently on the copy engines;
//   - sm ("peer-sm"): one kernel per sender stores every segment into its destination (peer
//     memory over NVLink for distinct GPUs), so the SMs drive all links at once.
// A pair of GPUs without peer access always takes cudaMemcpyPeerAsync, which the driver stages
// through host memory.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "comm/in_process.hpp"

namespace radixmesh::comm {

struct PeerParticipant {
  int cuda_device = 0;
  cudaStream_t stream = nullptr;  // the participant's stream (the context's stream of that device)
};

enum class PeerCopy { copy_engines, sm };

class PeerTransport final : public InProcessCommunicator {
 public:
  PeerTransport(std::vector<PeerParticipant> participants, PeerCopy method);
  ~PeerTransport() override;
  PeerTransport(const PeerTransport&) = delete;
  PeerTransport& operator=(const PeerTransport&) = delete;

  Transport transport() const override { return method_ == PeerCopy::sm ? Transport::peer_sm : Transport::peer; }
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;
  // Each (sender, receiver) pair's pieces go by one batched copy kernel on the sender (stores into
  // the receiver's memory), or by one cudaMemcpyPeerAsync each where stores cannot reach.
  bool places_pieces() const override { return true; }
  void all_to_all_placed(std::span<const AllToAllPlaced> local, std::size_t elem_bytes) override;

 private:
  void release() noexcept;
  // Queues sender i's copies and records the events its receivers wait for.
  void copy_with_engines(std::size_t i, std::span<const AllToAllV> local, std::size_t elem_bytes);
  void copy_with_sms(std::size_t i, std::span<const AllToAllV> local, std::size_t elem_bytes);
  // The event that marks the end of the copy from i to j.
  cudaEvent_t done(std::size_t i, std::size_t j) const;
  // Events on every participant's stream before the copies; after them, every receiver's and
  // sender's stream waits for the pairs that moved bytes (moves(i, j)), on their events (event(i, j)).
  void mark_ready();
  template <class Moves, class Event> void wait_for_copies(Moves&& moves, Event&& event);
  bool stores_reach(std::size_t i, std::size_t j) const { return can_store_[i * participants_.size() + j]; }

  std::vector<PeerParticipant> participants_;
  PeerCopy method_;
  std::vector<char> can_store_;             // [from * size() + to]: kernel stores reach (same GPU or peer access)
  std::vector<cudaStream_t> copy_streams_;  // [sender * size() + destination], on the sender's device
  std::vector<cudaEvent_t> ready_;          // [participant]
  std::vector<cudaEvent_t> copied_;         // [sender * size() + destination]
};

}  // namespace radixmesh::comm
