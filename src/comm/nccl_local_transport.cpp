#include "comm/nccl_local_transport.hpp"

#include "comm/nccl_exchange.hpp"
#include "comm/nccl_library.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::comm {

NcclLocalTransport::NcclLocalTransport(std::vector<PeerParticipant> participants)
    : InProcessCommunicator(int(participants.size()), "GPU devices"), participants_(std::move(participants)) {
  std::vector<int> devices;
  for (const PeerParticipant& p : participants_) {
    for (int d : devices)
      if (d == p.cuda_device)
        throw_error(ErrorCode::unsupported,
                    "the nccl transport needs one GPU per mesh device, and GPU " + std::to_string(d) +
                        " is listed more than once (logical devices)",
                    "use the peer transport for logical devices, or list each GPU once");
    devices.push_back(p.cuda_device);
  }
  const NcclLibrary& n = nccl();
  comms_.assign(devices.size(), nullptr);
  check_nccl(n.comm_init_all(comms_.data(), int(devices.size()), devices.data()), "ncclCommInitAll");
}

NcclLocalTransport::~NcclLocalTransport() {
  const NcclLibrary& n = nccl();  // loaded, or the constructor would have thrown
  for (ncclComm_t c : comms_)
    if (c) n.comm_destroy(c);
}

void NcclLocalTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  begin_all_to_all(local, elem_bytes);
  const NcclLibrary& n = nccl();
  const int p = size();
  for (int i = 0; i < p; ++i) {
    detail::DeviceGuard guard(participants_[std::size_t(i)].cuda_device);
    copy_own_part(i, local[std::size_t(i)], elem_bytes, participants_[std::size_t(i)].stream);
  }
  grouped(n, [&] {
    for (int i = 0; i < p; ++i)
      enqueue_nccl_exchange(n, comms_[std::size_t(i)], i, p, local[std::size_t(i)], elem_bytes,
                            participants_[std::size_t(i)].stream);
  });
}

}  // namespace radixmesh::comm
