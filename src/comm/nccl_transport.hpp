// The NCCL transport: one GPU per MPI rank, on one or many hosts. NCCL is bootstrapped over MPI
// (rank 0's ncclUniqueId is broadcast), and MPI stays the control plane: every operation first
// runs the MPI transport's agreement step, so failures, disagreeing counts and short receive
// buffers stop every rank with the same error before a byte moves, and a missing rank is named
// after timeout(). The data of all_to_all_v then moves as grouped ncclSend/ncclRecv on the
// participant's stream (stream-ordered, no host synchronization); the rank's own part is a device
// copy. A wait on NCCL that outlives timeout() aborts the NCCL communicator (ncclCommAbort) and
// throws, so a hung peer never hangs the caller.
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>

#include "comm/mpi_transport.hpp"

namespace radixmesh::comm {

class NcclTransport final : public Communicator {
 public:
  // Collective over `comm`: every rank passes its own GPU and that GPU's stream.
  NcclTransport(MPI_Comm comm, int cuda_device, cudaStream_t stream);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  Transport transport() const override { return Transport::nccl; }
  int size() const override { return control_->size(); }
  int first_local() const override { return control_->first_local(); }
  int local_count() const override { return 1; }

  void all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) override {
    control_->all_gather(local_in, out);
  }
  void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in, std::span<std::uint64_t> out) override {
    control_->all_reduce_sum(local_in, out);
  }
  void barrier() override { control_->barrier(); }
  void fail(int participant, const std::string& message) override { control_->fail(participant, message); }
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;

 private:
  // Waits for the queued NCCL work with a deadline, aborting the communicator when it passes.
  void wait_for_nccl(const char* op);

  std::unique_ptr<MpiTransport> control_;
  int device_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

}  // namespace radixmesh::comm
