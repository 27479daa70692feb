// The per-shard steps of the distributed radix select (src/mesh/topk_select.cpp), as plain data:
// what a mesh device counts in one pass, and which of its keys it then takes. Ranks are
// topk_rank (radixmesh/topk.hpp) widened to 64 bits: larger is better.
#pragma once
#include <cstddef>
#include <cstdint>

#include "radixmesh/topk.hpp"

namespace radixmesh::detail {

// One pass over a shard: counts[digit] (2^bits entries) of the keys whose rank has `prefix` in the
// bits of `mask`, digit = (rank >> shift) & (2^bits - 1).
struct TopkSelectScan {
  KeyType type = KeyType::f32;
  TopkOptions options;
  const void* values = nullptr;
  std::size_t n = 0;
  std::uint64_t mask = 0, prefix = 0;
  int shift = 0, bits = 8;
};

// The shard's winners, in ascending position: every key with rank > threshold, and the first
// `equal` keys with rank == threshold; `count` of them in all (the caller knows it from the
// counts), written to out_values (the key type) and out_positions (positions in the shard).
struct TopkSelectTake {
  KeyType type = KeyType::f32;
  TopkOptions options;
  const void* values = nullptr;
  std::size_t n = 0;
  std::uint64_t threshold = 0;
  std::size_t equal = 0, count = 0;
  void* out_values = nullptr;
  std::int64_t* out_positions = nullptr;
};

// src/cpu: host memory; the count splits the shard over `threads` host threads.
void cpu_topk_select_count(const TopkSelectScan& scan, std::uint64_t* counts, unsigned threads);
void cpu_topk_select_take(const TopkSelectTake& take);

}  // namespace radixmesh::detail
