// CPU backend sort against std::stable_sort: every key type, both orders, keys only and pairs
// (values = original index, which checks stability), awkward sizes, adversarial distributions,
// bit ranges, and each bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::bfloat16_t;
using rxm::half_t;
using rxm::Order;

namespace {

template <class T> using Bits = rxm::key_bits_t<T>;

// The part of a key's encoding that takes part in the order.
template <class T> Bits<T> ranked_bits(T key, Order order, int begin_bit, int end_bit) {
  const int width = end_bit - begin_bit;
  const Bits<T> mask = width >= int(sizeof(Bits<T>) * 8) ? Bits<T>(~Bits<T>(0)) : Bits<T>((Bits<T>(1) << width) - 1);
  return Bits<T>((rxm::encode_key(key, order) >> begin_bit) & mask);
}

struct SortCase {
  Order order = Order::ascending;
  int value_bytes = 0;  // 0, 4 or 8
  int begin_bit = 0;
  int end_bit = -1;
  unsigned threads = 2;
};

std::string describe(const SortCase& c, std::size_t n) {
  return "n=" + std::to_string(n) + (c.order == Order::ascending ? " asc" : " desc") +
         " values=" + std::to_string(c.value_bytes) + " bits=[" + std::to_string(c.begin_bit) + "," +
         std::to_string(c.end_bit) + ") threads=" + std::to_string(c.threads) +
         " seed=" + std::to_string(rxm::testing::test_seed());
}

struct KeysOnly {};

// Sorts with radixmesh and checks the result bit for bit against std::stable_sort of the indices.
template <class T, class V> void check_pairs(const std::vector<T>& input, const SortCase& c) {
  const std::size_t n = input.size();
  const int width = int(sizeof(T) * 8);
  const int end_bit = c.end_bit < 0 ? width : c.end_bit;
  std::vector<std::size_t> expected(n);
  std::iota(expected.begin(), expected.end(), std::size_t(0));
  if (c.begin_bit == 0 && end_bit == width) {
    const rxm::key_less<T> less{c.order};
    std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) { return less(input[a], input[b]); });
  } else {
    std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) {
      return ranked_bits(input[a], c.order, c.begin_bit, end_bit) < ranked_bits(input[b], c.order, c.begin_bit, end_bit);
    });
  }
  constexpr bool pairs = !std::is_same_v<V, KeysOnly>;
  std::vector<T> keys = input;
  std::vector<V> values(pairs ? n : 0);
  if constexpr (pairs) {
    for (std::size_t i = 0; i < n; ++i) values[i] = V(i);
  }
  auto ctx = rxm::Context::cpu(c.threads);
  const rxm::SortOptions options{c.order, c.begin_bit, c.end_bit};
  if constexpr (pairs) {
    rxm::sort(ctx, std::span<T>(keys), std::span<V>(values), options);
  } else {
    rxm::sort(ctx, std::span<T>(keys), options);
  }
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(rxm::to_bits(keys[i]), rxm::to_bits(input[expected[i]])) << "key at " << i << " of " << n;
    if constexpr (pairs) {
      ASSERT_EQ(values[i], V(expected[i])) << "value at " << i << " (stability)";
    }
  }
}

template <class T> void check_sort(const std::vector<T>& input, const SortCase& c) {
  SCOPED_TRACE(describe(c, input.size()));
  switch (c.value_bytes) {
    case 0: return check_pairs<T, KeysOnly>(input, c);
    case 4: return check_pairs<T, std::uint32_t>(input, c);
    default: return check_pairs<T, std::uint64_t>(input, c);
  }
}

