// The threads transport: every participant of the mesh is a CPU device of this one process, so a
// collective is one call with every participant's entry, and it runs as host memory copies. It
// is the CI stand-in for a mesh of GPUs: the mesh algorithms run through it unchanged.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"

namespace radixmesh::comm {

class ThreadsTransport final : public Communicator {
 public:
  // `participants` CPU devices; copies of one all_to_all_v spread over up to `copy_threads` threads.
  ThreadsTransport(int participants, unsigned copy_threads);

  Transport transport() const override { return Transport::threads; }
  int size() const override { return size_; }
  int first_local() const override { return 0; }
  int local_count() const override { return size_; }

  void all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) override;
  void all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in, std::span<std::uint64_t> out) override;
  void barrier() override;
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;
  void fail(int participant, const std::string& message) override;

 private:
  // Throws the first recorded failure (and forgets all of them: the step has been taken).
  void take_failures(const char* op);
  void require_entries(const char* op, std::size_t entries) const;

  int size_;
  unsigned copy_threads_;
  std::vector<std::pair<int, std::string>> failed_;
};

}  // namespace radixmesh::comm
