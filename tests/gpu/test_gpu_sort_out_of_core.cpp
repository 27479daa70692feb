// The out-of-core sort on one GPU, on logical devices of it and on every GPU where there are several, with a device memory limit that
// forces rounds, against the CPU backend byte for byte: several key types, keys and pairs, both
// orders, adversarial distributions (a bucket larger than a device recurses), and the automatic
// choice, which keeps inputs that fit in memory (counting the scratch pools' idle memory as free);
// levels resident on the GPU; pinned keys, values and scratch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/device_copies.hpp"
#include "common/gpu_skip.hpp"
#include "common/out_of_core_cases.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;
using rxm::testing::expect_out_of_core_matches;

namespace {

rxm::SortOptions limited(std::size_t group_elements, std::size_t elem_bytes) {
  return rxm::testing::out_of_core_options(group_elements, elem_bytes);
}

}  // namespace

TEST(GpuSortOutOfCore, OneGpuAndLogicalDevices) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  const std::size_t n = (std::size_t(1) << 21) + 12345;
  std::vector<std::vector<int>> meshes = {{0}, {0, 0, 0}};
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 1) {  // and every GPU, where there are several
    meshes.emplace_back();
    for (int g = 0; g < gpus; ++g) meshes.back().push_back(g);
  }
  for (const std::vector<int>& devices : meshes) {
    auto ctx = rxm::Context::local(devices, rxm::Backend::cuda);
    const std::string on = std::to_string(devices.size()) + " device(s)";
    for (const auto& c : rxm::testing::mesh_sort_cases())
      for (auto [type, value_bytes] : {std::pair{rxm::KeyType::u32, std::size_t(0)}, std::pair{rxm::KeyType::f32, std::size_t(4)},
                                       std::pair{rxm::KeyType::u64, std::size_t(8)}, std::pair{rxm::KeyType::i16, std::size_t(4)}})
        for (rxm::Order order : {rxm::Order::ascending, rxm::Order::descending}) {
          rxm::SortOptions o = limited(200000, rxm::size_of(type) + value_bytes);
          o.order = order;
          const auto phases = expect_out_of_core_matches(
              ctx, type, n, c.gen, value_bytes, o, seed,
              c.name + " " + std::string(rxm::name_of(type)) + " v" + std::to_string(value_bytes) +
                  (order == rxm::Order::descending ? " desc " : " asc ") + on);
          EXPECT_TRUE(phases.out_of_core);
        }
  }
}

TEST(GpuSortOutOfCore, BucketsTooLargeForADeviceRecurse) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::testing::expect_recursion_matches(ctx, std::size_t(3) << 20, limited(200000, 8));
}

// A level that the GPU holds once with room to spare stays on it, with no host array (the host
// may give none): on one GPU and on logical devices of it (the level takes device 0 alone).
TEST(GpuSortOutOfCore, ALevelThatTheGpuHoldsOnceStaysThere) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  const std::size_t n = (std::size_t(1) << 21) + 12345;
  for (const std::vector<int>& devices : {std::vector<int>{0}, std::vector<int>{0, 0, 0}}) {
    auto ctx = rxm::Context::local(devices, rxm::Backend::cuda);
    const std::string on = std::to_string(devices.size()) + " device(s)";
    for (const auto& c : rxm::testing::mesh_sort_cases())
      for (auto [type, value_bytes] : {std::pair{rxm::KeyType::u32, std::size_t(0)}, std::pair{rxm::KeyType::f32, std::size_t(4)},
                                       std::pair{rxm::KeyType::u64, std::size_t(8)}})
        for (rxm::Order order : {rxm::Order::ascending, rxm::Order::descending}) {
          rxm::SortOptions o;
          o.out_of_core = rxm::OutOfCoreMode::always;
          o.device_memory_limit = std::size_t(1.6 * double(n * (rxm::size_of(type) + value_bytes)));
          o.host_memory_limit = 1;
          o.order = order;
          const auto phases = expect_out_of_core_matches(
              ctx, type, n, c.gen, value_bytes, o, seed,
              c.name + " " + std::string(rxm::name_of(type)) + " v" + std::to_string(value_bytes) +
                  (order == rxm::Order::descending ? " desc " : " asc ") + on);
          EXPECT_NE(phases.plan_text.find("resident on the device"), std::string::npos) << phases.plan_text;
        }
  }
  rxm::SortOptions o;
  o.out_of_core = rxm::OutOfCoreMode::always;
  o.device_memory_limit = std::size_t(1.6 * double(n * 8));
  o.host_memory_limit = 1;
  auto one = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::testing::expect_recursion_matches(one, n, o);
}