// Every order and value width on one input.
template <class T> void check_all_modes(const std::vector<T>& input, unsigned threads = 2) {
  for (Order order : {Order::ascending, Order::descending})
    for (int value_bytes : {0, 4, 8}) {
      check_sort(input, SortCase{order, value_bytes, 0, -1, threads});
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// ---- distributions, in terms of encodings so that they mean the same for every type ----

template <class T> T from_encoding(Bits<T> e) { return rxm::decode_key<T>(e); }

template <class T> std::vector<T> all_equal(std::size_t n, std::uint64_t seed) {
  return std::vector<T>(n, rxm::testing::random_bit_patterns<T>(1, seed)[0]);
}
template <class T> std::vector<T> sorted_keys(std::size_t n, std::uint64_t seed, bool reverse) {
  auto keys = rxm::testing::random_bit_patterns<T>(n, seed);
  std::sort(keys.begin(), keys.end(), rxm::key_less<T>{});
  if (reverse) std::reverse(keys.begin(), keys.end());
  return keys;
}
template <class T> std::vector<T> few_distinct(std::size_t n, std::uint64_t seed) {
  const auto pool = rxm::testing::random_bit_patterns<T>(5, seed);
  std::mt19937_64 rng(seed + 1);
  std::vector<T> keys(n);
  for (auto& k : keys) k = pool[rng() % pool.size()];
  return keys;
}
// Every key shares its high bits, so only the low digits differ: the high passes are skipped.
template <class T> std::vector<T> shared_high_bits(std::size_t n, std::uint64_t seed) {
  constexpr int width = int(sizeof(T) * 8);
  const int low_bits = std::max(1, width / 4);
  std::mt19937_64 rng(seed);
  const Bits<T> high = Bits<T>(rng()) & Bits<T>(~Bits<T>((Bits<T>(1) << low_bits) - 1));
  std::vector<T> keys(n);
  for (auto& k : keys) k = from_encoding<T>(Bits<T>(high | (Bits<T>(rng()) & ((Bits<T>(1) << low_bits) - 1))));
  return keys;
}
// NaNs of both signs and several payloads, +-0, +-inf, denormals, mixed with random bit patterns.
template <class T> std::vector<T> float_specials(std::size_t n, std::uint64_t seed) {
  using U = Bits<T>;
  constexpr int mantissa = rxm::key_traits<T>::mantissa_bits;
  const U sign = U(U(1) << (sizeof(U) * 8 - 1));
  const U man = U((U(1) << mantissa) - 1);
  const U exp = U(~sign & ~man);
  const U specials[] = {U(0),          sign,          exp,           U(sign | exp), U(exp | 1),   U(exp | man),
                        U(exp | (man >> 1)), U(sign | exp | 1), U(sign | exp | man), U(1), man, U(sign | 1),
                        U(sign | man)};
  std::mt19937_64 rng(seed);
  std::vector<T> keys(n);
  for (auto& k : keys)
    k = rxm::from_bits<T>(rng() % 2 ? specials[rng() % std::size(specials)] : U(rng()));
  return keys;
}

// ---- the recursion's edges (a radix sort that splits by the top varying digit and recurses) ----

// Only the lowest bit of the encoding differs: every level but the last finds nothing to split.
template <class T> std::vector<T> lowest_bit_only(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Bits<T> high = Bits<T>(Bits<T>(rng()) & Bits<T>(~Bits<T>(1)));
  std::vector<T> keys(n);
  for (auto& k : keys) k = from_encoding<T>(Bits<T>(high | (rng() & 1)));
  return keys;
}
// All keys equal but in one byte of the encoding, for the byte at `byte` (every digit a level may
// take is constant but one).
template <class T> std::vector<T> one_byte_varies(std::size_t n, std::uint64_t seed, int byte) {
  std::mt19937_64 rng(seed);
  const Bits<T> base = Bits<T>(rng());
  std::vector<T> keys(n);
  for (auto& k : keys) k = from_encoding<T>(Bits<T>(base ^ Bits<T>(Bits<T>(rng() & 0xFF) << (8 * byte))));
  return keys;
}
// Buckets of the top bits of sizes around the leaf and in-cache thresholds (31, 32, 33 keys; 4095
// to 4097; one bucket of a third of everything), the rest of the keys random.
template <class T> std::vector<T> bucket_sizes_at_thresholds(std::size_t n, std::uint64_t seed) {
  constexpr int width = int(sizeof(T) * 8);
  const int top = std::min(width, 11);
  std::mt19937_64 rng(seed);
  std::vector<T> keys;
  auto add = [&](std::size_t count, Bits<T> bucket) {
    for (std::size_t i = 0; i < count && keys.size() < n; ++i) {
      const Bits<T> low = top == width ? Bits<T>(0) : Bits<T>(Bits<T>(rng()) & Bits<T>((Bits<T>(1) << (width - top)) - 1));
      keys.push_back(from_encoding<T>(Bits<T>((top == width ? bucket : Bits<T>(bucket << (width - top))) | low)));
    }
  };
  Bits<T> bucket = 0;
  for (std::size_t count : {31, 32, 33, 4095, 4096, 4097}) add(count, bucket++);
  add(n / 3, bucket++);
  while (keys.size() < n) keys.push_back(from_encoding<T>(Bits<T>(rng())));
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

template <class T> class CpuSort : public ::testing::Test {};
using KeyTypes = ::testing::Types<std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t, std::int16_t,
                                  std::int32_t, std::int64_t, half_t, bfloat16_t, float, double>;
TYPED_TEST_SUITE(CpuSort, KeyTypes);

TYPED_TEST(CpuSort, RandomBitPatternsAtAwkwardSizes) {
  for (std::size_t n : rxm::testing::awkward_sizes) {
    check_all_modes(rxm::testing::random_bit_patterns<TypeParam>(n, rxm::testing::test_seed() + n));
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(CpuSort, AdversarialDistributions) {
  const std::uint64_t seed = rxm::testing::test_seed();
  for (std::size_t n : {std::size_t(31), std::size_t(4093), std::size_t(300'007)}) {
    check_all_modes(all_equal<TypeParam>(n, seed));
    check_all_modes(sorted_keys<TypeParam>(n, seed, false));
    check_all_modes(sorted_keys<TypeParam>(n, seed, true));
    check_all_modes(few_distinct<TypeParam>(n, seed));
    check_all_modes(shared_high_bits<TypeParam>(n, seed));
    if constexpr (rxm::key_traits<TypeParam>::is_float) check_all_modes(float_specials<TypeParam>(n, seed));
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(CpuSort, RecursionEdges) {
  const std::uint64_t seed = rxm::testing::test_seed();
  for (std::size_t n : {std::size_t(4093), std::size_t(140'009)}) {  // one thread's ranges, and the parallel split
    check_all_modes(lowest_bit_only<TypeParam>(n, seed));
    for (int byte = 0; byte < int(sizeof(TypeParam)); ++byte) check_all_modes(one_byte_varies<TypeParam>(n, seed, byte));
    check_all_modes(bucket_sizes_at_thresholds<TypeParam>(n, seed));
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(CpuSort, OddThreadCountsSplitUnevenly) {
  const auto keys = rxm::testing::random_bit_patterns<TypeParam>(400'009, rxm::testing::test_seed());
  for (unsigned threads : {1u, 3u, 5u}) check_sort(keys, SortCase{Order::descending, 4, 0, -1, threads});
}

TYPED_TEST(CpuSort, BitRangesOrderOnlyThoseBits) {
  constexpr int width = int(sizeof(TypeParam) * 8);
  // Large enough for the parallel first split (2 threads need 2 * 65536 keys).
  const auto keys = rxm::testing::random_bit_patterns<TypeParam>(140'009, rxm::testing::test_seed());
  const std::pair<int, int> ranges[] = {{0, width / 2}, {width / 2, width}, {width / 4, 3 * width / 4},
                                        {width - 1, width}, {3, 4},          {0, 1}};
  for (auto [begin_bit, end_bit] : ranges)
    for (Order order : {Order::ascending, Order::descending}) {
      check_sort(keys, SortCase{order, 8, begin_bit, end_bit, 2});
      if (this->HasFatalFailure()) return;
    }
  // An empty range orders nothing: the input stays as it is.
  check_sort(keys, SortCase{Order::ascending, 4, width / 2, width / 2, 2});
}

// Large enough for the wide-digit path and every thread: a few million, the types of each width.
TEST(CpuSortLarge, FewMillionKeys) {
  const std::uint64_t seed = rxm::testing::test_seed();
  check_sort(rxm::testing::random_bit_patterns<std::uint32_t>(5'000'011, seed), SortCase{Order::ascending, 4});
  check_sort(rxm::testing::random_bit_patterns<float>(4'500'007, seed), SortCase{Order::descending, 0});
  check_sort(rxm::testing::random_bit_patterns<std::int64_t>(4'400'021, seed), SortCase{Order::ascending, 8});
  check_sort(shared_high_bits<double>(4'300'003, seed), SortCase{Order::descending, 4});
  check_sort(rxm::testing::random_bit_patterns<half_t>(4'200'001, seed), SortCase{Order::ascending, 8, 0, -1, 3});
  check_sort(few_distinct<std::uint8_t>(4'200'001, seed), SortCase{Order::descending, 4});
}

// ---- bad input: a clear rxm::Error, and the caller's arrays untouched ----

TEST(CpuSortErrors, BitRangeOutsideTheKeyThrows) {
  auto ctx = rxm::Context::cpu(2);
  auto keys = rxm::testing::random_bit_patterns<std::uint32_t>(1000, rxm::testing::test_seed());
  const auto before = keys;
  for (auto [begin_bit, end_bit] : {std::pair{-1, 32}, std::pair{0, 33}, std::pair{20, 10}, std::pair{40, -1}}) {
    SCOPED_TRACE(std::to_string(begin_bit) + ".." + std::to_string(end_bit));
    EXPECT_THROW(rxm::sort(ctx, std::span(keys), {Order::ascending, begin_bit, end_bit}), rxm::Error);
    EXPECT_EQ(keys, before);
  }
  try {
    rxm::sort(ctx, std::span(keys), {Order::ascending, 0, 40});
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bit range"), std::string::npos) << e.what();
  }
}

TEST(CpuSortErrors, ThreeByteValuesThrow) {
  auto ctx = rxm::Context::cpu(2);
  auto keys = rxm::testing::random_bit_patterns<std::uint32_t>(1000, rxm::testing::test_seed());
  std::vector<unsigned char> values(3 * keys.size(), 7);
  const auto keys_before = keys;
  const auto values_before = values;
  try {
    rxm::detail::sort_host(ctx, rxm::KeyType::u32, keys.data(), keys.size(), values.data(), 3, {});
    FAIL() << "expected an error";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("3 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(keys, keys_before);
  EXPECT_EQ(values, values_before);
}

TEST(CpuSortErrors, KeyValueLengthMismatchThrows) {
  auto ctx = rxm::Context::cpu(2);
  auto keys = rxm::testing::random_bit_patterns<float>(1000, rxm::testing::test_seed());
  std::vector<std::uint32_t> values(999, 5);
  const auto key_bits_before = [&] {
    std::vector<std::uint32_t> bits;
    for (float k : keys) bits.push_back(rxm::to_bits(k));
    return bits;
  };
  const auto before = key_bits_before();
  const auto values_before = values;
  EXPECT_THROW(rxm::sort(ctx, std::span(keys), std::span(values)), rxm::Error);
  EXPECT_EQ(key_bits_before(), before);
  EXPECT_EQ(values, values_before);
}

}  // namespace
