// rxm::topk and rxm::topk_batched over device-resident shards: four and three logical devices of
// one GPU, and every GPU of the machine where it has several. Every result is compared byte for
// byte with the single-device top-k of the concatenated data on the CPU backend
// (tests/common/mesh_topk_cases.hpp), one array by both paths (the candidates and the radix
// select): every key type and distribution, every option set, k = 1,
// k = n and k larger than some shards, empty shards, ties across shard boundaries, shards large
// enough for the GPU's own top-k paths, host shards on GPU devices, the LLM shape (vocabulary-
// parallel logits, scaled down); the result written into one GPU's memory or left on every device;
// then bad input.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/error_text.hpp"
#include "common/gpu_skip.hpp"
#include "common/mesh_topk_cases.hpp"
#include "common/random_keys.hpp"
#include "common/topk_inputs.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

// The shards of `batch` (widths per device) on ctx's devices, against one CPU device.
template <class T, class Index = std::int64_t>
void check(rxm::Context& ctx, const std::vector<T>& batch, std::size_t rows, const std::vector<std::size_t>& widths,
           std::size_t k, const rxm::TopkOptions& o, bool batched, const std::string& what) {
  const auto shards = rxm::testing::column_shards(batch, rows, widths);
  std::vector<rxm::DeviceArray<T>> on_device;
  for (std::size_t d = 0; d < shards.size(); ++d) {
    auto& a = on_device.emplace_back(ctx.devices()[d].id, shards[d].size());
    if (a.size())
      RXM_CUDA_CHECK(cudaMemcpy(a.data(), shards[d].data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<rxm::device_span<const T>> spans;
  for (auto& a : on_device) spans.emplace_back(a.data(), a.size(), a.device());
  const auto want = rxm::testing::expected_topk<T, Index>(batch, rows, k, o);
  rxm::testing::expect_every_path(ctx, std::span<const rxm::device_span<const T>>(spans), rows, k, o, batched, want,
                                  what);
}

template <class T> void every_distribution(rxm::Context& ctx, std::size_t n, std::uint64_t seed) {
  int round = 0;
  const int p = ctx.mesh_size();
  for (const auto& input : rxm::testing::topk_inputs(seed)) {
    const auto values = rxm::testing::make_topk_input<T>(input, n);
    const auto widths = rxm::testing::topk_shard_widths(n, p, std::uint64_t(round++));
    std::size_t narrowest = n;
    for (auto w : widths)
      if (w) narrowest = std::min(narrowest, w);
    const std::string what = std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name;
    for (const auto& o : rxm::testing::topk_option_sets(rxm::is_floating(rxm::key_type_v<T>)))
      for (std::size_t k : {std::size_t(1), std::size_t(100), narrowest + 1, n})
        check(ctx, values, 1, widths, std::min(k, n), o, false, what);
  }
}

TEST(GpuMeshTopk, FourLogicalDevicesEveryTypeAndDistribution) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  const std::uint64_t seed = test_seed();
  every_distribution<float>(ctx, 5003, seed);
  every_distribution<double>(ctx, 5003, seed);
  every_distribution<rxm::half_t>(ctx, 5003, seed);
  every_distribution<rxm::bfloat16_t>(ctx, 5003, seed);
  every_distribution<std::int16_t>(ctx, 5003, seed);
  every_distribution<std::uint16_t>(ctx, 5003, seed);
  every_distribution<std::int32_t>(ctx, 5003, seed);
  every_distribution<std::uint32_t>(ctx, 5003, seed);
  every_distribution<std::int64_t>(ctx, 5003, seed);
  every_distribution<std::uint64_t>(ctx, 5003, seed);
}

TEST(GpuMeshTopk, TiesNanAndShapes) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0});
  std::vector<float> ties(3000, 2.5f);
  for (std::size_t i = 0; i < ties.size(); i += 7) ties[i] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t k : {1, 999, 1000, 1001, 2500, 3000})
    for (const auto& o : rxm::testing::topk_option_sets(true)) check(ctx, ties, 1, {1000, 0, 2000}, k, o, false, "ties");
  for (std::size_t n : {1, 2, 3, 31, 65537}) {
    const auto values = rxm::testing::random_bit_patterns<float>(n, test_seed() + n);
    for (std::size_t k : rxm::testing::topk_ks(n)) {
      check(ctx, values, 1, rxm::testing::topk_shard_widths(n, 3, n), k, {.sorted = true}, false, "n " + std::to_string(n));
      check<float, std::int32_t>(ctx, values, 1, {0, 0, n}, k, {.largest = false}, false, "n all on the last");
    }
  }
}

