// generate_domain.hpp — the set of keys a generator draws from, in the order-preserving encoding.
//
// Integers: every bit pattern. Floats: the encodings of [lo, hi), or of every finite value with
// float_full_range (encodings 1 .. 2^w - 2^(m+1): -inf encodes to 0 and +inf just above +max,
// see keys.hpp). Because the encoding is monotone, "sorted", "distinct" and "high bits shared"
// are all statements about this one contiguous range of unsigned integers.
#pragma once
#include <cstdint>

#include "generate_rng.hpp"

namespace radixmesh::detail {

struct ValueDomain {
  std::uint64_t base = 0;  // the smallest encoded key
  uint128_t span = 0;      // how many encoded keys (up to 2^64)

  std::uint64_t at(uint128_t offset) const { return std::uint64_t(base + offset); }
  // A uniformly chosen key of the domain.
  std::uint64_t draw(RandomStream& stream) const { return at(stream.next_below_wide(span)); }
};

// A fixed bijection of [0, span): popular Zipf ranks land all over the key range instead of at
// the bottom. Multiply by an odd constant and xor-shift right are each bijective on b-bit
// integers; walking the cycle until the value falls below span keeps it a bijection of
// [0, span) (cycle-walking, Black & Rogaway 2002), taking < 2 steps on average since
// 2^b < 2 span.
class RankScramble {
 public:
  explicit RankScramble(uint128_t span) : span_(span) {
    while (bits_ < 64 && (uint128_t(1) << bits_) < span) ++bits_;
    mask_ = bits_ == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits_) - 1;
  }
  std::uint64_t operator()(std::uint64_t x) const {
    do x = permute(x);
    while (x >= span_);
    return x;
  }

 private:
  std::uint64_t permute(std::uint64_t x) const {
    int shift = (bits_ + 1) / 2;
    x = (x + 0x632be59bd9b4e019ull) & mask_;  // so that rank 1 (offset 0) does not map to 0
    x = (x * 0x9e3779b97f4a7c15ull) & mask_;
    x ^= x >> shift;
    x = (x * 0xbf58476d1ce4e5b9ull) & mask_;
    x ^= x >> shift;
    x = (x * 0x94d049bb133111ebull) & mask_;
    x ^= x >> shift;
    return x;
  }
  uint128_t span_;
  int bits_ = 0;
  std::uint64_t mask_ = 0;
};

// floor(index * span / count) for consecutive indices without a 128-bit division per step:
// the lower edges of `count` equal cells tiling [0, span).
class CellEdges {
 public:
  CellEdges(uint128_t span, std::uint64_t count, std::uint64_t first_index)
      : count_(count), step_quotient_(span / count), step_remainder_(std::uint64_t(span % count)) {
    uint128_t scaled = uint128_t(first_index) * span;  // < count * span <= 2^128
    quotient_ = scaled / count;
    remainder_ = std::uint64_t(scaled % count);
  }
  uint128_t current() const { return quotient_; }
  void advance() {
    quotient_ += step_quotient_;
    remainder_ += step_remainder_;  // both < count; a wrap past 2^64 also means >= count
    if (remainder_ >= count_ || remainder_ < step_remainder_) {
      remainder_ -= count_;
      ++quotient_;
    }
  }

 private:
  std::uint64_t count_;
  uint128_t step_quotient_;
  std::uint64_t step_remainder_;
  uint128_t quotient_;
  std::uint64_t remainder_;
};

}  // namespace radixmesh::detail
