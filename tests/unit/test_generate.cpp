// rxm::generate: thread-count independence, seeds, every distribution's defining property,
// every key type, awkward sizes, and an rxm::Error with a fix for every bad option.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/keys.hpp"

namespace rxm = radixmesh;
using rxm::Distribution;
using rxm::GenerateOptions;

namespace {

const Distribution all_distributions[] = {
    Distribution::uniform,      Distribution::normal,    Distribution::zipf,
    Distribution::sorted,       Distribution::reverse_sorted, Distribution::nearly_sorted,
    Distribution::all_equal,    Distribution::few_distinct,   Distribution::reduced_entropy};

template <class T> std::vector<T> make(std::size_t n, GenerateOptions options) {
  std::vector<T> out(n);
  rxm::generate(std::span<T>(out), options);
  return out;
}

template <class T> std::vector<std::uint64_t> encoded(const std::vector<T>& keys) {
  std::vector<std::uint64_t> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i] = rxm::encode_key(keys[i]);
  return out;
}

template <class T> double as_double(T x) {
  if constexpr (std::is_same_v<T, rxm::half_t> || std::is_same_v<T, rxm::bfloat16_t>) return double(rxm::to_float(x));
  else return double(x);
}

template <class T> bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Runs f(T{}) for every key type.
template <class F> void for_each_key_type(F&& f) {
  for (rxm::KeyType t : rxm::all_key_types) {
    SCOPED_TRACE(std::string(rxm::name_of(t)));
    rxm::visit_key_type(t, f);
  }
}

GenerateOptions with(Distribution d, std::uint64_t seed) {
  GenerateOptions o;
  o.distribution = d;
  o.seed = seed;
  return o;
}

TEST(Generate, SameBytesForAnyThreadCount) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 3 * 65536 + 4093;  // several chunks and a ragged last one
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    for (Distribution d : all_distributions) {
      SCOPED_TRACE(std::string(rxm::name_of(d)));
      GenerateOptions o = with(d, seed);
      o.swap_fraction = 0.05;
      if constexpr (rxm::key_traits<T>::is_float) o.special_fraction = 0.01;
      o.threads = 1;
      auto one = make<T>(n, o);
      o.threads = 2;
      auto two = make<T>(n, o);
      o.threads = 7;
      auto seven = make<T>(n, o);
      EXPECT_TRUE(same_bytes(one, two));
      EXPECT_TRUE(same_bytes(one, seven));
    }
  });
}

TEST(Generate, EveryElementWrittenAtAwkwardSizes) {
  // Poisoned with 0x00 and with 0xff, the results must agree: nothing was left unwritten.
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : rxm::testing::awkward_sizes) {
    if (n > 70000) continue;
    SCOPED_TRACE("n = " + std::to_string(n));
    for_each_key_type([&](auto tag) {
      using T = decltype(tag);
      for (Distribution d : all_distributions) {
        SCOPED_TRACE(std::string(rxm::name_of(d)));
        std::vector<T> zeros(n), ones(n);
        if (n) std::memset(ones.data(), 0xff, n * sizeof(T));
        GenerateOptions o = with(d, seed);
        rxm::generate(std::span<T>(zeros), o);
        rxm::generate(std::span<T>(ones), o);
        EXPECT_TRUE(same_bytes(zeros, ones));
      }
    });
  }
}

TEST(Generate, EmptyOutputMayBeNull) {
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    for (Distribution d : all_distributions) EXPECT_NO_THROW(rxm::generate(rxm::key_type_v<T>, nullptr, 0, with(d, 1)));
  });
}

TEST(Generate, DifferentSeedsDiffer) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    for (Distribution d : all_distributions) {
      if (d == Distribution::all_equal) continue;  // one value: two seeds may pick the same (1/256 for u8)
      SCOPED_TRACE(std::string(rxm::name_of(d)));
      // Sorted 8-bit keys with n > 256 fill every cell and so cannot differ: keep n below 256.
      const std::size_t n = sizeof(T) == 1 ? 100 : 10000;
      EXPECT_FALSE(same_bytes(make<T>(n, with(d, seed)), make<T>(n, with(d, seed + 1))));
    }
  });
}

