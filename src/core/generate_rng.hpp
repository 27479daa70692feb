// generate_rng.hpp — the small counter-based random streams behind rxm::generate.
//
// Each fixed-size chunk of the output gets its own stream, seeded by hashing (seed, purpose,
// chunk index), so the array does not depend on how chunks are spread over threads.
// The stream is SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): one add and a 64-bit finaliser per draw, passes BigCrush.
#pragma once
#include <cstdint>

namespace radixmesh::detail {

__extension__ typedef unsigned __int128 uint128_t;  // __extension__: GCC/Clang builtin under -Wpedantic

// The SplitMix64 / MurmurHash3 64-bit finaliser: a bijective mix of all 64 bits.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What a stream is for, so that e.g. the special-value pass never reuses the values' draws.
enum class StreamPurpose : std::uint64_t { values = 1, specials = 2, swaps = 3, parameters = 4 };

class RandomStream {
 public:
  constexpr RandomStream(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index)
      : state_(mix64(mix64(seed ^ (std::uint64_t(purpose) * 0x9e3779b97f4a7c15ull)) + index)) {}

  constexpr std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix64(state_);
  }
  // Uniform in [0, 1) with 53 random bits.
  double next_unit() { return double(next() >> 11) * 0x1p-53; }
  // Uniform in (0, 1]: safe to take the logarithm of.
  double next_unit_open_zero() { return double((next() >> 11) + 1) * 0x1p-53; }
  // In [0, range) by Lemire's multiply-high (range 0 means 2^64). Bias at most range/2^64,
  // which no test can see, and no rejection keeps the draw count per element fixed.
  std::uint64_t next_below(std::uint64_t range) {
    std::uint64_t x = next();
    if (range == 0) return x;
    return std::uint64_t((uint128_t(x) * range) >> 64);
  }
  // In [0, range) for range in [1, 2^64].
  std::uint64_t next_below_wide(uint128_t range) {
    return range >= (uint128_t(1) << 64) ? next() : next_below(std::uint64_t(range));
  }

 private:
  std::uint64_t state_;
};

}  // namespace radixmesh::detail
