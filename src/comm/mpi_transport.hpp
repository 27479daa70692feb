// The MPI transport: one mesh device per rank of an MPI communicator, host memory (the CPU
// backend on every rank). Every operation starts with an agreement step: each rank sends every
// other rank a header (whether it failed, and why) with its part of the operation (its array for
// all_gather, its count rows for all_to_all_v) by non-blocking point-to-point messages, and waits
// for every other rank's until timeout(). So a failed rank stops the others at that step, counts
// that disagree stop every rank with the same error, and a rank that never arrives is named. The
// data of all_to_all_v then moves by non-blocking sends and receives, split into messages of at
// most max_message_bytes (counts above 2^31 elements need no derived types), under the same
// deadline.
#pragma once
#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "radixmesh/communicator.hpp"

namespace radixmesh::comm {

class MpiTransport final : public Communicator {
 public:
  // Duplicates `comm` (collective over it), so radixmesh's messages never meet the caller's.
  explicit MpiTransport(MPI_Comm comm, std::size_t max_message_bytes = std::size_t(1) << 30);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  Transport transport() const override { return Transport::mpi; }
  int size() const override { return size_; }
  int first_local() const override { return rank_; }
  int local_count() const override { return 1; }

  void all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) override;
  void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in, std::span<std::uint64_t> out) override;
  void barrier() override;
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;
  void fail(int participant, const std::string& message) override;

  // The agreement step of all_to_all_v alone: every rank's failures and count rows, checked
  // against each other (throws on every rank alike). Transports that move the data another way
  // (NCCL) call it first.
  void agree_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes);
  MPI_Comm comm() const { return comm_; }

 private:
  // Sends `payload` (and this rank's pending failure) to every rank and returns every rank's
  // payload in rank order; throws when a rank failed or did not arrive in time.
  std::vector<std::vector<std::byte>> agree(const char* op, std::span<const std::byte> payload);
  // Waits until every request completes; on timeout throws naming peer_of[i] of the incomplete ones.
  void wait_all(const char* op, std::vector<MPI_Request>& requests, const std::vector<int>& peer_of,
                std::chrono::steady_clock::time_point deadline);
  void require_usable(const char* op) const;
  void require_one_entry(const char* op, std::size_t entries) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::size_t max_message_bytes_;
  bool broken_ = false;  // a timeout left messages in flight: the communicator cannot be used again
  bool failed_ = false;
  std::string failure_;
};

}  // namespace radixmesh::comm
