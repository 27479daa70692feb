// CPU multisplit against a plain sequential reference: every bucket function, every key type,
// keys-only and 4/8-byte values (value = original index, so stability is checked element by
// element), awkward sizes, m across the variants' edges, skewed distributions, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "common/multisplit_inputs.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/multisplit.hpp"

namespace rxm = radixmesh;
using rxm::testing::random_bit_patterns;
using rxm::testing::test_seed;

namespace {

const std::uint32_t bucket_counts[] = {1, 2, 3, 32, 33, 256, 257, 4096, 65536};

// Stable counting split, one key at a time: obviously right, slow, single-threaded.
template <class K, class V, class F>
void reference_multisplit(const std::vector<K>& keys, const std::vector<V>& values, const F& f, std::uint32_t m,
                          std::vector<K>& keys_out, std::vector<V>& values_out, std::vector<std::size_t>& offsets) {
  std::vector<std::uint32_t> ids(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ids[i] = std::min<std::uint32_t>(f(keys[i]), m - 1);
  offsets.assign(m + 1, 0);
  for (auto id : ids) ++offsets[id + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  std::vector<std::size_t> next(offsets.begin(), offsets.end() - 1);
  keys_out.resize(keys.size());
  values_out.resize(values.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t to = next[ids[i]]++;
    keys_out[to] = keys[i];
    if (!values.empty()) values_out[to] = values[i];
  }
}

template <class K> bool same_bits(K a, K b) { return rxm::to_bits(a) == rxm::to_bits(b); }

// Runs keys-only and pairs (value = index, 4 or 8 bytes) through rxm::multisplit and compares.
template <class K, class V, class F>
void check_against_reference(rxm::Context& ctx, const std::vector<K>& keys, const F& f, std::uint32_t m) {
  std::vector<V> values(keys.size());
  std::iota(values.begin(), values.end(), V(0));
  std::vector<K> expected_keys;
  std::vector<V> expected_values;
  std::vector<std::size_t> expected_offsets;
  reference_multisplit(keys, values, f, m, expected_keys, expected_values, expected_offsets);

  const K poison = rxm::from_bits<K>(rxm::key_bits_t<K>(0x5A5A5A5A5A5A5A5Aull));
  std::vector<K> keys_out(keys.size(), poison);
  std::vector<V> values_out(keys.size(), V(~V(0)));
  std::vector<std::size_t> offsets(m + 1, 12345);
  rxm::multisplit(ctx, std::span<const K>(keys), std::span<K>(keys_out), std::span<const V>(values),
                  std::span<V>(values_out), f, std::span<std::size_t>(offsets));
  ASSERT_EQ(offsets, expected_offsets);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(same_bits(keys_out[i], expected_keys[i])) << "key at " << i;
    ASSERT_EQ(values_out[i], expected_values[i]) << "value (original index) at " << i;
  }
  std::vector<K> keys_only(keys.size(), poison);
  std::vector<std::size_t> offsets_only(m + 1, 777);
  rxm::multisplit(ctx, std::span<const K>(keys), std::span<K>(keys_only), f, std::span<std::size_t>(offsets_only));
  ASSERT_EQ(offsets_only, expected_offsets);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(same_bits(keys_only[i], expected_keys[i])) << i;
}

using rxm::testing::key_of_value;
using rxm::testing::sorted_sample;

template <class K> void every_bucket_function(rxm::Context& ctx, std::size_t n, std::uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << " n=" << n << " seed=" << seed);
  auto keys = random_bit_patterns<K>(n, seed);
  constexpr int width = int(sizeof(K) * 8);
  for (int bits : {0, 1, 5, 8, 12}) {
    if (bits > width) continue;
    const int shift = width - bits;  // the most significant digit, and the least
    for (int s : {shift, 0}) {
      rxm::buckets::radix_digit digit{s, bits};
      check_against_reference<K, std::uint32_t>(ctx, keys, digit, digit.num_buckets());
    }
  }
  for (std::uint32_t m : bucket_counts) {  // u16/u32/u64 splitters at m = 65536: tables of 128 KB and more
    auto sample = sorted_sample(keys, 2, seed + m);
    K lo = sample[0], hi = sample[1];
    if constexpr (rxm::key_traits<K>::is_float) {  // finite bounds (random bit patterns hold NaN, inf)
      lo = key_of_value<K>(-3.0);
      hi = key_of_value<K>(2.5);
    } else if (!rxm::key_less<K>{}(lo, hi)) {  // need lo < hi: take the extremes of the encoding
      lo = rxm::decode_key<K>(rxm::key_bits_t<K>(0));
      hi = rxm::decode_key<K>(rxm::key_bits_t<K>(~rxm::key_bits_t<K>(0)));
    }
    check_against_reference<K, std::uint64_t>(ctx, keys, rxm::buckets::delta<K>(lo, hi, m), m);
    auto boundaries = sorted_sample(keys, m - 1, seed + 7 * m);
    rxm::buckets::splitters<K> split{boundaries.data(), m - 1};
    check_against_reference<K, std::uint32_t>(ctx, keys, split, m);
  }
}

}  // namespace