TEST(GpuMeshTopk, LargeShardsTakeTheGpuPaths) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  const std::size_t n = (std::size_t(1) << 24) + 12345;
  const auto values = rxm::testing::random_bit_patterns<float>(n, test_seed());
  const auto widths = rxm::testing::topk_shard_widths(n, 4, 1);
  for (std::size_t k : {std::size_t(1024), std::size_t(1) << 17})
    for (bool sorted : {false, true}) check(ctx, values, 1, widths, k, {.sorted = sorted}, false, "2^24 + 12345");
}

TEST(GpuMeshTopk, VocabularyParallelLogits) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  // The LLM shape, scaled down: 256 rows of a 4 x 8000-column vocabulary, k = 50; and an uneven split.
  std::vector<float> logits(256 * 32000);
  rxm::GenerateOptions g;
  g.distribution = rxm::Distribution::normal;
  g.seed = test_seed();
  rxm::generate(std::span(logits), g);
  check(ctx, logits, 256, {8000, 8000, 8000, 8000}, 50, {.sorted = true}, true, "logits");
  check<float, std::int32_t>(ctx, logits, 256, {8000, 8000, 8000, 8000}, 50, {}, true, "logits int32");
  check(ctx, logits, 256, {12000, 0, 7, 19993}, 50, {.sorted = true}, true, "logits, uneven split");
  const auto bf = rxm::testing::random_bit_patterns<rxm::bfloat16_t>(64 * 1000, test_seed());
  for (const auto& o : rxm::testing::topk_option_sets(true))
    for (std::size_t k : {1, 5, 333, 1000}) check(ctx, bf, 64, {250, 250, 0, 500}, k, o, true, "bf16 rows");
}

TEST(GpuMeshTopk, HostShardsOnGpuDevices) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0});
  const auto values = rxm::testing::random_bit_patterns<double>(100003, test_seed());
  const auto shards = rxm::testing::column_shards(values, 1, {60000, 40003});
  std::vector<std::span<const double>> spans(shards.begin(), shards.end());
  const auto got = rxm::topk(ctx, std::span<const std::span<const double>>(spans), 777, {.sorted = true});
  const auto want = rxm::testing::expected_topk<double, std::int64_t>(values, 1, 777, {.sorted = true});
  std::string why;
  EXPECT_TRUE(rxm::testing::same_topk(got, want, &why)) << why;
  // The radix select uploads host shards first (its kernels read device memory).
  rxm::TopkPhases phases;
  const auto selected = rxm::topk(ctx, std::span<const std::span<const double>>(spans), 777, {.sorted = true},
                                  {rxm::TopkShardPath::radix_select, &phases});
  EXPECT_EQ(phases.path, rxm::TopkShardPath::radix_select);
  EXPECT_TRUE(rxm::testing::same_topk(selected, want, &why)) << why;
}

