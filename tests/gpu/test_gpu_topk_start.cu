// Where the GPU top-k's radix select starts (device::TopkStart): none, range_adaptive (an extra
// min/max read on rows without delegates) and radik_scaling (RadiK §4.3's subtraction of the
// source's first element, made exact by finishing inside the scaled tie group on the original
// keys). Every choice must give exactly the CPU reference's values and indices (ties by lowest
// index), on the raw path (delegate_log2 = 0) and the delegate path (candidates), with the
// one-block select and the multi-block passes. Inputs: narrow ranges sharing high bits
// (U[128.6,128.7], U[0.6,0.7]), NaN/inf present, every bit pattern, and values that collide after
// the subtraction (the sample is huge, so distinct originals round to one scaled value).
// Also GpuTopkBeta: Dr. Top-k's beta > 1 delegates per subrange (TopkTuning::delegate_beta).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "common/topk_checks.hpp"
#include "common/topk_inputs.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::device::TopkStart;
using rxm::testing::test_seed;
using rxm::testing::cpu;
using rxm::testing::expect_equal;
using rxm::device::TopkTuning;
using rxm::testing::device_topk;

namespace {

const char* name_of(TopkStart s) {
  switch (s) {
    case TopkStart::automatic: return "automatic";
    case TopkStart::none: return "none";
    case TopkStart::range_adaptive: return "range_adaptive";
    default: return "radik_scaling";
  }
}

const rxm::TopkOptions some_options[] = {{.largest = true, .sorted = false},
                                         {.largest = false, .sorted = true},
                                         {.largest = true, .sorted = true, .include_nan = true}};

const TopkTuning tunings[] = {
    {.delegate_log2 = 0, .start = TopkStart::none},
    {.delegate_log2 = 0, .start = TopkStart::range_adaptive},
    {.delegate_log2 = 0, .start = TopkStart::radik_scaling},
    {.delegate_log2 = 0, .block_select = 0, .start = TopkStart::radik_scaling},
    {.delegate_log2 = -1, .start = TopkStart::none},
    {.delegate_log2 = -1, .block_select = 0, .start = TopkStart::range_adaptive},
    {.delegate_log2 = -1, .start = TopkStart::radik_scaling},
    {.delegate_log2 = -1, .block_select = 0, .start = TopkStart::radik_scaling},
};

std::string describe(const std::string& what, std::size_t n, std::size_t k, const rxm::TopkOptions& o,
                     const TopkTuning& t) {
  return what + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " largest=" + std::to_string(o.largest) +
         " sorted=" + std::to_string(o.sorted) + " nan=" + std::to_string(o.include_nan) + " start=" +
         name_of(t.start) + " alpha=" + std::to_string(t.delegate_log2) + " block=" + std::to_string(t.block_select) +
         " beta=" + std::to_string(t.delegate_beta) +
         " seed=" + std::to_string(test_seed());
}

// Every tuning against the CPU reference for one input of one row.
template <class T>
void check_one_row(const std::string& what, const std::vector<T>& v, std::vector<std::size_t> ks,
                   std::span<const TopkTuning> tuning_set = tunings) {
  const std::size_t n = v.size();
  for (std::size_t k : ks) {
    if (k < 1 || k > n) continue;
    for (const auto& o : some_options) {
      const auto want = rxm::topk(cpu(), std::span<const T>(v), k, o);
      for (const TopkTuning& t : tuning_set) {
        SCOPED_TRACE(describe(what, n, k, o, t));
        expect_equal(device_topk(v, 1, {}, k, o, {t}), want);
      }
    }
  }
}

// The sample (element 0) is so large that fl(x - c) is the same for every x in [1, 2): a scaled tie
// group of many distinct originals, straddled by k. A few values far away stay distinct after the
// subtraction; NaN and inf sit among them.
std::vector<float> colliding(std::size_t n, std::uint64_t seed) {
  auto bits = rxm::testing::random_bit_patterns<std::uint32_t>(n, seed);
  std::vector<float> v(n);
  v[0] = 1.0e9f;
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t b = bits[i];
    switch (b % 16) {
      case 0: v[i] = float(int(b % 1000)) * 100.0f - 50000.0f; break;  // distinct after scaling
      case 1: v[i] = (b & 32) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity(); break;
      case 2: v[i] = std::numeric_limits<float>::quiet_NaN(); break;
      default: v[i] = 1.0f + float(b % 4096) / 4096.0f; break;  // collide: ties and near-ties
    }
  }
  return v;
}

}  // namespace

