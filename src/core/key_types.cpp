#include <bit>
#include <cctype>
#include <string>

#include "radixmesh/key_types.hpp"

namespace radixmesh {

float to_float(half_t h) {
  std::uint32_t sign = std::uint32_t(h.bits & 0x8000u) << 16;
  std::uint32_t exponent = (h.bits >> 10) & 0x1fu;
  std::uint32_t mantissa = h.bits & 0x3ffu;
  std::uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN, payload kept
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;  // +-0
  } else {       // denormal: value = mantissa * 2^-24, exact in float
    float magnitude = float(mantissa) * 0x1p-24f;
    out = sign | std::bit_cast<std::uint32_t>(magnitude);
  }
  return std::bit_cast<float>(out);
}

float to_float(bfloat16_t b) { return std::bit_cast<float>(std::uint32_t(b.bits) << 16); }

half_t half_from_float(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint16_t sign = std::uint16_t((x >> 16) & 0x8000u);
  std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return {std::uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu))};  // NaN stays NaN
  if (abs >= 0x477ff000u) return {std::uint16_t(sign | 0x7c00u)};  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half: denormal or zero, round to nearest even
    float magnitude = std::bit_cast<float>(abs);
    float scaled = magnitude * 0x1p24f;  // exact: in units of the smallest denormal
    std::uint32_t truncated = std::uint32_t(scaled);
    float remainder = scaled - float(truncated);
    if (remainder > 0.5f || (remainder == 0.5f && (truncated & 1u))) ++truncated;
    return {std::uint16_t(sign | truncated)};
  }
  std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even at bit 13
  return {std::uint16_t(sign | (((rounded >> 13) - (112u << 10)) & 0x7fffu))};
}

bfloat16_t bfloat16_from_float(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {std::uint16_t((x >> 16) | 0x40u)};  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return {std::uint16_t(x >> 16)};
}

std::size_t size_of(KeyType t) {
  return visit_key_type(t, [](auto v) { return sizeof(v); });
}

std::string_view name_of(KeyType t) {
  switch (t) {
    case KeyType::u8: return "u8";
    case KeyType::u16: return "u16";
    case KeyType::u32: return "u32";
    case KeyType::u64: return "u64";
    case KeyType::i8: return "i8";
    case KeyType::i16: return "i16";
    case KeyType::i32: return "i32";
    case KeyType::i64: return "i64";
    case KeyType::f16: return "f16";
    case KeyType::bf16: return "bf16";
    case KeyType::f32: return "f32";
    case KeyType::f64: return "f64";
  }
  return "?";
}

std::optional<KeyType> key_type_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  static const struct { const char* alias; KeyType type; } aliases[] = {
      {"uint8", KeyType::u8},    {"uint16", KeyType::u16},  {"uint32", KeyType::u32},
      {"uint64", KeyType::u64},  {"int8", KeyType::i8},     {"int16", KeyType::i16},
      {"int32", KeyType::i32},   {"int64", KeyType::i64},   {"float16", KeyType::f16},
      {"half", KeyType::f16},    {"bfloat16", KeyType::bf16}, {"float32", KeyType::f32},
      {"float", KeyType::f32},   {"float64", KeyType::f64}, {"double", KeyType::f64}};
  for (KeyType t : all_key_types)
    if (lower == name_of(t)) return t;
  for (const auto& a : aliases)
    if (lower == a.alias) return a.type;
  return std::nullopt;
}

bool is_floating(KeyType t) {
  return t == KeyType::f16 || t == KeyType::bf16 || t == KeyType::f32 || t == KeyType::f64;
}
bool is_signed_integer(KeyType t) {
  return t == KeyType::i8 || t == KeyType::i16 || t == KeyType::i32 || t == KeyType::i64;
}

}  // namespace radixmesh
