#include "comm/threads_transport.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "radixmesh/error.hpp"

namespace radixmesh::comm {
namespace {
// Below this many bytes in one exchange, a single thread copies faster than starting others.
constexpr std::uint64_t parallel_copy_bytes = std::uint64_t(1) << 22;

// work(k) for k in [0, n), on up to `threads` threads (one when the exchange is small).
template <class Work> void spread(std::size_t n, std::uint64_t bytes, unsigned threads, Work&& work) {
  const unsigned used = bytes < parallel_copy_bytes ? 1u : unsigned(std::min<std::size_t>(threads, n));
  if (used <= 1) {
    for (std::size_t k = 0; k < n; ++k) work(k);
    return;
  }
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < used; ++t)
    workers.emplace_back([&, t] {
      for (std::size_t k = t; k < n; k += used) work(k);
    });
  for (auto& w : workers) w.join();
}
}  // namespace

ThreadsTransport::ThreadsTransport(int participants, unsigned copy_threads)
    : InProcessCommunicator(participants, "CPU devices"), copy_threads_(std::max(1u, copy_threads)) {}

void ThreadsTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  begin_all_to_all(local, elem_bytes);
  const std::size_t n = std::size_t(size());

  // Receiver j pulls its chunk from every sender: receivers write disjoint memory, so they run in
  // parallel.
  std::uint64_t total = 0;
  for (const AllToAllV& a : local)
    for (std::uint64_t c : a.send_counts) total += c;
  auto receive = [&](std::size_t j) {
    auto* recv = static_cast<std::byte*>(local[j].recv);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t count = local[i].send_counts[j];
      if (count == 0) continue;
      const auto* send = static_cast<const std::byte*>(local[i].send);
      std::memcpy(recv + local[j].recv_displs[i] * elem_bytes, send + local[i].send_displs[j] * elem_bytes,
                   count * elem_bytes);
    }
  };
  spread(n, total * elem_bytes, copy_threads_, receive);
}

void ThreadsTransport::all_to_all_placed(std::span<const AllToAllPlaced> local, std::size_t elem_bytes) {
  begin_all_to_all_placed(local);
  // Senders write disjoint places (checked), so they run in parallel.
  std::uint64_t total = 0;
  for (const AllToAllPlaced& a : local)
    for (const PlacedPiece& piece : a.pieces) total += piece.count;
  auto send = [&](std::size_t i) {
    const auto* from = static_cast<const std::byte*>(local[i].send);
    for (const PlacedPiece& piece : local[i].pieces)
      if (piece.count)
        std::memcpy(static_cast<std::byte*>(local[std::size_t(piece.to)].recv) + piece.at * elem_bytes,
                    from + piece.from * elem_bytes, piece.count * elem_bytes);
  };
  spread(local.size(), total * elem_bytes, copy_threads_, send);
}

}  // namespace radixmesh::comm
