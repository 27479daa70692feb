// Test inputs shared by the CPU and GPU multisplit tests: a key of any type from a number, and a
// sorted random sample of the keys (splitters).
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

}  // namespace radixmesh::testing
