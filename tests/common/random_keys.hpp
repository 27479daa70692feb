// Test helpers: fresh random bit patterns of any key type, and the sizes every test walks.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "radixmesh/keys.hpp"

namespace radixmesh::testing {

// Sizes that catch off-by-one and tile-edge bugs: 0, 1, primes, just over powers of two.
inline const std::vector<std::size_t> awkward_sizes = {0, 1, 2, 3, 7, 31, 255, 257, 4093, 65537, 1'000'003};

// A seed that differs per run unless RXM_TEST_SEED pins it (printed by the test on failure).
std::uint64_t test_seed();

template <class T> std::vector<T> random_bit_patterns(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(n);
  for (auto& x : out) x = from_bits<T>(key_bits_t<T>(rng()));
  return out;
}

}  // namespace radixmesh::testing