// Pinned keys, values and scratch go to and from the copy lanes without staging, queued: both
// ways of the sort (through the scratch array, and resident on the GPU) equal the CPU backend.
TEST(GpuSortOutOfCore, PinnedKeysValuesAndScratch) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 22) + 777;
  const std::vector<std::uint64_t> source = rxm::testing::random_bit_patterns<std::uint64_t>(n, 11);
  std::vector<std::uint64_t> want_keys = source;
  std::vector<std::uint32_t> want_values(n);
  for (std::size_t i = 0; i < n; ++i) want_values[i] = std::uint32_t(i);
  auto cpu = rxm::Context::cpu(1);
  rxm::sort(cpu, std::span(want_keys), std::span(want_values));
  auto ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  const std::size_t scratch_bytes = rxm::out_of_core_scratch_bytes(n, 8, 4);
  rxm::PinnedBuffer keys(n * 8), values(n * 4), scratch(scratch_bytes);
  for (double limit : {0.3, 1.6}) {  // bytes per element's bytes: through the scratch array, resident
    SCOPED_TRACE(limit);
    auto* k = static_cast<std::uint64_t*>(keys.data());
    auto* v = static_cast<std::uint32_t*>(values.data());
    std::copy(source.begin(), source.end(), k);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::uint32_t(i);
    rxm::SortOptions o;
    o.out_of_core = rxm::OutOfCoreMode::always;
    o.device_memory_limit = std::size_t(limit * double(n * 12));
    o.host_scratch = std::span(static_cast<std::byte*>(scratch.data()), scratch_bytes);
    rxm::SortPhases phases;
    o.phases = &phases;
    rxm::sort(ctx, std::span(k, n), std::span(v, n), o);
    EXPECT_TRUE(std::equal(want_keys.begin(), want_keys.end(), k)) << "keys";
    EXPECT_TRUE(std::equal(want_values.begin(), want_values.end(), v)) << "values";
    EXPECT_NE(phases.plan_text.find(limit > 1 ? "resident on the device" : "extra host array"), std::string::npos)
        << phases.plan_text;
  }
}

// One GPU's sort of large pinned host input takes the resident way on its own (the default
// options); pageable input of the same size takes the in-memory host sort.
TEST(GpuSortOutOfCore, LargePinnedHostInputOnOneGpuStaysResident) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 26) + 5;
  const std::vector<std::uint32_t> source = rxm::testing::random_bit_patterns<std::uint32_t>(n, 13);
  std::vector<std::uint32_t> want = source;
  auto cpu = rxm::Context::cpu();
  rxm::sort(cpu, std::span(want));
  auto ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::PinnedBuffer pinned(n * 4);
  auto* keys = static_cast<std::uint32_t*>(pinned.data());
  std::copy(source.begin(), source.end(), keys);
  rxm::SortPhases phases;
  rxm::SortOptions o;
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys, n), o);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), keys));
  EXPECT_NE(phases.plan_text.find("resident on the device"), std::string::npos) << phases.plan_text;
  std::vector<std::uint32_t> pageable = source;
  phases = {};
  rxm::sort(ctx, std::span(pageable), o);
  EXPECT_EQ(pageable, want);
  EXPECT_FALSE(phases.out_of_core);
}

TEST(GpuSortOutOfCore, InputsThatFitStayInMemory) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  std::vector<std::uint32_t> keys = rxm::testing::random_bit_patterns<std::uint32_t>(1 << 20, 5);
  rxm::SortPhases phases;
  rxm::SortOptions o;
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys), o);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_FALSE(phases.out_of_core);
}

// The automatic choice counts what the context's scratch pools keep idle as free: after a large
// sort has filled them, an input whose buffers fit free plus idle memory (not free memory alone,
// which a blocker makes short) stays in memory.
TEST(GpuSortOutOfCore, TheScratchPoolsIdleMemoryCountsAsFree) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0}, rxm::Backend::cuda);
  const std::size_t half = std::size_t(1) << 25;
  {
    std::vector<rxm::DeviceArray<std::uint32_t>> shards;
    for (int i = 0; i < 2; ++i)
      shards.push_back(rxm::testing::to_device(rxm::testing::random_bit_patterns<std::uint32_t>(half, 7 + i)));
    std::vector<rxm::device_span<std::uint32_t>> spans;
    for (auto& s : shards) spans.emplace_back(s.data(), s.size(), 0);
    rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(spans));
  }
  const std::size_t idle = ctx.scratch_bytes();
  ASSERT_GT(idle, half * 4) << "the pools keep the split buffers and the sort's temporary storage";
  // A host sort of m keys needs 6.4 m bytes a logical device by the automatic rule: 0.4 x idle,
  // more than half of 0.5 x idle free, less than half of free plus idle.
  const std::size_t m = idle / 16;
  std::size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  const std::size_t keep = idle / 2;
  ASSERT_GT(free, keep + (std::size_t(1) << 28));
  rxm::DeviceBuffer blocker(0, free - keep);
  std::vector<std::uint32_t> keys = rxm::testing::random_bit_patterns<std::uint32_t>(m, 9);
  rxm::SortPhases phases;
  rxm::SortOptions o;
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys), o);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_FALSE(phases.out_of_core) << "idle " << idle << " bytes, " << m << " keys";
}
