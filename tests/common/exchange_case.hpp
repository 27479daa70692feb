// A random all_to_all_v that every process can rebuild from (seed, size, elem_bytes) alone: the
// count matrix (zeros and empty participants included), every participant's send buffer with
// padding between destinations, its receive layout, and the bytes it must receive. The threads
// test builds every participant's side; each MPI rank builds its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "radixmesh/communicator.hpp"

namespace radixmesh::testing {

struct ExchangeSide {
  std::vector<std::byte> send, recv, expected;
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;
  comm::AllToAllV args() {
    comm::AllToAllV a;
    a.send = send.data();
    a.recv = recv.data();
    a.recv_capacity = recv.size() / elem_bytes;
    a.send_counts = send_counts;
    a.send_displs = send_displs;
    a.recv_counts = recv_counts;
    a.recv_displs = recv_displs;
    return a;
  }
  std::size_t elem_bytes = 1;
};

class ExchangeCase {
 public:
  ExchangeCase(std::uint64_t seed, int size, std::size_t elem_bytes, std::uint64_t max_count = 40)
      : seed_(seed), size_(size), elem_bytes_(elem_bytes), counts_(std::size_t(size) * std::size_t(size)) {
    std::mt19937_64 rng(seed);
    std::vector<bool> empty(static_cast<std::size_t>(size));
    for (auto&& e : empty) e = rng() % 4 == 0;  // a quarter of the participants send and receive nothing
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) {
        const bool zero = empty[std::size_t(i)] || empty[std::size_t(j)] || rng() % 3 == 0;
        counts_[index(i, j)] = zero ? 0 : rng() % (max_count + 1);
      }
  }
  std::uint64_t count(int from, int to) const { return counts_[index(from, to)]; }

  // The byte `b` of element `k` that `from` sends to `to`.
  std::byte value(int from, int to, std::uint64_t k, std::size_t b) const {
    std::uint64_t x = seed_ ^ (std::uint64_t(from) << 48) ^ (std::uint64_t(to) << 32) ^ (k * 131 + b);
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return std::byte(x >> 56);
  }

  ExchangeSide side(int p) const {
    ExchangeSide s;
    s.elem_bytes = elem_bytes_;
    std::uint64_t at = 0;
    for (int j = 0; j < size_; ++j) {  // one padding element between destinations
      s.send_displs.push_back(at);
      s.send_counts.push_back(count(p, j));
      at += count(p, j) + 1;
    }
    s.send.resize(at * elem_bytes_);
    for (int j = 0; j < size_; ++j)
      for (std::uint64_t k = 0; k < count(p, j); ++k)
        for (std::size_t b = 0; b < elem_bytes_; ++b)
          s.send[(s.send_displs[std::size_t(j)] + k) * elem_bytes_ + b] = value(p, j, k, b);
    at = 0;
    for (int i = size_ - 1; i >= 0; --i) {  // reversed source order: displacements decide, not order
      s.recv_displs.insert(s.recv_displs.begin(), at);
      s.recv_counts.insert(s.recv_counts.begin(), count(i, p));
      at += count(i, p) + 2;
    }
    s.recv.assign(at * elem_bytes_, std::byte{0xEE});
    s.expected = s.recv;
    for (int i = 0; i < size_; ++i)
      for (std::uint64_t k = 0; k < count(i, p); ++k)
        for (std::size_t b = 0; b < elem_bytes_; ++b)
          s.expected[(s.recv_displs[std::size_t(i)] + k) * elem_bytes_ + b] = value(i, p, k, b);
    return s;
  }

 private:
  std::size_t index(int i, int j) const { return std::size_t(i) * std::size_t(size_) + std::size_t(j); }
  std::uint64_t seed_;
  int size_;
  std::size_t elem_bytes_;
  std::vector<std::uint64_t> counts_;
};

}  // namespace radixmesh::testing
