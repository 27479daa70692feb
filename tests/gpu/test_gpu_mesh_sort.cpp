// rxm::sort_shards and rxm::sort on GPU mesh devices: four and three logical devices of one GPU,
// and every GPU of the machine where it has several. Every result is compared byte for byte with
// one CPU device sorting the same keys (tests/common/mesh_sort_cases.hpp): every key type, keys
// only and with 4- and 8-byte values (the global index: stability), ascending and descending,
// every adversarial distribution, sizes 0, 1, fewer keys than devices and primes, empty and very
// uneven shards, a large case that takes the GPU's own split and sort paths, host-resident input
// (uploaded, sorted, downloaded), sort_shards_into balanced output shards; then bad input.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "common/error_text.hpp"
#include "common/gpu_skip.hpp"
#include "common/mesh_sort_cases.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

// Uploads `bytes` of host data into a new device array of `count` elements of E.
template <class E> rxm::DeviceArray<E> upload(const void* host, std::size_t count, int device) {
  rxm::DeviceArray<E> d(device, count);
  if (count) RXM_CUDA_CHECK(cudaMemcpy(d.data(), host, count * sizeof(E), cudaMemcpyHostToDevice));
  return d;
}
template <class E> void download(const rxm::DeviceArray<E>& d, void* host) {
  if (d.size()) RXM_CUDA_CHECK(cudaMemcpy(host, d.data(), d.size() * sizeof(E), cudaMemcpyDeviceToHost));
}

// The shards of `in` (counts per device) on ctx's devices, sorted by sort_shards, against one CPU device.
void check(rxm::Context& ctx, const rxm::testing::GlobalInput& in, const std::vector<std::size_t>& counts,
           std::size_t value_bytes, const rxm::SortOptions& options, const std::string& what) {
  SCOPED_TRACE(what);
  const auto expected = rxm::testing::expected_sort(in, options);
  const std::size_t kb = rxm::size_of(in.type), n = in.index.size();
  std::vector<std::byte> keys(n * kb);
  std::vector<std::uint32_t> v4(n);
  std::vector<std::uint64_t> v8(n);
  rxm::visit_key_type(in.type, [&](auto tag) {
    using K = decltype(tag);
    std::vector<rxm::DeviceArray<K>> dk;
    std::vector<rxm::DeviceArray<std::uint32_t>> d4;
    std::vector<rxm::DeviceArray<std::uint64_t>> d8;
    std::vector<std::uint32_t> index4(n);
    for (std::size_t i = 0; i < n; ++i) index4[i] = std::uint32_t(in.index[i]);
    std::size_t at = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      const int dev = ctx.devices()[d].id;
      dk.push_back(upload<K>(in.keys.data() + at * kb, counts[d], dev));
      d4.push_back(upload<std::uint32_t>(index4.data() + at, counts[d], dev));
      d8.push_back(upload<std::uint64_t>(in.index.data() + at, counts[d], dev));
      at += counts[d];
    }
    std::vector<rxm::device_span<K>> sk(dk.begin(), dk.end());
    std::vector<rxm::device_span<std::uint32_t>> s4(d4.begin(), d4.end());
    std::vector<rxm::device_span<std::uint64_t>> s8(d8.begin(), d8.end());
    using KS = std::span<const rxm::device_span<K>>;
    if (value_bytes == 0) rxm::sort_shards(ctx, KS(sk), options);
    if (value_bytes == 4) rxm::sort_shards(ctx, KS(sk), std::span<const rxm::device_span<std::uint32_t>>(s4), options);
    if (value_bytes == 8) rxm::sort_shards(ctx, KS(sk), std::span<const rxm::device_span<std::uint64_t>>(s8), options);
    at = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      download(dk[d], keys.data() + at * kb);
      download(d4[d], v4.data() + at);
      download(d8[d], v8.data() + at);
      at += counts[d];
    }
  });
  ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), expected.keys.data(), n * kb));
  for (std::size_t i = 0; i < n; ++i) {
    if (value_bytes == 4) {
      ASSERT_EQ(v4[i], std::uint32_t(expected.index[i])) << "at " << i;
    }
    if (value_bytes == 8) {
      ASSERT_EQ(v8[i], expected.index[i]) << "at " << i;
    }
  }
}

// check() with each strategy of moving keys between the devices; the merge must have run where it
// was asked for on logical devices of one GPU (GPUs without peer access take the partition).
void check_both(rxm::Context& ctx, const rxm::testing::GlobalInput& in, const std::vector<std::size_t>& counts,
                std::size_t value_bytes, rxm::SortOptions options, const std::string& what) {
  for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
    rxm::SortPhases phases;
    options.mesh_strategy = strategy;
    options.phases = &phases;
    const bool merge = strategy == rxm::MeshSortStrategy::merge;
    check(ctx, in, counts, value_bytes, options, what + (merge ? " (merge)" : " (partition)"));
    bool one_gpu = true;
    for (const auto& d : ctx.devices()) one_gpu &= d.id == ctx.devices()[0].id;
    if (in.index.size() > 1 && !phases.sorted_across_devices && (one_gpu || !merge)) {
      EXPECT_EQ(phases.merged, merge) << what;
    }
  }
}

