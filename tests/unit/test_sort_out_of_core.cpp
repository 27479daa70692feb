// The out-of-core sort on CPU mesh devices with a device memory limit that forces rounds, against
// the CPU backend's in-memory sort byte for byte: every key type, keys and pairs (4- and 8-byte
// values), both orders, bit ranges, every adversarial distribution (buckets too large for a device
// recurse, equal keys run out of bits), awkward sizes; then the progress reports, the automatic
// choice, and the refusals (host memory, a device limit too small).
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
using rxm::testing::memory_for_groups_of;

namespace {

rxm::SortOptions forced(std::size_t group_elements, std::size_t elem_bytes) {
  rxm::SortOptions o;
  o.out_of_core = rxm::OutOfCoreMode::always;
  o.device_memory_limit = memory_for_groups_of(group_elements, elem_bytes);
  return o;
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
  const std::size_t n = 30011;
  std::vector<std::uint32_t> keys(n);
  for (const char* kind : {"top-byte-equal", "all-equal", "lowest-bit"}) {
    SCOPED_TRACE(kind);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t mixed = std::uint32_t(i * 2654435761u);
      keys[i] = std::string(kind) == "all-equal" ? 7u
                : std::string(kind) == "lowest-bit" ? 0xABCDEF00u | (mixed >> 31)
                                                    : 0x55000000u | (mixed >> 8);
    }
    std::vector<std::uint32_t> index(n), want_keys = keys, want_index;
    for (std::size_t i = 0; i < n; ++i) index[i] = std::uint32_t(i);
    want_index = index;
    auto cpu = rxm::Context::cpu(1);
    rxm::sort(cpu, std::span(want_keys), std::span(want_index));
    rxm::SortPhases phases;
    rxm::SortOptions o = forced(2000, 8);
    o.phases = &phases;
    rxm::sort(ctx, std::span(keys), std::span(index), o);
    EXPECT_EQ(keys, want_keys);
    EXPECT_EQ(index, want_index);
    EXPECT_GE(phases.passes, 2) << "a bucket of every key needs a second level";
  }
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
  EXPECT_EQ(steps, (std::vector<std::string>{"counting", "partitioning", "sorting"}));

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
