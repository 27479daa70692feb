// The mesh top-k's test cases, shared by the CPU-mesh, MPI and GPU tests: a global batch (rows x
// columns, row-major; one row for a plain array) cut into column shards of uneven widths, some
// empty, the expected result (the single-device top-k of the whole batch on the CPU backend), and
// the check of every path against it.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "radixmesh/context.hpp"
#include "radixmesh/topk.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::testing {

// Column widths of `devices` shards that add up to `columns`: uneven, with empty shards and
// shards narrower than small k's.
inline std::vector<std::size_t> topk_shard_widths(std::size_t columns, int devices, std::uint64_t salt) {
  std::vector<std::size_t> weights(static_cast<std::size_t>(devices));
  for (std::size_t d = 0; d < weights.size(); ++d) weights[d] = (d * 5 + salt) % 4;  // 0..3: some zero
  std::size_t sum = 0;
  for (auto w : weights) sum += w;
  if (sum == 0) weights[0] = sum = 1;
  std::vector<std::size_t> widths(weights.size());
  std::size_t given = 0;
  for (std::size_t d = 0; d < weights.size(); ++d) {
    widths[d] = d + 1 == weights.size() ? columns - given : columns * weights[d] / sum;
    given += widths[d];
  }
  return widths;
}

// Device d's shard: its columns of every row, row-major.
template <class T>
std::vector<std::vector<T>> column_shards(const std::vector<T>& batch, std::size_t rows,
                                          const std::vector<std::size_t>& widths) {
  std::size_t columns = 0;
  for (auto w : widths) columns += w;
  std::vector<std::vector<T>> shards;
  std::size_t first = 0;
  for (std::size_t w : widths) {
    std::vector<T>& s = shards.emplace_back(rows * w);
    for (std::size_t r = 0; r < rows; ++r)
      std::copy_n(batch.begin() + std::ptrdiff_t(r * columns + first), w, s.begin() + std::ptrdiff_t(r * w));
    first += w;
  }
  return shards;
}

// The single-device top-k of the whole batch (the CPU backend: the reference).
template <class T, class Index>
TopkResult<T, Index> expected_topk(const std::vector<T>& batch, std::size_t rows, std::size_t k,
                                   const TopkOptions& options) {
  auto cpu = Context::cpu(2);
  return topk_batched<T, Index>(cpu, std::span<const T>(batch), Rows::uniform(rows, batch.size() / rows), k, options);
}

// The entries of a top-k result whose index lies in [lo, hi), in the result's order: what
// topk_distributed leaves on the device whose shard spans those indices.
template <class T, class Index>
TopkResult<T, Index> winners_in(const TopkResult<T, Index>& all, std::uint64_t lo, std::uint64_t hi) {
  TopkResult<T, Index> part;
  part.rows = 1;
  for (std::size_t e = 0; e < all.indices.size(); ++e)
    if (std::uint64_t(all.indices[e]) >= lo && std::uint64_t(all.indices[e]) < hi) {
      part.values.push_back(all.values[e]);
      part.indices.push_back(all.indices[e]);
    }
  part.k = part.values.size();
  return part;
}

// Byte-identical values and indices.
template <class T, class Index>
bool same_topk(const TopkResult<T, Index>& a, const TopkResult<T, Index>& b, std::string* why) {
  if (a.values.size() != b.values.size() || a.indices.size() != b.indices.size()) {
    *why = "sizes " + std::to_string(a.values.size()) + " and " + std::to_string(b.values.size());
    return false;
  }
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (std::memcmp(&a.values[i], &b.values[i], sizeof(T)) != 0 || a.indices[i] != b.indices[i]) {
      *why = "entry " + std::to_string(i) + ": index " + std::to_string(a.indices[i]) + " where one device gives " +
             std::to_string(b.indices[i]);
      return false;
    }
  return true;
}

// The option combinations every case runs: largest/smallest x sorted/not x NaN policy.
inline std::vector<TopkOptions> topk_option_sets(bool floating) {
  std::vector<TopkOptions> sets;
  for (bool largest : {true, false})
    for (bool sorted : {false, true})
      for (bool nan : {false, true})
        if (floating || !nan) sets.push_back({.largest = largest, .sorted = sorted, .include_nan = nan});
  return sets;
}

inline std::string options_text(const TopkOptions& o) {
  return std::string(o.largest ? "largest" : "smallest") + (o.sorted ? " sorted" : "") +
         (o.include_nan ? " include_nan" : "");
}

// topk (one array: by both paths, the candidates and the radix select) or topk_batched (rows: the
// automatic path) over `shards` (device spans or host spans), each result against `want`.
template <class T, class Index, class Span>
void expect_every_path(Context& ctx, std::span<const Span> shards, std::size_t rows, std::size_t k,
                       const TopkOptions& o, bool batched, const TopkResult<T, Index>& want, const std::string& what) {
  std::vector<TopkShardPath> paths = {TopkShardPath::automatic};
  if (!batched) paths = {TopkShardPath::candidates, TopkShardPath::radix_select};
  for (TopkShardPath path : paths) {
    TopkPhases phases;
    const auto got = batched ? topk_batched<T, Index>(ctx, shards, rows, k, o, {path, &phases})
                             : topk<T, Index>(ctx, shards, k, o, {path, &phases});
    std::string why;
    ASSERT_TRUE(same_topk(got, want, &why))
        << what << " k " << k << " " << options_text(o) << " path " << int(path) << ": " << why;
    if (path != TopkShardPath::automatic) {
      ASSERT_EQ(phases.path, path);
    }
  }
}

}  // namespace radixmesh::testing