TEST(GpuMeshSort, FourLogicalDevicesEveryTypeAndDistribution) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  const std::uint64_t seed = test_seed();
  int round = 0;
  for (rxm::KeyType type : rxm::all_key_types)
    for (const auto& c : rxm::testing::mesh_sort_cases()) {
      if (c.gen.special_fraction > 0 && !rxm::is_floating(type)) continue;
      const std::size_t n = 40009 + std::size_t(round % 5) * 7919;
      const auto in = rxm::testing::global_input(type, n, c.gen, seed + std::uint64_t(round));
      const auto counts = rxm::testing::uneven_counts(n, 4, std::uint64_t(round));
      const std::size_t vb = std::size_t(round % 3 == 0 ? 0 : round % 3 == 1 ? 4 : 8);
      rxm::SortOptions desc;
      desc.order = rxm::Order::descending;
      const std::string what = std::string(rxm::name_of(type)) + " " + c.name + " seed " +
                               std::to_string(seed + std::uint64_t(round));
      check_both(ctx, in, counts, vb, {}, what + " ascending");
      check_both(ctx, in, counts, vb, desc, what + " descending");
      ++round;
    }
}

TEST(GpuMeshSort, SizesShapesAndDigits) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  rxm::GenerateOptions uniform;
  for (int devices : {3, 4}) {
    auto ctx = rxm::Context::local(std::vector<int>(std::size_t(devices), 0));
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(65537)}) {
      const auto in = rxm::testing::global_input(rxm::KeyType::u32, n, uniform, seed + n);
      const std::string what = "n " + std::to_string(n) + " devices " + std::to_string(devices);
      check_both(ctx, in, rxm::testing::uneven_counts(n, devices, n), 8, {}, what + " uneven");
      std::vector<std::size_t> last_holds_all(static_cast<std::size_t>(devices), 0);
      last_holds_all.back() = n;
      check_both(ctx, in, last_holds_all, 4, {}, what + " all on the last device");
    }
    for (int bits : {3, 11, 16}) {
      const auto in = rxm::testing::global_input(rxm::KeyType::i64, 100003, uniform, seed + std::uint64_t(bits));
      rxm::SortOptions o;
      o.mesh_digit_bits = bits;
      o.begin_bit = 3;
      o.end_bit = 50;
      check_both(ctx, in, rxm::testing::uneven_counts(100003, devices, 1), 8, o, "i64 bits [3, 50) digit " + std::to_string(bits));
    }
  }
}

TEST(GpuMeshSort, LargeShardsTakeTheGpuPaths) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  const std::uint64_t seed = test_seed();
  for (const auto& c : rxm::testing::mesh_sort_cases()) {
    if (c.gen.special_fraction > 0) continue;
    const std::size_t n = (std::size_t(1) << 23) + 12345;
    const auto in = rxm::testing::global_input(rxm::KeyType::u32, n, c.gen, seed);
    std::vector<std::size_t> even(4, n / 4);
    even[3] += n % 4;
    check_both(ctx, in, even, c.name == "uniform" ? 4 : 0, {}, "u32 2^23 " + c.name);
  }
}

TEST(GpuMeshSort, HostInputOnLogicalDevices) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0});
  auto keys = rxm::testing::random_bit_patterns<double>(1000003, test_seed());
  std::vector<std::uint64_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0ull);
  auto want_keys = keys;
  auto want_values = values;
  auto cpu = rxm::Context::cpu(0);
  rxm::sort(cpu, std::span(want_keys), std::span(want_values), {.order = rxm::Order::descending});
  const auto input_keys = keys;
  const auto input_values = values;
  for (auto strategy : {rxm::MeshSortStrategy::automatic, rxm::MeshSortStrategy::merge}) {
    SCOPED_TRACE(strategy == rxm::MeshSortStrategy::merge ? "merge" : "automatic");
    keys = input_keys;
    values = input_values;
    rxm::SortPhases phases;
    rxm::sort(ctx, std::span(keys), std::span(values),
              {.order = rxm::Order::descending, .mesh_strategy = strategy, .phases = &phases});
    ASSERT_TRUE(rxm::testing::same_bytes(keys.data(), want_keys.data(), keys.size() * sizeof(double)));
    ASSERT_EQ(values, want_values);
    EXPECT_GT(phases.upload_ms, 0);
    EXPECT_EQ(phases.counts.size(), 3u);
    EXPECT_EQ(phases.merged, strategy == rxm::MeshSortStrategy::merge) << "host shards: automatic takes the partition";
  }
}

