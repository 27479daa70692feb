// The peer transport: several GPUs, or several logical devices on one GPU, in one process. An
// all-to-all-v is a set of device-to-device copies, stream-ordered on every participant's stream
// and issued without a host synchronization:
//   1. an event on every participant's stream marks its earlier work (what it sends is written,
//      what it receives into is free);
//   2. each sender issues one copy per destination on its own copy stream for that destination
//      (so the copies to different destinations run concurrently on the copy engines), after both
//      events of the pair;
//   3. every receiver's stream waits for the copies into it.
// Copies between two GPUs use cudaMemcpyPeerAsync (the driver stages through host memory where
// peer access is off); logical devices of one GPU copy within the device.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "comm/in_process.hpp"

namespace radixmesh::comm {

struct PeerParticipant {
  int cuda_device = 0;
  cudaStream_t stream = nullptr;  // the participant's stream (the context's stream of that device)
};

class PeerTransport final : public InProcessCommunicator {
 public:
  explicit PeerTransport(std::vector<PeerParticipant> participants);
  ~PeerTransport() override;
  PeerTransport(const PeerTransport&) = delete;
  PeerTransport& operator=(const PeerTransport&) = delete;

  Transport transport() const override { return Transport::peer; }
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;

 private:
  void release() noexcept;

  std::vector<PeerParticipant> participants_;
  std::vector<cudaStream_t> copy_streams_;  // [sender * size() + destination], on the sender's device
  std::vector<cudaEvent_t> ready_;          // [participant]
  std::vector<cudaEvent_t> copied_;         // [sender * size() + destination]
};

}  // namespace radixmesh::comm