TEST(Generate, SortedAndReverseSpanTheRange) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(1000), std::size_t(200003)}) {
      SCOPED_TRACE("n = " + std::to_string(n));
      auto up = make<T>(n, with(Distribution::sorted, seed));
      auto down = make<T>(n, with(Distribution::reverse_sorted, seed));
      EXPECT_TRUE(std::is_sorted(up.begin(), up.end(), rxm::key_less<T>{}));
      EXPECT_TRUE(std::is_sorted(down.begin(), down.end(), rxm::key_less<T>{rxm::Order::descending}));
      for (const T& x : up) ASSERT_FALSE(rxm::is_nan_key(x));
      if constexpr (!rxm::key_traits<T>::is_float) {
        // Spread over the type's range, not 0..n: the last key is in the top cell.
        if (n >= 1000) {
          const double top = std::ldexp(1.0, int(sizeof(T) * 8));
          EXPECT_GT(double(rxm::encode_key(up.back())), top * (1.0 - 2.0 / double(n)) - 1);
          EXPECT_LT(double(rxm::encode_key(up.front())), top * 2.0 / double(n) + 1);
          EXPECT_GT(double(rxm::encode_key(down.front())), top * (1.0 - 2.0 / double(n)) - 1);
        }
      } else {
        // Floats default to [lo, hi) = [0, 1).
        for (const T& x : down) ASSERT_TRUE(as_double(x) >= 0.0 && as_double(x) < 1.0);
      }
    }
  });
}

TEST(Generate, NearlySortedIsSortedWithAFewSwaps) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 100003;
  GenerateOptions o = with(Distribution::nearly_sorted, seed);
  o.swap_fraction = 0.02;
  auto nearly = make<std::uint32_t>(n, o);
  auto sorted = make<std::uint32_t>(n, with(Distribution::sorted, seed));
  std::size_t moved = 0;
  for (std::size_t i = 0; i < n; ++i) moved += nearly[i] != sorted[i];
  EXPECT_GT(moved, std::size_t(0.01 * n));  // 1000 swaps move up to 2000 elements
  EXPECT_LE(moved, std::size_t(0.02 * n) + 1);
  std::sort(nearly.begin(), nearly.end());
  EXPECT_EQ(nearly, sorted);  // the swaps only permute the sorted keys
}

TEST(Generate, AllEqualFewDistinctReducedEntropy) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    const std::size_t n = 50000;
    auto equal = encoded(make<T>(n, with(Distribution::all_equal, seed)));
    EXPECT_EQ(std::set<std::uint64_t>(equal.begin(), equal.end()).size(), 1u);

    for (std::uint64_t distinct : {std::uint64_t(1), std::uint64_t(5), std::uint64_t(200)}) {
      GenerateOptions o = with(Distribution::few_distinct, seed);
      o.distinct = distinct;
      auto keys = make<T>(n, o);
      auto values = encoded(keys);
      EXPECT_EQ(std::set<std::uint64_t>(values.begin(), values.end()).size(), distinct);  // n >> distinct: all appear
      for (const T& x : keys) ASSERT_FALSE(rxm::is_nan_key(x));
    }

    const int width = int(sizeof(T) * 8);
    for (int bits : {0, 1, 5, width / 2}) {
      SCOPED_TRACE("entropy_bits " + std::to_string(bits));
      GenerateOptions o = with(Distribution::reduced_entropy, seed);
      o.entropy_bits = bits;
      auto keys = make<T>(n, o);
      auto values = encoded(keys);
      std::set<std::uint64_t> high, low;
      for (std::uint64_t e : values) {
        high.insert(bits == 64 ? 0 : e >> bits);
        low.insert(e & ((std::uint64_t(1) << bits) - 1));
      }
      EXPECT_EQ(high.size(), 1u);
      EXPECT_LE(low.size(), std::size_t(1) << bits);
      EXPECT_GE(low.size(), std::min<std::size_t>(std::size_t(1) << bits, 1000)) << "low bits should vary";
      for (const T& x : keys) ASSERT_FALSE(rxm::is_nan_key(x));
    }
    if constexpr (!rxm::key_traits<T>::is_float) {  // every bit random: uniform over the type
      GenerateOptions every_bit = with(Distribution::reduced_entropy, seed);
      every_bit.entropy_bits = width;
      EXPECT_NO_THROW(make<T>(100, every_bit));
    }
  });
}

