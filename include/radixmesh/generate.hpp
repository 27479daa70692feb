// radixmesh/generate.hpp — deterministic, seeded, parallel data generators.
//
// The same (distribution, options, n, type) always gives the same array, whatever the thread
// count: each fixed-size chunk of the output draws from its own counter-based random stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "radixmesh/key_types.hpp"

namespace radixmesh {

enum class Distribution {
  uniform,          // every bit pattern of the type equally likely (floats: uniform in [lo, hi))
  normal,           // N(mean, stddev), rounded/clamped for integers
  zipf,             // Zipf(s) ranks 1..zipf_universe, mapped to keys by a fixed permutation
  sorted,           // ascending
  reverse_sorted,   // descending
  nearly_sorted,    // ascending with a fraction of elements swapped at random
  all_equal,        // one value
  few_distinct,     // `distinct` different values, uniformly chosen
  reduced_entropy,  // only the low `entropy_bits` bits random, the rest fixed (RMG's "skewed")
};

std::string_view name_of(Distribution d);
std::optional<Distribution> distribution_from_name(std::string_view name);  // "zipf", "nearly-sorted", ...

struct GenerateOptions {
  Distribution distribution = Distribution::uniform;
  std::uint64_t seed = 42;
  double zipf_s = 1.0;
  std::uint64_t zipf_universe = 1ull << 32;  // clamped to the type's range
  double mean = 0.0, stddev = 1.0;           // normal
  double lo = 0.0, hi = 1.0;                 // uniform floats: [lo, hi); ignored for integers
  bool float_full_range = false;             // uniform floats over every finite bit pattern instead
  int entropy_bits = 8;                      // reduced_entropy
  std::uint64_t distinct = 16;               // few_distinct
  double swap_fraction = 0.01;               // nearly_sorted
  // Floats only: this fraction of elements replaced by NaN, +-inf, +-0 and denormals.
  double special_fraction = 0.0;
  unsigned threads = 0;                      // 0: all hardware threads
};

void generate(KeyType type, void* out, std::size_t n, const GenerateOptions& options);

template <class T> void generate(std::span<T> out, const GenerateOptions& options) {
  generate(key_type_v<T>, out.data(), out.size(), options);
}

}  // namespace radixmesh
