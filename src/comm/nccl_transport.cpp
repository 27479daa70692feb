#include "comm/nccl_transport.hpp"

#include <chrono>
#include <thread>

#include "comm/nccl_exchange.hpp"
#include "comm/nccl_library.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::comm {

NcclTransport::NcclTransport(MPI_Comm comm, int cuda_device, cudaStream_t stream)
    : control_(std::make_unique<MpiTransport>(comm)), device_(cuda_device), stream_(stream) {
  const NcclLibrary& n = nccl();
  ncclUniqueId id{};
  if (control_->first_local() == 0) check_nccl(n.get_unique_id(&id), "ncclGetUniqueId");
  if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, control_->comm()) != MPI_SUCCESS)
    throw_error(ErrorCode::device, "MPI_Bcast of NCCL's unique id failed", "check the MPI launch (mpirun)");
  detail::DeviceGuard guard(device_);
  check_nccl(n.comm_init_rank(&comm_, control_->size(), id, control_->first_local()), "ncclCommInitRank");
}

NcclTransport::~NcclTransport() {
  if (!comm_) return;
  const NcclLibrary& n = nccl();
  if (aborted_) return;  // ncclCommAbort already freed it
  n.comm_destroy(comm_);
}

void NcclTransport::wait_for_nccl(const char* op) {
  const NcclLibrary& n = nccl();
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  detail::DeviceGuard guard(device_);
  while (true) {
    const cudaError_t done = cudaStreamQuery(stream_);
    if (done == cudaSuccess) return;
    if (done != cudaErrorNotReady) RXM_CUDA_CHECK(done);
    ncclResult_t async = ncclSuccess;
    check_nccl(n.comm_get_async_error(comm_, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) {
      n.comm_abort(comm_);
      aborted_ = true;
      check_nccl(async, op);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      n.comm_abort(comm_);
      aborted_ = true;
      throw_error(ErrorCode::device,
                  std::string(op) + ": NCCL did not finish within " + std::to_string(timeout().count()) +
                      " ms on participant " + std::to_string(first_local()) + " (a peer stopped or hangs)",
                  "look for the first error on the other ranks; raise RXM_COMM_TIMEOUT_S for very large exchanges");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void NcclTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  require(!aborted_, "all_to_all_v: the NCCL communicator was aborted after an earlier failure",
          "make a new context");
  // Host memory (the out-of-core sort's exchange between GPU ranks) moves by MPI; every rank
  // passes the same kind of memory.
  if (local.size() == 1 && local[0].where.cuda_device < 0) return control_->all_to_all_v(local, elem_bytes);
  control_->agree_all_to_all(local, elem_bytes);  // same verdict on every rank, nothing moved yet
  const NcclLibrary& n = nccl();
  detail::DeviceGuard guard(device_);
  copy_own_part(first_local(), local[0], elem_bytes, stream_);
  grouped(n, [&] { enqueue_nccl_exchange(n, comm_, first_local(), size(), local[0], elem_bytes, stream_); });
  // Stream-ordered for the caller; the host waits only to turn a peer's failure into an error on
  // every rank instead of a hang (NCCL has no deadline of its own).
  wait_for_nccl("all_to_all_v");
}

}  // namespace radixmesh::comm
