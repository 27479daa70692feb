// Test inputs shared by the CPU and GPU multisplit tests: a key of any type from a number, a
// sorted random sample of the keys (splitters), and splitter tables shaped against the prefix index.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::testing {

template <class K> K key_of_value(double v) {
  if constexpr (std::is_same_v<K, half_t>) return half_from_float(float(v));
  else if constexpr (std::is_same_v<K, bfloat16_t>) return bfloat16_from_float(float(v));
  else return K(v);
}

template <class K> std::vector<K> sorted_sample(const std::vector<K>& keys, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> sample(count);
  for (auto& s : sample) s = keys.empty() ? K{} : keys[rng() % keys.size()];
  std::sort(sample.begin(), sample.end(), key_less<K>{});
  return sample;
}

// Sorted encodings of `count` splitter boundaries in shapes that make the prefix index of a staged
// table (buckets::detail::splitter_index) uneven: random, crowded into a window of 64 encodings,
// spanning the whole encoding range (the widest bins), runs of 8 equal, all equal.
template <class E> std::vector<std::vector<E>> uneven_boundary_encodings(std::uint32_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<E>> tables;
  std::vector<E> e(count);
  for (auto& x : e) x = E(rng());
  tables.push_back(e);
  const E center = E(rng());
  for (auto& x : e) x = E(center + E(rng() % 64));
  tables.push_back(e);
  for (auto& x : e) x = E(rng());
  e.front() = 0;
  e.back() = E(~E(0));
  tables.push_back(e);
  for (std::uint32_t i = 0; i < count; ++i) e[i] = i % 8 == 0 ? E(rng()) : e[i - 1];
  tables.push_back(e);
  std::fill(e.begin(), e.end(), E(rng()));
  tables.push_back(e);
  for (auto& t : tables) std::sort(t.begin(), t.end());
  return tables;
}

}  // namespace radixmesh::testing
