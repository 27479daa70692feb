// One device's side of an all_to_all_v (Communicator::AllToAllV's counts and displacements, in
// elements, one entry per participant), for the mesh algorithms that build them: the shuffle
// (shuffle_plan.hpp) and the sort (layout_of_matrix below).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace radixmesh::mesh {

struct ExchangeLayout {
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;  // size entries each
  std::uint64_t received = 0;                                                     // the sum of recv_counts
};

// Participant p's side when moved[s * size + d] elements go from s to d, each sender's pieces lying
// in destination order in its send buffer and landing source-major in the receivers' buffers.
inline ExchangeLayout layout_of_matrix(std::span<const std::uint64_t> moved, int size, int participant) {
  const std::size_t P = std::size_t(size), p = std::size_t(participant);
  ExchangeLayout l;
  std::uint64_t sent = 0;
  for (std::size_t d = 0; d < P; ++d) {
    l.send_displs.push_back(sent);
    l.send_counts.push_back(moved[p * P + d]);
    sent += moved[p * P + d];
    l.recv_displs.push_back(l.received);
    l.recv_counts.push_back(moved[d * P + p]);
    l.received += moved[d * P + p];
  }
  return l;
}

}  // namespace radixmesh::mesh
