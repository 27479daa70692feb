// What every in-process transport shares: all participants live in this process (size() ==
// local_count()), so a collective is one call with every participant's entry, the small
// collectives are host copies and sums, barrier has nothing to wait for, and the failures that
// fail() records are thrown by the next collective. The threads and peer transports add only how
// an all-to-all-v's bytes move.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "radixmesh/communicator.hpp"

namespace radixmesh::comm {

class InProcessCommunicator : public Communicator {
 public:
  explicit InProcessCommunicator(int participants, const char* what);

  int size() const override { return size_; }
  int first_local() const override { return 0; }
  int local_count() const override { return size_; }

  void all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) override;
  void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in, std::span<std::uint64_t> out) override;
  void barrier() override;
  void fail(int participant, const std::string& message) override;

 protected:
  // The start of every all_to_all_v: throws a recorded failure, then checks every participant's
  // declaration against the others (collective_checks.hpp) before any byte moves.
  void begin_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes);
  // The same for all_to_all_placed (check_placed).
  void begin_all_to_all_placed(std::span<const AllToAllPlaced> local);

 private:
  // Throws the first recorded failure (and forgets all of them: the step has been taken).
  void take_failures(const char* op);
  void require_entries(const char* op, std::size_t entries) const;

  int size_;
  std::vector<std::pair<int, std::string>> failed_;
};

}  // namespace radixmesh::comm
