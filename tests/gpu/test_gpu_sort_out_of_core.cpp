// The out-of-core sort on one GPU, on logical devices of it and on every GPU where there are several, with a device memory limit that
// forces rounds, against the CPU backend byte for byte: several key types, keys and pairs, both
// orders, adversarial distributions (a bucket larger than a device recurses), and the automatic
// choice, which keeps inputs that fit in memory.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/out_of_core_cases.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;
using rxm::testing::expect_out_of_core_matches;
using rxm::testing::memory_for_groups_of;

namespace {

rxm::SortOptions limited(std::size_t group_elements, std::size_t elem_bytes) {
  rxm::SortOptions o;
  o.device_memory_limit = memory_for_groups_of(group_elements, elem_bytes);  // automatic: too small to fit
  return o;
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
  const std::size_t n = std::size_t(3) << 20;
  std::vector<std::uint32_t> keys(n), index(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = 0x55000000u | (std::uint32_t(i * 2654435761u) >> 12);  // one top byte: one bucket of everything
    index[i] = std::uint32_t(i);
  }
  std::vector<std::uint32_t> want_keys = keys, want_index = index;
  auto cpu = rxm::Context::cpu(1);
  rxm::sort(cpu, std::span(want_keys), std::span(want_index));
  rxm::SortPhases phases;
  rxm::SortOptions o = limited(200000, 8);
  o.phases = &phases;
  rxm::sort(ctx, std::span(keys), std::span(index), o);
  EXPECT_EQ(keys, want_keys);
  EXPECT_EQ(index, want_index);
  EXPECT_GE(phases.passes, 2);
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
