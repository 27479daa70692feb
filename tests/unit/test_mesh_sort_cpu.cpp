// rxm::sort_shards and rxm::sort on CPU meshes (threads transport) against one CPU device sorting
// the same keys, byte for byte: every key type, keys only and with 4- and 8-byte values (the
// global index, so stability is checked), ascending and descending, bit ranges, every adversarial
// distribution, uneven and empty shards, fewer keys than devices, digits of 1 to 16 bits (many
// refinement passes); then bad input, on every device.
#include <gtest/gtest.h>

#include <numeric>

#include "common/error_text.hpp"
#include "common/mesh_sort_cases.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

// Sorts `in` as shards of `counts` on a CPU mesh and compares with the single-device result.
// value_bytes 0: keys only; 4: the low half of the index; 8: the index.
void check(const rxm::testing::GlobalInput& in, const std::vector<std::size_t>& counts, std::size_t value_bytes,
           const rxm::SortOptions& options, const std::string& what) {
  const int devices = int(counts.size());
  auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
  const auto expected = rxm::testing::expected_sort(in, options);
  const std::size_t kb = rxm::size_of(in.type), n = in.index.size();
  std::vector<std::byte> keys = in.keys;
  std::vector<std::uint32_t> v4(n);
  for (std::size_t i = 0; i < n; ++i) v4[i] = std::uint32_t(in.index[i]);
  std::vector<std::uint64_t> v8 = in.index;
  rxm::SortPhases phases;
  rxm::SortOptions with_report = options;
  with_report.phases = &phases;
  rxm::visit_key_type(in.type, [&](auto tag) {
    using K = decltype(tag);
    K* k = reinterpret_cast<K*>(keys.data());
    std::vector<std::span<K>> ks;
    std::vector<std::span<std::uint32_t>> s4;
    std::vector<std::span<std::uint64_t>> s8;
    std::size_t at = 0;
    for (std::size_t c : counts) {
      ks.emplace_back(k + at, c);
      s4.emplace_back(v4.data() + at, c);
      s8.emplace_back(v8.data() + at, c);
      at += c;
    }
    if (value_bytes == 0) rxm::sort_shards(ctx, std::span<const std::span<K>>(ks), with_report);
    if (value_bytes == 4)
      rxm::sort_shards(ctx, std::span<const std::span<K>>(ks), std::span<const std::span<std::uint32_t>>(s4), with_report);
    if (value_bytes == 8)
      rxm::sort_shards(ctx, std::span<const std::span<K>>(ks), std::span<const std::span<std::uint64_t>>(s8), with_report);
  });
  ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), expected.keys.data(), n * kb)) << what;
  for (std::size_t i = 0; i < n; ++i) {
    if (value_bytes == 4) {
      ASSERT_EQ(v4[i], std::uint32_t(expected.index[i])) << what << " at " << i;
    }
    if (value_bytes == 8) {
      ASSERT_EQ(v8[i], expected.index[i]) << what << " at " << i;
    }
  }
  if (n > 1) {
    if (!phases.merged) {
      EXPECT_GE(phases.passes, phases.sorted_across_devices ? 0 : 1) << what;
    }
    EXPECT_EQ(phases.counts.size(), counts.size()) << what;
    if (options.mesh_strategy == rxm::MeshSortStrategy::merge && counts.size() > 1) {
      EXPECT_TRUE(phases.merged || phases.sorted_across_devices) << what;
    }
    if (options.mesh_strategy != rxm::MeshSortStrategy::merge) {
      EXPECT_FALSE(phases.merged) << what;
    }
  }
}

// check() with each strategy of moving keys between the devices.
void check_both(const rxm::testing::GlobalInput& in, const std::vector<std::size_t>& counts, std::size_t value_bytes,
                rxm::SortOptions options, const std::string& what) {
  for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
    options.mesh_strategy = strategy;
    check(in, counts, value_bytes, options,
          what + (strategy == rxm::MeshSortStrategy::merge ? " (merge)" : " (partition)"));
  }
}

