// rxm::topk and rxm::topk_batched over shards on CPU meshes (threads transport) against the
// single-device top-k of the concatenated data, byte for byte, one array by both paths (the
// candidates and the distributed radix select): every key type and distribution,
// every option set, k = 1, k = n and k larger than some shards, empty shards, ties across shard
// boundaries, NaN-heavy shards, 32-bit indices, uneven vocabulary splits; then bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error_text.hpp"
#include "common/mesh_topk_cases.hpp"
#include "common/random_keys.hpp"
#include "common/topk_inputs.hpp"
#include "radixmesh/topk_shards.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

// The mesh's result for `batch` cut into shards of `widths` columns, against one device.
template <class T, class Index = std::int64_t>
void check(rxm::Context& ctx, const std::vector<T>& batch, std::size_t rows, const std::vector<std::size_t>& widths,
           std::size_t k, const rxm::TopkOptions& o, bool batched, const std::string& what) {
  const auto shards = rxm::testing::column_shards(batch, rows, widths);
  std::vector<std::span<const T>> spans(shards.begin(), shards.end());
  const auto want = rxm::testing::expected_topk<T, Index>(batch, rows, k, o);
  rxm::testing::expect_every_path(ctx, std::span<const std::span<const T>>(spans), rows, k, o, batched, want, what);
}

template <class T> void every_distribution(std::uint64_t seed) {
  int round = 0;
  for (const auto& input : rxm::testing::topk_inputs(seed)) {
    const int devices = 2 + round % 3;
    auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
    const std::size_t n = 1237 + std::size_t(round) * 101;
    const auto values = rxm::testing::make_topk_input<T>(input, n);
    const auto widths = rxm::testing::topk_shard_widths(n, devices, std::uint64_t(round));
    std::size_t narrowest = n;
    for (auto w : widths)
      if (w) narrowest = std::min(narrowest, w);
    const std::string what = std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name + " devices " +
                             std::to_string(devices) + " seed " + std::to_string(seed);
    for (const auto& o : rxm::testing::topk_option_sets(rxm::is_floating(rxm::key_type_v<T>)))
      for (std::size_t k : {std::size_t(1), std::size_t(17), narrowest + 1, n})
        check(ctx, values, 1, widths, std::min(k, n), o, false, what);
    ++round;
  }
}

TEST(MeshTopkCpu, EveryTypeAndDistributionMatchesOneDevice) {
  const std::uint64_t seed = test_seed();
  every_distribution<float>(seed);
  every_distribution<double>(seed);
  every_distribution<rxm::half_t>(seed);
  every_distribution<rxm::bfloat16_t>(seed);
  every_distribution<std::int16_t>(seed);
  every_distribution<std::uint16_t>(seed);
  every_distribution<std::int32_t>(seed);
  every_distribution<std::uint32_t>(seed);
  every_distribution<std::int64_t>(seed);
  every_distribution<std::uint64_t>(seed);
}

TEST(MeshTopkCpu, TiesAcrossShardBoundariesTakeTheLowestGlobalIndex) {
  auto ctx = rxm::Context::cpu_mesh(4, 1);
  std::vector<float> values(400, 2.5f);
  for (std::size_t i = 0; i < values.size(); i += 7) values[i] = 1.0f;
  for (std::size_t k : {1, 5, 99, 100, 101, 250, 400})
    for (const auto& o : rxm::testing::topk_option_sets(true))
      check(ctx, values, 1, {100, 100, 0, 200}, k, o, false, "ties");
}

TEST(MeshTopkCpu, NanHeavyShards) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> values(300);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = i < 100 ? nan : i < 200 ? (i % 2 ? nan : float(i % 13)) : -float(i % 17);
  values[250] = std::numeric_limits<float>::infinity();
  values[50] = -nan;
  for (std::size_t k : {1, 3, 60, 150, 200, 201, 300})
    for (const auto& o : rxm::testing::topk_option_sets(true)) check(ctx, values, 1, {100, 100, 100}, k, o, false, "NaN");
}

TEST(MeshTopkCpu, SizesAndShardShapes) {
  const std::uint64_t seed = test_seed();
  for (std::size_t n : {1, 2, 3, 31, 65537})
    for (int devices : {1, 2, 3, 5, 7}) {
      auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
      const auto values = rxm::testing::random_bit_patterns<float>(n, seed + n);
      const std::string what = "n " + std::to_string(n) + " devices " + std::to_string(devices);
      std::vector<std::size_t> last_holds_all(static_cast<std::size_t>(devices), 0);
      last_holds_all.back() = n;
      for (std::size_t k : rxm::testing::topk_ks(n)) {
        check(ctx, values, 1, rxm::testing::topk_shard_widths(n, devices, n), k, {}, false, what + " uneven");
        check(ctx, values, 1, last_holds_all, k, {.sorted = true}, false, what + " all on the last device");
        check<float, std::int32_t>(ctx, values, 1, last_holds_all, k, {.largest = false}, false, what + " int32");
      }
    }
}

