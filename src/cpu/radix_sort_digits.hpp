// Which digits an LSD radix sort of the bit range [begin_bit, end_bit) visits. Pure planning:
// no threads, no memory. (The CPU sort's in-cache LSD passes use it; so does the benchmark's floor.)
#pragma once
#include <array>
#include <cstddef>

namespace radixmesh::detail::cpu_radix {

inline constexpr int max_passes = 8;      // 64-bit keys in digits of at least 8 bits
inline constexpr int max_digit_bits = 11;  // 2048 buckets: counters and line buffers fit L1/L2

struct DigitPlan {
  int passes = 0;
  int radix_bits = 0;                     // the widest digit: histograms have 1 << radix_bits counters
  std::array<int, max_passes> shift{};    // digit p is (key >> shift[p]) & ((1 << bits[p]) - 1)
  std::array<int, max_passes> bits{};
  std::size_t radix() const { return std::size_t(1) << radix_bits; }
};

// Splits [begin_bit, end_bit) into the fewest digits of at most `digit_bits` (>= 8) bits, as even as
// possible (32 bits at 11 -> 11, 11, 10), least significant first.
inline DigitPlan plan_digits(int begin_bit, int end_bit, int digit_bits) {
  DigitPlan plan;
  const int width = end_bit - begin_bit;
  if (width <= 0) return plan;
  plan.passes = (width + digit_bits - 1) / digit_bits;
  const int base = width / plan.passes, wider = width % plan.passes;
  int shift = begin_bit;
  for (int p = 0; p < plan.passes; ++p) {
    plan.bits[p] = base + (p < wider ? 1 : 0);
    plan.shift[p] = shift;
    shift += plan.bits[p];
  }
  plan.radix_bits = plan.bits[0];
  return plan;
}

}  // namespace radixmesh::detail::cpu_radix