TEST(Generate, FewDistinctCanUseEveryValueOfASmallType) {
  GenerateOptions o = with(Distribution::few_distinct, rxm::testing::test_seed());
  o.distinct = 256;
  auto keys = make<std::int8_t>(100000, o);
  EXPECT_EQ(std::set<std::int8_t>(keys.begin(), keys.end()).size(), 256u);
  o.distinct = 3'000'000;  // above the table limit: values computed per draw
  auto wide = make<std::uint64_t>(100000, o);
  EXPECT_GT(std::set<std::uint64_t>(wide.begin(), wide.end()).size(), 90000u);
}

// Expected share of the most popular rank under Zipf(s) over ranks 1..N: 1 / sum k^-s.
double zipf_top_share(double s, double universe) {
  double h = 0;
  if (universe <= 1e7) {
    for (double k = 1; k <= universe; ++k) h += std::pow(k, -s);
  } else {  // s = 1: H_N = ln N + gamma + 1/(2N)
    h = std::log(universe) + 0.5772156649015329 + 0.5 / universe;
  }
  return 1.0 / h;
}

// (occurrences, encoded key) of each distinct key, most frequent first (sort and count runs: a
// std::map of 10^6 keys is too slow under ASan).
template <class T> std::vector<std::pair<std::size_t, std::uint64_t>> key_counts(const std::vector<T>& keys) {
  std::vector<std::uint64_t> sorted = encoded(keys);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::pair<std::size_t, std::uint64_t>> out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    out.push_back({j - i, sorted[i]});
    i = j;
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}
template <class T> std::vector<std::size_t> frequencies_descending(const std::vector<T>& keys) {
  std::vector<std::size_t> out;
  for (auto [count, key] : key_counts(keys)) out.push_back(count);
  return out;
}

TEST(Generate, ZipfTopFrequencyMatchesTheLaw) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 1'000'000;
  struct Case { double s; std::uint64_t universe; };
  for (Case c : {Case{1.0, 1ull << 32}, Case{1.0, 1000}, Case{2.0, 1ull << 32}, Case{0.5, 1000}, Case{1.2, 1}}) {
    SCOPED_TRACE("s = " + std::to_string(c.s) + " N = " + std::to_string(c.universe));
    GenerateOptions o = with(Distribution::zipf, seed);
    o.zipf_s = c.s;
    o.zipf_universe = c.universe;
    auto keys = make<std::uint32_t>(n, o);
    auto freq = frequencies_descending(keys);
    double expected = c.s == 2.0 ? 1.0 / 1.6449340668 : zipf_top_share(c.s, double(c.universe));
    double share = double(freq[0]) / double(n);
    EXPECT_NEAR(share, expected, 0.03 * expected + 0.002);
    if (c.universe > 1) {
      EXPECT_NEAR(double(freq[1]) / double(freq[0]), std::pow(2.0, -c.s), 0.05);
    }
    EXPECT_LE(freq.size(), c.universe);
  }
  // u8: the universe is clamped to the 256 keys of the type.
  auto small = make<std::uint8_t>(n, with(Distribution::zipf, seed));
  EXPECT_NEAR(double(frequencies_descending(small)[0]) / double(n), zipf_top_share(1.0, 256), 0.01);
}

TEST(Generate, ZipfPopularKeysAreSpreadOverTheRange) {
  GenerateOptions o = with(Distribution::zipf, rxm::testing::test_seed());
  auto by_count = key_counts(make<std::uint32_t>(200000, o));
  std::size_t small = 0;
  for (std::size_t i = 0; i < 10; ++i) small += by_count[i].second < (1u << 24);
  EXPECT_LT(small, 5u) << "the ten most popular keys should not all be small";
  // The rank-to-key scramble is fixed: the most popular key does not depend on the seed.
  o.seed += 1;
  EXPECT_EQ(key_counts(make<std::uint32_t>(200000, o))[0].second, by_count[0].second);
}

TEST(Generate, ZipfFloatsStayInTheirRange) {
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    if constexpr (rxm::key_traits<T>::is_float) {
      GenerateOptions o = with(Distribution::zipf, rxm::testing::test_seed());
      for (const T& x : make<T>(20000, o)) ASSERT_TRUE(as_double(x) >= 0.0 && as_double(x) < 1.0);
      o.float_full_range = true;
      for (const T& x : make<T>(20000, o)) ASSERT_TRUE(std::isfinite(as_double(x)));
    }
  });
}

