// The shuffle's CPU model, shared by the threads and MPI tests: concatenate every device's shard
// in device order, stable-partition by bucket, and cut the buckets per owner. Plus a checker that
// compares one device's result to it bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "radixmesh/keys.hpp"
#include "radixmesh/shuffle.hpp"

namespace radixmesh::testing {

template <class K, class V> struct ModelShard {
  std::vector<K> keys;
  std::vector<V> values;
  std::vector<std::uint64_t> offsets;
};

template <class K, class V, class F>
std::vector<ModelShard<K, V>> shuffle_model(const std::vector<std::vector<K>>& shards,
                                            const std::vector<std::vector<V>>& values, const F& f,
                                            const std::vector<int>& owner, int size) {
  const std::size_t m = owner.size();
  std::vector<std::vector<std::size_t>> members(m);  // (device, index) pairs per bucket, in order
  std::vector<std::pair<int, std::size_t>> where;
  for (std::size_t d = 0; d < shards.size(); ++d)
    for (std::size_t i = 0; i < shards[d].size(); ++i) {
      members[f(shards[d][i])].push_back(where.size());
      where.emplace_back(int(d), i);
    }
  std::vector<ModelShard<K, V>> out(static_cast<std::size_t>(size));
  for (auto& o : out) o.offsets.assign(m + 1, 0);
  for (std::size_t b = 0; b < m; ++b) {
    for (auto& o : out) o.offsets[b] = o.keys.size();
    auto& o = out[std::size_t(owner[b])];
    for (std::size_t at : members[b]) {
      const auto [d, i] = where[at];
      o.keys.push_back(shards[std::size_t(d)][i]);
      if (!values.empty()) o.values.push_back(values[std::size_t(d)][i]);
    }
  }
  for (auto& o : out) o.offsets[m] = o.keys.size();
  return out;
}

template <class K, class V, class Shard>
void expect_shard_matches(const Shard& got, const ModelShard<K, V>& want, const std::string& what) {
  ASSERT_EQ(got.keys.size(), want.keys.size()) << what;
  ASSERT_EQ(got.bucket_offsets, want.offsets) << what;
  for (std::size_t i = 0; i < want.keys.size(); ++i)
    ASSERT_EQ(to_bits(got.keys[i]), to_bits(want.keys[i])) << what << " key " << i;
  if constexpr (!std::is_same_v<V, no_values>) {
    ASSERT_EQ(got.values.size(), want.values.size()) << what;
    for (std::size_t i = 0; i < want.values.size(); ++i) ASSERT_EQ(got.values[i], want.values[i]) << what << " value " << i;
  }
}

// Owner maps the tests walk: round-robin, blocks, everything on the last device.
inline std::vector<int> owners(const std::string& kind, std::size_t m, int size) {
  std::vector<int> o(m);
  for (std::size_t b = 0; b < m; ++b) {
    if (kind == "round-robin") o[b] = int(b % std::size_t(size));
    else if (kind == "block") o[b] = int(b * std::size_t(size) / m);
    else o[b] = size - 1;
  }
  return o;
}

}  // namespace radixmesh::testing
