#include "comm/nccl_exchange.hpp"

#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::comm {

void copy_own_part(int me, const AllToAllV& a, std::size_t elem_bytes, cudaStream_t stream) {
  const std::size_t self = std::size_t(me);
  if (a.send_counts[self] == 0) return;
  RXM_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(a.recv) + a.recv_displs[self] * elem_bytes,
                                 static_cast<const std::byte*>(a.send) + a.send_displs[self] * elem_bytes,
                                 a.send_counts[self] * elem_bytes, cudaMemcpyDeviceToDevice, stream));
}

void enqueue_nccl_exchange(const NcclLibrary& n, ncclComm_t comm, int me, int p, const AllToAllV& a,
                           std::size_t elem_bytes, cudaStream_t stream) {
  const auto* send = static_cast<const std::byte*>(a.send);
  auto* recv = static_cast<std::byte*>(a.recv);
  for (int q = 0; q < p; ++q) {
    if (q == me) continue;
    const std::size_t sq = std::size_t(q);
    if (a.send_counts[sq])
      check_nccl(n.send(send + a.send_displs[sq] * elem_bytes, a.send_counts[sq] * elem_bytes, ncclUint8, q, comm,
                        stream),
                 "ncclSend");
    if (a.recv_counts[sq])
      check_nccl(n.recv(recv + a.recv_displs[sq] * elem_bytes, a.recv_counts[sq] * elem_bytes, ncclUint8, q, comm,
                        stream),
                 "ncclRecv");
  }
}

}  // namespace radixmesh::comm