TEST(MeshSortCpu, EveryTypeAndDistributionMatchesOneDevice) {
  const std::uint64_t seed = test_seed();
  int round = 0;
  for (rxm::KeyType type : rxm::all_key_types)
    for (const auto& c : rxm::testing::mesh_sort_cases()) {
      if (c.gen.special_fraction > 0 && !rxm::is_floating(type)) continue;
      const std::size_t n = 4093 + std::size_t(round % 3) * 1000;
      const int devices = 2 + round % 3;
      const auto in = rxm::testing::global_input(type, n, c.gen, seed + std::uint64_t(round));
      const auto counts = rxm::testing::uneven_counts(n, devices, std::uint64_t(round));
      const std::size_t vb = std::size_t(round % 3 == 0 ? 0 : round % 3 == 1 ? 4 : 8);
      rxm::SortOptions asc, desc;
      desc.order = rxm::Order::descending;
      const std::string what = std::string(rxm::name_of(type)) + " " + c.name + " devices " +
                               std::to_string(devices) + " seed " + std::to_string(seed + std::uint64_t(round));
      check_both(in, counts, vb, asc, what + " ascending");
      check_both(in, counts, vb, desc, what + " descending");
      ++round;
    }
}

// Keys already in ascending ranges in device order take the shortcut (each device sorts its own,
// nothing moves), also where equal keys meet at a boundary; anything else partitions.
TEST(MeshSortCpu, SortedAcrossDevicesMovesNothing) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  auto run = [&](std::vector<std::vector<std::uint32_t>> shards, rxm::Order order,
                 rxm::MeshSortStrategy strategy = rxm::MeshSortStrategy::partition) {
    std::vector<std::uint32_t> all;
    for (const auto& s : shards) all.insert(all.end(), s.begin(), s.end());
    std::vector<std::span<std::uint32_t>> spans(shards.begin(), shards.end());
    rxm::SortPhases phases;
    rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(spans),
                     {.order = order, .mesh_strategy = strategy, .phases = &phases});
    auto cpu = rxm::Context::cpu(1);
    rxm::sort(cpu, std::span(all), {.order = order});
    std::vector<std::uint32_t> got;
    for (const auto& s : shards) got.insert(got.end(), s.begin(), s.end());
    EXPECT_EQ(got, all);
    return phases;
  };
  auto p = run({{5, 1, 3}, {9, 7, 7}, {12, 30, 10}}, rxm::Order::ascending);
  EXPECT_TRUE(p.sorted_across_devices);
  EXPECT_EQ(p.passes, 0);
  EXPECT_EQ(p.moved, (std::vector<std::uint64_t>{3, 0, 0, 0, 3, 0, 0, 0, 3}));
  EXPECT_TRUE(run({{5, 1, 7}, {7, 7}, {7, 30}}, rxm::Order::ascending).sorted_across_devices)
      << "equal keys at the boundaries";
  EXPECT_TRUE(run({{30, 12}, {9, 7}, {5, 1}}, rxm::Order::descending).sorted_across_devices);
  EXPECT_FALSE(run({{30, 12}, {9, 7}, {5, 1}}, rxm::Order::ascending).sorted_across_devices);
  EXPECT_FALSE(run({{5, 1, 3}, {2, 7, 7}, {12, 30, 10}}, rxm::Order::ascending).sorted_across_devices);
  // The merge strategy finds it from its cuts, after the local sorts.
  const auto merge = rxm::MeshSortStrategy::merge;
  p = run({{5, 1, 3}, {9, 7, 7}, {12, 30, 10}}, rxm::Order::ascending, merge);
  EXPECT_TRUE(p.sorted_across_devices);
  EXPECT_TRUE(p.merged);
  EXPECT_EQ(p.moved, (std::vector<std::uint64_t>{3, 0, 0, 0, 3, 0, 0, 0, 3}));
  EXPECT_TRUE(run({{5, 1, 7}, {7, 7}, {7, 30}}, rxm::Order::ascending, merge).sorted_across_devices);
  EXPECT_TRUE(run({{30, 12}, {9, 7}, {5, 1}}, rxm::Order::descending, merge).sorted_across_devices);
  p = run({{30, 12}, {9, 7}, {5, 1}}, rxm::Order::ascending, merge);
  EXPECT_FALSE(p.sorted_across_devices);
  EXPECT_TRUE(p.merged);
}

TEST(MeshSortCpu, SizesAndShardShapes) {
  const std::uint64_t seed = test_seed();
  rxm::GenerateOptions uniform;
  uniform.threads = 1;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(31),
                        std::size_t(65537)})
    for (int devices : {1, 2, 3, 5, 7}) {
      const auto in = rxm::testing::global_input(rxm::KeyType::u32, n, uniform, seed + n);
      const std::string what = "n " + std::to_string(n) + " devices " + std::to_string(devices);
      std::vector<std::size_t> even(static_cast<std::size_t>(devices));
      for (int d = 0; d < devices; ++d) even[std::size_t(d)] = n * std::size_t(d + 1) / std::size_t(devices) - n * std::size_t(d) / std::size_t(devices);
      check_both(in, even, 8, {}, what + " even");
      check_both(in, rxm::testing::uneven_counts(n, devices, n), 4, {}, what + " uneven");
      std::vector<std::size_t> one_holds_all(static_cast<std::size_t>(devices), 0);
      one_holds_all.back() = n;
      check_both(in, one_holds_all, 0, {}, what + " all on the last device");
    }
}

