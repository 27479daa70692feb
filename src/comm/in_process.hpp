// The part of a Communicator that every in-process transport shares: all participants live in
// this process (size() == local_count()), so the small collectives are host copies and sums,
// barrier has nothing to wait for, and an all-to-all-v's counts can be checked against each other
// before any byte moves. The threads and peer transports add only how bytes move.
#pragma once
#include <optional>
#include <string>

#include "comm/communicator.hpp"

namespace radixmesh::comm {

class InProcessCommunicator : public Communicator {
 public:
  explicit InProcessCommunicator(int participants);

  int size() const override { return participants_; }
  int first_local() const override { return 0; }
  int local_count() const override { return participants_; }

  void all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) override;
  void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in,
                      std::span<std::uint64_t> out) override;
  void barrier() override;
  void fail(const std::string& message) override;

 protected:
  // Throws rxm::Error, naming the participants and the fix, unless every local entry is present,
  // its four count arrays have size() entries, every send count equals its receiver's receive
  // count, and every receive range lies within its receiver's capacity. Also throws when fail()
  // was called. Called before any byte moves.
  void check_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes, const char* call) const;
  // Throws the error recorded by fail(), if any.
  void throw_if_failed(const char* call) const;

 private:
  int participants_;
  std::optional<std::string> failure_;
};

}  // namespace radixmesh::comm
