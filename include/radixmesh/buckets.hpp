// radixmesh/buckets.hpp — bucket functions for multisplit, callable on host and device.
//
// A bucket function maps a key to a bucket id in [0, m) and says m through num_buckets(). Every
// one here is a plain struct of trivially copyable fields, so it can be passed by value to a
// kernel. Ids are computed on the order-preserving encoding (keys.hpp) or, for delta buckets over
// floating-point keys, on the key's value, so the same function gives the same id on CPU and GPU.
//
// A user's own functor needs `std::uint32_t operator()(K key) const` (RXM_HOST_DEVICE to run on a
// GPU). Host-level rxm::multisplit takes m from bucket_offsets.size() - 1; functors that define
// num_buckets() are checked against it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/keys.hpp"

namespace radixmesh::buckets {

// The largest bucket count multisplit supports (ids fit in 16 bits).
inline constexpr std::uint32_t max_buckets = 65536;

// Digit `bits` wide starting at bit `shift` of the key's order-preserving encoding: bucket order is
// key order within the digit, for signed and floating-point keys too. shift + bits <= key width,
// 0 <= bits <= 16.
struct radix_digit {
  int shift = 0;
  int bits = 8;
  RXM_HOST_DEVICE std::uint32_t num_buckets() const { return std::uint32_t(1) << bits; }
  template <class K> RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    return digit_of_encoded(encode_key(key));
  }
  // The digit of an already-encoded key (what the kernels see). No test per key for m = 1: the
  // mask of bits == 0 is 0, and the shift is taken mod 64 (a shift of 64, undefined behaviour on
  // a 64-bit value, comes only with bits == 0). Mask and shift depend on the functor alone, so a
  // kernel computes them once, outside its loop over keys.
  template <class U> RXM_HOST_DEVICE std::uint32_t digit_of_encoded(U encoded) const {
    return std::uint32_t((std::uint64_t(encoded) >> (shift & 63)) & ((std::uint64_t(1) << bits) - 1));
  }
};

// Bucket id = the key's value as an integer, for unsigned or non-negative integer keys with
// key < m. A negative key gives an id >= m (an error in checked mode).
struct identity {
  std::uint32_t m = 1;
  RXM_HOST_DEVICE std::uint32_t num_buckets() const { return m; }
  template <class K> RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    static_assert(std::is_integral_v<K>, "buckets::identity needs integer keys");
    if constexpr (std::is_signed_v<K>) {
      if (key < 0) return 0xFFFFFFFFu;
    }
    const auto v = static_cast<std::uint64_t>(key);
    return v > 0xFFFFFFFFull ? 0xFFFFFFFFu : std::uint32_t(v);
  }
};

