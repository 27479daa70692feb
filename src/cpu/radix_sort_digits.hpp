// Which digits an LSD radix sort of the bit range [begin_bit, end_bit) visits, and which of them
// it may skip. Pure planning: no threads, no memory.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>

namespace radixmesh::detail::cpu_radix {

inline constexpr int max_passes = 8;      // 64-bit keys in digits of at least 8 bits
inline constexpr int max_digit_bits = 11;

struct DigitPlan {
  int passes = 0;
  int radix_bits = 0;                     // the widest digit: histograms have 1 << radix_bits counters
  std::array<int, max_passes> shift{};    // digit p is (key >> shift[p]) & ((1 << bits[p]) - 1)
  std::array<int, max_passes> bits{};
  std::size_t radix() const { return std::size_t(1) << radix_bits; }
};

// 11-bit digits take a third fewer passes than 8-bit ones but need 2048 buckets, whose
// histograms and line buffers only pay off once the data is far larger than the caches.
inline int digit_bits_for(std::size_t n) {
  if (const char* forced = std::getenv("RXM_CPU_SORT_DIGIT_BITS")) return std::clamp(std::atoi(forced), 8, max_digit_bits);
  return n >= (std::size_t(1) << 22) ? 11 : 8;
}

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

// A digit on which every key agrees moves nothing: the pass would be an identity copy.
inline bool digit_is_constant(const std::size_t* histogram, std::size_t radix, std::size_t n) {
  for (std::size_t d = 0; d < radix; ++d)
    if (histogram[d] != 0) return histogram[d] == n;
  return true;
}

}  // namespace radixmesh::detail::cpu_radix