TEST(GpuTopkStart, F32Distributions) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "U[128.6,128.7]" && input.name != "U[0.6,0.7]" && input.name != "uniform" &&
        input.name != "specials" && input.name != "bit-patterns" && input.name != "few-distinct")
      continue;
    for (std::size_t n : {std::size_t(1023), std::size_t(70001), (std::size_t(1) << 20) + 3}) {
      const auto v = rxm::testing::make_topk_input<float>(input, n);
      check_one_row("f32 " + input.name, v, {1, 2, 1024, n / 2, n - 1});
    }
  }
}

TEST(GpuTopkStart, F32CollideAfterSubtraction) {
  RXM_REQUIRE_GPU();
  for (std::size_t n : {std::size_t(1023), std::size_t(70001), (std::size_t(1) << 20) + 3}) {
    const auto v = colliding(n, test_seed());
    check_one_row("f32 colliding", v, {1, 2, 50, 1024, n / 2, n - 1});
  }
}

TEST(GpuTopkStart, F64) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "U[128.6,128.7]" && input.name != "specials" && input.name != "bit-patterns") continue;
    for (std::size_t n : {std::size_t(1023), std::size_t(70001)}) {
      const auto v = rxm::testing::make_topk_input<double>(input, n);
      check_one_row("f64 " + input.name, v, {1, 1024, n / 2});
    }
  }
}

// Batches: the sample is each row's (or its candidates') first element; rows with and without
// delegates in one call (offsets), and an equal-length batch.
TEST(GpuTopkStart, Batches) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "U[128.6,128.7]" && input.name != "specials" && input.name != "uniform") continue;
    const std::vector<std::uint64_t> offsets = {0, 0, 3, 1029, 5125, 105125, 205125};
    const auto v = rxm::testing::make_topk_input<float>(input, offsets.back());
    for (std::size_t k : {1, 50, 700})
      for (const TopkTuning& t : tunings) {
        const rxm::TopkOptions o{};
        SCOPED_TRACE(describe("offsets " + input.name, v.size(), k, o, t));
        const auto want =
            rxm::topk_batched<float, std::int64_t>(cpu(), std::span<const float>(v), rxm::Rows::from_offsets(offsets), k, o);
        expect_equal(device_topk(v, offsets.size() - 1, offsets, k, o, {t}), want);
        const std::size_t rows = 16, length = v.size() / rows;
        const std::vector<float> even(v.begin(), v.begin() + rows * length);
        const auto want_even =
            rxm::topk_batched<float, std::int64_t>(cpu(), std::span<const float>(even), rxm::Rows::uniform(rows, length), k, o);
        expect_equal(device_topk(even, rows, {}, k, o, {t}), want_even);
      }
  }
}

TEST(GpuTopkStart, BadInputScalingNeedsF32OrF64) {
  RXM_REQUIRE_GPU();
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::f16, p.values = (void*)1, p.total = 100, p.rows = 1, p.row_length = 100;
  p.max_row_length = 100, p.k = 5, p.out_values = (void*)1, p.out_indices = (void*)1;
  p.tuning.start = TopkStart::radik_scaling;
  try {
    (void)rxm::device::topk_temp_bytes(p, 0);
    FAIL() << "expected an error for RadiK's scaling on f16";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32 or f64"), std::string::npos) << e.what();
  }
  p.type = rxm::KeyType::i32;
  EXPECT_THROW((void)rxm::device::topk_temp_bytes(p, 0), rxm::Error);
  p.type = rxm::KeyType::f32;
  EXPECT_NO_THROW((void)rxm::device::topk_temp_bytes(p, 0));
}

