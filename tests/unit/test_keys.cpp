// Order-preserving encodings: exhaustive for 8- and 16-bit types, random for wider ones.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "common/random_keys.hpp"
#include "radixmesh/keys.hpp"

namespace rxm = radixmesh;
using rxm::bfloat16_t;
using rxm::half_t;

namespace {

// The order radixmesh promises, written independently of the encoding: numbers by value,
// -0 before +0, then positive NaNs by payload, then negative NaNs by payload, largest first.
template <class T> int reference_class(T x) {  // 0 number, 1 +NaN, 2 -NaN
  if (!rxm::is_nan_key(x)) return 0;
  return (rxm::to_bits(x) >> (sizeof(T) * 8 - 1)) ? 2 : 1;
}
template <class T> double as_double(T x) {
  if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) return double(rxm::to_float(x));
  else return double(x);
}
template <class T> bool reference_less(T a, T b) {
  int ca = reference_class(a), cb = reference_class(b);
  if (ca != cb) return ca < cb;
  if (ca != 0) {
    auto mask = rxm::key_bits_t<T>(~(rxm::key_bits_t<T>(1) << (sizeof(T) * 8 - 1)));
    bool ascending_payload = (rxm::to_bits(a) & mask) < (rxm::to_bits(b) & mask);
    bool descending_payload = (rxm::to_bits(a) & mask) > (rxm::to_bits(b) & mask);
    return ca == 1 ? ascending_payload : descending_payload;
  }
  if constexpr (std::is_integral_v<T>) {
    return a < b;
  } else {
    double da = as_double(a), db = as_double(b);
    if (da != db) return da < db;
    return std::signbit(da) && !std::signbit(db);  // -0 < +0
  }
}

template <class T> void check_pair(T a, T b) {
  using B = rxm::key_bits_t<T>;
  B ea = rxm::encode_key(a), eb = rxm::encode_key(b);
  ASSERT_EQ(reference_less(a, b), ea < eb) << "bits " << +rxm::to_bits(a) << " vs " << +rxm::to_bits(b);
  ASSERT_EQ(reference_less(b, a), rxm::encode_key(a, rxm::Order::descending) < rxm::encode_key(b, rxm::Order::descending));
}

template <class T> void check_exhaustive() {
  using B = rxm::key_bits_t<T>;
  const std::uint64_t count = std::uint64_t(1) << (sizeof(T) * 8);
  // Bijection and round trip, both orders.
  std::vector<bool> seen(count, false);
  for (std::uint64_t i = 0; i < count; ++i) {
    T x = rxm::from_bits<T>(B(i));
    B e = rxm::encode_key(x);
    ASSERT_FALSE(seen[e]) << "encoding collides at bits " << i;
    seen[e] = true;
    ASSERT_EQ(rxm::to_bits(rxm::decode_key<T>(e)), B(i));
    ASSERT_EQ(rxm::to_bits(rxm::decode_key<T>(rxm::encode_key(x, rxm::Order::descending), rxm::Order::descending)), B(i));
  }
  // Order: walking encodings upward must walk the reference order upward.
  T previous = rxm::decode_key<T>(B(0));
  for (std::uint64_t e = 1; e < count; ++e) {
    T x = rxm::decode_key<T>(B(e));
    ASSERT_TRUE(reference_less(previous, x)) << "encodings " << e - 1 << " and " << e << " out of order";
    previous = x;
  }
}

template <class T> void check_random_pairs(std::uint64_t seed) {
  auto a = rxm::testing::random_bit_patterns<T>(200000, seed);
  auto b = rxm::testing::random_bit_patterns<T>(200000, seed + 1);
  for (std::size_t i = 0; i < a.size(); ++i) {
    check_pair(a[i], b[i]);
    ASSERT_EQ(rxm::to_bits(rxm::decode_key<T>(rxm::encode_key(a[i]))), rxm::to_bits(a[i]));
  }
}

}  // namespace

TEST(Keys, ExhaustiveU8) { check_exhaustive<std::uint8_t>(); }
TEST(Keys, ExhaustiveI8) { check_exhaustive<std::int8_t>(); }
TEST(Keys, ExhaustiveU16) { check_exhaustive<std::uint16_t>(); }
TEST(Keys, ExhaustiveI16) { check_exhaustive<std::int16_t>(); }
TEST(Keys, ExhaustiveF16) { check_exhaustive<half_t>(); }
TEST(Keys, ExhaustiveBF16) { check_exhaustive<bfloat16_t>(); }

TEST(Keys, RandomWideTypes) {
  const auto seed = rxm::testing::test_seed();
  SCOPED_TRACE("RXM_TEST_SEED=" + std::to_string(seed));
  check_random_pairs<std::uint32_t>(seed);
  check_random_pairs<std::int32_t>(seed);
  check_random_pairs<std::uint64_t>(seed);
  check_random_pairs<std::int64_t>(seed);
  check_random_pairs<float>(seed);
  check_random_pairs<double>(seed);
}

TEST(Keys, FloatSpecialValuesInOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float denorm = std::numeric_limits<float>::denorm_min();
  const float ordered[] = {-inf, -3.5f, -denorm, -0.0f, 0.0f, denorm, 1.0f, inf, nan, -nan};
  for (std::size_t i = 0; i + 1 < std::size(ordered); ++i)
    EXPECT_LT(rxm::encode_key(ordered[i]), rxm::encode_key(ordered[i + 1])) << "at " << i;
  EXPECT_EQ(rxm::encode_key(-inf), 0u);  // -inf is the smallest encoding
  const double dordered[] = {-std::numeric_limits<double>::infinity(), -0.0, 0.0, 1e300,
                             std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t i = 0; i + 1 < std::size(dordered); ++i)
    EXPECT_LT(rxm::encode_key(dordered[i]), rxm::encode_key(dordered[i + 1])) << "at " << i;
}

TEST(Keys, HalfConversionsRoundTrip) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    half_t h{std::uint16_t(i)};
    float f = rxm::to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(rxm::is_nan_key(rxm::half_from_float(f)));
      continue;
    }
    EXPECT_EQ(rxm::half_from_float(f).bits, h.bits) << "half bits " << i;
    bfloat16_t b{std::uint16_t(i)};
    float g = rxm::to_float(b);
    if (!std::isnan(g)) {
      EXPECT_EQ(rxm::bfloat16_from_float(g).bits, b.bits) << "bf16 bits " << i;
    }
  }
  EXPECT_EQ(rxm::half_from_float(65520.0f).bits, 0x7c00);  // rounds to inf
  EXPECT_EQ(rxm::half_from_float(65504.0f).bits, 0x7bff);  // largest finite
  EXPECT_EQ(rxm::half_from_float(1.0f + 0x1p-11f).bits, 0x3c00);  // tie to even
}

TEST(KeyTypes, NamesRoundTrip) {
  for (auto t : rxm::all_key_types) EXPECT_EQ(rxm::key_type_from_name(rxm::name_of(t)), t);
  EXPECT_EQ(rxm::key_type_from_name("float32"), rxm::KeyType::f32);
  EXPECT_EQ(rxm::key_type_from_name("UINT64"), rxm::KeyType::u64);
  EXPECT_FALSE(rxm::key_type_from_name("complex64").has_value());
}
