// The built-in bucket functions behind functors per key *width*, so the host API's kernels are
// instantiated per width and shape (RuntimeShape) and not per key type x function. The key type
// (and, for the generic shape, the function) is chosen at run time; every branch calls the same
// code as the public functors in buckets.hpp (and the encodings of keys.hpp), so CPU and GPU agree.
//
// Why shapes: the generic functor's per-key switch over key type and function makes the host API
// 1.3-1.8x slower than the device-level entry with a compiled functor (H200, 2^28 u32,
// bench_multisplit at c7accdbd06f8: delta m = 2 keys 2.50 against 1.36 ms, m = 256 3.07 against
// 2.36). The shapes for 4- and 8-byte
// keys (delta over integers, splitters) compute the order-preserving encoding without a branch
// (RuntimeEncoding) and have one function each; 1- and 2-byte keys keep the generic shape, which
// halves the kernels compiled.
#pragma once
#include <cstdint>
#include <type_traits>

#include "radixmesh/buckets.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::cuda {

// keys.hpp's encode_key for the key type of width U named at run time, without a branch: unsigned
// keys unchanged, signed keys with the sign bit flipped, floats with every bit flipped when
// negative and the sign bit set when not, then less the count of negative NaN patterns.
template <class U> struct RuntimeEncoding {
  U sign_flip = 0;   // the sign bit for signed and floating-point keys, else 0
  U float_flip = 0;  // all ones for floating-point keys, else 0
  U bias = 0;        // floating-point keys: float_encoding's negative_nan_count, else 0

  // The constants of `type` (a key type of width U), from its key_traits and keys.hpp's encoding.
  static RuntimeEncoding of(KeyType type) {
    constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
    RuntimeEncoding e;
    visit_key_type(type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (sizeof(T) == sizeof(U)) {
        if constexpr (key_traits<T>::is_float) {
          e.sign_flip = sign;
          e.float_flip = U(~U(0));
          e.bias = detail::float_encoding<U, key_traits<T>::mantissa_bits>::negative_nan_count;
        } else if constexpr (std::is_signed_v<T>) {
          e.sign_flip = sign;
        }
      }
    });
    return e;
  }
  RXM_HOST_DEVICE U operator()(U raw) const {
    const U negative = U(U(0) - U(raw >> (sizeof(U) * 8 - 1)));  // all ones when the top bit is set
    return U(U(raw ^ U(sign_flip | U(float_flip & negative))) - bias);
  }
};

// Which functions a RuntimeBuckets instantiation computes: `any` (every kind and key type, a
// run-time switch per key), `delta_integer` (delta buckets over integer keys, on the encoding),
// `splitters` (a search of the encoded boundaries) or `hash` (buckets::hash of the key's bits,
// its 64-bit modulo done as three 32-bit multiplicative ones).
enum class RuntimeShape { any, delta_integer, splitters, hash };

// x mod m for 32-bit x and 1 <= m <= 2^16 by one multiplication (Lemire, Kaser and Kurz, "Faster
// remainder by direct computation", 2019): with c = floor((2^64 - 1) / m) + 1, x mod m is the
// high 64 bits of (c * x mod 2^64) * m.
struct FastMod32 {
  std::uint64_t c = 0;
  std::uint32_t m = 1;
  static FastMod32 of(std::uint32_t m) { return {~std::uint64_t(0) / m + 1, m}; }
  RXM_HOST_DEVICE std::uint32_t operator()(std::uint32_t x) const {
    const std::uint64_t low = c * x;
#if defined(__CUDA_ARCH__)
    return std::uint32_t(__umul64hi(low, m));
#else  // the high 64 bits of low * m from 32-bit halves (m <= 2^16: no partial product overflows)
    return std::uint32_t(((low >> 32) * m + (((low & 0xFFFFFFFFu) * m) >> 32)) >> 32);
#endif
  }
};

// buckets::hash's id, h mod m for the 64-bit mix h, from 32-bit remainders:
// h mod m = ((h_hi mod m) * (2^32 mod m) + h_lo mod m) mod m, every product below 2^32 for m <= 2^16.
struct HashBuckets {
  FastMod32 mod;
  std::uint32_t two32_mod_m = 0;
  static HashBuckets of(std::uint32_t m) {
    return {FastMod32::of(m), std::uint32_t((std::uint64_t(1) << 32) % m)};
  }
  RXM_HOST_DEVICE std::uint32_t operator()(std::uint64_t bits) const {
    const std::uint64_t h = buckets::hash::mix(bits);
    const std::uint32_t high = mod(mod(std::uint32_t(h >> 32)) * two32_mod_m), low = mod(std::uint32_t(h));
    const std::uint32_t sum = high + low;
    return sum >= mod.m ? sum - mod.m : sum;
  }
};

