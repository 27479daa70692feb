// The sample-select path of the GPU top-k (src/cuda/topk/topk_sample_select.cuh), forced on
// (TopkTuning::sample_select = 1) against the CPU reference: every key type, largest and smallest,
// sorted and unsorted, 32- and 64-bit output indices, caller indices, k from 1 to n, inputs with
// ties, NaN/inf/+-0, sorted and reverse-sorted rows, and rows built against the fixed sample stride
// so that the device-side fallback (count < k, or count > capacity) runs and must stay exact.
// Outputs are poisoned before every run and every place is compared (device_topk, expect_equal).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "common/topk_checks.hpp"
#include "common/topk_inputs.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::testing::cpu;
using rxm::testing::device_topk;
using rxm::testing::describe;
using rxm::testing::expect_equal;
using rxm::testing::test_seed;
using rxm::testing::DeviceRun;

namespace {

// The sample-select path forced on.
DeviceRun sample_on() { return {.tuning = {.sample_select = 1}}; }

const rxm::TopkOptions all_options[] = {{.largest = true},
                                        {.largest = false, .sorted = true},
                                        {.largest = true, .sorted = true, .include_nan = true},
                                        {.largest = false, .include_nan = true}};

// k in {1, 2, 1000, 65536, n/2, n-1, n} (those <= n).
std::vector<std::size_t> sample_ks(std::size_t n) {
  std::vector<std::size_t> ks;
  for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(1000), std::size_t(65536), n / 2, n - 1, n})
    if (k >= 1 && k <= n && (ks.empty() || ks.back() < k)) ks.push_back(k);
  return ks;
}

template <class T> void check_forced(std::size_t n, const std::vector<std::string>& inputs, int option_sets) {
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (std::find(inputs.begin(), inputs.end(), input.name) == inputs.end()) continue;
    const auto v = rxm::testing::make_topk_input<T>(input, n);
    for (std::size_t k : sample_ks(n))
      for (int s = 0; s < option_sets; ++s) {
        const auto& o = all_options[s];
        const auto want = rxm::topk(cpu(), std::span<const T>(v), k, o);
        SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name, n, k, o));
        expect_equal(device_topk(v, 1, {}, k, o, sample_on()), want);
      }
  }
}

// 2^20 + 37: the last tile partial (scalar loads; not a multiple of any read's tile), s = 2^14
// samples 64 apart.
const std::size_t kN = (std::size_t(1) << 20) + 37;
const std::vector<std::string> every_input = {"uniform", "U[128.6,128.7]", "normal", "zipf(1.1)", "sorted",
                                              "reverse", "all-equal", "few-distinct", "specials", "bit-patterns"};
const std::vector<std::string> some_inputs = {"uniform", "all-equal", "specials", "reverse"};

// Rows built against the stride: with n a multiple of s = 2^14 (kSampleLog2), sample i is element
// i n / s.
// `samples_best`: the sampled elements hold the row's best values, so the bound L lies above the
// k-th best whenever k exceeds the samples' share (count < k); otherwise they hold the worst
// values, so L admits nearly every element (count > capacity). Either way the fallback runs.
template <class T> std::vector<T> against_the_stride(std::size_t n, bool samples_best, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  const std::size_t stride = n >> 14;
  for (std::size_t i = 0; i < n; ++i) {
    const bool sampled = i % stride == 0;
    const double x = double(g() % 1000000) / 1000.0;  // [0, 1000): ties too
    const double value = sampled == samples_best ? 5000.0 + x : x;
    v[i] = T(value);
  }
  return v;
}

}  // namespace

TEST(GpuTopkSample, F32EveryInput) { RXM_REQUIRE_GPU(); check_forced<float>(kN, every_input, 4); }
TEST(GpuTopkSample, F16) { RXM_REQUIRE_GPU(); check_forced<rxm::half_t>(kN, some_inputs, 4); }
TEST(GpuTopkSample, BF16) { RXM_REQUIRE_GPU(); check_forced<rxm::bfloat16_t>(kN, some_inputs, 2); }
TEST(GpuTopkSample, F64) { RXM_REQUIRE_GPU(); check_forced<double>(kN, some_inputs, 4); }
TEST(GpuTopkSample, Integers) {
  RXM_REQUIRE_GPU();
  check_forced<std::int32_t>(kN, {"uniform", "all-equal", "sorted"}, 2);
  check_forced<std::uint32_t>(kN, {"uniform", "reverse"}, 2);
  check_forced<std::int64_t>(kN, {"uniform", "all-equal"}, 2);
  check_forced<std::uint64_t>(kN, {"bit-patterns", "sorted"}, 2);
}

// 32-bit output indices and caller indices, sorted and unsorted.
TEST(GpuTopkSample, IndexWidthsAndCallerIndices) {
  RXM_REQUIRE_GPU();
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), kN);
  std::vector<std::int32_t> caller32(kN);
  std::vector<std::int64_t> caller64(kN);
  for (std::size_t i = 0; i < kN; ++i) caller32[i] = std::int32_t(3 * i + 7), caller64[i] = std::int64_t(5 * i + 11);
  for (std::size_t k : {std::size_t(1000), std::size_t(65536)})
    for (const auto& o : all_options) {
      SCOPED_TRACE(describe("f32 index widths", kN, k, o));
      expect_equal(device_topk<float, std::int32_t>(v, 1, {}, k, o, sample_on()),
                   rxm::topk<float, std::int32_t>(cpu(), std::span<const float>(v), k, o));
      expect_equal(device_topk<float, std::int32_t>(v, 1, {}, k, o, sample_on(), caller32),
                   rxm::topk<float, std::int32_t>(cpu(), std::span<const float>(v), k, o,
                                                  std::span<const std::int32_t>(caller32)));
      expect_equal(device_topk<float, std::int64_t>(v, 1, {}, k, o, sample_on(), caller64),
                   rxm::topk<float, std::int64_t>(cpu(), std::span<const float>(v), k, o,
                                                  std::span<const std::int64_t>(caller64)));
    }
}

