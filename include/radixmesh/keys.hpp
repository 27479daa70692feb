// radixmesh/keys.hpp — order-preserving unsigned encodings of every key type.
//
// Every algorithm works on these encodings, so kernels are instantiated per key *width*, not per
// type, and descending order is one more encoding (the complement). The mapping is a bijection:
// decode(encode(x)) gives back x bit for bit, NaN payloads and signs included.
//
// Order (ascending): -inf < ... < -0.0 < +0.0 < ... < +inf < NaNs. Positive NaNs come first by
// payload, then negative NaNs by payload, largest first; every NaN sorts after +inf. Built from the usual float trick
// (negative: flip all bits; positive: flip the sign bit), which puts negative NaNs *below* -inf,
// then rotated down by the count of negative NaNs so that -inf lands on 0 and the negative NaNs
// wrap round to the top. Integers: unsigned as is, signed with the sign bit flipped.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "radixmesh/key_types.hpp"

#if defined(__CUDACC__)
#define RXM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RXM_HOST_DEVICE inline
#endif

namespace radixmesh {

template <int Bytes> struct unsigned_of_size;
template <> struct unsigned_of_size<1> { using type = std::uint8_t; };
template <> struct unsigned_of_size<2> { using type = std::uint16_t; };
template <> struct unsigned_of_size<4> { using type = std::uint32_t; };
template <> struct unsigned_of_size<8> { using type = std::uint64_t; };
template <int Bytes> using unsigned_of_size_t = typename unsigned_of_size<Bytes>::type;

enum class Order { ascending, descending };

namespace detail {
template <class U, int MantissaBits> struct float_encoding {
  static constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  static constexpr U negative_nan_count = U((U(1) << MantissaBits) - 1);
  RXM_HOST_DEVICE static U encode(U x) {
    U flipped = (x & sign) ? U(~x) : U(x | sign);
    return U(flipped - negative_nan_count);
  }
  RXM_HOST_DEVICE static U decode(U e) {
    U flipped = U(e + negative_nan_count);
    return (flipped & sign) ? U(flipped & U(~sign)) : U(~flipped);
  }
};
}  // namespace detail

// key_traits<T>: bits_type (the unsigned encoding), to_bits/from_bits (raw reinterpretation),
// encode/decode (order-preserving), and `kind`.
template <class T, class Enable = void> struct key_traits;

template <class T>
struct key_traits<T, std::enable_if_t<std::is_integral_v<T>>> {
  using bits_type = unsigned_of_size_t<sizeof(T)>;
  static constexpr bool is_float = false;
  static constexpr bits_type flip = std::is_signed_v<T> ? bits_type(bits_type(1) << (sizeof(T) * 8 - 1)) : 0;
  RXM_HOST_DEVICE static bits_type encode_bits(bits_type raw) { return bits_type(raw ^ flip); }
  RXM_HOST_DEVICE static bits_type decode_bits(bits_type e) { return bits_type(e ^ flip); }
};

template <class T, class U, int MantissaBits> struct float_key_traits {
  using bits_type = U;
  static constexpr bool is_float = true;
  static constexpr int mantissa_bits = MantissaBits;
  RXM_HOST_DEVICE static bits_type encode_bits(bits_type raw) {
    return detail::float_encoding<U, MantissaBits>::encode(raw);
  }
  RXM_HOST_DEVICE static bits_type decode_bits(bits_type e) {
    return detail::float_encoding<U, MantissaBits>::decode(e);
  }
  // True for any NaN bit pattern (exponent all ones, mantissa nonzero).
  RXM_HOST_DEVICE static bool is_nan_bits(bits_type raw) {
    constexpr U abs_mask = U(~(U(1) << (sizeof(U) * 8 - 1)));
    constexpr U inf = U(abs_mask & U(~((U(1) << MantissaBits) - 1)));
    return U(raw & abs_mask) > inf;
  }
};
template <> struct key_traits<half_t> : float_key_traits<half_t, std::uint16_t, 10> {};
template <> struct key_traits<bfloat16_t> : float_key_traits<bfloat16_t, std::uint16_t, 7> {};
// Other names of the same bits (key_types.hpp): the traits of half_t and bfloat16_t.
template <> struct key_traits<::__half> : key_traits<half_t> {};
template <> struct key_traits<::__nv_bfloat16> : key_traits<bfloat16_t> {};
#if defined(__STDCPP_FLOAT16_T__)
template <> struct key_traits<std::float16_t> : key_traits<half_t> {};
#endif
#if defined(__STDCPP_BFLOAT16_T__)
template <> struct key_traits<std::bfloat16_t> : key_traits<bfloat16_t> {};
#endif
template <> struct key_traits<float> : float_key_traits<float, std::uint32_t, 23> {};
template <> struct key_traits<double> : float_key_traits<double, std::uint64_t, 52> {};

template <class T> using key_bits_t = typename key_traits<T>::bits_type;

template <class T> RXM_HOST_DEVICE key_bits_t<T> to_bits(T x) {
  key_bits_t<T> b;
  static_assert(sizeof(b) == sizeof(T));
  memcpy(&b, &x, sizeof(T));
  return b;
}
template <class T> RXM_HOST_DEVICE T from_bits(key_bits_t<T> b) {
  T x;
  memcpy(&x, &b, sizeof(T));
  return x;
}

// Encodes a key so that unsigned comparison of the result gives the requested order.
template <class T> RXM_HOST_DEVICE key_bits_t<T> encode_key(T x, Order order = Order::ascending) {
  key_bits_t<T> e = key_traits<T>::encode_bits(to_bits(x));
  return order == Order::ascending ? e : key_bits_t<T>(~e);
}
template <class T> RXM_HOST_DEVICE T decode_key(key_bits_t<T> e, Order order = Order::ascending) {
  if (order == Order::descending) e = key_bits_t<T>(~e);
  return from_bits<T>(key_traits<T>::decode_bits(e));
}

// Strict weak order on keys matching the encoding: what std::sort needs to agree with radixmesh.
template <class T> struct key_less {
  Order order = Order::ascending;
  RXM_HOST_DEVICE bool operator()(T a, T b) const { return encode_key(a, order) < encode_key(b, order); }
};

template <class T> RXM_HOST_DEVICE bool is_nan_key(T x) {
  if constexpr (key_traits<T>::is_float) return key_traits<T>::is_nan_bits(to_bits(x));
  else return false;
}

}  // namespace radixmesh
