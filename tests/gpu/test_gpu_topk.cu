// The CUDA top-k against the CPU reference (itself checked against a model in test_topk_cpu):
// exact values (bit for bit) and indices, every type, the issue's sizes, k and distributions,
// batches with empty, short and mixed rows, host and device input, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
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
using rxm::testing::test_seed;
using rxm::testing::gpu;
using rxm::testing::cpu;
using rxm::testing::describe;
using rxm::testing::expect_equal;

namespace {

const rxm::TopkOptions some_options[] = {{.largest = true, .sorted = false},
                                         {.largest = false, .sorted = true},
                                         {.largest = true, .sorted = true, .include_nan = true}};

template <class T> void check_type(const std::vector<std::size_t>& sizes, bool every_input) {
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (!every_input && input.name != "uniform" && input.name != "all-equal" && input.name != "specials" &&
        input.name != "U[128.6,128.7]")
      continue;
    for (std::size_t n : sizes) {
      const auto v = rxm::testing::make_topk_input<T>(input, n);
      for (std::size_t k : rxm::testing::topk_ks(n))
        for (const auto& o : some_options) {
          SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name, n, k, o));
          expect_equal(rxm::topk(gpu(), std::span<const T>(v), k, o), rxm::topk(cpu(), std::span<const T>(v), k, o));
        }
    }
  }
}

const std::vector<std::size_t> issue_sizes = {1, 2, 1023, (1 << 20) + 3};

}  // namespace

TEST(GpuTopk, F32) { RXM_REQUIRE_GPU(); check_type<float>(issue_sizes, true); }
TEST(GpuTopk, F64) { RXM_REQUIRE_GPU(); check_type<double>(issue_sizes, false); }
TEST(GpuTopk, F16) { RXM_REQUIRE_GPU(); check_type<rxm::half_t>(issue_sizes, true); }
TEST(GpuTopk, BF16) { RXM_REQUIRE_GPU(); check_type<rxm::bfloat16_t>(issue_sizes, false); }
TEST(GpuTopk, I32) { RXM_REQUIRE_GPU(); check_type<std::int32_t>(issue_sizes, false); }
TEST(GpuTopk, U32) { RXM_REQUIRE_GPU(); check_type<std::uint32_t>(issue_sizes, false); }
TEST(GpuTopk, I64) { RXM_REQUIRE_GPU(); check_type<std::int64_t>(issue_sizes, false); }
TEST(GpuTopk, U64) { RXM_REQUIRE_GPU(); check_type<std::uint64_t>(issue_sizes, false); }
TEST(GpuTopk, I16U16) {
  RXM_REQUIRE_GPU();
  check_type<std::int16_t>({1023, 70001}, false);
  check_type<std::uint16_t>({1023, 70001}, false);
}

TEST(GpuTopk, Large) {  // 2^26 float32: the delegate path, every k of the issue
  RXM_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 26;
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "U[128.6,128.7]" && input.name != "zipf(1.1)") continue;
    const auto v = rxm::testing::make_topk_input<float>(input, n);
    for (std::size_t k : {std::size_t(1), std::size_t(1024), std::size_t(1) << 20, n - 1}) {
      const rxm::TopkOptions o{};
      SCOPED_TRACE(describe("f32 " + input.name, n, k, o));
      expect_equal(rxm::topk(gpu(), std::span<const float>(v), k, o), rxm::topk(cpu(), std::span<const float>(v), k, o));
    }
  }
}