// A row that starts off the 16-byte grid: every read takes its scalar-load branch in every tile.
TEST(GpuTopkSample, UnalignedRow) {
  RXM_REQUIRE_GPU();
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), kN);
  const auto h = rxm::testing::make_topk_input<rxm::half_t>(rxm::testing::topk_input(test_seed(), "uniform"), kN);
  const std::span<const float> v1 = std::span<const float>(v).subspan(1);
  const std::span<const rxm::half_t> h3 = std::span<const rxm::half_t>(h).subspan(3);
  for (std::size_t k : {std::size_t(1000), std::size_t(65536)})
    for (const auto& o : {all_options[0], all_options[1]}) {
      SCOPED_TRACE(describe("unaligned", kN, k, o));
      DeviceRun run = sample_on();
      run.skip = 1;
      expect_equal(device_topk(v, 1, {}, k, o, run), rxm::topk(cpu(), v1, k, o));
      run.skip = 3;
      expect_equal(device_topk(h, 1, {}, k, o, run), rxm::topk(cpu(), h3, k, o));
    }
}

// The fallback: count < k (samples best, k above their share) and count > capacity (samples worst).
TEST(GpuTopkSample, AgainstTheStrideFallsBackExactly) {
  RXM_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 20;
  for (bool samples_best : {true, false}) {
    const auto v = against_the_stride<float>(n, samples_best, test_seed());
    const auto d = against_the_stride<double>(n, samples_best, test_seed() + 1);
    for (std::size_t k : {std::size_t(1000), std::size_t(70000), std::size_t(300000)})
      for (const auto& o : all_options) {
        SCOPED_TRACE(describe(std::string("against the stride, samples ") + (samples_best ? "best" : "worst"), n, k, o));
        const auto want_v = rxm::topk(cpu(), std::span<const float>(v), k, o);
        const auto want_d = rxm::topk(cpu(), std::span<const double>(d), k, o);
        expect_equal(device_topk(v, 1, {}, k, o, sample_on()), want_v);
        expect_equal(device_topk(d, 1, {}, k, o, sample_on()), want_d);
      }
  }
}

// The automatic choice at the issue's large k (delegates at 65536, sample select from 2^20:
// kSampleSelectMinK) against the forced-off delegate path, both against the CPU, 2^24 values.
TEST(GpuTopkSample, AutomaticAndOffAtLargeK) {
  RXM_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 24;
  const rxm::DeviceArray<std::int64_t> placeholder(0, 1);
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "U[128.6,128.7]" && input.name != "few-distinct") continue;
    const auto v = rxm::testing::make_topk_input<float>(input, n);
    for (std::size_t k : {std::size_t(65536), std::size_t(1) << 20}) {
      const rxm::TopkOptions o{};
      const auto want = rxm::topk(cpu(), std::span<const float>(v), k, o);
      for (int sample : {-1, 0}) {
        // Every launch checked, and the winner count.
        const DeviceRun run{.tuning = {.sample_select = sample}, .debug_checks = true};
        SCOPED_TRACE(describe("f32 " + input.name + " sample_select=" + std::to_string(sample), n, k, o));
        expect_equal(device_topk(v, 1, {}, k, o, run), want);
        // The path itself: automatic takes sample select at k >= 2^20 only (n < 2^27 here). The
        // problem is only planned, never run: its pointers need only be device memory.
        rxm::device::TopkProblem p;
        p.type = rxm::KeyType::f32, p.total = n, p.rows = 1, p.row_length = n, p.max_row_length = n, p.k = k;
        p.options = o, p.tuning = run.tuning;
        p.values = placeholder.data(), p.out_values = placeholder.data(), p.out_indices = placeholder.data();
        const bool expect_sample = sample == -1 && k >= (std::size_t(1) << 20);
        EXPECT_EQ(std::string(rxm::device::topk_path_name(p, 0)) == "sample-select", expect_sample)
            << rxm::device::topk_path_name(p, 0);
      }
    }
  }
}

// The sanitizer runs' share (scripts/gpu-check's "*Small*" filter): the path and its fallback on
// short rows.
TEST(GpuTopkSampleSmall, PathAndFallback) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 17) + 3;
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), n);
  const auto w = against_the_stride<float>(std::size_t(1) << 17, false, test_seed());
  for (std::size_t k : {std::size_t(1), std::size_t(1000), std::size_t(50000)})
    for (const auto& o : {all_options[0], all_options[1]}) {
      SCOPED_TRACE(describe("small", n, k, o));
      const auto want_v = rxm::topk(cpu(), std::span<const float>(v), k, o);
      const auto want_w = rxm::topk(cpu(), std::span<const float>(w), k, o);
      expect_equal(device_topk(v, 1, {}, k, o, sample_on()), want_v);
      expect_equal(device_topk(w, 1, {}, k, o, sample_on()), want_w);
    }
}
