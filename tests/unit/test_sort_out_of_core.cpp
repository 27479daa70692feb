// The out-of-core sort on CPU mesh devices with a device memory limit that forces rounds, against
// the CPU backend's in-memory sort byte for byte: every key type, keys and pairs (4- and 8-byte
// values), both orders, bit ranges, every adversarial distribution (buckets too large for a device
// recurse, equal keys run out of bits), awkward sizes; then the progress reports, the automatic
// choice, the caller's scratch array, and the refusals (host memory, a scratch array or a device
// limit too small).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error_text.hpp"
#include "common/out_of_core_cases.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::testing::expect_out_of_core_matches;

namespace {

rxm::SortOptions forced(std::size_t group_elements, std::size_t elem_bytes) {
  return rxm::testing::out_of_core_options(group_elements, elem_bytes, rxm::OutOfCoreMode::always);
}

}  // namespace

TEST(SortOutOfCore, EveryKeyTypeAndValueWidth) {
  const std::uint64_t seed = rxm::testing::test_seed();
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  rxm::GenerateOptions gen;
  gen.distribution = rxm::Distribution::uniform;
  gen.float_full_range = true;
  gen.special_fraction = 0.05;  // NaN, infinities, -0.0 among floats
  for (rxm::KeyType type : rxm::all_key_types)
    for (std::size_t value_bytes : {0, 4, 8}) {
      const std::size_t elem = rxm::size_of(type) + value_bytes;
      for (rxm::Order order : {rxm::Order::ascending, rxm::Order::descending}) {
        rxm::SortOptions o = forced(1500, elem);
        o.order = order;
        const auto phases = expect_out_of_core_matches(
            ctx, type, 40009, gen, value_bytes, o, seed,
            std::string(rxm::name_of(type)) + " v" + std::to_string(value_bytes) +
                (order == rxm::Order::descending ? " descending" : " ascending"));
        EXPECT_TRUE(phases.out_of_core);
        EXPECT_GT(phases.out_of_core_groups, 1u);
      }
    }
}

TEST(SortOutOfCore, EveryDistributionAndSize) {
  const std::uint64_t seed = rxm::testing::test_seed();
  for (unsigned devices : {2u, 3u})
    for (const auto& c : rxm::testing::mesh_sort_cases())
      for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1025), std::size_t(65537)})
        for (rxm::KeyType type : {rxm::KeyType::u32, rxm::KeyType::f64, rxm::KeyType::i16}) {
          auto ctx = rxm::Context::cpu_mesh(devices, 1);
          expect_out_of_core_matches(ctx, type, n, c.gen, 8, forced(1200, rxm::size_of(type) + 8), seed,
                                     c.name + " n " + std::to_string(n) + " " + std::string(rxm::name_of(type)) +
                                         " on " + std::to_string(devices));
        }
}

// Buckets larger than a device recurse on the next digit; keys equal in every bit run out of
// digits and stay in input order; keys that differ only in the lowest bit take every level.
TEST(SortOutOfCore, BucketsTooLargeForADeviceRecurse) {
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  rxm::testing::expect_recursion_matches(ctx, 30011, forced(2000, 8));
}

// A level that one device holds once with room to spare stays on it: each chunk is split into a
// device-resident array and each group gathered there, with no host array at all (the host may
// give none). Every key type, pairs, both orders, the adversarial distributions, and buckets too
// large to sort at once (they come down unsorted and are the next level, again on the device).
TEST(SortOutOfCore, ALevelThatADeviceHoldsOnceStaysThere) {
  const std::uint64_t seed = rxm::testing::test_seed();
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  const std::size_t n = 20011;
  auto resident = [&](std::size_t elem) {
    rxm::SortOptions o;
    o.out_of_core = rxm::OutOfCoreMode::always;
    o.device_memory_limit = std::size_t(1.6 * double(n * elem));  // 1.25x holds the level; 2.2x would sort in memory
    o.host_memory_limit = 1;
    return o;
  };
  auto expect_resident = [](const rxm::SortPhases& phases) {
    EXPECT_TRUE(phases.out_of_core);
    EXPECT_NE(phases.plan_text.find("resident on the device"), std::string::npos) << phases.plan_text;
    EXPECT_EQ(phases.plan_text.find("extra host array"), std::string::npos) << phases.plan_text;
  };
  rxm::GenerateOptions gen;
  gen.float_full_range = true;
  gen.special_fraction = 0.05;
  for (rxm::KeyType type : rxm::all_key_types)
    for (std::size_t value_bytes : {0, 4, 8})
      for (rxm::Order order : {rxm::Order::ascending, rxm::Order::descending}) {
        rxm::SortOptions o = resident(rxm::size_of(type) + value_bytes);
        o.order = order;
        expect_resident(expect_out_of_core_matches(
            ctx, type, n, gen, value_bytes, o, seed,
            std::string(rxm::name_of(type)) + " v" + std::to_string(value_bytes) +
                (order == rxm::Order::descending ? " descending" : " ascending")));
      }
  for (const auto& c : rxm::testing::mesh_sort_cases())
    expect_resident(expect_out_of_core_matches(ctx, rxm::KeyType::u32, n, c.gen, 8, resident(12), seed, c.name));
  rxm::testing::expect_recursion_matches(ctx, n, resident(8));
}