TEST(MeshSortCpu, DigitWidthsAndBitRanges) {
  const std::uint64_t seed = test_seed();
  for (const auto& c : rxm::testing::mesh_sort_cases())
    for (int bits : {1, 3, 8, 11, 16}) {
      const rxm::KeyType type = c.gen.special_fraction > 0 ? rxm::KeyType::f64 : rxm::KeyType::i64;
      const auto in = rxm::testing::global_input(type, 3001, c.gen, seed + std::uint64_t(bits));
      rxm::SortOptions o;
      o.mesh_digit_bits = bits;
      const std::string what = c.name + " digit bits " + std::to_string(bits);
      check_both(in, rxm::testing::uneven_counts(3001, 4, std::uint64_t(bits)), 8, o, what);
      o.begin_bit = 5;
      o.end_bit = 37;
      o.order = rxm::Order::descending;
      check_both(in, rxm::testing::uneven_counts(3001, 3, std::uint64_t(bits)), 4, o, what + " bits [5, 37) descending");
    }
}

TEST(MeshSortCpu, SortOnAMeshContextSplitsTheSpan) {
  const std::uint64_t seed = test_seed();
  for (int devices : {2, 4}) {
    auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
    auto keys = rxm::testing::random_bit_patterns<float>(100003, seed);
    std::vector<std::uint32_t> values(keys.size());
    std::iota(values.begin(), values.end(), 0u);
    auto want_keys = keys;
    auto want_values = values;
    auto cpu = rxm::Context::cpu(1);
    rxm::sort(cpu, std::span(want_keys), std::span(want_values));
    rxm::sort(ctx, std::span(keys), std::span(values));
    ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), want_keys.data(), keys.size() * sizeof(float)));
    ASSERT_EQ(values, want_values);
  }
}

TEST(MeshSortCpu, ReportsThePlan) {
  auto ctx = rxm::Context::cpu_mesh(4, 1);
  std::vector<std::uint32_t> keys(1 << 16);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = std::uint32_t(i * 2654435761u);
  rxm::SortPhases phases;
  rxm::sort(ctx, std::span(keys), {.phases = &phases});
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_GE(phases.passes, 2);  // exact counts: the cuts at 1/4, 1/2, 3/4 fall inside buckets
  EXPECT_EQ(phases.digit_bits, 8);
  EXPECT_EQ(phases.counts, (std::vector<std::uint64_t>{16384, 16384, 16384, 16384}));
  EXPECT_EQ(phases.moved.size(), 16u);
  EXPECT_NE(phases.plan_text.find("pass 1"), std::string::npos) << phases.plan_text;
  EXPECT_EQ(phases.plan_json.rfind("{\"passes\":[", 0), 0u) << phases.plan_json;
}

TEST(MeshSortCpu, ReportsTheMerge) {
  auto ctx = rxm::Context::cpu_mesh(4, 1);
  std::vector<std::uint32_t> keys(1 << 16);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = std::uint32_t(i * 2654435761u);
  rxm::SortPhases phases;
  rxm::sort(ctx, std::span(keys), {.mesh_strategy = rxm::MeshSortStrategy::merge, .phases = &phases});
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_TRUE(phases.merged);
  EXPECT_EQ(phases.passes, 0);
  std::uint64_t moved = 0;
  for (std::uint64_t m : phases.moved) moved += m;
  EXPECT_EQ(moved, keys.size());
  EXPECT_NE(phases.plan_text.find("2 rounds"), std::string::npos) << phases.plan_text;
}