// Host shards large enough to come down in groups (from 2^25 keys on every device: each group
// sorted while the one before comes down), pageable and pinned, against one CPU device.
TEST(GpuMeshSort, LargeHostShardsComeDownInGroups) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0});
  const std::uint64_t seed = test_seed();
  const std::size_t least = std::size_t(1) << 25;
  const std::vector<std::size_t> counts = {least + 4099, least + 77, least + 123457};
  const std::size_t n = counts[0] + counts[1] + counts[2];
  struct Case {
    const char* name;
    rxm::KeyType type;
    rxm::Distribution distribution;
    std::size_t value_bytes;
    rxm::Order order;
    bool pinned;
  };
  const Case cases[] = {
      {"u32 uniform, 8-byte values", rxm::KeyType::u32, rxm::Distribution::uniform, 8, rxm::Order::ascending, false},
      {"f32 Zipf(1.0) descending, 4-byte values, pinned", rxm::KeyType::f32, rxm::Distribution::zipf, 4,
       rxm::Order::descending, true},
      {"u64 five distinct keys (groups of one bucket, sorted below the digit)", rxm::KeyType::u64,
       rxm::Distribution::few_distinct, 0, rxm::Order::ascending, false},
      {"i32 8 random bits descending, 8-byte values, pinned", rxm::KeyType::i32, rxm::Distribution::reduced_entropy,
       8, rxm::Order::descending, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
    rxm::GenerateOptions gen;
    gen.distribution = c.distribution;
    gen.entropy_bits = 8;
    gen.distinct = 5;
    const auto in = rxm::testing::global_input(c.type, n, gen, seed);
    rxm::SortOptions options;
    options.order = c.order;
    const auto want = rxm::testing::expected_sort(in, options);
    const std::size_t kb = rxm::size_of(c.type), vb = c.value_bytes;
    std::vector<std::byte> pageable(n * (kb + vb));
    rxm::PinnedBuffer pinned(c.pinned ? n * (kb + vb) : 0);
    std::byte* keys = c.pinned ? static_cast<std::byte*>(pinned.data()) : pageable.data();
    std::byte* values = keys + n * kb;
    std::memcpy(keys, in.keys.data(), n * kb);
    for (std::size_t i = 0; i < n; ++i) {
      if (vb == 4) reinterpret_cast<std::uint32_t*>(values)[i] = std::uint32_t(in.index[i]);
      if (vb == 8) reinterpret_cast<std::uint64_t*>(values)[i] = in.index[i];
    }
    rxm::SortPhases phases;
    options.phases = &phases;
    rxm::visit_key_type(c.type, [&](auto tag) {
      using K = decltype(tag);
      std::vector<std::span<K>> ks;
      std::vector<std::span<std::uint32_t>> v4;
      std::vector<std::span<std::uint64_t>> v8;
      std::size_t at = 0;
      for (std::size_t count : counts) {
        ks.emplace_back(reinterpret_cast<K*>(keys) + at, count);
        if (vb == 4) v4.emplace_back(reinterpret_cast<std::uint32_t*>(values) + at, count);
        if (vb == 8) v8.emplace_back(reinterpret_cast<std::uint64_t*>(values) + at, count);
        at += count;
      }
      using KS = std::span<const std::span<K>>;
      if (vb == 0) rxm::sort_shards(ctx, KS(ks), options);
      if (vb == 4) rxm::sort_shards(ctx, KS(ks), std::span<const std::span<std::uint32_t>>(v4), options);
      if (vb == 8) rxm::sort_shards(ctx, KS(ks), std::span<const std::span<std::uint64_t>>(v8), options);
    });
    ASSERT_TRUE(rxm::testing::same_bytes(keys, want.keys.data(), n * kb));
    for (std::size_t i = 0; i < n; ++i) {
      if (vb == 4) ASSERT_EQ(reinterpret_cast<std::uint32_t*>(values)[i], std::uint32_t(want.index[i])) << "at " << i;
      if (vb == 8) ASSERT_EQ(reinterpret_cast<std::uint64_t*>(values)[i], want.index[i]) << "at " << i;
    }
    EXPECT_NE(phases.plan_text.find("in groups"), std::string::npos) << phases.plan_text;
    EXPECT_GT(phases.local_sort_ms, 0);
  }
}

TEST(GpuMeshSort, SeveralGpusEveryDistribution) {
  RXM_REQUIRE_GPU();
  const auto found = rxm::discover_cuda();
  if (found.topology.devices.size() < 2) GTEST_SKIP() << "one GPU: the logical-device tests cover the mesh";
  auto ctx = rxm::Context::local();
  const int p = ctx.mesh_size();
  for (const auto& c : rxm::testing::mesh_sort_cases()) {
    const rxm::KeyType type = c.gen.special_fraction > 0 ? rxm::KeyType::f32 : rxm::KeyType::u64;
    const std::size_t n = 3000017;
    const auto in = rxm::testing::global_input(type, n, c.gen, test_seed());
    check_both(ctx, in, rxm::testing::uneven_counts(n, p, 3), 8, {}, "every GPU " + c.name);
  }
}

