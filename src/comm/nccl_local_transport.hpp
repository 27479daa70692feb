// NCCL over the GPUs of one process (ncclCommInitAll: one NCCL rank per GPU, all driven by this
// thread). The in-process agreement step checks every declaration first, as for the peer
// transport; the data then moves as one NCCL group of every participant's ncclSend/ncclRecv on its
// stream, with no host synchronization. NCCL needs a GPU per rank, so logical devices (a GPU
// listed twice) are refused with an error that names the GPU.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <vector>

#include "comm/in_process.hpp"
#include "comm/peer_transport.hpp"

namespace radixmesh::comm {

class NcclLocalTransport final : public InProcessCommunicator {
 public:
  explicit NcclLocalTransport(std::vector<PeerParticipant> participants);
  ~NcclLocalTransport() override;
  NcclLocalTransport(const NcclLocalTransport&) = delete;
  NcclLocalTransport& operator=(const NcclLocalTransport&) = delete;

  Transport transport() const override { return Transport::nccl; }
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;

 private:
  std::vector<PeerParticipant> participants_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace radixmesh::comm
