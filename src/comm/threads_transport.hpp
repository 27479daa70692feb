// The threads transport: every participant of the mesh is a CPU device of this one process, so a
// collective is one call with every participant's entry, and it runs as host memory copies. It
// is the CI stand-in for a mesh of GPUs: the mesh algorithms run through it unchanged.
#pragma once
#include "comm/in_process.hpp"

namespace radixmesh::comm {

class ThreadsTransport final : public InProcessCommunicator {
 public:
  // `participants` CPU devices; copies of one all_to_all_v spread over up to `copy_threads` threads.
  ThreadsTransport(int participants, unsigned copy_threads);

  Transport transport() const override { return Transport::threads; }
  void all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) override;
  bool places_pieces() const override { return true; }
  void all_to_all_placed(std::span<const AllToAllPlaced> local, std::size_t elem_bytes) override;

 private:
  unsigned copy_threads_;
};

}  // namespace radixmesh::comm