TEST(Generate, NormalMeanAndDeviation) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    GenerateOptions o = with(Distribution::normal, seed);
    const bool tiny = sizeof(T) == 1;
    o.mean = tiny ? 60.0 : 100.0;
    o.stddev = tiny ? 10.0 : 7.0;
    if constexpr (std::is_same_v<T, rxm::bfloat16_t>) o.stddev = 20.0;  // bf16 steps are 0.5 near 100
    const std::size_t n = 200000;
    auto keys = make<T>(n, o);
    double sum = 0, squares = 0;
    for (const T& x : keys) sum += as_double(x);
    double mean = sum / double(n);
    for (const T& x : keys) squares += (as_double(x) - mean) * (as_double(x) - mean);
    double stddev = std::sqrt(squares / double(n - 1));
    EXPECT_NEAR(mean, o.mean, 0.05 * o.stddev);
    EXPECT_NEAR(stddev, o.stddev, 0.05 * o.stddev);
  });
  // Integers are clamped, not wrapped.
  GenerateOptions o = with(Distribution::normal, seed);
  o.stddev = 1000;
  auto clamped = make<std::uint8_t>(10000, o);
  auto zeros = std::count(clamped.begin(), clamped.end(), 0), tops = std::count(clamped.begin(), clamped.end(), 255);
  EXPECT_GT(zeros, 4000);
  EXPECT_GT(tops, 500);
}

TEST(Generate, UniformRanges) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    const std::size_t n = 100000;
    if constexpr (rxm::key_traits<T>::is_float) {
      GenerateOptions o = with(Distribution::uniform, seed);
      o.lo = -3.0;
      o.hi = 5.0;
      double sum = 0;
      for (const T& x : make<T>(n, o)) {
        ASSERT_TRUE(as_double(x) >= -3.0 && as_double(x) < 5.0) << as_double(x);
        sum += as_double(x);
      }
      EXPECT_NEAR(sum / double(n), 1.0, 0.05);
      o.float_full_range = true;
      std::size_t negative = 0;
      for (const T& x : make<T>(n, o)) {
        ASSERT_TRUE(std::isfinite(as_double(x)));
        negative += std::signbit(as_double(x));
      }
      EXPECT_NEAR(double(negative) / double(n), 0.5, 0.02);
    } else {
      // Every bit is a fair coin.
      auto keys = make<T>(n, with(Distribution::uniform, seed));
      for (std::size_t bit = 0; bit < sizeof(T) * 8; ++bit) {
        std::size_t set = 0;
        for (T x : keys) set += (rxm::to_bits(x) >> bit) & 1;
        EXPECT_NEAR(double(set) / double(n), 0.5, 0.01) << "bit " << bit;
      }
    }
  });
}

TEST(Generate, SpecialValuesAtTheRequestedFraction) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for_each_key_type([&](auto tag) {
    using T = decltype(tag);
    if constexpr (rxm::key_traits<T>::is_float) {
      GenerateOptions o = with(Distribution::normal, seed);
      o.mean = 100.0;  // no zeros or denormals of its own
      o.special_fraction = 0.1;
      const std::size_t n = 200000;
      auto keys = make<T>(n, o);
      std::size_t specials = 0, positive_nan = 0, negative_nan = 0, pos_inf = 0, neg_inf = 0, pos_zero = 0,
                  neg_zero = 0, denormal = 0;
      for (const T& x : keys) {
        double d = as_double(x);
        bool negative = std::signbit(d);
        if (rxm::is_nan_key(x)) (negative ? negative_nan : positive_nan)++;
        else if (std::isinf(d)) (negative ? neg_inf : pos_inf)++;
        else if (d == 0) (negative ? neg_zero : pos_zero)++;
        else if (std::abs(d) < 1.0) denormal++;  // the values themselves are near 100
        else continue;
        ++specials;
      }
      EXPECT_NEAR(double(specials) / double(n), 0.1, 0.005);
      for (std::size_t count : {positive_nan, negative_nan, pos_inf, neg_inf, pos_zero, neg_zero, denormal})
        EXPECT_GT(count, 200u);
    }
  });
}

