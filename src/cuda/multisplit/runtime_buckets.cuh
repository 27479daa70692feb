// The built-in bucket functions behind one functor per key *width*, so the host API's kernels are
// instantiated per width (4 widths x 3 value widths) and not per key type x function. The key type
// and function are chosen at run time by a warp-uniform switch; every branch calls the same code
// as the public functors in buckets.hpp (and the encodings of keys.hpp), so CPU and GPU agree.
#pragma once
#include <cstdint>

#include "radixmesh/buckets.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::cuda {

template <class U> struct RuntimeBuckets {
  using Kind = detail::BucketSpec::Kind;
  KeyType type = KeyType::u32;
  Kind kind = Kind::radix_digit;
  buckets::radix_digit digit{};
  std::uint32_t m = 1;
  std::uint64_t delta_lo_encoded = 0, delta_width = 1;
  std::uint32_t delta_reciprocal = 0;
  double delta_lo_value = 0, delta_scale = 0;
  const U* encoded_splitters = nullptr;  // device memory, m - 1 of them, encoded
  std::uint32_t splitter_count = 0;

  // Splitters as a lookup table the kernels stage in shared memory (see buckets::splitters).
  RXM_HOST_DEVICE const void* table() const { return encoded_splitters; }
  RXM_HOST_DEVICE std::size_t table_bytes() const {
    return kind == Kind::splitters ? std::size_t(splitter_count) * sizeof(U) : 0;
  }
  RXM_HOST_DEVICE RuntimeBuckets with_table(const void* copy) const {
    RuntimeBuckets staged = *this;
    staged.encoded_splitters = static_cast<const U*>(copy);
    return staged;
  }

  // Calls f(T{}) for the key type of this width named by `type`.
  template <class F> RXM_HOST_DEVICE std::uint32_t with_type(F&& f) const {
    if constexpr (sizeof(U) == 1) {
      return type == KeyType::i8 ? f(std::int8_t{}) : f(std::uint8_t{});
    } else if constexpr (sizeof(U) == 2) {
      switch (type) {
        case KeyType::i16: return f(std::int16_t{});
        case KeyType::f16: return f(half_t{});
        case KeyType::bf16: return f(bfloat16_t{});
        default: return f(std::uint16_t{});
      }
    } else if constexpr (sizeof(U) == 4) {
      switch (type) {
        case KeyType::i32: return f(std::int32_t{});
        case KeyType::f32: return f(float{});
        default: return f(std::uint32_t{});
      }
    } else {
      switch (type) {
        case KeyType::i64: return f(std::int64_t{});
        case KeyType::f64: return f(double{});
        default: return f(std::uint64_t{});
      }
    }
  }

  RXM_HOST_DEVICE std::uint32_t operator()(U raw) const {
    return with_type([&](auto tag) -> std::uint32_t {
      using T = decltype(tag);
      const T key = from_bits<T>(raw);
      switch (kind) {
        case Kind::radix_digit: return digit(key);
        case Kind::identity:
          if constexpr (std::is_integral_v<T>) return buckets::identity{m}(key);
          else return 0xFFFFFFFFu;
        case Kind::delta:
          if constexpr (key_traits<T>::is_float)
            return buckets::detail::delta_of_value(buckets::detail::float_value(key), delta_lo_value, delta_scale, m);
          else
            return buckets::detail::delta_of_encoded(encode_key(key), delta_lo_encoded, delta_width, delta_reciprocal, m);
        default: {  // splitters, searched on their encodings
          const U e = encode_key(key);
          std::uint32_t lo = 0, hi = splitter_count;
          while (lo < hi) {
            const std::uint32_t mid = (lo + hi) / 2;
            if (encoded_splitters[mid] <= e) lo = mid + 1; else hi = mid;
          }
          return lo;
        }
      }
    });
  }
};

}  // namespace radixmesh::cuda