namespace detail {
// IEEE binary16 bits to float, exactly (subnormals, infinities and NaNs included). A conversion,
// not a key encoding: delta buckets over half keys work on the value.
RXM_HOST_DEVICE float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    exponent = 113u;
    while ((mantissa & 0x400u) == 0) { mantissa <<= 1; --exponent; }
    bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// The value of a floating-point key as a double (exact for every supported float type).
// 16-bit keys by their bits, whichever type names them (half_t, __half, std::float16_t, ...).
template <class K> RXM_HOST_DEVICE double float_value(K key) {
  if constexpr (key_type_v<K> == KeyType::f16) {
    return double(half_bits_to_float(to_bits(key)));
  } else if constexpr (key_type_v<K> == KeyType::bf16) {
    const std::uint32_t bits = std::uint32_t(to_bits(key)) << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return double(f);
  } else {
    return double(key);
  }
}

// floor(2^32 / width) for 2 <= width < 2^32, else 0: turns the division of delta buckets into a
// multiply-high and one correction (a GPU has no integer divider; a 64-bit division costs ~70 instructions).
RXM_HOST_DEVICE std::uint32_t delta_reciprocal(std::uint64_t width) {
  return width >= 2 && width <= 0xFFFFFFFFull ? std::uint32_t((std::uint64_t(1) << 32) / width) : 0;
}

// Equal-width ranges over encoded integers: the encoding of an integer type is the value plus a
// constant (mod 2^w), so ranges of equal width in the encoding are equal in value too.
RXM_HOST_DEVICE std::uint32_t delta_of_encoded(std::uint64_t encoded, std::uint64_t lo_encoded, std::uint64_t width,
                                               std::uint32_t reciprocal, std::uint32_t m) {
  if (encoded < lo_encoded) return 0;
  const std::uint64_t d = encoded - lo_encoded;
  std::uint64_t id;
  if (reciprocal != 0 && d <= 0xFFFFFFFFull) {
    // q0 = floor(d * floor(2^32 / w) / 2^32) is q or q - 1: one correction makes it exact.
    id = (d * reciprocal) >> 32;
    if (d - id * width >= width) ++id;
  } else {
    id = d / width;
  }
  return id >= m ? m - 1 : std::uint32_t(id);
}

// A prefix index over sorted encoded boundaries, which GPU kernels build beside their shared copy
// of a splitter table: bins equal-width ranges of encodings from the first boundary on, and
// lower[b] = how many boundaries lie in bins below b (lower[0] = 0, lower[bins] = count). The
// answer for a key in bin b (the number of boundaries <= it) is then in [lower[b], lower[b+1]],
// so a search of a few entries replaces one of log2(count) dependent shared-memory reads, most of
// them bank conflicts (paper §7.3 searches the whole table). Boundaries that crowd into a few
// bins (skewed samples) leave wide ranges: never worse than the plain search by more than the two
// index reads.
template <class E> struct splitter_index {
  const std::uint16_t* lower = nullptr;  // bins + 1 entries; nullptr: no index
  E first = 0;                           // the smallest boundary's encoding: bin 0 starts there
  int shift = 0;                         // the bin of e >= first is (e - first) >> shift
  std::uint32_t bins = 0;
  // [lo, hi]: where the count of boundaries <= e lies.
  RXM_HOST_DEVICE void narrow(E e, std::uint32_t& lo, std::uint32_t& hi) const {
    if (e < first) {
      lo = hi = 0;
      return;
    }
    const std::uint64_t offset = std::uint64_t(E(e - first)) >> shift;
    const std::uint32_t b = offset < bins ? std::uint32_t(offset) : bins - 1;
    lo = lower[b];
    hi = lower[b + 1];
  }
};

// Bins of the index over `count` boundaries (0: none; a handful of boundaries is searched as
// fast without): about four per boundary, at most 2048 (4 KB of 16-bit entries).
RXM_HOST_DEVICE constexpr std::uint32_t splitter_index_bins(std::uint32_t count) {
  if (count < 16) return 0;
  std::uint32_t bins = 64;
  while (bins < 4 * count && bins < 2048) bins *= 2;
  return bins;
}

// The number of boundaries <= e among `count` sorted ones, encoded by `encoded(i)`; `index`
// (when built) narrows the search first.
template <class E, class Encoded>
RXM_HOST_DEVICE std::uint32_t boundaries_at_most(E e, std::uint32_t count, const splitter_index<E>& index,
                                                 const Encoded& encoded) {
  std::uint32_t lo = 0, hi = count;  // first boundary > e
  if (index.lower != nullptr) index.narrow(e, lo, hi);
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (encoded(mid) <= e) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Equal-width ranges over values: NaN goes to the last bucket (NaNs sort after +inf).
RXM_HOST_DEVICE std::uint32_t delta_of_value(double x, double lo, double scale, std::uint32_t m) {
  if (x != x) return m - 1;
  if (!(x >= lo)) return 0;
  const double position = (x - lo) * scale;
  return position < double(m) ? std::uint32_t(position) : m - 1;  // the last bucket takes inf and NaN
}
}  // namespace detail

// m buckets by a well-mixed hash of the key's raw bits (splitmix64's finalizer over the bits
// widened to 64), modulo m: equal keys share a bucket and any key distribution spreads evenly
// over the buckets, the bucket function of hash joins and group-by. Keys hash by their bits, so
// +0.0 and -0.0 (and NaNs of different payloads) are different keys.
struct hash {
  std::uint32_t m = 1;
  RXM_HOST_DEVICE std::uint32_t num_buckets() const { return m; }
  RXM_HOST_DEVICE static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  template <class K> RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    return std::uint32_t(mix(std::uint64_t(to_bits(key))) % (m == 0 ? 1 : m));
  }
};