TEST(GpuMeshSort, IntoBalancedOutputShardsLeavesTheInputs) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0});
  rxm::GenerateOptions zipf;
  zipf.distribution = rxm::Distribution::zipf;
  const std::size_t n = 3000017;
  const auto in = rxm::testing::global_input(rxm::KeyType::f32, n, zipf, test_seed());
  const auto want = rxm::testing::expected_sort(in, {});
  const auto in_counts = rxm::testing::uneven_counts(n, 3, 4);
  const std::vector<std::size_t> out_counts = rxm::balanced_shard_sizes(ctx, in_counts);
  for (auto strategy : {rxm::MeshSortStrategy::partition, rxm::MeshSortStrategy::merge}) {
    SCOPED_TRACE(strategy == rxm::MeshSortStrategy::merge ? "merge" : "partition");
    std::vector<rxm::DeviceArray<float>> ins, outs;
    std::vector<rxm::DeviceArray<std::uint64_t>> in_values, out_values;
    std::size_t at = 0;
    for (std::size_t d = 0; d < 3; ++d) {
      ins.push_back(upload<float>(in.keys.data() + at * 4, in_counts[d], 0));
      in_values.push_back(upload<std::uint64_t>(in.index.data() + at, in_counts[d], 0));
      outs.emplace_back(0, out_counts[d]);
      out_values.emplace_back(0, out_counts[d]);
      RXM_CUDA_CHECK(cudaMemset(outs.back().data(), 0xAB, out_counts[d] * 4));  // poisoned
      at += in_counts[d];
    }
    std::vector<rxm::device_span<const float>> ki(ins.begin(), ins.end());
    std::vector<rxm::device_span<const std::uint64_t>> vi(in_values.begin(), in_values.end());
    std::vector<rxm::device_span<float>> ko(outs.begin(), outs.end());
    std::vector<rxm::device_span<std::uint64_t>> vo(out_values.begin(), out_values.end());
    rxm::sort_shards_into(ctx, std::span<const rxm::device_span<const float>>(ki),
                          std::span<const rxm::device_span<const std::uint64_t>>(vi),
                          std::span<const rxm::device_span<float>>(ko), std::span<const rxm::device_span<std::uint64_t>>(vo),
                          {.mesh_strategy = strategy});
    std::vector<std::byte> got(n * 4), inputs_after(n * 4);
    std::vector<std::uint64_t> got_values(n);
    std::size_t out_at = 0;
    at = 0;
    for (std::size_t d = 0; d < 3; ++d) {
      download(outs[d], got.data() + out_at * 4);
      download(out_values[d], got_values.data() + out_at);
      download(ins[d], inputs_after.data() + at * 4);
      out_at += out_counts[d];
      at += in_counts[d];
    }
    EXPECT_EQ(inputs_after, in.keys) << "the inputs must stay as they were";
    ASSERT_TRUE(rxm::testing::same_bytes(got.data(), want.keys.data(), n * 4));
    ASSERT_EQ(got_values, want.index);
  }
}

TEST(GpuMeshSort, BadShardsAreRefused) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0});
  rxm::DeviceArray<std::uint32_t> a(0, 10), b(0, 10);
  rxm::DeviceArray<std::uint32_t> va(0, 10), vb(0, 9);
  std::vector<rxm::device_span<std::uint32_t>> wrong_device = {a, rxm::device_span<std::uint32_t>(b.data(), 10, 5)};
  const std::string dev = rxm::testing::error_text(
      [&] { rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(wrong_device)); });
  EXPECT_NE(dev.find("keys shard of mesh device 1 is on device 5, but mesh device 1 is GPU 0"), std::string::npos) << dev;
  std::vector<rxm::device_span<std::uint32_t>> keys = {a, b}, values = {va, vb};
  const std::string lengths = rxm::testing::error_text([&] {
    rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(keys),
                     std::span<const rxm::device_span<std::uint32_t>>(values));
  });
  EXPECT_NE(lengths.find("mesh device 1 has 10 keys and 9 values"), std::string::npos) << lengths;
  std::vector<std::uint32_t> host(10);
  std::vector<rxm::device_span<std::uint32_t>> host_as_device = {a, rxm::device_span<std::uint32_t>(host.data(), 10, 0)};
  const std::string mem = rxm::testing::error_text(
      [&] { rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(host_as_device)); });
  EXPECT_NE(mem.find("device_span over host memory"), std::string::npos) << mem;
}

}  // namespace