// sort_shards_into: the inputs untouched, the outputs of any sizes adding up to n (balanced, all on
// one device, uneven), the same bytes as one device's sort cut at the output sizes.
TEST(MeshSortCpu, IntoOutputShardsOfAnySizes) {
  const std::uint64_t seed = test_seed();
  for (const auto& c : rxm::testing::mesh_sort_cases()) {
    const rxm::KeyType type = c.gen.special_fraction > 0 ? rxm::KeyType::f32 : rxm::KeyType::i32;
    const std::size_t n = 50021;
    const int devices = 4;
    const auto in = rxm::testing::global_input(type, n, c.gen, seed);
    const auto want = rxm::testing::expected_sort(in, {});
    const auto in_counts = rxm::testing::uneven_counts(n, devices, 3);
    auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
    std::vector<std::size_t> balanced = rxm::balanced_shard_sizes(ctx, in_counts);
    std::vector<std::size_t> last_takes_all(devices, 0);
    last_takes_all.back() = n;
    for (const auto& out_counts : {balanced, last_takes_all, rxm::testing::uneven_counts(n, devices, 1)})
      for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
        const std::string what = c.name + (strategy == rxm::MeshSortStrategy::merge ? " (merge)" : " (partition)");
        std::vector<std::byte> out_keys(n * 4, std::byte{0xAB});  // poisoned: every element must be written
        std::vector<std::uint64_t> out_values(n, ~0ull);
        const std::vector<std::byte> before = in.keys;
        rxm::visit_key_type(type, [&](auto tag) {
          using K = decltype(tag);
          std::vector<std::span<const K>> ki;
          std::vector<std::span<const std::uint64_t>> vi;
          std::vector<std::span<K>> ko;
          std::vector<std::span<std::uint64_t>> vo;
          std::size_t at = 0, out_at = 0;
          for (int d = 0; d < devices; ++d) {
            const std::size_t n_in = in_counts[std::size_t(d)], n_out = out_counts[std::size_t(d)];
            ki.emplace_back(reinterpret_cast<const K*>(in.keys.data()) + at, n_in);
            vi.emplace_back(in.index.data() + at, n_in);
            ko.emplace_back(reinterpret_cast<K*>(out_keys.data()) + out_at, n_out);
            vo.emplace_back(out_values.data() + out_at, n_out);
            at += n_in;
            out_at += n_out;
          }
          rxm::sort_shards_into(ctx, std::span<const std::span<const K>>(ki), std::span<const std::span<const std::uint64_t>>(vi),
                                std::span<const std::span<K>>(ko), std::span<const std::span<std::uint64_t>>(vo),
                                {.mesh_strategy = strategy});
        });
        ASSERT_EQ(in.keys, before) << what << ": the inputs must stay as they were";
        ASSERT_TRUE(rxm::testing::same_bytes(out_keys.data(), want.keys.data(), n * 4)) << what;
        ASSERT_EQ(out_values, want.index) << what;
      }
    EXPECT_EQ(balanced, (std::vector<std::size_t>{12506, 12505, 12505, 12505}));
  }
}

TEST(MeshSortCpu, IntoOutputsThatDoNotAddUpAreRefused) {
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  std::vector<std::uint32_t> a(10), b(5), oa(7), ob(7);
  std::vector<std::span<const std::uint32_t>> in = {a, b};
  std::vector<std::span<std::uint32_t>> out = {oa, ob};
  const std::string what = rxm::testing::error_text([&] {
    rxm::sort_shards_into(ctx, std::span<const std::span<const std::uint32_t>>(in), std::span<const std::span<std::uint32_t>>(out));
  });
  EXPECT_NE(what.find("the output shards hold 14 keys in all, the inputs 15"), std::string::npos) << what;
}

TEST(MeshSortCpu, BadInputIsRefusedOnEveryDevice) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  std::vector<std::uint32_t> a(10), b(5), c(7);
  std::vector<std::uint32_t> va(10), vb(4), vc(7);
  std::vector<std::span<std::uint32_t>> keys = {a, b, c}, values = {va, vb, vc};
  for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
    const std::string lengths = rxm::testing::error_text([&] {
      rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(keys),
                       std::span<const std::span<std::uint32_t>>(values), {.mesh_strategy = strategy});
    });
    EXPECT_NE(lengths.find("mesh device 1 has 5 keys and 4 values"), std::string::npos) << lengths;
  }
  std::vector<std::span<std::uint32_t>> two = {a, b};
  const std::string count = rxm::testing::error_text(
      [&] { rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(two)); });
  EXPECT_NE(count.find("2 shards for 3 local mesh devices"), std::string::npos) << count;
  const std::string digit = rxm::testing::error_text(
      [&] { rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(keys), {.mesh_digit_bits = 17}); });
  EXPECT_NE(digit.find("mesh_digit_bits = 17"), std::string::npos) << digit;
  const std::string range = rxm::testing::error_text(
      [&] { rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(keys), {.end_bit = 40}); });
  EXPECT_NE(range.find("bit range"), std::string::npos) << range;
  // The communicator stays usable: a good sort after the errors, by either strategy.
  for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::uint32_t(10 - i);
    rxm::sort_shards(ctx, std::span<const std::span<std::uint32_t>>(keys), {.mesh_strategy = strategy});
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  }
}

}  // namespace
