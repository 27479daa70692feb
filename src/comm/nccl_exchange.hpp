// One participant's side of an all-to-all-v through NCCL, shared by the NCCL transports (one
// process per GPU under MPI, and all GPUs of one process): grouped ncclSend/ncclRecv, one pair of
// calls per peer with bytes to move, and the participant's own part as a device copy.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "comm/nccl_library.hpp"
#include "radixmesh/communicator.hpp"

namespace radixmesh::comm {

// The participant's own part (send to itself): a device copy on `stream`. Call it with the
// participant's device current, outside an NCCL group.
void copy_own_part(int me, const AllToAllV& a, std::size_t elem_bytes, cudaStream_t stream);

// The ncclSend/ncclRecv calls of participant `me` of `p` on `comm`; the caller brackets them
// (for every local participant) in grouped().
void enqueue_nccl_exchange(const NcclLibrary& n, ncclComm_t comm, int me, int p, const AllToAllV& a,
                           std::size_t elem_bytes, cudaStream_t stream);

// Runs enqueue() between ncclGroupStart and ncclGroupEnd; the group is closed also when
// enqueue() throws.
template <class Enqueue> void grouped(const NcclLibrary& n, Enqueue&& enqueue) {
  check_nccl(n.group_start(), "ncclGroupStart");
  try {
    enqueue();
  } catch (...) {
    n.group_end();
    throw;
  }
  check_nccl(n.group_end(), "ncclGroupEnd");
}

}  // namespace radixmesh::comm