// m equal-width ranges over [lo, hi) in the key's value domain (the paper's delta-buckets, §1):
// integers get width ceil((hi - lo) / m) and id = (key - lo) / width; floats get
// id = floor((key - lo) * m / (hi - lo)) in double precision. Keys below lo go to bucket 0, keys at
// or above hi (and NaNs) to bucket m - 1. Needs lo < hi, m >= 1, and for floats finite lo and hi.
template <class K> struct delta {
  std::uint32_t m = 1;
  std::uint64_t lo_encoded = 0, width = 1;  // integer keys
  std::uint32_t reciprocal = 0;             // delta_reciprocal(width)
  double lo_value = 0, scale = 0;           // floating-point keys
  K lo{}, hi{};

  delta() = default;
  RXM_HOST_DEVICE delta(K lo_, K hi_, std::uint32_t m_) : m(m_ == 0 ? 1 : m_), lo(lo_), hi(hi_) {
    if constexpr (key_traits<K>::is_float) {
      lo_value = detail::float_value(lo);
      scale = double(m) / (detail::float_value(hi) - lo_value);
    } else {
      lo_encoded = encode_key(lo);
      const std::uint64_t range = std::uint64_t(encode_key(hi)) - lo_encoded;  // hi > lo assumed
      width = range / m + (range % m != 0);
      if (width == 0) width = 1;
      reciprocal = detail::delta_reciprocal(width);
    }
  }
  RXM_HOST_DEVICE std::uint32_t num_buckets() const { return m; }
  RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    if constexpr (key_traits<K>::is_float) {
      return detail::delta_of_value(detail::float_value(key), lo_value, scale, m);
    } else {
      return detail::delta_of_encoded(encode_key(key), lo_encoded, width, reciprocal, m);
    }
  }
};
template <class K> delta(K, K, std::uint32_t) -> delta<K>;

// Arbitrary ranges: `count` sorted boundaries (m = count + 1 buckets); id = number of boundaries
// <= key under key_less (so a key equal to a boundary goes to the bucket above it). `data` must
// be readable where the functor runs: host memory for the CPU backend, device memory in a kernel
// (host-level rxm::multisplit copies it for you).
template <class K> struct splitters {
  const K* data = nullptr;
  std::uint32_t count = 0;
  // Set by the GPU kernels over their shared copy of the table (detail::splitter_index); leave
  // it empty.
  detail::splitter_index<key_bits_t<K>> index{};

  RXM_HOST_DEVICE std::uint32_t num_buckets() const { return count + 1; }
  // The boundaries as a lookup table: GPU kernels copy it to shared memory once per block, index
  // it and search it there (paper §7.3) through with_table(copy) and with_index; host code never
  // needs these.
  RXM_HOST_DEVICE const void* table() const { return data; }
  RXM_HOST_DEVICE std::size_t table_bytes() const { return std::size_t(count) * sizeof(K); }
  RXM_HOST_DEVICE splitters with_table(const void* copy) const { return {static_cast<const K*>(copy), count, index}; }
  RXM_HOST_DEVICE std::uint32_t boundary_count() const { return count; }
  RXM_HOST_DEVICE key_bits_t<K> encoded_boundary(std::uint32_t i) const { return encode_key(data[i]); }
  RXM_HOST_DEVICE splitters with_index(const detail::splitter_index<key_bits_t<K>>& built) const {
    return {data, count, built};
  }
  RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    return detail::boundaries_at_most(encode_key(key), count, index,
                                      [&](std::uint32_t i) { return encode_key(data[i]); });
  }
};

}  // namespace radixmesh::buckets