namespace {

template <class T> std::vector<T> download(const rxm::DeviceArray<T>& a, std::size_t count) {
  std::vector<T> host(count);
  if (count) RXM_CUDA_CHECK(cudaMemcpy(host.data(), a.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// topk_into onto GPU `out` and topk_distributed into every device's memory, by both paths, on
// ctx's devices, against one CPU device; outputs poisoned first.
void check_placement(rxm::Context& ctx, int out, std::size_t n, std::uint64_t seed) {
  const int p = ctx.mesh_size();
  const auto values = rxm::testing::random_bit_patterns<float>(n, seed);
  const auto widths = rxm::testing::topk_shard_widths(n, p, seed % 5);
  const auto shards = rxm::testing::column_shards(values, 1, widths);
  std::vector<rxm::DeviceArray<float>> on_device;
  std::vector<rxm::device_span<const float>> spans;
  for (int d = 0; d < p; ++d) {
    auto& a = on_device.emplace_back(ctx.devices()[std::size_t(d)].id, shards[std::size_t(d)].size());
    if (a.size())
      RXM_CUDA_CHECK(cudaMemcpy(a.data(), shards[std::size_t(d)].data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    spans.emplace_back(a.data(), a.size(), a.device());
  }
  using S = std::span<const rxm::device_span<const float>>;
  for (const auto& o : rxm::testing::topk_option_sets(true))
    for (std::size_t k : {std::size_t(1), std::size_t(1000), n / 2})
      for (auto path : {rxm::TopkShardPath::candidates, rxm::TopkShardPath::radix_select}) {
        const std::string what = "k " + std::to_string(k) + " " + rxm::testing::options_text(o) + " path " +
                                 std::to_string(int(path)) + " onto GPU " + std::to_string(out);
        const auto want = rxm::testing::expected_topk<float, std::int64_t>(values, 1, k, o);
        rxm::DeviceArray<float> out_values(out, k + 1);
        rxm::DeviceArray<std::int64_t> out_indices(out, k + 1);
        RXM_CUDA_CHECK(cudaMemset(out_values.data(), 0xA5, out_values.size() * sizeof(float)));
        RXM_CUDA_CHECK(cudaMemset(out_indices.data(), 0xA5, out_indices.size() * sizeof(std::int64_t)));
        rxm::topk_into(ctx, S(spans), k, rxm::device_span<float>(out_values.data(), k, out),
                       rxm::device_span<std::int64_t>(out_indices.data(), k, out), o, {path});
        auto got_values = download(out_values, k + 1);
        auto got_indices = download(out_indices, k + 1);
        std::int64_t poison;
        std::memset(&poison, 0xA5, sizeof(poison));
        ASSERT_EQ(got_indices[k], poison) << what << ": written past the output";
        got_values.pop_back();
        got_indices.pop_back();
        std::string why;
        ASSERT_TRUE(rxm::testing::same_topk(rxm::TopkResult<float, std::int64_t>{1, k, got_values, got_indices}, want,
                                            &why))
            << what << ": " << why;
        // Left distributed: every device's winners in its own memory.
        std::vector<rxm::DeviceArray<float>> kept_values;
        std::vector<rxm::DeviceArray<std::int64_t>> kept_indices;
        std::vector<rxm::device_span<float>> value_outs;
        std::vector<rxm::device_span<std::int64_t>> index_outs;
        for (int d = 0; d < p; ++d) {
          const int dev = ctx.devices()[std::size_t(d)].id;
          const std::size_t room = std::min(k, widths[std::size_t(d)]);
          value_outs.emplace_back(kept_values.emplace_back(dev, room).data(), room, dev);
          index_outs.emplace_back(kept_indices.emplace_back(dev, room).data(), room, dev);
        }
        const auto kept = rxm::topk_distributed(ctx, S(spans), k, std::span<const rxm::device_span<float>>(value_outs),
                                                std::span<const rxm::device_span<std::int64_t>>(index_outs), o, {path});
        std::uint64_t lo = 0;
        for (int d = 0; d < p; ++d) {
          const auto part = rxm::testing::winners_in(want, lo, lo + widths[std::size_t(d)]);
          ASSERT_EQ(kept[std::size_t(d)], part.k) << what << " device " << d;
          const rxm::TopkResult<float, std::int64_t> got{1, part.k, download(kept_values[std::size_t(d)], part.k),
                                                         download(kept_indices[std::size_t(d)], part.k)};
          ASSERT_TRUE(rxm::testing::same_topk(got, part, &why)) << what << " device " << d << ": " << why;
          lo += widths[std::size_t(d)];
        }
      }
}

}  // namespace

TEST(GpuMeshTopk, SeveralGpusEveryDistribution) {
  RXM_REQUIRE_GPU();
  const auto found = rxm::discover_cuda();
  if (found.topology.devices.size() < 2) GTEST_SKIP() << "one GPU: the logical-device tests cover the mesh";
  auto ctx = rxm::Context::local();
  every_distribution<float>(ctx, 3000017, test_seed());
  every_distribution<std::uint64_t>(ctx, 300007, test_seed());
  // The result onto the last GPU (the candidates meet there) and left on every GPU.
  check_placement(ctx, ctx.devices().back().id, 1000003, test_seed());
}

TEST(GpuMeshTopk, PlacementOnADeviceAndLeftDistributed) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0, 0});
  check_placement(ctx, 0, 200003, test_seed());
  // Rows into one GPU's memory: the LLM case (the sampler reads them there).
  const std::size_t rows = 64, columns = 4000, k = 50;
  std::vector<float> logits(rows * columns);
  rxm::GenerateOptions g;
  g.distribution = rxm::Distribution::normal;
  g.seed = test_seed();
  rxm::generate(std::span(logits), g);
  const auto slices = rxm::testing::column_shards(logits, rows, {1000, 1000, 1500, 500});
  std::vector<rxm::DeviceArray<float>> on_device;
  std::vector<rxm::device_span<const float>> spans;
  for (const auto& s : slices) {
    auto& a = on_device.emplace_back(0, s.size());
    RXM_CUDA_CHECK(cudaMemcpy(a.data(), s.data(), s.size() * sizeof(float), cudaMemcpyHostToDevice));
    spans.emplace_back(a.data(), a.size(), 0);
  }
  rxm::DeviceArray<float> out_values(0, rows * k);
  rxm::DeviceArray<std::int32_t> out_indices(0, rows * k);
  rxm::topk_batched_into(ctx, std::span<const rxm::device_span<const float>>(spans), rows, k,
                         rxm::device_span<float>(out_values), rxm::device_span<std::int32_t>(out_indices),
                         {.sorted = true});
  std::string why;
  EXPECT_TRUE(rxm::testing::same_topk(
      rxm::TopkResult<float, std::int32_t>{rows, k, download(out_values, rows * k), download(out_indices, rows * k)},
      rxm::testing::expected_topk<float, std::int32_t>(logits, rows, k, {.sorted = true}), &why))
      << why;
  // Outputs on a GPU the context does not use.
  const std::string elsewhere = rxm::testing::error_text([&] {
    rxm::topk_into(ctx, std::span<const rxm::device_span<const float>>(spans), 3,
                   rxm::device_span<float>(out_values.data(), 3, 7), rxm::device_span<std::int32_t>(out_indices.data(), 3, 7));
  });
  EXPECT_NE(elsewhere.find("the outputs are on GPU 7, which is not a mesh device of this process"), std::string::npos)
      << elsewhere;
}

TEST(GpuMeshTopk, BadShardsAreRefused) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0});
  rxm::DeviceArray<float> a(0, 10), b(0, 10);
  using S = std::span<const rxm::device_span<const float>>;
  std::vector<rxm::device_span<const float>> wrong_device = {rxm::device_span<const float>(a.data(), 10, 0),
                                                              rxm::device_span<const float>(b.data(), 10, 5)};
  const std::string dev = rxm::testing::error_text([&] { rxm::topk(ctx, S(wrong_device), 3); });
  EXPECT_NE(dev.find("shard of mesh device 1 is on device 5, but mesh device 1 is GPU 0"), std::string::npos) << dev;
  std::vector<float> host(10);
  std::vector<rxm::device_span<const float>> host_as_device = {rxm::device_span<const float>(a.data(), 10, 0),
                                                                rxm::device_span<const float>(host.data(), 10, 0)};
  const std::string mem = rxm::testing::error_text([&] { rxm::topk(ctx, S(host_as_device), 3); });
  EXPECT_NE(mem.find("device_span over host memory"), std::string::npos) << mem;
  std::vector<rxm::device_span<const float>> fine = {rxm::device_span<const float>(a.data(), 10, 0),
                                                     rxm::device_span<const float>(b.data(), 10, 0)};
  const std::string big = rxm::testing::error_text([&] { rxm::topk(ctx, S(fine), 21); });
  EXPECT_NE(big.find("k = 21 is larger than n = 20"), std::string::npos) << big;
}

}  // namespace