TEST(MeshTopkCpu, VocabularyParallelRows) {
  const std::uint64_t seed = test_seed();
  for (int devices : {1, 2, 4, 5}) {
    auto ctx = rxm::Context::cpu_mesh(unsigned(devices), 1);
    for (std::size_t columns : {1, 11, 1000}) {
      const std::size_t rows = 37;
      auto values = rxm::testing::random_bit_patterns<rxm::bfloat16_t>(rows * columns, seed + columns);
      const auto widths = rxm::testing::topk_shard_widths(columns, devices, columns);
      const std::string what = "rows 37 x " + std::to_string(columns) + " over " + std::to_string(devices);
      for (std::size_t k : rxm::testing::topk_ks(columns))
        for (const auto& o : rxm::testing::topk_option_sets(true)) check(ctx, values, rows, widths, k, o, true, what);
    }
    // The LLM shape, scaled down: 64 rows of a 4 x 8000-column vocabulary, k = 50.
    std::vector<float> logits(64 * 32000);
    rxm::GenerateOptions g;
    g.distribution = rxm::Distribution::normal;
    g.seed = seed;
    rxm::generate(std::span(logits), g);
    std::vector<std::size_t> even(static_cast<std::size_t>(devices), 32000 / std::size_t(devices));
    even.back() += 32000 - even[0] * std::size_t(devices);
    check(ctx, logits, 64, even, 50, {.sorted = true}, true, "logits");
    check<float, std::int32_t>(ctx, logits, 64, even, 50, {}, true, "logits int32");
  }
}

// topk_into and topk_batched_into (host buffers) and topk_distributed (each device's winners in
// its own output), by both paths, against one device's result.
TEST(MeshTopkCpu, PlacementIntoBuffersAndLeftDistributed) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  const std::size_t n = 5000;
  const auto values = rxm::testing::random_bit_patterns<float>(n, test_seed());
  using S = std::span<const std::span<const float>>;
  for (const std::vector<std::size_t>& widths : {std::vector<std::size_t>{1700, 1600, 1700}, {2000, 0, 3000}}) {
    const auto shards = rxm::testing::column_shards(values, 1, widths);
    std::vector<std::span<const float>> spans(shards.begin(), shards.end());
    for (const auto& o : rxm::testing::topk_option_sets(true))
      for (std::size_t k : {std::size_t(1), std::size_t(100), std::size_t(2500), n})
        for (auto path : {rxm::TopkShardPath::candidates, rxm::TopkShardPath::radix_select}) {
          const std::string what = "k " + std::to_string(k) + " " + rxm::testing::options_text(o) + " path " +
                                   std::to_string(int(path)) + " widths " + std::to_string(widths[1]);
          const auto want = rxm::testing::expected_topk<float, std::int64_t>(values, 1, k, o);
          rxm::TopkResult<float, std::int64_t> into{1, k, std::vector<float>(k), std::vector<std::int64_t>(k)};
          rxm::topk_into(ctx, S(spans), k, std::span(into.values), std::span(into.indices), o, {path});
          std::string why;
          ASSERT_TRUE(rxm::testing::same_topk(into, want, &why)) << what << ": " << why;
          // Left distributed: outputs poisoned past what each device keeps.
          std::vector<std::vector<float>> kept_values;
          std::vector<std::vector<std::int64_t>> kept_indices;
          for (std::size_t w : widths) {
            kept_values.emplace_back(std::min(k, w), -7.0f);
            kept_indices.emplace_back(std::min(k, w), -7);
          }
          std::vector<std::span<float>> out_values(kept_values.begin(), kept_values.end());
          std::vector<std::span<std::int64_t>> out_indices(kept_indices.begin(), kept_indices.end());
          const auto kept = rxm::topk_distributed(ctx, S(spans), k, std::span<const std::span<float>>(out_values),
                                                  std::span<const std::span<std::int64_t>>(out_indices), o, {path});
          ASSERT_EQ(kept.size(), widths.size());
          std::uint64_t lo = 0;
          std::size_t total = 0;
          for (std::size_t d = 0; d < widths.size(); ++d) {
            const auto part = rxm::testing::winners_in(want, lo, lo + widths[d]);
            ASSERT_EQ(kept[d], part.k) << what << " device " << d;
            rxm::TopkResult<float, std::int64_t> got{1, kept[d],
                                                     std::vector<float>(kept_values[d].begin(), kept_values[d].begin() + std::ptrdiff_t(kept[d])),
                                                     std::vector<std::int64_t>(kept_indices[d].begin(), kept_indices[d].begin() + std::ptrdiff_t(kept[d]))};
            ASSERT_TRUE(rxm::testing::same_topk(got, part, &why)) << what << " device " << d << ": " << why;
            for (std::size_t e = kept[d]; e < kept_indices[d].size(); ++e) ASSERT_EQ(kept_indices[d][e], -7);
            lo += widths[d];
            total += kept[d];
          }
          ASSERT_EQ(total, k) << what;
        }
  }
  // Vocabulary-parallel rows into caller's buffers, 32-bit indices.
  const std::size_t rows = 24, columns = 900;
  const auto logits = rxm::testing::random_bit_patterns<float>(rows * columns, test_seed() + 1);
  const auto slices = rxm::testing::column_shards(logits, rows, {300, 450, 150});
  std::vector<std::span<const float>> slice_spans(slices.begin(), slices.end());
  for (std::size_t k : {1, 50, 150}) {
    rxm::TopkResult<float, std::int32_t> into{rows, k, std::vector<float>(rows * k), std::vector<std::int32_t>(rows * k)};
    rxm::topk_batched_into(ctx, S(slice_spans), rows, k, std::span(into.values), std::span(into.indices), {.sorted = true});
    std::string why;
    ASSERT_TRUE(rxm::testing::same_topk(into, rxm::testing::expected_topk<float, std::int32_t>(logits, rows, k, {.sorted = true}), &why))
        << "rows k " << k << ": " << why;
  }
}