TEST(SortOutOfCore, BitRanges) {
  const std::uint64_t seed = rxm::testing::test_seed();
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  rxm::GenerateOptions gen;
  for (auto [begin, end] : {std::pair{0, 12}, std::pair{4, 20}, std::pair{13, 64}, std::pair{60, 64}}) {
    rxm::SortOptions o = forced(1100, 16);
    o.begin_bit = begin;
    o.end_bit = end;
    expect_out_of_core_matches(ctx, rxm::KeyType::u64, 20000, gen, 8, o, seed,
                               "bits [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
  }
}

TEST(SortOutOfCore, ReportsProgressAndChoosesItselfWhenTheInputDoesNotFit) {
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  std::vector<std::uint32_t> keys = rxm::testing::random_bit_patterns<std::uint32_t>(50000, 3);
  std::vector<std::string> steps;
  rxm::SortOptions o;
  o.device_memory_limit = 64 << 10;  // automatic: 50000 keys need more than 64 KiB per device
  o.progress = [&](const rxm::SortProgress& p) {
    if (steps.empty() || steps.back() != p.step) steps.push_back(p.step);
    EXPECT_LE(p.done, p.total);
  };
  rxm::SortPhases phases;
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys), o);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_TRUE(phases.out_of_core);
  EXPECT_EQ(steps, (std::vector<std::string>{"partitioning", "sorting"}));

  // Within the limit, the in-memory sort runs.
  phases = {};
  o.device_memory_limit = 64 << 20;
  rxm::sort(ctx, std::span(keys), o);
  EXPECT_FALSE(phases.out_of_core);
}

TEST(SortOutOfCore, RefusesWhatCannotFitBeforeTouchingTheInput) {
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  std::vector<std::uint32_t> keys = {3, 1, 2};
  rxm::SortOptions o;
  o.out_of_core = rxm::OutOfCoreMode::always;
  // A second host array of 2^42 keys cannot be had: refused naming the bytes, nothing touched.
  const std::string what = rxm::testing::error_text(
      [&] { rxm::sort(ctx, std::span<std::uint32_t>(keys.data(), std::size_t(1) << 42), o); });
  EXPECT_NE(what.find("out-of-core sort's second host array"), std::string::npos) << what;
  EXPECT_NE(what.find("17592186044416"), std::string::npos) << "the bytes needed: " << what;
  EXPECT_EQ(keys, (std::vector<std::uint32_t>{3, 1, 2}));

  o.device_memory_limit = 1000;  // too little for any round
  const std::string small = rxm::testing::error_text([&] { rxm::sort(ctx, std::span(keys), o); });
  EXPECT_NE(small.find("1000 bytes of device memory"), std::string::npos) << small;
  EXPECT_NE(small.find("fix:"), std::string::npos) << small;
  EXPECT_EQ(keys, (std::vector<std::uint32_t>{3, 1, 2}));
}

TEST(SortOutOfCore, TakesTheCallersScratchArray) {
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  const std::size_t n = 30011;  // odd: the values' part of the scratch starts past the keys' padding
  std::vector<std::uint32_t> keys = rxm::testing::random_bit_patterns<std::uint32_t>(n, 5), want_keys = keys;
  std::vector<std::uint64_t> values(n), want_values;
  for (std::size_t i = 0; i < n; ++i) values[i] = i;
  want_values = values;
  auto cpu = rxm::Context::cpu(1);
  rxm::sort(cpu, std::span(want_keys), std::span(want_values));

  rxm::SortOptions o = forced(4000, 12);
  o.host_memory_limit = 1;  // the sort allocates nothing: the scratch is the caller's
  std::vector<std::byte> scratch(rxm::out_of_core_scratch_bytes(n, 4, 8));
  o.host_scratch = scratch;
  rxm::SortPhases phases;
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys), std::span(values), o);
  EXPECT_TRUE(phases.out_of_core);
  EXPECT_EQ(keys, want_keys);
  EXPECT_EQ(values, want_values);

  // Too small: refused naming both sizes, nothing touched.
  std::vector<std::uint32_t> again = rxm::testing::random_bit_patterns<std::uint32_t>(n, 6), before = again;
  o.host_scratch = std::span(scratch).first(scratch.size() - 1);
  const std::string what = rxm::testing::error_text([&] { rxm::sort(ctx, std::span(again), std::span(values), o); });
  EXPECT_NE(what.find("SortOptions::host_scratch holds"), std::string::npos) << what;
  EXPECT_NE(what.find("fix:"), std::string::npos) << what;
  EXPECT_EQ(again, before);
}