// What a bucket function of the host API is at run time (filled from detail::BucketSpec), and the
// generic per-key switch over key type and function.
template <class U> struct RuntimeBucketParams {
  using Kind = detail::BucketSpec::Kind;
  using key_bits_type = U;
  RuntimeEncoding<U> encoding{};
  KeyType type = KeyType::u32;
  Kind kind = Kind::radix_digit;
  buckets::radix_digit digit{};
  std::uint32_t m = 1;
  std::uint64_t delta_lo_encoded = 0, delta_width = 1;
  std::uint32_t delta_reciprocal = 0;
  double delta_lo_value = 0, delta_scale = 0;
  const U* encoded_splitters = nullptr;  // device memory, m - 1 of them, encoded
  std::uint32_t splitter_count = 0;
  buckets::detail::splitter_index<U> index{};  // built by the kernels over their shared copy
  HashBuckets hash{};                          // Kind::hash, m <= 2^16
  // Optional, device memory, m entries: a key of id b < m goes to bucket remap[b] of the split
  // (the mesh's orders: descending digits, owners, an owner's own buckets); ids >= m go to
  // remap_out_of_range (past every bucket in the checked mode, so that it reports them).
  const std::uint32_t* remap = nullptr;
  std::uint32_t remap_out_of_range = 0xFFFFFFFFu;

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

  // Boundaries <= e among the encoded splitters (the id of a splitters bucket).
  RXM_HOST_DEVICE std::uint32_t splitter_rank(U e) const {
    return buckets::detail::boundaries_at_most(e, splitter_count, index,
                                               [&](std::uint32_t i) { return encoded_splitters[i]; });
  }

  // The id of any built-in function on any key type of this width.
  RXM_HOST_DEVICE std::uint32_t any_kind(U raw) const {
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
        case Kind::hash: return buckets::hash{m}(key);
        default: return splitter_rank(encode_key(key));  // splitters, searched on their encodings
      }
    });
  }
};

// The functor the kernels run: one shape of the parameters above.
template <class U, RuntimeShape Shape = RuntimeShape::any> struct RuntimeBuckets : RuntimeBucketParams<U> {
  using Params = RuntimeBucketParams<U>;
  RuntimeBuckets() = default;
  explicit RuntimeBuckets(const Params& params) : Params(params) {}

  // Splitters as a lookup table the kernels stage in shared memory (see buckets::splitters).
  RXM_HOST_DEVICE const void* table() const { return this->encoded_splitters; }
  RXM_HOST_DEVICE std::size_t table_bytes() const {
    return this->kind == Params::Kind::splitters ? std::size_t(this->splitter_count) * sizeof(U) : 0;
  }
  RXM_HOST_DEVICE RuntimeBuckets with_table(const void* copy) const {
    RuntimeBuckets staged = *this;
    staged.encoded_splitters = static_cast<const U*>(copy);
    return staged;
  }
  RXM_HOST_DEVICE std::uint32_t boundary_count() const {
    return this->kind == Params::Kind::splitters ? this->splitter_count : 0;
  }
  RXM_HOST_DEVICE U encoded_boundary(std::uint32_t i) const { return this->encoded_splitters[i]; }
  RXM_HOST_DEVICE RuntimeBuckets with_index(const buckets::detail::splitter_index<U>& built) const {
    RuntimeBuckets indexed = *this;
    indexed.index = built;
    return indexed;
  }

  RXM_HOST_DEVICE std::uint32_t operator()(U raw) const {
    const std::uint32_t id = id_of(raw);
    if (this->remap == nullptr) return id;
    return id < this->m ? this->remap[id] : this->remap_out_of_range;
  }

 private:
  RXM_HOST_DEVICE std::uint32_t id_of(U raw) const {
    if constexpr (Shape == RuntimeShape::delta_integer)
      return buckets::detail::delta_of_encoded(this->encoding(raw), this->delta_lo_encoded, this->delta_width,
                                               this->delta_reciprocal, this->m);
    else if constexpr (Shape == RuntimeShape::splitters)
      return this->splitter_rank(this->encoding(raw));
    else if constexpr (Shape == RuntimeShape::hash)
      return this->hash(std::uint64_t(raw));
    else
      return this->any_kind(raw);
  }
};

}  // namespace radixmesh::cuda