TEST(MeshTopkCpu, PlacementBadOutputsAreClearErrors) {
  using rxm::testing::error_text;
  auto ctx = rxm::Context::cpu_mesh(2, 1);
  std::vector<float> a(10, 1.0f), b(10, 2.0f);
  std::vector<std::span<const float>> spans = {a, b};
  using S = std::span<const std::span<const float>>;
  std::vector<float> v(4);
  std::vector<std::int64_t> ix(5);
  const std::string size = error_text([&] { rxm::topk_into(ctx, S(spans), 5, std::span(v), std::span(ix)); });
  EXPECT_NE(size.find("hold 4 values and 5 indices, not rows x k = 5"), std::string::npos) << size;
  std::vector<float> small(2), fine(5);
  std::vector<std::int64_t> small_ix(2), fine_ix(5);
  std::vector<std::span<float>> out_values = {small, fine};
  std::vector<std::span<std::int64_t>> out_indices = {small_ix, fine_ix};
  const std::string short_out = error_text([&] {
    rxm::topk_distributed(ctx, S(spans), 5, std::span<const std::span<float>>(out_values),
                          std::span<const std::span<std::int64_t>>(out_indices));
  });
  EXPECT_NE(short_out.find("the output of mesh device 0 holds 2 entries; it may keep up to 5"), std::string::npos)
      << short_out;
  EXPECT_EQ(fine, std::vector<float>(5));  // nothing written after the refusal
}

TEST(MeshTopkCpu, BadInputIsAClearError) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  std::vector<float> a(10), b(5), c(0);
  std::vector<std::span<const float>> spans{a, b, c};
  using S = std::span<const std::span<const float>>;
  using rxm::testing::error_text;
  EXPECT_NE(error_text([&] { rxm::topk(ctx, S(spans), 16); }).find("k = 16 is larger than n = 15"), std::string::npos);
  EXPECT_NE(error_text([&] { rxm::topk(ctx, S(spans), 0); }).find("k = 0"), std::string::npos);
  EXPECT_NE(error_text([&] { rxm::topk(ctx, S(spans).first(2), 1); }).find("2 shards for 3 local mesh devices"),
            std::string::npos);
  EXPECT_NE(error_text([&] { rxm::topk_batched(ctx, S(spans), 2, 1); }).find("not a whole number of 2 rows"),
            std::string::npos);
  EXPECT_NE(error_text([&] { rxm::topk_batched(ctx, S(spans), 5, 4); }).find("k = 4 is larger than n = 3"),
            std::string::npos);
  std::vector<std::span<const float>> empty{c, c, c};
  EXPECT_NE(error_text([&] { rxm::topk(ctx, S(empty), 1); }).find("the input is empty"), std::string::npos);
  std::vector<std::span<const float>> null_shard{a, std::span<const float>(static_cast<const float*>(nullptr), 3), c};
  EXPECT_NE(error_text([&] { rxm::topk(ctx, S(null_shard), 1); }).find("the values of mesh device 1 are null"),
            std::string::npos);
  EXPECT_NE(error_text([&] { rxm::topk_batched(ctx, S(spans), 1, 1, {}, {rxm::TopkShardPath::radix_select}); })
                .find("the radix-select path takes one array"),
            std::string::npos);
  // The automatic path takes the candidates at these sizes.
  std::vector<float> big(20000, 1.0f);
  std::vector<std::span<const float>> big_spans{std::span<const float>(big).first(7000),
                                                std::span<const float>(big).subspan(7000, 13000), c};
  rxm::TopkPhases phases;
  rxm::topk(ctx, S(big_spans), 20000, {}, {.phases = &phases});
  EXPECT_EQ(phases.path, rxm::TopkShardPath::candidates);
  rxm::topk(ctx, S(big_spans), 20000, {}, {rxm::TopkShardPath::radix_select, &phases});
  EXPECT_EQ(phases.path, rxm::TopkShardPath::radix_select);
  EXPECT_EQ(phases.select_passes, 4);
  // The mesh still works after every error.
  check(ctx, std::vector<float>(15, 1.0f), 1, {10, 5, 0}, 15, {}, false, "after errors");
}

}  // namespace
