// A random all_to_all_placed that a test can run on host buffers or copy to devices: every sender
// cuts its send buffer into pieces (zeros among them) for random receivers, and every receiver's
// pieces land in a random order of disjoint places covering its buffer; the model is each
// receiver's expected bytes.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "radixmesh/communicator.hpp"

namespace radixmesh::testing {

struct PlacedSide {
  std::vector<std::byte> send, expected;    // expected: the receive buffer after the exchange
  std::vector<comm::PlacedPiece> pieces;
  std::vector<std::uint64_t> recv_counts;   // per sender
  std::uint64_t recv_elems = 0;
};

inline std::vector<PlacedSide> placed_case(int size, std::size_t elem, std::uint64_t seed, std::uint64_t max_piece = 50,
                                           std::size_t max_pieces = 12) {
  std::mt19937_64 rng(seed);
  const std::size_t n = std::size_t(size);
  std::vector<PlacedSide> sides(n);
  struct Sent { std::size_t from_side; comm::PlacedPiece piece; };
  std::vector<std::vector<Sent>> to(n);  // per receiver: the pieces it gets, places still open
  for (std::size_t i = 0; i < n; ++i) {
    PlacedSide& s = sides[i];
    s.recv_counts.assign(n, 0);
    const std::size_t pieces = rng() % max_pieces;
    std::uint64_t at = 0;
    for (std::size_t k = 0; k < pieces; ++k) {
      comm::PlacedPiece piece;
      piece.to = int(rng() % n);
      piece.count = rng() % 5 == 0 ? 0 : rng() % (max_piece + 1);
      at += rng() % 3;  // gaps in the send buffer
      piece.from = at;
      at += piece.count;
      to[std::size_t(piece.to)].push_back({i, piece});
    }
    s.send.resize(at * elem);
    for (auto& b : s.send) b = std::byte(rng());
  }
  for (std::size_t j = 0; j < n; ++j) {
    auto& list = to[j];
    std::shuffle(list.begin(), list.end(), rng);  // places in a random order of the senders' pieces
    std::uint64_t at = 0;
    for (auto& sent : list) {
      sent.piece.at = at;
      at += sent.piece.count;
      sides[sent.from_side].pieces.push_back(sent.piece);
      sides[j].recv_counts[sent.from_side] += sent.piece.count;
    }
    sides[j].recv_elems = at;
    sides[j].expected.resize(at * elem);
    for (const auto& sent : list)
      std::copy_n(sides[sent.from_side].send.begin() + std::ptrdiff_t(sent.piece.from * elem), sent.piece.count * elem,
                  sides[j].expected.begin() + std::ptrdiff_t(sent.piece.at * elem));
  }
  return sides;
}

}  // namespace radixmesh::testing