TEST(GpuTopk, BatchesMixedRows) {
  RXM_REQUIRE_GPU();
  const auto inputs = rxm::testing::topk_inputs(test_seed());
  // Empty, one-element, short and long rows (one long enough for delegates).
  const std::vector<std::uint64_t> offsets = {0, 0, 1, 1, 5, 1029, 1030, 201030, 201030, 301030, 400000};
  for (const auto& input : inputs) {
    const auto v = rxm::testing::make_topk_input<float>(input, 400000);
    for (std::size_t k : {1, 3, 100, 5000})
      for (const auto& o : some_options) {
        SCOPED_TRACE(describe("batch " + input.name, v.size(), k, o));
        auto rows = rxm::Rows::from_offsets(offsets);
        expect_equal(rxm::topk_batched(gpu(), std::span<const float>(v), rows, k, o),
                     rxm::topk_batched(cpu(), std::span<const float>(v), rows, k, o));
      }
  }
}

TEST(GpuTopk, UniformBatches) {
  RXM_REQUIRE_GPU();
  struct Shape { std::size_t rows, length, k; };
  for (const Shape& s : {Shape{16, 1 << 17, 512}, Shape{300, 5000, 50}, Shape{100, 32768, 50}, Shape{7, 3, 3}}) {
    const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), s.rows * s.length);
    for (const auto& o : some_options) {
      SCOPED_TRACE(describe("rows=" + std::to_string(s.rows), s.length, s.k, o));
      const auto rows = rxm::Rows::uniform(s.rows, s.length);
      expect_equal(rxm::topk_batched<float, std::int32_t>(gpu(), std::span<const float>(v), rows, s.k, o),
                   rxm::topk_batched<float, std::int32_t>(cpu(), std::span<const float>(v), rows, s.k, o));
    }
  }
}

// Rows just below and above kMinDelegateRow = 2^13 (topk_plan_gpu.hpp): 8191 takes the raw path
// (one block per row), 8192 and 8193 the delegates (alpha = 3..6 for these k); 4095 and 4096
// straddle 2^12 (raw here; the delegate path at that length is timed by bench_topk --rows-sweep).
// Equal-length batches and one batch with offsets that mixes both paths; inputs with ties
// (all-equal, few-distinct, U[128.6,128.7]) check the lowest-index rule.
TEST(GpuTopk, RowsAroundTheDelegateThreshold) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "all-equal" && input.name != "few-distinct" &&
        input.name != "U[128.6,128.7]" && input.name != "specials" && input.name != "sorted")
      continue;
    for (std::size_t length :
         {std::size_t(4095), std::size_t(4096), std::size_t(8191), std::size_t(8192), std::size_t(8193)}) {
      const std::size_t rows = 5;
      const auto v = rxm::testing::make_topk_input<float>(input, rows * length);
      for (std::size_t k : {1, 7, 50, 100})
        for (const auto& o : some_options) {
          SCOPED_TRACE(describe("rows=5 " + input.name, length, k, o));
          const auto uniform = rxm::Rows::uniform(rows, length);
          expect_equal(rxm::topk_batched(gpu(), std::span<const float>(v), uniform, k, o),
                       rxm::topk_batched(cpu(), std::span<const float>(v), uniform, k, o));
        }
    }
    const std::vector<std::uint64_t> offsets = {0, 8191, 16383, 24576, 32769, 36865, 45056};
    const auto v = rxm::testing::make_topk_input<float>(input, offsets.back());
    for (std::size_t k : {1, 50, 100}) {
      SCOPED_TRACE(describe("mixed rows around 2^13 " + input.name, v.size(), k, some_options[0]));
      const auto rows = rxm::Rows::from_offsets(offsets);
      expect_equal(rxm::topk_batched(gpu(), std::span<const float>(v), rows, k, some_options[0]),
                   rxm::topk_batched(cpu(), std::span<const float>(v), rows, k, some_options[0]));
    }
  }
}