TEST(MultisplitCpu, EveryKeyTypeAndBucketFunction) {
  auto ctx = rxm::Context::cpu(3);
  const std::uint64_t seed = test_seed();
  for (std::size_t n : {0ul, 1ul, 31ul, 4095ul, 200'003ul}) {
    every_bucket_function<std::uint8_t>(ctx, n, seed);
    every_bucket_function<std::uint16_t>(ctx, n, seed);
    every_bucket_function<std::uint32_t>(ctx, n, seed);
    every_bucket_function<std::uint64_t>(ctx, n, seed);
    every_bucket_function<std::int8_t>(ctx, n, seed);
    every_bucket_function<std::int16_t>(ctx, n, seed);
    every_bucket_function<std::int32_t>(ctx, n, seed);
    every_bucket_function<std::int64_t>(ctx, n, seed);
    every_bucket_function<rxm::half_t>(ctx, n, seed);
    every_bucket_function<rxm::bfloat16_t>(ctx, n, seed);
    every_bucket_function<float>(ctx, n, seed);
    every_bucket_function<double>(ctx, n, seed);
  }
}

// Bucket ids drawn from the paper's distributions (§6.4), identity buckets, every m.
TEST(MultisplitCpu, DistributionsAndBucketCounts) {
  auto ctx = rxm::Context::cpu(4);
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (std::uint32_t m : bucket_counts) {
    for (int distribution = 0; distribution < 5; ++distribution) {
      SCOPED_TRACE(::testing::Message() << "m=" << m << " distribution=" << distribution << " seed=" << seed);
      const std::size_t n = (m == 4096 && distribution == 0) ? (1u << 20) + 7 : 70'001;
      std::vector<std::uint32_t> keys(n);
      std::binomial_distribution<std::uint32_t> binomial(m - 1, 0.5);
      const std::uint32_t one_bucket = std::uint32_t(rng() % m);
      for (std::size_t i = 0; i < n; ++i) {
        switch (distribution) {
          case 0: keys[i] = std::uint32_t(rng() % m); break;                       // uniform
          case 1: keys[i] = one_bucket; break;                                     // everything in one bucket
          case 2: keys[i] = binomial(rng); break;                                  // binomial B(m-1, 0.5)
          case 3: keys[i] = (rng() % 4 == 0) ? std::uint32_t(rng() % m) : one_bucket; break;  // 0.25-uniform
          default: keys[i] = std::uint32_t(std::uint64_t(i) * m / n); break;      // sorted
        }
      }
      check_against_reference<std::uint32_t, std::uint32_t>(ctx, keys, rxm::buckets::identity{m}, m);
      auto lambda = [m](std::uint32_t k) { return (k * 2654435761u) % m; };  // a user functor
      check_against_reference<std::uint32_t, std::uint64_t>(ctx, keys, lambda, m);
    }
  }
}

TEST(MultisplitCpu, SixteenBitDigitsAndSignedIdentity) {
  auto ctx = rxm::Context::cpu(2);
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  auto keys = random_bit_patterns<std::int32_t>(300'007, seed);
  check_against_reference<std::int32_t, std::uint32_t>(ctx, keys, rxm::buckets::radix_digit{16, 16}, 65536);
  check_against_reference<std::int32_t, std::uint32_t>(ctx, keys, rxm::buckets::radix_digit{0, 16}, 65536);
  for (auto& k : keys) k = std::abs(k % 65536);
  check_against_reference<std::int32_t, std::uint32_t>(ctx, keys, rxm::buckets::identity{65536}, 65536);
}

TEST(MultisplitCpu, DeltaBucketsOnFloatsClampOutsideRange) {
  auto ctx = rxm::Context::cpu(1);
  std::vector<float> keys = {-1.0f, 0.0f, 0.24f, 0.25f, 0.99f, 1.0f, 5.0f, std::numeric_limits<float>::quiet_NaN(),
                             -std::numeric_limits<float>::infinity(), 0.5f};
  std::vector<float> out(keys.size());
  std::vector<std::size_t> offsets(5);
  rxm::multisplit(ctx, std::span<const float>(keys), std::span<float>(out), rxm::buckets::delta<float>(0.0f, 1.0f, 4),
                  std::span<std::size_t>(offsets));
  // bucket 0: -1, 0, 0.24, -inf; bucket 1: 0.25; bucket 2: 0.5; bucket 3: 0.99, 1, 5, NaN
  EXPECT_EQ(offsets, (std::vector<std::size_t>{0, 4, 5, 6, 10}));
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[4], 0.25f);
  EXPECT_TRUE(std::isnan(out[9]));
}

TEST(MultisplitCpu, HistogramAndPartitionByProducts) {
  auto ctx = rxm::Context::cpu(2);
  auto keys = random_bit_patterns<std::uint32_t>(100'000, test_seed());
  std::vector<std::size_t> counts(256);
  rxm::histogram(ctx, std::span<const std::uint32_t>(keys), rxm::buckets::radix_digit{24, 8},
                 std::span<std::size_t>(counts));
  std::vector<std::size_t> expected(256, 0);
  for (auto k : keys) ++expected[k >> 24];
  EXPECT_EQ(counts, expected);

  std::vector<std::uint32_t> out(keys.size());
  auto is_even = [](std::uint32_t k) { return k % 2 == 0; };
  const std::size_t evens = rxm::partition(ctx, std::span<const std::uint32_t>(keys), std::span<std::uint32_t>(out), is_even);
  std::vector<std::uint32_t> expected_out(keys);
  std::stable_partition(expected_out.begin(), expected_out.end(), is_even);
  EXPECT_EQ(evens, std::size_t(std::count_if(keys.begin(), keys.end(), is_even)));
  EXPECT_EQ(out, expected_out);
}

// Every bad input throws rxm::Error and leaves the outputs as they were.
TEST(MultisplitCpu, BadInputLeavesOutputsUntouched) {
  auto ctx = rxm::Context::cpu(2);
  std::vector<std::uint32_t> keys(1000);
  std::iota(keys.begin(), keys.end(), 0u);
  std::vector<std::uint32_t> out(keys.size(), 0xDEADBEEFu), short_out(10, 0xDEADBEEFu);
  std::vector<std::uint32_t> values(keys.size()), values_out(keys.size() - 1, 0xDEADBEEFu);
  const std::span<const std::uint32_t> in(keys);
  auto untouched = [&] { return std::all_of(out.begin(), out.end(), [](auto v) { return v == 0xDEADBEEFu; }); };
  auto expect_error = [&](auto&& call, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const rxm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument);
    }
    EXPECT_TRUE(untouched());
  };
  std::vector<std::size_t> one_offset(1, 9), offsets(257, 9), too_many(65538, 9);
  auto identity_lambda = [](std::uint32_t k) { return k; };
  expect_error([&] { rxm::multisplit(ctx, in, std::span(out), identity_lambda, std::span(one_offset)); }, "m = 0");
  expect_error([&] { rxm::multisplit(ctx, in, std::span(out), identity_lambda, std::span(too_many)); }, "m = 65537");
  expect_error([&] { rxm::multisplit(ctx, in, std::span(short_out), rxm::buckets::radix_digit{0, 8}, std::span(offsets)); },
               "keys_out has 10");
  expect_error([&] {
    rxm::multisplit(ctx, in, std::span(out), std::span<const std::uint32_t>(values), std::span(values_out),
                    rxm::buckets::radix_digit{0, 8}, std::span(offsets));
  }, "same length");
  expect_error([&] { rxm::multisplit(ctx, in, std::span(out), rxm::buckets::radix_digit{0, 4}, std::span(offsets)); },
               "has 16 buckets");
  expect_error([&] { rxm::multisplit(ctx, in, std::span(out), rxm::buckets::radix_digit{28, 8}, std::span(offsets)); },
               "not inside");
  expect_error([&] {
    rxm::multisplit(ctx, in, std::span(out), rxm::buckets::delta<std::uint32_t>(5u, 5u, 256), std::span(offsets));
  }, "lo < hi");
  // A tuning knob out of range (MultisplitTuning): refused on every backend.
  expect_error([&] {
    rxm::multisplit(ctx, in, std::span(out), rxm::buckets::radix_digit{0, 8}, std::span(offsets),
                    {.tuning = {.scatter_stages = 3}});
  }, "tuning.scatter_stages = 3");
  expect_error([&] {
    rxm::multisplit(ctx, in, std::span(out), rxm::buckets::radix_digit{0, 8}, std::span(offsets),
                    {.tuning = {.warp_scatter_windows = 16}});
  }, "tuning.warp_scatter_windows = 16");
  {
    std::vector<float> fin(4, 1.0f), fout(4, 7.0f);
    std::vector<std::size_t> four(5);
    const float inf = std::numeric_limits<float>::infinity();
    try {
      rxm::multisplit(ctx, std::span<const float>(fin), std::span(fout), rxm::buckets::delta<float>(0.0f, inf, 4),
                      std::span(four));
      ADD_FAILURE() << "no error for an infinite delta bound";
    } catch (const rxm::Error& e) {
      EXPECT_NE(std::string(e.what()).find("finite"), std::string::npos) << e.what();
    }
    EXPECT_EQ(fout, std::vector<float>(4, 7.0f));
  }
  std::vector<std::uint32_t> unsorted = {5, 3};
  std::vector<std::size_t> three(4, 9);
  expect_error([&] {
    rxm::multisplit(ctx, in, std::span(out), rxm::buckets::splitters<std::uint32_t>{unsorted.data(), 2}, std::span(three));
  }, "not sorted");
  // Checked mode names the first key whose id is >= m; identity sends key 256 to id 256.
  expect_error([&] { rxm::multisplit(ctx, in, std::span(out), identity_lambda, std::span(offsets)); },
               "key 256 at index 256 has bucket id 256");
  expect_error([&] { rxm::histogram(ctx, in, rxm::buckets::identity{256}, std::span(offsets).first(256)); },
               "key 256");
  EXPECT_TRUE(std::all_of(offsets.begin(), offsets.end(), [](auto v) { return v == 9; }));

  // Fast mode: out-of-range ids go to the last bucket.
  rxm::multisplit(ctx, in, std::span(out), identity_lambda, std::span(offsets), {.checked = false});
  EXPECT_EQ(offsets[255], 255u);
  EXPECT_EQ(offsets[256], 1000u);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), keys.begin()));
}