// Small enough for compute-sanitizer ("Small": scripts/gpu-check's racecheck filter): every
// tuning on 1023- and 5000-element rows that collide after the subtraction, and U[128.6,128.7].
TEST(GpuTopkSmall, StartChoices) {
  RXM_REQUIRE_GPU();
  for (std::size_t n : {std::size_t(1023), std::size_t(5000)}) {
    check_one_row("f32 colliding", colliding(n, test_seed()), {1, 50, n / 2});
    const auto narrow = rxm::testing::topk_input(test_seed(), "U[128.6,128.7]");
    check_one_row("f32 " + narrow.name, rxm::testing::make_topk_input<float>(narrow, n), {1, 50, n / 2});
  }
}

// beta = 2 and 4 delegates per subrange: automatic alpha, alpha = 5 (32-element subranges, the
// smallest beta > 1 takes) and 8; one-block and multi-block selects. Row lengths leave a last
// subrange with fewer than beta elements (4097, 4099: empty slots), ties everywhere.
const TopkTuning beta_tunings[] = {
    {.delegate_log2 = -1, .delegate_beta = 2},
    {.delegate_log2 = -1, .block_select = 0, .delegate_beta = 4},
    {.delegate_log2 = 5, .delegate_beta = 4},
    {.delegate_log2 = 5, .block_select = 0, .delegate_beta = 2},
    {.delegate_log2 = 8, .delegate_beta = 2},
    {.delegate_log2 = 5, .start = TopkStart::radik_scaling, .delegate_beta = 4},
};

TEST(GpuTopkBeta, F32) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name == "normal" || input.name == "zipf(1.1)") continue;
    for (std::size_t n : {std::size_t(4097), std::size_t(4099), std::size_t(70001), (std::size_t(1) << 20) + 3}) {
      const auto v = rxm::testing::make_topk_input<float>(input, n);
      check_one_row("f32 " + input.name, v, {1, 2, 50, 1024, n / 8}, beta_tunings);
    }
  }
}

TEST(GpuTopkBeta, F16AndBatches) {
  RXM_REQUIRE_GPU();
  const TopkTuning no_scaling[] = {beta_tunings[0], beta_tunings[1], beta_tunings[2], beta_tunings[3]};
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "few-distinct" && input.name != "specials") continue;
    const auto h = rxm::testing::make_topk_input<rxm::half_t>(input, 70001);
    check_one_row("f16 " + input.name, h, {1, 50, 1024}, no_scaling);
    const std::vector<std::uint64_t> offsets = {0, 0, 3, 4100, 8197, 108197, 208197};
    const auto v = rxm::testing::make_topk_input<float>(input, offsets.back());
    for (std::size_t k : {1, 50, 700})
      for (const TopkTuning& t : beta_tunings) {
        const rxm::TopkOptions o{};
        SCOPED_TRACE(describe("offsets " + input.name, v.size(), k, o, t));
        const auto want =
            rxm::topk_batched<float, std::int64_t>(cpu(), std::span<const float>(v), rxm::Rows::from_offsets(offsets), k, o);
        expect_equal(device_topk(v, offsets.size() - 1, offsets, k, o, {t}), want);
      }
  }
}

TEST(GpuTopkBeta, BadBeta) {
  RXM_REQUIRE_GPU();
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::f32, p.values = (void*)1, p.total = 100, p.rows = 1, p.row_length = 100;
  p.max_row_length = 100, p.k = 5, p.out_values = (void*)1, p.out_indices = (void*)1;
  p.tuning.delegate_beta = 3;
  try {
    (void)rxm::device::topk_temp_bytes(p, 0);
    FAIL() << "expected an error for delegate_beta = 3";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("delegate_beta = 3"), std::string::npos) << e.what();
  }
}
