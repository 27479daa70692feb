// radixmesh/generate.hpp — deterministic, seeded, parallel data generators.
//
// The same (distribution, options, n, type) always gives the same array, whatever the thread
// count: each chunk of 2^16 elements draws from its own SplitMix64 stream seeded by
// (seed, chunk index). Changing n only changes the last chunk and the sorted family's spacing.
//
// The value range. Integers: every bit pattern. Floats: [lo, hi), or every finite value with
// float_full_range. uniform draws floats uniformly in *value*; the other distributions work in
// the order-preserving encoding of keys.hpp, where that range is one contiguous run of integers:
// sorted/reverse/nearly-sorted spread n keys evenly over it (the i-th key is random within the
// i-th of n equal slices, so they cover the whole range, not 0..n), few_distinct picks its values
// one per slice (so they are distinct), zipf maps ranks onto it by a fixed bijective scramble (the
// popular keys are the same for every seed and spread over the range), reduced_entropy fixes the
// high bits *of the encoding* (for unsigned integers, of the key itself). normal ignores the range.
// Floats never get NaN or inf except through special_fraction.
//
// Bad options throw Error(invalid_argument) naming the option and the fix, before anything is
// written: distinct = 0 or more than the range holds, entropy_bits outside 0..width (for floats, a
// block of 2^entropy_bits encodings must fit inside the range), lo >= hi or non-finite in the type,
// zipf_s <= 0, zipf_universe = 0, stddev < 0, fractions outside [0, 1], special_fraction > 0 for
// an integer type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "radixmesh/export.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh {

enum class Distribution {
  uniform,          // every bit pattern of the type equally likely (floats: uniform in [lo, hi))
  normal,           // N(mean, stddev) by Box-Muller, rounded/clamped for integers
  zipf,             // Zipf(s) ranks 1..zipf_universe, mapped to keys by a fixed permutation
                    // (rejection-inversion sampling: O(1) per key, any s > 0, any universe)
  sorted,           // ascending (under key_less), spread over the whole range
  reverse_sorted,   // descending, spread over the whole range
  nearly_sorted,    // sorted, then round(swap_fraction * n / 2) swaps of random pairs
  all_equal,        // one value, chosen by the seed
  few_distinct,     // `distinct` different values, each element picks one uniformly
  reduced_entropy,  // only the low `entropy_bits` bits random, the rest fixed (RMG's "skewed")
};

RXM_API std::string_view name_of(Distribution d);
// "uniform", "normal", "zipf", "sorted", "reverse", "nearly-sorted", "all-equal", "few-distinct",
// "reduced-entropy"; '_' for '-', any case, and "reverse-sorted" are accepted too.
RXM_API std::optional<Distribution> distribution_from_name(std::string_view name);

struct GenerateOptions {
  Distribution distribution = Distribution::uniform;
  std::uint64_t seed = 42;
  double zipf_s = 1.0;
  std::uint64_t zipf_universe = 1ull << 32;  // clamped to the number of keys in the range
  double mean = 0.0, stddev = 1.0;           // normal
  double lo = 0.0, hi = 1.0;                 // uniform floats: [lo, hi); ignored for integers
  bool float_full_range = false;             // uniform floats over every finite bit pattern instead
  int entropy_bits = 8;                      // reduced_entropy: 0 (all equal) .. width
  std::uint64_t distinct = 16;               // few_distinct
  double swap_fraction = 0.01;               // nearly_sorted
  // Floats only: this fraction of elements (each independently) replaced by NaNs of both signs
  // and several payloads, +-inf, +-0 and denormals; the other elements are as without it.
  double special_fraction = 0.0;
  unsigned threads = 0;                      // 0: all hardware threads
};

RXM_API void generate(KeyType type, void* out, std::size_t n, const GenerateOptions& options);

template <class T> void generate(std::span<T> out, const GenerateOptions& options) {
  generate(key_type_v<T>, out.data(), out.size(), options);
}

}  // namespace radixmesh
