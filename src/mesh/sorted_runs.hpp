// Sorted runs of keys, compared by the sort's key (bits [begin_bit, end_bit) of the encoding, in
// the sort's order): the cuts that divide several runs at given places of their stable merge
// (ties go to the earlier run), and the merge itself. The out-of-core sort across MPI ranks uses
// both: the ranks' sorted shards cut at the ranks' counts (the sums over the ranks come from an
// all_reduce), and each rank's received runs merged by host threads, cut at even shares.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "radixmesh/keys.hpp"

namespace radixmesh::mesh {

// A key's place in the sort's order, as an unsigned number of bits() bits.
template <class K> struct SortKey {
  Order order = Order::ascending;
  int begin_bit = 0, end_bit = int(sizeof(K) * 8);
  int bits() const { return end_bit - begin_bit; }
  std::uint64_t operator()(K x) const {
    const std::uint64_t e = std::uint64_t(encode_key(x, order)) >> begin_bit;
    return bits() >= 64 ? e : e & ((std::uint64_t(1) << bits()) - 1);
  }
};

// The elements of the sorted run [keys, keys + n) whose sort key is below `key`.
template <class K> std::uint64_t count_below(const K* keys, std::uint64_t n, std::uint64_t key, const SortKey<K>& sk) {
  return std::uint64_t(std::partition_point(keys, keys + n, [&](K x) { return sk(x) < key; }) - keys);
}

// The elements of the sorted run whose sort key is at most `key`.
template <class K> std::uint64_t count_through(const K* keys, std::uint64_t n, std::uint64_t key, const SortKey<K>& sk) {
  return key == UINT64_MAX ? n : count_below(keys, n, key + 1, sk);
}

// For each place targets[b] of the merge (at most the runs' total), the sort key of the element
// there, bit by bit from the top: the largest key with at most targets[b] elements below it.
// below_all(candidates) gives, for every b at once, the elements of all runs below candidates[b]:
// `bits` calls in all.
using CountBelowAll = std::function<std::vector<std::uint64_t>(const std::vector<std::uint64_t>&)>;
inline std::vector<std::uint64_t> keys_at_places(const std::vector<std::uint64_t>& targets, int bits,
                                                 const CountBelowAll& below_all) {
  std::vector<std::uint64_t> key(targets.size(), 0);
  for (int bit = bits - 1; bit >= 0; --bit) {
    std::vector<std::uint64_t> candidate = key;
    for (std::uint64_t& c : candidate) c |= std::uint64_t(1) << bit;
    const std::vector<std::uint64_t> below = below_all(candidate);
    for (std::size_t b = 0; b < key.size(); ++b)
      if (below[b] <= targets[b]) key[b] = candidate[b];
  }
  return key;
}

// Where run r is cut for place b: below[r][b] and through[r][b] are its elements below and at
// most keys_at_places' key b; the cut takes everything below plus run r's share of the ties at
// that key, earlier runs first, so that the cuts of place b add up to targets[b]. Stable: an
// element of an earlier run never follows a tie of a later one.
inline std::vector<std::vector<std::uint64_t>> cuts_at_places(const std::vector<std::uint64_t>& targets,
                                                              const std::vector<std::vector<std::uint64_t>>& below,
                                                              const std::vector<std::vector<std::uint64_t>>& through) {
  std::vector<std::vector<std::uint64_t>> cut(below.size(), std::vector<std::uint64_t>(targets.size()));
  for (std::size_t b = 0; b < targets.size(); ++b) {
    std::uint64_t need = targets[b];
    for (const auto& run : below) need -= run[b];
    for (std::size_t r = 0; r < below.size(); ++r) {
      const std::uint64_t take = std::min(need, through[r][b] - below[r][b]);
      cut[r][b] = below[r][b] + take;
      need -= take;
    }
  }
  return cut;
}

// One sorted run and its values (value_bytes each, or none).
template <class K> struct Run {
  const K* keys = nullptr;
  const std::byte* values = nullptr;
  std::uint64_t n = 0;
};

// Merges runs[r][lo[r], hi[r]) into out from element 0 on, stable (ties go to the earlier run).
template <class K>
void merge_pieces(const std::vector<Run<K>>& runs, const std::vector<std::uint64_t>& lo,
                  const std::vector<std::uint64_t>& hi, K* out, std::byte* out_values, std::size_t value_bytes,
                  const SortKey<K>& sk) {
  std::vector<std::uint64_t> at = lo;
  std::uint64_t o = 0;
  auto emit = [&](std::size_t r) {
    out[o] = runs[r].keys[at[r]];
    if (value_bytes) std::memcpy(out_values + o * value_bytes, runs[r].values + at[r] * value_bytes, value_bytes);
    ++o;
    ++at[r];
  };
  std::vector<std::size_t> live;  // runs with elements left, in run order
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (at[r] < hi[r]) live.push_back(r);
  if (live.size() <= 8) {  // a scan of the heads' keys, the earliest run first: ties keep run order
    // Fixed arrays and a selection without branches (random keys make its comparisons unpredictable).
    std::uint64_t head[8];
    std::size_t run_of[8], n_live = live.size();
    for (std::size_t j = 0; j < n_live; ++j) run_of[j] = live[j], head[j] = sk(runs[live[j]].keys[at[live[j]]]);
    while (n_live > 1) {
      std::size_t best = 0;
      std::uint64_t best_key = head[0];
      for (std::size_t j = 1; j < n_live; ++j) {
        const bool less = head[j] < best_key;
        best = less ? j : best;
        best_key = less ? head[j] : best_key;
      }
      const std::size_t r = run_of[best];
      emit(r);
      if (at[r] == hi[r]) {
        for (std::size_t j = best; j + 1 < n_live; ++j) run_of[j] = run_of[j + 1], head[j] = head[j + 1];
        --n_live;
      } else {
        head[best] = sk(runs[r].keys[at[r]]);
      }
    }
    live.assign(run_of, run_of + n_live);
  } else {  // a heap of (key, run): the smaller run wins a tie
    using Head = std::pair<std::uint64_t, std::size_t>;
    std::vector<Head> heap;
    for (std::size_t r : live) heap.emplace_back(sk(runs[r].keys[at[r]]), r);
    const auto later = std::greater<Head>();
    std::make_heap(heap.begin(), heap.end(), later);
    while (heap.size() > 1) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const std::size_t r = heap.back().second;
      emit(r);
      if (at[r] == hi[r]) {
        heap.pop_back();
      } else {
        heap.back().first = sk(runs[r].keys[at[r]]);
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
    live.assign(heap.empty() ? 0 : 1, heap.empty() ? 0 : heap[0].second);
  }
  if (!live.empty()) {  // the last run left: one copy
    const std::size_t r = live[0], count = std::size_t(hi[r] - at[r]);
    std::memcpy(out + o, runs[r].keys + at[r], count * sizeof(K));
    if (value_bytes) std::memcpy(out_values + o * value_bytes, runs[r].values + at[r] * value_bytes, count * value_bytes);
  }
}

// For each place (at most the runs' total), where each run is cut: cut[r][b] elements of run r
// come before place b of the runs' stable merge (ties go to the earlier run).
template <class K>
std::vector<std::vector<std::uint64_t>> cuts_of_runs(const std::vector<Run<K>>& runs,
                                                     const std::vector<std::uint64_t>& places, const SortKey<K>& sk) {
  const std::vector<std::uint64_t> keys = keys_at_places(places, sk.bits(), [&](const std::vector<std::uint64_t>& c) {
    std::vector<std::uint64_t> sums(c.size(), 0);
    for (std::size_t b = 0; b < c.size(); ++b)
      for (const Run<K>& r : runs) sums[b] += count_below(r.keys, r.n, c[b], sk);
    return sums;
  });
  std::vector<std::vector<std::uint64_t>> below(runs.size()), through(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (std::uint64_t key : keys) {
      below[r].push_back(count_below(runs[r].keys, runs[r].n, key, sk));
      through[r].push_back(count_through(runs[r].keys, runs[r].n, key, sk));
    }
  return cuts_at_places(places, below, through);
}

// The stable merge of `runs` into out (and out_values), by up to `threads` host threads, each
// merging an even share of the output cut by cuts_at_places.
template <class K>
void merge_runs(const std::vector<Run<K>>& runs, K* out, std::byte* out_values, std::size_t value_bytes,
                const SortKey<K>& sk, unsigned threads) {
  std::uint64_t total = 0;
  for (const Run<K>& r : runs) total += r.n;
  const unsigned shares = unsigned(std::clamp<std::uint64_t>(total >> 16, 1, std::max(1u, threads)));
  std::vector<std::uint64_t> places;
  for (unsigned s = 1; s < shares; ++s) places.push_back(total * s / shares);
  const std::vector<std::vector<std::uint64_t>> cut = cuts_of_runs(runs, places, sk);
  auto share = [&](unsigned s) {
    std::vector<std::uint64_t> lo(runs.size()), hi(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
      lo[r] = s == 0 ? 0 : cut[r][s - 1];
      hi[r] = s + 1 == shares ? runs[r].n : cut[r][s];
    }
    const std::uint64_t from = s == 0 ? 0 : places[s - 1];
    merge_pieces(runs, lo, hi, out + from, value_bytes ? out_values + from * value_bytes : nullptr, value_bytes, sk);
  };
  if (shares == 1) return share(0);
  std::vector<std::thread> pool;
  for (unsigned s = 0; s < shares; ++s) pool.emplace_back(share, s);
  for (std::thread& t : pool) t.join();
}

}  // namespace radixmesh::mesh