TEST(GpuTopk, DeviceInputAndInputIndices) {
  RXM_REQUIRE_GPU();
  const std::size_t n = 300000, k = 777;
  const auto v = rxm::testing::random_bit_patterns<double>(n, test_seed());
  rxm::DeviceArray<double> d(0, n);
  RXM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  expect_equal(rxm::topk(gpu(), rxm::device_span<const double>(d), k), rxm::topk(cpu(), std::span<const double>(v), k));
  std::vector<std::int64_t> caller(n);
  for (std::size_t i = 0; i < n; ++i) caller[i] = std::int64_t(5 * i + 11);
  expect_equal(rxm::topk(gpu(), std::span<const double>(v), k, {}, std::span<const std::int64_t>(caller)),
               rxm::topk(cpu(), std::span<const double>(v), k, {}, std::span<const std::int64_t>(caller)));
}

TEST(GpuTopk, DeviceLevelEntryIsStreamOrdered) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (1 << 20) + 3, k = 64;
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "normal"), n);
  rxm::DeviceArray<float> d(0, n), out_v(0, k);
  rxm::DeviceArray<std::int64_t> out_i(0, k);
  RXM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(out_v.data(), 0xA5, k * sizeof(float)));  // poison
  RXM_CUDA_CHECK(cudaMemset(out_i.data(), 0xA5, k * sizeof(std::int64_t)));
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::f32, p.values = d.data(), p.total = n, p.rows = 1, p.row_length = n, p.max_row_length = n;
  p.k = k, p.out_values = out_v.data(), p.out_indices = out_i.data();
  const std::size_t bytes = rxm::device::topk_temp_bytes(p, 0);
  rxm::DeviceBuffer temp(0, bytes);
  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaStreamCreate(&stream));
  for (int repeat = 0; repeat < 3; ++repeat) rxm::device::topk(temp.data(), bytes, p, stream);  // state resets
  RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  RXM_CUDA_CHECK(cudaStreamDestroy(stream));
  rxm::TopkResult<float, std::int64_t> got;
  got.values.resize(k), got.indices.resize(k);
  RXM_CUDA_CHECK(cudaMemcpy(got.values.data(), out_v.data(), k * sizeof(float), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got.indices.data(), out_i.data(), k * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  expect_equal(got, rxm::topk(cpu(), std::span<const float>(v), k));
  EXPECT_THROW(rxm::device::topk(temp.data(), bytes / 2, p, nullptr), rxm::Error);  // too little temp
}

TEST(GpuTopk, BadInput) {
  RXM_REQUIRE_GPU();
  const std::vector<float> v(100, 1.0f);
  auto message = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const rxm::Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message([&] { rxm::topk(gpu(), std::span<const float>(v), 0); }).find("k = 0"), std::string::npos);
  const auto big = message([&] { rxm::topk(gpu(), std::span<const float>(v), 101); });
  EXPECT_NE(big.find("k = 101"), std::string::npos) << big;
  EXPECT_NE(big.find("n = 100"), std::string::npos) << big;
  EXPECT_NE(message([&] { rxm::topk(gpu(), std::span<const float>(), 1); }).find("empty"), std::string::npos);
  const std::vector<std::uint64_t> decreasing = {0, 50, 40, 100};
  EXPECT_NE(message([&] { rxm::topk_batched(gpu(), std::span<const float>(v), rxm::Rows::from_offsets(decreasing), 5); })
                .find("decrease"),
            std::string::npos);
  rxm::DeviceArray<std::uint64_t> d_past(0, 3);
  const std::vector<std::uint64_t> past = {0, 50, 101};
  RXM_CUDA_CHECK(cudaMemcpy(d_past.data(), past.data(), 3 * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  EXPECT_NE(message([&] {
              rxm::topk_batched(gpu(), std::span<const float>(v),
                                rxm::Rows::from_offsets(rxm::device_span<const std::uint64_t>(d_past)), 5);
            }).find("past"),
            std::string::npos);
  const std::vector<std::uint8_t> bytes(10, 1);
  EXPECT_NE(message([&] { rxm::topk(gpu(), std::span<const std::uint8_t>(bytes), 1); }).find("not supported"),
            std::string::npos);
  // Not enough device memory: a request far beyond the device fails before any work.
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::f32, p.values = v.data(), p.total = std::size_t(1) << 40, p.rows = 1;
  p.row_length = p.total, p.max_row_length = p.total, p.k = std::size_t(1) << 39;
  p.out_values = (void*)1, p.out_indices = (void*)1;
  const std::size_t need = rxm::device::topk_temp_bytes(p, 0);
  try {
    rxm::DeviceBuffer temp(0, need);
    FAIL() << "expected out of memory for " << need << " bytes";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory) << e.what();
  }
}

// ---- The delegate pass's folds (topk_delegate_pass.cuh): fmaxf/fminf for f32/f64, __hmax2/__hmin2
// on pairs for f16/bf16 (without include_nan), the rank transform and an unsigned max otherwise,
// with the exact refold where a fold's result is NaN (an all-NaN subrange), a zero (either sign)
// or subnormal. Inputs are built from blocks of 64 values of one pattern each (all NaN, zeros of
// one or both signs, subnormals, infinities, numbers of one sign with some NaN, all equal,
// negatives with a zero, bit patterns), so that subranges of 2^3..2^10 values have exactly those
// bests; every option set, 16-byte and scalar loads, the one-block and the multi-block select,
// and rows that start unaligned (offsets: the scalar path).
namespace {

using rxm::device::TopkTuning;
using rxm::testing::DeviceRun;
using rxm::testing::device_topk;

// Raw bits of a float of type T: class 0 NaN (random payload), 1 zero, 2 subnormal, 3 infinity,
// 4 normal (random exponent and mantissa).
template <class T> rxm::key_bits_t<T> float_bits(std::mt19937_64& g, int cls, bool negative) {
  using U = rxm::key_bits_t<T>;
  constexpr int M = rxm::key_traits<T>::mantissa_bits, W = int(8 * sizeof(U));
  constexpr U kMantissa = U((U(1) << M) - 1), kExponentOnes = U((U(1) << (W - 1 - M)) - 1);
  const U mantissa = U(U(g()) & kMantissa);
  U bits = 0;
  switch (cls) {
    case 0: bits = U(U(kExponentOnes << M) | (mantissa ? mantissa : U(1))); break;
    case 1: bits = 0; break;
    case 2: bits = mantissa ? mantissa : U(1); break;
    case 3: bits = U(kExponentOnes << M); break;
    default: bits = U(U(U(1 + g() % (kExponentOnes - 1)) << M) | mantissa); break;
  }
  return negative ? U(bits | U(U(1) << (W - 1))) : bits;
}

template <class T> std::vector<T> patterned(std::size_t n, std::uint64_t seed, double negative_share) {
  using U = rxm::key_bits_t<T>;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> share(0.0, 1.0);
  std::vector<T> v(n);
  for (std::size_t b = 0; b < n; b += 64) {
    int pattern = int(g() % 9);
    if (!rxm::key_traits<T>::is_float) pattern = pattern % 2 ? 6 : 8;  // integers: equal blocks, bits
    const bool negative = share(g) < negative_share;
    T equal{};
    if constexpr (rxm::key_traits<T>::is_float) equal = rxm::from_bits<T>(float_bits<T>(g, 4, negative));
    else equal = rxm::from_bits<T>(U(g()));
    for (std::size_t i = b; i < std::min(n, b + 64); ++i) {
      if (pattern == 6) {
        v[i] = equal;
        continue;
      }
      if (pattern == 8) {
        v[i] = rxm::from_bits<T>(U(g()));
        continue;
      }
      if constexpr (rxm::key_traits<T>::is_float) {
        int cls = 4;
        bool sign = negative;
        switch (pattern) {
          case 0: cls = 0, sign = g() & 1; break;                   // all NaN
          case 1: cls = 1; break;                                   // zeros of one sign
          case 2: cls = 1, sign = g() & 1; break;                   // zeros of both signs
          case 3: cls = g() % 4 ? 2 : 1, sign = g() & 1; break;     // subnormals and zeros
          case 4: cls = 3; break;                                   // infinities of one sign
          case 5: cls = g() % 8 ? 4 : 0; break;                     // numbers of one sign, some NaN
          default: cls = g() % 16 ? 4 : 1, sign = cls == 1 ? bool(g() & 1) : true; break;  // negatives, a zero
        }
        v[i] = rxm::from_bits<T>(float_bits<T>(g, cls, sign));
      }
    }
  }
  return v;
}

const rxm::TopkOptions fold_options[] = {{.largest = true},
                                         {.largest = false, .sorted = true},
                                         {.largest = true, .sorted = true, .include_nan = true},
                                         {.largest = false, .include_nan = true}};

template <class T>
void check_delegate_folds(std::size_t n, std::vector<int> alphas, std::vector<std::size_t> ks,
                          std::vector<double> negative_shares = {0.1, 0.5, 0.9}) {
  std::uint64_t seed = test_seed();
  for (double negative_share : negative_shares) {
    const auto v = patterned<T>(n, seed++, negative_share);
    const std::string what = std::string(rxm::name_of(rxm::key_type_v<T>)) + " patterned, negative share " +
                             std::to_string(negative_share);
    for (std::size_t k : ks)
      for (const auto& o : fold_options) {
        const auto want = rxm::topk(cpu(), std::span<const T>(v), k, o);
        for (int alpha : alphas) {
          if (k > (n >> alpha)) continue;  // at least k subranges
          // Both delegate selects (one block per row, multi-block passes), both loads, both selects,
          // and both grids of the delegate passes.
          for (const DeviceRun run :
               {DeviceRun{.tuning = {.delegate_log2 = alpha, .delegate_block_select = 1}},
                DeviceRun{.tuning = {.delegate_log2 = alpha, .delegate_block_select = 0,
                                     .delegate_vector_loads = false}},
                DeviceRun{.tuning = {.delegate_log2 = alpha, .block_select = 0}, .debug_checks = true},
                DeviceRun{.tuning = {.delegate_log2 = alpha, .delegate_block_select = 0,
                                     .delegate_select_full_grid = false}},
                DeviceRun{.tuning = {.delegate_log2 = alpha, .delegate_pass_five_blocks = 1}},
                DeviceRun{.tuning = {.delegate_log2 = alpha, .delegate_pass_five_blocks = 0}}}) {
            const TopkTuning& t = run.tuning;
            SCOPED_TRACE(describe(what + " alpha=" + std::to_string(alpha) + " vector=" +
                                      std::to_string(t.delegate_vector_loads) + " block=" +
                                      std::to_string(t.block_select) +
                                      " delegate_block=" + std::to_string(t.delegate_block_select) +
                                      " full_grid=" + std::to_string(t.delegate_select_full_grid) +
                                      " five_blocks=" + std::to_string(t.delegate_pass_five_blocks),
                                  n, k, o));
            expect_equal(device_topk(v, 1, {}, k, o, run), want);
          }
        }
      }
    // Rows that start unaligned (scalar loads) beside an aligned one, in one batch.
    const std::vector<std::uint64_t> offsets = {0, 8195, n};
    for (std::size_t k : {std::size_t(1), std::size_t(50)})
      for (const auto& o : fold_options) {
        SCOPED_TRACE(describe(what + " offsets", n, k, o));
        const auto want = rxm::topk_batched(cpu(), std::span<const T>(v), rxm::Rows::from_offsets(offsets), k, o);
        for (bool new_settings : {true, false}) {
          SCOPED_TRACE(new_settings ? "full delegate grid" : "delegate select on one block per 4096 delegates");
          const TopkTuning t{.delegate_log2 = 4, .delegate_block_select = 0, .delegate_select_full_grid = new_settings};
          expect_equal(device_topk(v, 2, offsets, k, o, {t}), want);
        }
      }
  }
}

const std::vector<int> fold_alphas = {3, 4, 5, 7, 10};
const std::vector<std::size_t> fold_ks = {1, 9, 100, 1000};

}  // namespace

TEST(GpuTopkDelegates, F32) { RXM_REQUIRE_GPU(); check_delegate_folds<float>((1 << 15) + 37, fold_alphas, fold_ks); }
TEST(GpuTopkDelegates, F64) { RXM_REQUIRE_GPU(); check_delegate_folds<double>((1 << 15) + 37, fold_alphas, fold_ks); }
TEST(GpuTopkDelegates, F16) { RXM_REQUIRE_GPU(); check_delegate_folds<rxm::half_t>((1 << 15) + 37, fold_alphas, fold_ks); }
TEST(GpuTopkDelegates, BF16) {
  RXM_REQUIRE_GPU();
  check_delegate_folds<rxm::bfloat16_t>((1 << 15) + 37, fold_alphas, fold_ks);
}
TEST(GpuTopkDelegates, Integers) {
  RXM_REQUIRE_GPU();
  check_delegate_folds<std::int32_t>((1 << 15) + 37, {3, 6}, {1, 100});
  check_delegate_folds<std::uint16_t>((1 << 15) + 37, {3, 6}, {1, 100});
  check_delegate_folds<std::int64_t>((1 << 15) + 37, {3, 6}, {1, 100});
}
// The rescan (gather_candidates_wide: several steps per warp where k x 2^alpha exceeds the grid's
// warps x 256, one step from registers otherwise) and the delegate passes' grid (full or
// ~delegates/4096 blocks), both grids against the CPU: batched equal rows (128 x 2^16: 4 blocks and 32
// warps per row on an H200, so alpha = 4, k = 1024 gives 2 steps per warp; alpha = 3: 1 step),
// and unaligned offset rows of mixed lengths; inputs with ties, NaN and all-equal values.
TEST(GpuTopkDelegates, RescanAndDelegateGridSwitches) {
  RXM_REQUIRE_GPU();
  const std::size_t rows = 128, length = std::size_t(1) << 16;
  const std::vector<std::uint64_t> offsets = {0, 3, 70001, 70001, 140000, 209999, 300001, 333333};
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "all-equal" && input.name != "few-distinct" &&
        input.name != "specials" && input.name != "U[128.6,128.7]")
      continue;
    const auto v = rxm::testing::make_topk_input<float>(input, rows * length);
    const std::vector<float> w(v.begin(), v.begin() + std::ptrdiff_t(offsets.back()));
    for (std::size_t k : {std::size_t(50), std::size_t(1024)})
      for (const auto& o : some_options) {
        const auto want = rxm::topk_batched(cpu(), std::span<const float>(v), rxm::Rows::uniform(rows, length), k, o);
        const auto want_offsets = rxm::topk_batched(cpu(), std::span<const float>(w), rxm::Rows::from_offsets(offsets), k, o);
        for (int alpha : {3, 4})
          for (bool full_grid : {true, false}) {
            const DeviceRun run{
                .tuning = {.delegate_log2 = alpha, .delegate_block_select = 0, .delegate_select_full_grid = full_grid}};
            SCOPED_TRACE(describe(input.name + " alpha=" + std::to_string(alpha) +
                                      " full_grid=" + std::to_string(full_grid),
                                  length, k, o));
            expect_equal(device_topk(v, rows, {}, k, o, run), want);
            expect_equal(device_topk(w, offsets.size() - 1, offsets, k, o, run), want_offsets);
          }
      }
  }
}
// The sanitizer runs' share (scripts/gpu-check's "*Small*" filter).
TEST(GpuTopkSmall, DelegateFolds) {
  RXM_REQUIRE_GPU();
  check_delegate_folds<float>((1 << 14) + 5, {3, 6}, {50}, {0.5});
  check_delegate_folds<rxm::half_t>((1 << 14) + 5, {4}, {50}, {0.9});
}
