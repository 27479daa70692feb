// radixmesh/key_types.hpp — the element types radixmesh handles, named at run time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#if __has_include(<stdfloat>)
#include <stdfloat>
#endif

#include "radixmesh/export.hpp"

// CUDA's own 16-bit float types (cuda_fp16.h, cuda_bf16.h), declared as those headers declare
// them, so that key_type_of below names them whichever header a user includes first.
struct __half;
struct __nv_bfloat16;

namespace radixmesh {

// IEEE binary16 and bfloat16 as plain 16-bit storage. Arithmetic is not offered: radixmesh only
// orders them (through keys.hpp) and converts them to/from float for generators and printing.
struct half_t {
  std::uint16_t bits;
  friend bool operator==(half_t a, half_t b) { return a.bits == b.bits; }
};
struct bfloat16_t {
  std::uint16_t bits;
  friend bool operator==(bfloat16_t a, bfloat16_t b) { return a.bits == b.bits; }
};

RXM_API float to_float(half_t h);
RXM_API float to_float(bfloat16_t b);
RXM_API half_t half_from_float(float f);          // round to nearest even
RXM_API bfloat16_t bfloat16_from_float(float f);  // round to nearest even

enum class KeyType { u8, u16, u32, u64, i8, i16, i32, i64, f16, bf16, f32, f64 };
inline constexpr KeyType all_key_types[] = {KeyType::u8,  KeyType::u16, KeyType::u32, KeyType::u64,
                                            KeyType::i8,  KeyType::i16, KeyType::i32, KeyType::i64,
                                            KeyType::f16, KeyType::bf16, KeyType::f32, KeyType::f64};

RXM_API std::size_t size_of(KeyType t);
RXM_API std::string_view name_of(KeyType t);                         // "u32", "f16", ...
RXM_API std::optional<KeyType> key_type_from_name(std::string_view);  // accepts "u32", "uint32", "float32", ...
RXM_API bool is_floating(KeyType t);
RXM_API bool is_signed_integer(KeyType t);

template <class T> struct key_type_of;
template <> struct key_type_of<std::uint8_t> { static constexpr KeyType value = KeyType::u8; };
template <> struct key_type_of<std::uint16_t> { static constexpr KeyType value = KeyType::u16; };
template <> struct key_type_of<std::uint32_t> { static constexpr KeyType value = KeyType::u32; };
template <> struct key_type_of<std::uint64_t> { static constexpr KeyType value = KeyType::u64; };
template <> struct key_type_of<std::int8_t> { static constexpr KeyType value = KeyType::i8; };
template <> struct key_type_of<std::int16_t> { static constexpr KeyType value = KeyType::i16; };
template <> struct key_type_of<std::int32_t> { static constexpr KeyType value = KeyType::i32; };
template <> struct key_type_of<std::int64_t> { static constexpr KeyType value = KeyType::i64; };
template <> struct key_type_of<half_t> { static constexpr KeyType value = KeyType::f16; };
template <> struct key_type_of<bfloat16_t> { static constexpr KeyType value = KeyType::bf16; };
template <> struct key_type_of<float> { static constexpr KeyType value = KeyType::f32; };
template <> struct key_type_of<double> { static constexpr KeyType value = KeyType::f64; };
// The same bits under other names, on the same f16/bf16 paths: CUDA's types (usable once
// cuda_fp16.h / cuda_bf16.h are included) and C++23's, where the compiler has them.
template <> struct key_type_of<::__half> { static constexpr KeyType value = KeyType::f16; };
template <> struct key_type_of<::__nv_bfloat16> { static constexpr KeyType value = KeyType::bf16; };
#if defined(__STDCPP_FLOAT16_T__)
template <> struct key_type_of<std::float16_t> { static constexpr KeyType value = KeyType::f16; };
#endif
#if defined(__STDCPP_BFLOAT16_T__)
template <> struct key_type_of<std::bfloat16_t> { static constexpr KeyType value = KeyType::bf16; };
#endif
template <class T> inline constexpr KeyType key_type_v = key_type_of<T>::value;

// Calls f(T{}) with the C++ type named by t: the one switch from run-time type to template.
template <class F> decltype(auto) visit_key_type(KeyType t, F&& f) {
  switch (t) {
    case KeyType::u8: return f(std::uint8_t{});
    case KeyType::u16: return f(std::uint16_t{});
    case KeyType::u32: return f(std::uint32_t{});
    case KeyType::u64: return f(std::uint64_t{});
    case KeyType::i8: return f(std::int8_t{});
    case KeyType::i16: return f(std::int16_t{});
    case KeyType::i32: return f(std::int32_t{});
    case KeyType::i64: return f(std::int64_t{});
    case KeyType::f16: return f(half_t{});
    case KeyType::bf16: return f(bfloat16_t{});
    case KeyType::f32: return f(float{});
    case KeyType::f64: return f(double{});
  }
  return f(std::uint32_t{});  // unreachable: every enumerator is handled above
}

}  // namespace radixmesh