// Calls generate and expects an rxm::Error(invalid_argument) with a fix, leaving `out` untouched.
template <class T> void expect_rejected(const GenerateOptions& o, const std::string& names) {
  std::vector<T> out(100);
  std::memset(out.data(), 0x5a, out.size() * sizeof(T));
  auto before = out;
  try {
    rxm::generate(std::span<T>(out), o);
    ADD_FAILURE() << "accepted bad option " << names;
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument);
    std::string message = e.what();
    EXPECT_NE(message.find(names), std::string::npos) << message;
    EXPECT_NE(message.find("fix:"), std::string::npos) << message;
  }
  EXPECT_TRUE(same_bytes(out, before)) << "output changed on error";
}

TEST(Generate, BadOptionsThrowWithAFix) {
  GenerateOptions o = with(Distribution::few_distinct, 1);
  o.distinct = 0;
  expect_rejected<std::uint32_t>(o, "distinct");
  o.distinct = 257;
  expect_rejected<std::uint8_t>(o, "distinct");

  o = with(Distribution::reduced_entropy, 1);
  o.entropy_bits = -1;
  expect_rejected<std::uint32_t>(o, "entropy_bits");
  o.entropy_bits = 33;
  expect_rejected<std::uint32_t>(o, "entropy_bits");
  o.entropy_bits = 32;  // a float block of 2^32 encodings would hold NaN and inf
  expect_rejected<float>(o, "entropy_bits");

  for (Distribution d : {Distribution::uniform, Distribution::sorted, Distribution::zipf}) {
    o = with(d, 1);
    o.lo = 1.0;
    o.hi = 1.0;
    expect_rejected<float>(o, "lo, hi");
    o.lo = 2.0;
    expect_rejected<double>(o, "lo, hi");
    o.lo = 0.0;
    o.hi = 1e6;  // inf in f16
    expect_rejected<rxm::half_t>(o, "not finite");
    o.lo = 1.0;
    o.hi = 1.0001;  // distinct doubles, the same bf16
    expect_rejected<rxm::bfloat16_t>(o, "empty");
  }

  o = with(Distribution::zipf, 1);
  o.zipf_s = 0.0;
  expect_rejected<std::uint32_t>(o, "zipf_s");
  o.zipf_s = -1.0;
  expect_rejected<std::uint32_t>(o, "zipf_s");
  o.zipf_s = std::nan("");
  expect_rejected<std::uint32_t>(o, "zipf_s");
  o.zipf_s = 1.0;
  o.zipf_universe = 0;
  expect_rejected<std::uint32_t>(o, "zipf_universe");

  o = with(Distribution::normal, 1);
  o.stddev = -1.0;
  expect_rejected<float>(o, "stddev");
  o.stddev = 1.0;
  o.mean = INFINITY;
  expect_rejected<float>(o, "mean");

  o = with(Distribution::nearly_sorted, 1);
  o.swap_fraction = 1.5;
  expect_rejected<std::uint32_t>(o, "swap_fraction");

  o = with(Distribution::uniform, 1);
  o.special_fraction = 0.1;
  expect_rejected<std::int32_t>(o, "special_fraction");
  o.special_fraction = -0.1;
  expect_rejected<float>(o, "special_fraction");

  o = with(static_cast<Distribution>(99), 1);
  expect_rejected<std::uint32_t>(o, "distribution");

  EXPECT_THROW(rxm::generate(rxm::KeyType::u32, nullptr, 10, GenerateOptions{}), rxm::Error);
}

TEST(Generate, DistributionNames) {
  for (Distribution d : all_distributions) {
    EXPECT_EQ(rxm::distribution_from_name(rxm::name_of(d)), d);
    std::string underscored(rxm::name_of(d));
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    EXPECT_EQ(rxm::distribution_from_name(underscored), d);
  }
  EXPECT_EQ(rxm::name_of(Distribution::nearly_sorted), "nearly-sorted");
  EXPECT_EQ(rxm::distribution_from_name("reverse_sorted"), Distribution::reverse_sorted);
  EXPECT_EQ(rxm::distribution_from_name("Zipf"), Distribution::zipf);
  EXPECT_FALSE(rxm::distribution_from_name("gaussian").has_value());
  EXPECT_FALSE(rxm::distribution_from_name("").has_value());
}

}  // namespace
