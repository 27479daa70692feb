// The top-k at LLM-sampling shapes (the row-stream path, topk_row_stream.cuh, its cluster variant
// for few rows with a large k, topk_row_cluster.cuh, its block per row from shared memory,
// topk_row_smem.cuh, and its warp per row for many rows with a small k, topk_row_warp.cuh) against the CPU
// reference: vocabularies of 1,000 to 256,000, k = 1 (argmax), 50 and 1024, sorted and unsorted,
// f32 / f16 / bf16; masked (-inf) rows, NaN, ties, rows with fewer than k finite values, rows
// shorter than k, unaligned and padded rows, 32- and 64-bit indices with caller indices, forced
// segments and slices; and the device-level entry captured in a CUDA graph and replayed 1000 times
// with new logits (both variants), every replay checked.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/topk_checks.hpp"
#include "common/topk_inputs.hpp"
#include "cuda/runtime/captured_graph.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_stream_common.cuh"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::testing::cpu;
using rxm::testing::describe;
using rxm::testing::expect_equal;
using rxm::testing::gpu;
using rxm::testing::test_seed;

namespace {

const rxm::TopkOptions llm_options[] = {{.largest = true, .sorted = true},
                                        {.largest = true, .sorted = false},
                                        {.largest = false, .sorted = true, .include_nan = true}};

struct GridShape {
  std::size_t rows, vocab;
  bool cluster = false;  // whether k > 128 takes a cluster per row (TopkTuning::row_cluster's rule)
  // Whether k >= 2 takes a block per row from shared memory (TopkTuning::row_smem's rule: 32 rows
  // and more in one wave; `maybe` where that depends on the device's SM count).
  enum { no, yes, maybe } smem = no;
};

std::string path_of(rxm::KeyType type, std::size_t rows, std::size_t vocab, std::size_t k,
                    const rxm::device::TopkTuning& tuning = {}) {
  rxm::device::TopkProblem p;
  p.tuning = tuning;
  p.type = type, p.values = reinterpret_cast<void*>(256), p.total = rows * vocab, p.rows = rows;
  p.row_length = vocab, p.max_row_length = vocab, p.k = k;
  p.out_values = p.out_indices = reinterpret_cast<void*>(256);
  return rxm::device::topk_path_name(p, 0);
}

std::size_t multiprocessors() {
  int sms = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return std::size_t(sms);
}

// TopkTuning::row_compact's automatic rule on device 0: 16-bit floating-point rows of 8192 values
// or more, at k > 512 from 64 rows of up to 131072 values, and in rows of up to 65536 values at
// k >= 512 from 256 rows and at k >= 50 from SMs + 1 to 3 SMs rows.
bool takes_row_compact(rxm::KeyType type, std::size_t rows, std::size_t vocab, std::size_t k) {
  const bool sixteen_bit_float = type == rxm::KeyType::bf16 || type == rxm::KeyType::f16;
  const std::size_t sms = multiprocessors();
  if (!sixteen_bit_float || vocab < 8192) return false;
  return (k > 512 && rows >= 64 && vocab <= 131072) ||
         (vocab <= 65536 && ((k >= 512 && rows >= 256) || (k >= 50 && rows > sms && rows <= 3 * sms)));
}

template <class T> void check_grid() {
  // Up to 16 rows, and more in one wave of clusters with slices of at most 16384 values, take
  // clusters; 32 x 128256 (slices of 32064) and 128 x 32000 do not. 64 and 128 rows of 32000 fit a
  // block's shared memory and take a block each.
  const GridShape shapes[] = {{1, 1000, true},   {5, 32000, true},    {64, 32000, true, GridShape::yes},
                              {3, 128256, true}, {2, 256000, true},   {32, 128256, false},
                              {128, 32000, false, GridShape::maybe}};
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "normal" && input.name != "few-distinct" && input.name != "specials" && input.name != "sorted")
      continue;
    for (const GridShape& s : shapes) {
      const auto v = rxm::testing::make_topk_input<T>(input, s.rows * s.vocab);
      for (std::size_t k : {std::size_t(1), std::size_t(50), std::size_t(1024)}) {
        if (k > s.vocab) continue;
        const std::string path = path_of(rxm::key_type_v<T>, s.rows, s.vocab, k);
        const std::string other = k > 128 && s.cluster ? "row-cluster" : "row-stream";
        if (takes_row_compact(rxm::key_type_v<T>, s.rows, s.vocab, k)) EXPECT_EQ(path, "row-compact");
        else if (k < 2 || s.smem == GridShape::no) EXPECT_EQ(path, other);
        else if (s.smem == GridShape::yes) EXPECT_EQ(path, "row-smem");
        else EXPECT_TRUE(path == "row-smem" || path == other) << path;
        for (const auto& o : llm_options) {
          SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name + " rows=" +
                                    std::to_string(s.rows),
                                s.vocab, k, o));
          const auto rows = rxm::Rows::uniform(s.rows, s.vocab);
          expect_equal(rxm::topk_batched(gpu(), std::span<const T>(v), rows, k, o),
                       rxm::topk_batched(cpu(), std::span<const T>(v), rows, k, o));
        }
      }
    }
  }
}

template <class T> T from_float(float x) {
  if constexpr (std::is_same_v<T, rxm::half_t>) return rxm::half_from_float(x);
  else if constexpr (std::is_same_v<T, rxm::bfloat16_t>) return rxm::bfloat16_from_float(x);
  else return T(x);
}

// Logits with the cases serving meets: a masked row (-inf everywhere), a row with fewer than k
// finite values, a row of NaN, a row of one repeated value, and ordinary rows.
template <class T> std::vector<T> masked_logits(std::size_t rows, std::size_t vocab, std::uint64_t seed) {
  rxm::GenerateOptions o;
  o.distribution = rxm::Distribution::normal, o.seed = seed;
  std::vector<T> v(rows * vocab);
  rxm::generate(std::span<T>(v), o);
  const T minus_inf = from_float<T>(-std::numeric_limits<float>::infinity());
  const T nan = from_float<T>(std::numeric_limits<float>::quiet_NaN());
  for (std::size_t r = 0; r < rows; ++r) {
    T* row = v.data() + r * vocab;
    switch (r % 5) {
      case 0: std::fill(row, row + vocab, minus_inf); break;
      case 1: for (std::size_t i = 0; i < vocab; ++i) if (i % 997 != 3) row[i] = minus_inf; break;
      case 2: std::fill(row, row + vocab, nan); break;
      case 3: std::fill(row, row + vocab, from_float<T>(1.5f)); break;
      default: break;
    }
  }
  return v;
}

// Rows whose guessed seed (TopkTuning::row_stream_estimate) must fail: in the first tile each of
// the 256 threads of a row-stream block holds one value far above the rest (position
// t x 16 / sizeof(T), the first of its first vector), so every thread's maximum, and with them the
// guess, is one of those 256 spikes, and at most 256 keys reach it: fewer than any k > 256, and the
// block streams its segment again (largest = true; segments of at least max(8 k, 8192) values,
// guesses_seed).
template <class T> std::vector<T> spiked_rows(std::size_t rows, std::size_t vocab, std::uint64_t seed) {
  std::vector<T> v(rows * vocab);
  rxm::GenerateOptions o;
  o.distribution = rxm::Distribution::uniform, o.seed = seed, o.lo = 0, o.hi = 1;
  rxm::generate(std::span<T>(v), o);
  constexpr std::size_t per_vector = 16 / sizeof(T);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t t = 0; t < 256; ++t) v[r * vocab + t * per_vector] = from_float<T>(100.0f + float((t * 37 + r) % 256));
  return v;
}

}  // namespace

TEST(GpuTopkLlm, GridF32) { RXM_REQUIRE_GPU(); check_grid<float>(); }
TEST(GpuTopkLlm, GridF16) { RXM_REQUIRE_GPU(); check_grid<rxm::half_t>(); }
TEST(GpuTopkLlm, GridBF16) { RXM_REQUIRE_GPU(); check_grid<rxm::bfloat16_t>(); }

TEST(GpuTopkLlm, IntegerKeys) {
  RXM_REQUIRE_GPU();
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "few-distinct") continue;
    auto check = [&](auto tag) {
      using T = decltype(tag);
      const auto v = rxm::testing::make_topk_input<T>(input, 7 * 32001);
      for (std::size_t k : {std::size_t(1), std::size_t(50), std::size_t(1024)})
        for (const auto& o : llm_options) {
          SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name, 32001, k, o));
          expect_equal(rxm::topk_batched(gpu(), std::span<const T>(v), rxm::Rows::uniform(7, 32001), k, o),
                       rxm::topk_batched(cpu(), std::span<const T>(v), rxm::Rows::uniform(7, 32001), k, o));
        }
    };
    check(std::int32_t{}), check(std::uint32_t{}), check(std::int16_t{}), check(std::uint16_t{});
  }
}

TEST(GpuTopkLlm, MaskedRowsNanTiesAndFewFiniteValues) {
  RXM_REQUIRE_GPU();
  auto check = [](auto tag) {
    using T = decltype(tag);
    for (std::size_t vocab : {std::size_t(1000), std::size_t(32000), std::size_t(128256)}) {
      const auto v = masked_logits<T>(10, vocab, test_seed());
      for (std::size_t k : {std::size_t(1), std::size_t(50), std::size_t(1024)}) {
        if (k > vocab) continue;
        for (const auto& o : llm_options) {
          SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " masked", vocab, k, o));
          const auto rows = rxm::Rows::uniform(10, vocab);
          expect_equal(rxm::topk_batched(gpu(), std::span<const T>(v), rows, k, o),
                       rxm::topk_batched(cpu(), std::span<const T>(v), rows, k, o));
        }
      }
    }
  };
  check(float{}), check(rxm::bfloat16_t{}), check(rxm::half_t{});
}

// Rows from offsets: odd starts (no row 16-byte aligned after the first), rows shorter than k
// (padded with index -1), an empty row, and a long row that takes several segments.
TEST(GpuTopkLlm, UnalignedAndShortRowsFromOffsets) {
  RXM_REQUIRE_GPU();
  const std::vector<std::uint64_t> offsets = {0, 50257, 50257 + 7, 50257 + 7, 100521, 100521 + 1023, 100521 + 1023 + 200003};
  const auto v = rxm::testing::make_topk_input<rxm::bfloat16_t>(rxm::testing::topk_input(test_seed(), "normal"),
                                                               offsets.back());
  for (std::size_t k : {std::size_t(1), std::size_t(50), std::size_t(1024)})
    for (const auto& o : llm_options) {
      SCOPED_TRACE(describe("bf16 offsets", offsets.back(), k, o));
      const auto rows = rxm::Rows::from_offsets(std::span<const std::uint64_t>(offsets));
      expect_equal(rxm::topk_batched(gpu(), std::span<const rxm::bfloat16_t>(v), rows, k, o),
                   rxm::topk_batched(cpu(), std::span<const rxm::bfloat16_t>(v), rows, k, o));
    }
}

namespace {

// The paths a padded batch can take, each by the tuning that selects it (topk_path_name says which).
struct PathTuning {
  const char* name;
  rxm::device::TopkTuning tuning;
};
std::vector<PathTuning> padded_row_paths() {
  std::vector<PathTuning> paths(8);
  paths[7].name = "row-warp";
  paths[7].tuning.row_warp = 1;
  paths[0].name = "automatic (row-stream)";
  paths[5].name = "row-cluster";
  paths[5].tuning.row_cluster = 1;
  paths[6].name = "row-smem";
  paths[6].tuning.row_smem = 1;
  paths[1].name = "delegates";
  paths[1].tuning.row_stream = 0;
  paths[2].name = "raw radix select";
  paths[2].tuning.row_stream = 0, paths[2].tuning.delegate_log2 = 0;
  paths[3].name = "block select";
  paths[3].tuning.row_stream = 0, paths[3].tuning.block_select = 1;
  paths[4].name = "multi-block passes";
  paths[4].tuning.row_stream = 0, paths[4].tuning.block_select = 0, paths[4].tuning.delegate_block_select = 0;
  return paths;
}

}  // namespace

// Padded rows (TopkProblem::row_stride), caller indices, 32- and 64-bit indices, through the
// device-level entry on every path; the reference is the CPU on the rows without their padding.
TEST(GpuTopkLlm, PaddedRowsCallerIndicesAndIndexWidths) {
  RXM_REQUIRE_GPU();
  const std::size_t rows = 6, vocab = 50257, stride = 50304, k = 50;
  const auto padded = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "normal"), rows * stride);
  std::vector<float> packed;
  std::vector<std::int32_t> caller(rows * stride), packed_caller;
  for (std::size_t i = 0; i < caller.size(); ++i) caller[i] = std::int32_t(i * 3 + 1);
  for (std::size_t r = 0; r < rows; ++r) {
    packed.insert(packed.end(), padded.begin() + std::ptrdiff_t(r * stride), padded.begin() + std::ptrdiff_t(r * stride + vocab));
    packed_caller.insert(packed_caller.end(), caller.begin() + std::ptrdiff_t(r * stride),
                         caller.begin() + std::ptrdiff_t(r * stride + vocab));
  }
  rxm::DeviceArray<float> d(0, padded.size()), out_v(0, rows * k);
  rxm::DeviceArray<std::int32_t> d_caller(0, caller.size());
  rxm::DeviceArray<std::int64_t> out_i(0, rows * k);
  RXM_CUDA_CHECK(cudaMemcpy(d.data(), padded.data(), padded.size() * sizeof(float), cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemcpy(d_caller.data(), caller.data(), caller.size() * 4, cudaMemcpyHostToDevice));
  for (const PathTuning& path : padded_row_paths())
  for (const auto& o : llm_options)
    for (int index_bytes : {4, 8})
      for (bool with_caller : {false, true}) {
        SCOPED_TRACE(describe(std::string("f32 padded, ") + path.name + ", index_bytes=" + std::to_string(index_bytes) +
                                  " caller=" + std::to_string(with_caller),
                              vocab, k, o));
        if (with_caller && index_bytes == 8) continue;  // caller indices are of the output's width
        rxm::device::TopkProblem p;
        p.type = rxm::KeyType::f32, p.values = d.data(), p.total = padded.size(), p.rows = rows;
        p.row_length = vocab, p.row_stride = stride, p.max_row_length = vocab, p.k = k, p.options = o;
        p.index_bytes = std::size_t(index_bytes);
        p.input_indices = with_caller ? d_caller.data() : nullptr;
        p.out_values = out_v.data(), p.out_indices = out_i.data();
        p.tuning = path.tuning;
        RXM_CUDA_CHECK(cudaMemset(out_v.data(), 0xA5, rows * k * sizeof(float)));
        RXM_CUDA_CHECK(cudaMemset(out_i.data(), 0xA5, rows * k * 8));
        const std::size_t bytes = rxm::device::topk_temp_bytes(p, 0);
        rxm::DeviceBuffer temp(0, bytes);
        rxm::device::topk(temp.data(), bytes, p, nullptr);
        RXM_CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> got_v(rows * k);
        RXM_CUDA_CHECK(cudaMemcpy(got_v.data(), out_v.data(), got_v.size() * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<std::int64_t> got_i(rows * k);
        if (index_bytes == 8) {
          RXM_CUDA_CHECK(cudaMemcpy(got_i.data(), out_i.data(), rows * k * 8, cudaMemcpyDeviceToHost));
        } else {
          std::vector<std::int32_t> narrow(rows * k);
          RXM_CUDA_CHECK(cudaMemcpy(narrow.data(), out_i.data(), rows * k * 4, cudaMemcpyDeviceToHost));
          got_i.assign(narrow.begin(), narrow.end());
        }
        const auto want = rxm::topk_batched<float, std::int64_t>(cpu(), std::span<const float>(packed),
                                                                 rxm::Rows::uniform(rows, vocab), k, o);
        for (std::size_t i = 0; i < rows * k; ++i) {
          const std::int64_t within_row = want.indices[i];
          const std::int64_t expected = with_caller ? packed_caller[(i / k) * vocab + std::size_t(within_row)] : within_row;
          ASSERT_EQ(got_i[i], expected) << "place " << i;
          ASSERT_EQ(rxm::to_bits(got_v[i]), rxm::to_bits(want.values[i])) << "place " << i;
        }
      }
}

// Bad padded rows: a stride shorter than the row, rows that run past the values, k above the
// row length, and a stride given with row offsets (which place the rows themselves).
TEST(GpuTopkLlm, PaddedRowsBadInput) {
  RXM_REQUIRE_GPU();
  rxm::DeviceArray<float> d(0, 1000), out_v(0, 64);
  rxm::DeviceArray<std::int64_t> out_i(0, 64);
  rxm::DeviceArray<std::uint64_t> offsets(0, 3);
  auto problem = [&] {
    rxm::device::TopkProblem p;
    p.type = rxm::KeyType::f32, p.values = d.data(), p.total = 1000, p.rows = 3, p.row_length = 300;
    p.row_stride = 320, p.max_row_length = 300, p.k = 8, p.out_values = out_v.data(), p.out_indices = out_i.data();
    return p;
  };
  auto expect_error = [](const rxm::device::TopkProblem& p, const std::string& names) {
    try {
      (void)rxm::device::topk_temp_bytes(p, 0);
      ADD_FAILURE() << "no error for " << names;
    } catch (const rxm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  EXPECT_GT(rxm::device::topk_temp_bytes(problem(), 0), 0u);  // the good problem
  auto p = problem();
  p.row_stride = 299;
  expect_error(p, "row_stride 299 is shorter than row_length 300");
  p = problem();
  p.rows = 4;  // 3 * 320 + 300 = 1260 > 1000
  expect_error(p, "span 1260 values, total is 1000");
  p = problem();
  p.k = 301;
  expect_error(p, "k = 301 is larger than the row length 300");
  p = problem();
  p.row_offsets = offsets.data();
  expect_error(p, "row_stride 320 with row_offsets");
}

// Long rows forced onto the path (many segments and a merge) and forced off, both exact.
TEST(GpuTopkLlm, ForcedOnLongRowsAndOff) {
  RXM_REQUIRE_GPU();
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), (1 << 21) + 3);
  for (std::size_t k : {std::size_t(1), std::size_t(100), std::size_t(1024)})
    for (int on : {0, 1})
      for (const auto& o : llm_options) {
        SCOPED_TRACE(describe("f32 row_stream=" + std::to_string(on), v.size(), k, o));
        rxm::testing::DeviceRun run;
        run.tuning.row_stream = on;
        expect_equal(rxm::testing::device_topk<float>(v, 1, {}, k, o, run),
                     rxm::topk_batched(cpu(), std::span<const float>(v), rxm::Rows::uniform(1, v.size()), k, o));
      }
}

namespace {

// A variant of the row-stream family forced by `force` on every shape given: key types of 16 and
// 32 bits, the adversarial inputs and masked logits, k from 2 to 1024, a forced slice of 1000
// values (the cluster variant spreads short rows over many blocks), unaligned and short rows from
// offsets with caller indices of both widths.
// `ks`: the k the variant takes.
const std::size_t k_up_to_1024[] = {2, 50, 129, 300, 1000, 1024};

// `v` (rows of `vocab` values) on the device with `tuning`, which must take `path`, against the
// CPU backend: every index and value.
template <class T>
void expect_path_matches_cpu(const std::vector<T>& v, std::size_t rows, std::size_t vocab, std::size_t k,
                             const rxm::TopkOptions& o, const rxm::device::TopkTuning& tuning, const char* path) {
  rxm::testing::DeviceRun run;
  run.tuning = tuning;
  ASSERT_EQ(path_of(rxm::key_type_v<T>, rows, vocab, k, run.tuning), path);
  expect_equal(rxm::testing::device_topk<T>(v, rows, {}, k, o, run),
               rxm::topk_batched(cpu(), std::span<const T>(v), rxm::Rows::uniform(rows, vocab), k, o));
}

void check_forced_variant(const char* path, void (*force)(rxm::device::TopkTuning&), std::span<const GridShape> shapes,
                          std::size_t masked_vocab_max, std::size_t offsets_row,
                          std::span<const std::size_t> ks = k_up_to_1024, bool sixteen_bit_only = false) {
  auto check = [&](auto tag, const std::string& name, const auto& v, const GridShape& s, int slice) {
    using T = decltype(tag);
    for (std::size_t k : ks) {
      if (k > s.vocab) continue;
      for (const auto& o : llm_options) {
        SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + name + " rows=" +
                                  std::to_string(s.rows) + " slice=" + std::to_string(slice),
                              s.vocab, k, o));
        rxm::device::TopkTuning tuning;
        force(tuning);
        if (slice) tuning.row_stream_segment = slice;
        expect_path_matches_cpu(v, s.rows, s.vocab, k, o, tuning, path);
      }
    }
  };
  auto every_input = [&](auto tag) {
    using T = decltype(tag);
    for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
      if (input.name == "U[0.6,0.7]" || input.name == "reverse" || input.name == "zipf(1.1)") continue;
      for (const GridShape& s : shapes)
        check(tag, input.name, rxm::testing::make_topk_input<T>(input, s.rows * s.vocab), s, 0);
    }
    if constexpr (!std::is_integral_v<T>)
      for (std::size_t vocab : {std::size_t(1000), masked_vocab_max})
        check(tag, "masked", masked_logits<T>(10, vocab, test_seed()), GridShape{10, vocab}, 0);
    check(tag, "normal", rxm::testing::make_topk_input<T>(rxm::testing::topk_input(test_seed(), "normal"), 3 * 32000),
          GridShape{3, 32000}, 1000);
  };
  every_input(rxm::bfloat16_t{}), every_input(rxm::half_t{}), every_input(std::uint16_t{});
  if (!sixteen_bit_only) every_input(float{}), every_input(std::int32_t{});

  const std::vector<std::uint64_t> offsets = {0, 50257, 50257 + 7, 50257 + 7, 100521, 100521 + 1023, 100521 + 1023 + offsets_row};
  auto v = rxm::testing::make_topk_input<rxm::bfloat16_t>(rxm::testing::topk_input(test_seed(), "normal"), offsets.back() + 1);
  std::vector<std::int32_t> caller32(offsets.back());
  std::vector<std::int64_t> caller64(offsets.back());
  for (std::size_t i = 0; i < caller32.size(); ++i) caller32[i] = std::int32_t(3 * i + 1), caller64[i] = 3 * std::int64_t(i) + 1;
  const std::vector<rxm::bfloat16_t> packed(v.begin() + 1, v.end());
  for (std::size_t k : {std::size_t(50), std::size_t(1024)})
    for (const auto& o : llm_options) {
      if (k > ks.back()) continue;
      SCOPED_TRACE(describe(std::string("bf16 offsets, one value in (unaligned), ") + path, offsets.back(), k, o));
      rxm::testing::DeviceRun run;
      force(run.tuning), run.skip = 1;
      const auto rows = rxm::Rows::from_offsets(std::span<const std::uint64_t>(offsets));
      auto want32 = rxm::topk_batched<rxm::bfloat16_t, std::int32_t>(cpu(), std::span<const rxm::bfloat16_t>(packed), rows, k, o);
      auto want64 = rxm::topk_batched<rxm::bfloat16_t, std::int64_t>(cpu(), std::span<const rxm::bfloat16_t>(packed), rows, k, o);
      expect_equal(rxm::testing::device_topk<rxm::bfloat16_t, std::int64_t>(v, offsets.size() - 1, offsets, k, o, run), want64);
      for (std::size_t i = 0; i < want32.indices.size(); ++i) {
        const std::size_t r = i / k;
        if (want32.indices[i] >= 0) want32.indices[i] = caller32[offsets[r] + std::size_t(want32.indices[i])];
        if (want64.indices[i] >= 0) want64.indices[i] = caller64[offsets[r] + std::size_t(want64.indices[i])];
      }
      expect_equal(rxm::testing::device_topk<rxm::bfloat16_t, std::int32_t>(v, offsets.size() - 1, offsets, k, o, run, caller32), want32);
      expect_equal(rxm::testing::device_topk<rxm::bfloat16_t, std::int64_t>(v, offsets.size() - 1, offsets, k, o, run, caller64), want64);
    }
}

}  // namespace

namespace {

// Normal bf16 logits, rows x vocab, through whatever path the automatic rules pick, against the
// CPU backend for each k and every LLM option.
void expect_automatic_bf16_matches_cpu(std::size_t rows, std::size_t vocab, std::initializer_list<std::size_t> ks) {
  const auto v = rxm::testing::make_topk_input<rxm::bfloat16_t>(rxm::testing::topk_input(test_seed(), "normal"), rows * vocab);
  const auto r = rxm::Rows::uniform(rows, vocab);
  for (std::size_t k : ks)
    for (const auto& o : llm_options) {
      SCOPED_TRACE(describe("bf16 automatic rows=" + std::to_string(rows), vocab, k, o));
      expect_equal(rxm::topk_batched(gpu(), std::span<const rxm::bfloat16_t>(v), r, k, o),
                   rxm::topk_batched(cpu(), std::span<const rxm::bfloat16_t>(v), r, k, o));
    }
}

}  // namespace

// The row-cluster variant (TopkTuning::row_cluster = 1) on rows of 1000 to 262144 values, one
// block per row up to 16: gathered into one block where the lists fit (row_cluster_gather = 1),
// then with the cluster's passes and merge alone (row_cluster_gather = 0).
TEST(GpuTopkLlm, RowClusterPath) {
  RXM_REQUIRE_GPU();
  const GridShape shapes[] = {{1, 1000}, {3, 32000}, {2, 128256}, {1, 262144}, {4, 4097}};
  check_forced_variant("row-cluster",
                       [](rxm::device::TopkTuning& t) { t.row_cluster = 1, t.row_cluster_gather = 1; }, shapes,
                       32000, 200003);
  check_forced_variant("row-cluster",
                       [](rxm::device::TopkTuning& t) { t.row_cluster = 1, t.row_cluster_gather = 0; }, shapes,
                       32000, 200003);
}

// More than 16 rows with 128 < k <= 256 take one wave of clusters however long their slices (64 x
// 128256: 2 blocks of 64128 values); k = 1024 keeps the row-stream blocks there.
TEST(GpuTopkLlm, RowClusterAutomaticOnLongSlices) {
  RXM_REQUIRE_GPU();
  EXPECT_EQ(path_of(rxm::KeyType::bf16, 64, 128256, 256), "row-cluster");
  EXPECT_EQ(path_of(rxm::KeyType::f32, 32, 128256, 256), "row-cluster");
  EXPECT_EQ(path_of(rxm::KeyType::bf16, 32, 128256, 1024), "row-stream");
  expect_automatic_bf16_matches_cpu(64, 128256, {256});
}

// The row-stream blocks' seed guessed for every k (TopkTuning::row_stream_estimate = 1) and never
// guessed (0): the adversarial inputs, masked logits, k from 2 to 1024, one segment and several;
// then rows on which the guess of the largest must fail (spiked_rows), so that the blocks stream
// them again.
TEST(GpuTopkLlm, RowStreamSeedGuessedAndNot) {
  RXM_REQUIRE_GPU();
  const GridShape shapes[] = {{1, 1000}, {3, 32000}, {2, 128256}, {4, 4097}, {1, 262144}};
  check_forced_variant("row-stream", [](rxm::device::TopkTuning& t) {
    t.row_cluster = 0, t.row_smem = 0, t.row_warp = 0, t.row_stream_estimate = 1;
  }, shapes, 128256, 200003);
  check_forced_variant("row-stream", [](rxm::device::TopkTuning& t) {
    t.row_cluster = 0, t.row_smem = 0, t.row_warp = 0, t.row_stream_estimate = 0;
  }, shapes, 128256, 200003);
  // Whole rows as one segment (row_stream_segment past every row): k up to 1024 then guesses over
  // at least 64 k values, where the guessed pass ranks 16-bit vectors by the whole warp
  // (by_warp_pays); the planner's own segments at these row counts are shorter.
  const GridShape long_rows[] = {{2, 128256}, {1, 262144}, {3, 65536}};
  check_forced_variant("row-stream", [](rxm::device::TopkTuning& t) {
    t.row_cluster = 0, t.row_smem = 0, t.row_warp = 0, t.row_stream_estimate = 1, t.row_stream_segment = 262144;
  }, long_rows, 128256, 200003);
  auto spiked = [](auto tag, std::size_t vocab, int segment) {
    using T = decltype(tag);
    const std::size_t rows = 3;
    const auto v = spiked_rows<T>(rows, vocab, test_seed());
    for (std::size_t k : {std::size_t(512), std::size_t(1024)})
      for (const auto& o : llm_options) {
        SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " spiked rows", vocab, k, o));
        rxm::device::TopkTuning tuning;
        tuning.row_cluster = 0, tuning.row_smem = 0, tuning.row_warp = 0, tuning.row_stream_segment = segment;
        expect_path_matches_cpu(v, rows, vocab, k, o, tuning, "row-stream");
      }
  };
  // 16384 values: one segment a row at k = 1024 (at least 32 k values each); 512: two segments of
  // at least 16 k, the first fails. 131072 in one segment: the failed guess was a warp-ranked pass
  // (by_warp_pays).
  for (auto [vocab, segment] : {std::pair<std::size_t, int>{16384, 0}, {131072, 262144}})
    spiked(rxm::bfloat16_t{}, vocab, segment), spiked(float{}, vocab, segment);
}

// The row-smem variant (TopkTuning::row_smem = 1) on rows that fit a block's shared memory: 32-bit
// rows of up to 50257 values, many rows, rows shorter than k.
TEST(GpuTopkLlm, RowSmemPath) {
  RXM_REQUIRE_GPU();
  const GridShape shapes[] = {{1, 1000}, {3, 32000}, {2, 50257}, {4, 4097}, {300, 2000}, {9, 97}};
  check_forced_variant("row-smem", [](rxm::device::TopkTuning& t) { t.row_smem = 1; }, shapes, 50257, 20003);
}

// The row-compact variant (TopkTuning::row_compact = 1) on 16-bit rows of up to 262144 values (one
// to four sample vectors a thread, survivors' positions from their warp's first vector):
// every input (sorted, all-equal and few-distinct rows defeat its sampled bound and take the exact
// fallback), masked rows, rows shorter than k and than the sample, unaligned rows by offsets with
// caller indices of 32 and 64 bits.
TEST(GpuTopkLlm, RowCompactPath) {
  RXM_REQUIRE_GPU();
  const GridShape shapes[] = {{1, 1000},  {3, 32000}, {2, 65536},  {4, 4097},   {300, 2000},
                              {9, 97},    {5, 50264}, {2, 128256}, {1, 262144}, {2, 65537}};
  check_forced_variant("row-compact", [](rxm::device::TopkTuning& t) { t.row_compact = 1; }, shapes, 262144, 200003,
                       k_up_to_1024, true);
  rxm::device::TopkTuning compact;
  compact.row_compact = 1;
  EXPECT_EQ(path_of(rxm::KeyType::bf16, 2, 262144, 1024, compact), "row-compact");
  EXPECT_NE(path_of(rxm::KeyType::bf16, 2, 262145, 1024, compact), "row-compact");
}

// 16-bit floating-point rows take it by the rule of takes_row_compact; other row counts, smaller
// k, longer or shorter rows, 32-bit and integer keys and a forced sibling keep the other paths.
TEST(GpuTopkLlm, RowCompactAutomatic) {
  RXM_REQUIRE_GPU();
  using rxm::KeyType;
  const std::size_t sms = multiprocessors();
  for (std::size_t k : {std::size_t(513), std::size_t(1024)}) {
    EXPECT_EQ(path_of(KeyType::bf16, 4096, 32000, k), "row-compact") << k;
    EXPECT_EQ(path_of(KeyType::f16, 64, 65536, k), "row-compact") << k;
    EXPECT_EQ(path_of(KeyType::bf16, 100000, 8192, k), "row-compact") << k;
    EXPECT_EQ(path_of(KeyType::bf16, 64, 131072, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 4096, 131073, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 4096, 8191, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 63, 32000, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::f32, 4096, 32000, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::u16, 4096, 32000, k), "row-compact") << k;
    rxm::device::TopkTuning smem;
    smem.row_smem = 1;
    EXPECT_EQ(path_of(KeyType::bf16, 4096, 32000, k, smem), "row-smem") << k;
  }
  EXPECT_EQ(path_of(KeyType::bf16, 256, 32000, 512), "row-compact");
  EXPECT_EQ(path_of(KeyType::f16, 4096, 65536, 512), "row-compact");
  EXPECT_NE(path_of(KeyType::bf16, 128, 32000, 512), "row-compact");
  EXPECT_NE(path_of(KeyType::bf16, 4096, 65537, 512), "row-compact");
  for (std::size_t k : {std::size_t(50), std::size_t(129), std::size_t(511)}) {
    EXPECT_EQ(path_of(KeyType::bf16, sms + 1, 32000, k), "row-compact") << k;
    EXPECT_EQ(path_of(KeyType::f16, 3 * sms, 65536, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, sms, 32000, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 3 * sms + 1, 32000, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 2 * sms, 65537, k), "row-compact") << k;
    EXPECT_NE(path_of(KeyType::bf16, 4096, 32000, k), "row-compact") << k;
  }
  EXPECT_NE(path_of(KeyType::bf16, 2 * sms, 32000, 49), "row-compact");
  expect_automatic_bf16_matches_cpu(2 * sms, 8192, {50, 512, 1024});
  expect_automatic_bf16_matches_cpu(64, 131072, {1024});
}

// StreamRank::pair, the row-compact stream's rank of two packed 16-bit values, against
// rank_of_bits one value at a time: every bit pattern of every 16-bit type, every option.
template <class T> __global__ void rank_pairs(rxm::TopkOptions o, unsigned* mismatches) {
  const unsigned raw = blockIdx.x * blockDim.x + threadIdx.x, other = (raw * 40503u + 7u) & 0xffffu;
  const rxm::detail::topk_gpu::StreamRank<T> rank(o);
  const unsigned pair = rank.pair(raw | (other << 16));
  if ((pair & 0xffffu) != rank(std::uint16_t(raw)) || (pair >> 16) != rank(std::uint16_t(other))) atomicAdd(mismatches, 1u);
}

TEST(GpuTopkLlm, PackedRanksMatchOneAtATime) {
  RXM_REQUIRE_GPU();
  rxm::DeviceArray<unsigned> mismatches(0, 1);
  auto check = [&](auto tag) {
    using T = decltype(tag);
    for (const rxm::TopkOptions o : {rxm::TopkOptions{.largest = true}, rxm::TopkOptions{.largest = true, .include_nan = true},
                                     rxm::TopkOptions{.largest = false}, rxm::TopkOptions{.largest = false, .include_nan = true}}) {
      RXM_CUDA_CHECK(cudaMemset(mismatches.data(), 0, 4));
      rank_pairs<T><<<256, 256>>>(o, mismatches.data());
      RXM_CUDA_CHECK(cudaGetLastError());
      unsigned got = 0;
      RXM_CUDA_CHECK(cudaMemcpy(&got, mismatches.data(), 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, 0u) << rxm::name_of(rxm::key_type_v<T>) << " largest=" << o.largest << " include_nan=" << o.include_nan;
    }
  };
  check(rxm::bfloat16_t{}), check(rxm::half_t{}), check(std::uint16_t{}), check(std::int16_t{});
}

// Many 16-bit rows over more than one wave of blocks take a block per row from shared memory only
// from k > 768 (where the row-compact variant is off: it takes them first); below, the row-stream
// blocks (k <= 128: the row-warp blocks).
TEST(GpuTopkLlm, RowSmemAutomatic) {
  RXM_REQUIRE_GPU();
  using rxm::KeyType;
  rxm::device::TopkTuning no_compact;
  no_compact.row_compact = 0;
  for (std::size_t k : {std::size_t(129), std::size_t(256), std::size_t(384), std::size_t(768)}) {
    EXPECT_EQ(path_of(KeyType::bf16, 4096, 32000, k, no_compact), "row-stream") << k;
    EXPECT_EQ(path_of(KeyType::f32, 4096, 32000, k), "row-stream") << k;
  }
  EXPECT_EQ(path_of(KeyType::bf16, 4096, 32000, 128), "row-warp");
  EXPECT_EQ(path_of(KeyType::bf16, 4096, 32000, 769, no_compact), "row-smem");
  EXPECT_EQ(path_of(KeyType::f16, 4096, 16384, 1024, no_compact), "row-smem");
  EXPECT_EQ(path_of(KeyType::f32, 4096, 32000, 1024), "row-stream");
  expect_automatic_bf16_matches_cpu(1024, 20000, {192, 384});
}

// The row-warp variant (TopkTuning::row_warp = 1): a warp per row, k up to 128 (queues of 32, 64
// and 128 keys, each at its edges), rows shorter than k, many rows; 16-bit values in rows of up to
// 65535 (the last with 32-bit queue keys) and from 65536 (64-bit).
TEST(GpuTopkLlm, RowWarpPath) {
  RXM_REQUIRE_GPU();
  const GridShape shapes[] = {{1, 1000}, {3, 32000}, {2, 50257}, {4, 4097}, {300, 2000}, {9, 97}, {17, 128256}, {2, 65535}, {2, 65536}};
  const std::size_t ks[] = {2, 31, 32, 33, 50, 64, 65, 100, 128};
  check_forced_variant("row-warp", [](rxm::device::TopkTuning& t) { t.row_warp = 1; }, shapes, 32000, 20003, ks);
}

// Enough rows take the row-warp variant by themselves (rows of at most 256 KiB from 4 a
// multiprocessor), k <= 128 of floating-point keys; k = 1 stays the argmax and k > 128 another
// variant.
TEST(GpuTopkLlm, RowWarpAutomatic) {
  RXM_REQUIRE_GPU();
  const std::size_t rows = 2048, vocab = 1000;
  for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(50), std::size_t(128), std::size_t(129)}) {
    const bool warp = k >= 2 && k <= 128;
    EXPECT_EQ(path_of(rxm::KeyType::f32, rows, vocab, k) == "row-warp", warp) << k;
    EXPECT_EQ(path_of(rxm::KeyType::bf16, rows, vocab, k) == "row-warp", warp) << k;
    EXPECT_NE(path_of(rxm::KeyType::i32, rows, vocab, k), "row-warp") << k;
  }
  EXPECT_EQ(path_of(rxm::KeyType::bf16, 4096, 256000, 50), "row-warp");  // 512 KB rows, 8 an SM
  EXPECT_NE(path_of(rxm::KeyType::f32, 4096, 262144, 50), "row-warp");   // 1 MiB rows: the blocks split them
  EXPECT_NE(path_of(rxm::KeyType::bf16, 64, 32000, 50), "row-warp");     // too few rows
  expect_automatic_bf16_matches_cpu(rows, vocab, {50, 128});
}

namespace {

// Replay r's logit i: a multiple of 1/16 in [-8, 8) (exact in bf16: ties are common), -inf at
// every 61st place, and row 1 all -inf but 10 places (fewer finite values than k).
__host__ __device__ inline float replay_logit(std::uint64_t replay, std::uint64_t row, std::uint64_t i, std::uint64_t vocab) {
  std::uint64_t z = (replay * 0x9E3779B97F4A7C15ull) ^ (row * vocab + i) * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31, z *= 0x94D049BB133111EBull, z ^= z >> 29;
  if ((i + replay) % 61 == 0 || (row == 1 && i % (vocab / 10) != 0)) return -INFINITY;
  return float(std::int64_t(z % 256) - 128) / 16.0f;
}

__global__ void fill_replay(__nv_bfloat16* out, const std::uint64_t* replay, std::uint64_t rows, std::uint64_t vocab) {
  const std::uint64_t n = rows * vocab;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * std::uint64_t(blockDim.x))
    out[i] = __float2bfloat16_rn(replay_logit(*replay, i / vocab, i % vocab, vocab));
}

}  // namespace

// The path each replay takes is named (its tuning chooses it, or the automatic rule).
static void replay_in_graph(std::size_t k, const char* path, const rxm::device::TopkTuning& tuning = {}) {
  const std::size_t rows = 4, vocab = 32000, replays = 1000;
  rxm::DeviceArray<rxm::bfloat16_t> logits(0, rows * vocab), out_v(0, rows * k);
  rxm::DeviceArray<std::int32_t> out_i(0, rows * k);
  rxm::DeviceArray<std::uint64_t> replay_id(0, 1);
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::bf16, p.values = logits.data(), p.total = rows * vocab, p.rows = rows;
  p.row_length = vocab, p.max_row_length = vocab, p.k = k, p.options = {.largest = true, .sorted = true};
  p.index_bytes = 4, p.out_values = out_v.data(), p.out_indices = out_i.data();
  p.tuning = tuning;
  ASSERT_STREQ(rxm::device::topk_path_name(p, 0), path);
  const std::size_t bytes = rxm::device::topk_temp_bytes(p, 0);
  rxm::DeviceBuffer temp(0, bytes);
  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Capture: the logits' producer, then the top-k (no allocation, no synchronization inside).
  const rxm::detail::CapturedGraph graph(stream, [&] {
    fill_replay<<<256, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(logits.data()), replay_id.data(), rows, vocab);
    rxm::device::topk(temp.data(), bytes, p, stream);
  });
  std::vector<rxm::bfloat16_t> host(rows * vocab), got_v(rows * k);
  std::vector<std::int32_t> got_i(rows * k);
  for (std::uint64_t replay = 0; replay < replays; ++replay) {
    RXM_CUDA_CHECK(cudaMemcpyAsync(replay_id.data(), &replay, sizeof replay, cudaMemcpyHostToDevice, stream));
    RXM_CUDA_CHECK(cudaMemsetAsync(out_i.data(), 0xA5, rows * k * 4, stream));
    graph.launch();
    RXM_CUDA_CHECK(cudaMemcpyAsync(got_v.data(), out_v.data(), rows * k * 2, cudaMemcpyDeviceToHost, stream));
    RXM_CUDA_CHECK(cudaMemcpyAsync(got_i.data(), out_i.data(), rows * k * 4, cudaMemcpyDeviceToHost, stream));
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < host.size(); ++i) {
      const float x = replay_logit(replay, i / vocab, i % vocab, vocab);
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      host[i] = rxm::from_bits<rxm::bfloat16_t>(std::uint16_t(bits >> 16));  // exact: 8 significant bits at most
    }
    const auto want = rxm::topk_batched<rxm::bfloat16_t, std::int32_t>(
        cpu(), std::span<const rxm::bfloat16_t>(host), rxm::Rows::uniform(rows, vocab), k, p.options);
    for (std::size_t i = 0; i < rows * k; ++i) {
      ASSERT_EQ(got_i[i], want.indices[i]) << path << " replay " << replay << " place " << i;
      ASSERT_EQ(rxm::to_bits(got_v[i]), rxm::to_bits(want.values[i])) << "replay " << replay << " place " << i;
    }
  }
  RXM_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(GpuTopkLlm, GraphCaptureReplaysWithNewLogits) {
  RXM_REQUIRE_GPU();
  rxm::device::TopkTuning blocks, cluster, smem, warp;
  blocks.row_smem = 0, blocks.row_cluster = 0;
  warp.row_warp = 1;
  replay_in_graph(50, "row-warp", warp);
  cluster.row_smem = 0, cluster.row_cluster = 1;
  smem.row_smem = 1;
  rxm::device::TopkTuning compact;
  compact.row_compact = 1;
  replay_in_graph(1024, "row-compact", compact);
  for (std::size_t k : {std::size_t(50), std::size_t(1024)}) {
    replay_in_graph(k, "row-stream", blocks);
    replay_in_graph(k, "row-cluster", cluster);
    replay_in_graph(k, "row-smem", smem);
  }
}

// Each branch of the row-smem block once, few launches enough for compute-sanitizer racecheck
// (apart from the test below, whose racecheck takes most of a device call): 16- and 32-bit rows
// whose select runs its passes (the warps' winners then come from their bins) at k = 50 and 1024;
// rows of all-equal values (the bound is the best: no pass, the winners are the first k equals)
// and rows of exactly k values (no pass, every value wins), where the warps count their winners
// over the ranks; NaN, infinities, zeros.
TEST(GpuTopkLlm, RowSmemBranchesForSanitizers) {
  RXM_REQUIRE_GPU();
  auto check = [&](auto tag, const std::string& name, std::size_t rows, std::size_t vocab, std::size_t k) {
    using T = decltype(tag);
    const auto input = rxm::testing::topk_input(test_seed(), name);
    for (const auto& options : {llm_options[0], llm_options[2]}) {
      SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + name + " row-smem", vocab, k, options));
      rxm::device::TopkTuning tuning;
      tuning.row_smem = 1;
      expect_path_matches_cpu(rxm::testing::make_topk_input<T>(input, rows * vocab), rows, vocab, k, options, tuning,
                              "row-smem");
    }
  };
  check(rxm::bfloat16_t{}, "normal", 2, 32000, 1024);
  check(rxm::bfloat16_t{}, "normal", 2, 32000, 50);
  check(float{}, "sorted", 2, 20000, 1024);
  check(rxm::bfloat16_t{}, "all-equal", 2, 4097, 300);
  check(rxm::bfloat16_t{}, "specials", 2, 32000, 50);
  check(float{}, "normal", 3, 1000, 1000);
}

// Each branch of the row-cluster and row-stream kernels once, few launches enough for
// compute-sanitizer racecheck (the forced-variant tests above run past its time limits), one test
// a kernel so that each racecheck fits a device call. Cluster: its bound and list (slices of
// 4096+ values), its short slices, its list overflowing (ascending rows, smallest first), ties of
// the k-th rank taken by position (bf16 rows of 128256), its lists gathered into one block or
// not (gather off, and more than 16 rows). Stream: the blocks' guess held (normal and ascending
// rows) and failed (spiked_rows), its pass ranked by warps (bf16, k = 50: segments of at least 64
// k values), their merge, the bound of k <= 128 and the argmax.
template <class T>
void check_branch_for_sanitizers(void (*force)(rxm::device::TopkTuning&), const char* path, std::size_t rows,
                                 std::size_t vocab, std::size_t k) {
  for (const auto& [input, options] : {std::pair{rxm::testing::topk_input(test_seed(), "normal"), llm_options[0]},
                                       std::pair{rxm::testing::topk_input(test_seed(), "sorted"), llm_options[2]}}) {
    SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name + " " + path, vocab, k, options));
    rxm::device::TopkTuning tuning;
    force(tuning);
    expect_path_matches_cpu(rxm::testing::make_topk_input<T>(input, rows * vocab), rows, vocab, k, options, tuning, path);
  }
}

TEST(GpuTopkLlm, ClusterBranchesForSanitizers) {
  RXM_REQUIRE_GPU();
  auto cluster = [](rxm::device::TopkTuning& t) { t.row_cluster = 1, t.row_cluster_gather = 1; };
  auto cluster_passes = [](rxm::device::TopkTuning& t) { t.row_cluster = 1, t.row_cluster_gather = 0; };
  auto cluster_automatic = [](rxm::device::TopkTuning& t) { t.row_cluster = 1; };
  check_branch_for_sanitizers<rxm::bfloat16_t>(cluster, "row-cluster", 1, 128256, 1024);
  check_branch_for_sanitizers<rxm::bfloat16_t>(cluster, "row-cluster", 1, 32000, 256);
  check_branch_for_sanitizers<float>(cluster, "row-cluster", 2, 100000, 300);
  check_branch_for_sanitizers<rxm::bfloat16_t>(cluster_passes, "row-cluster", 1, 128256, 1024);
  check_branch_for_sanitizers<float>(cluster_automatic, "row-cluster", 20, 32000, 256);
}

// Each branch of the row-compact block once, few launches enough for compute-sanitizer: the sampled
// bound held (normal rows, sorted rows smallest first; unaligned rows shorter than the sample;
// rows of 128256, two sample vectors a thread),
// failed (all-equal rows: every value passes and overflows the warps' regions; the exact
// fallback); rows of exactly k values (every value wins).
TEST(GpuTopkLlm, CompactBranchesForSanitizers) {
  RXM_REQUIRE_GPU();
  auto compact = [](rxm::device::TopkTuning& t) { t.row_compact = 1; };
  check_branch_for_sanitizers<rxm::bfloat16_t>(compact, "row-compact", 2, 32000, 1024);
  check_branch_for_sanitizers<rxm::half_t>(compact, "row-compact", 3, 1999, 300);
  check_branch_for_sanitizers<rxm::bfloat16_t>(compact, "row-compact", 2, 97, 97);
  check_branch_for_sanitizers<rxm::bfloat16_t>(compact, "row-compact", 1, 128256, 1024);
  const auto equal = rxm::testing::make_topk_input<rxm::bfloat16_t>(rxm::testing::topk_input(test_seed(), "all-equal"), 2 * 20000);
  rxm::device::TopkTuning tuning;
  compact(tuning);
  expect_path_matches_cpu(equal, 2, 20000, 1000, llm_options[0], tuning, "row-compact");
}

TEST(GpuTopkLlm, StreamBranchesForSanitizers) {
  RXM_REQUIRE_GPU();
  auto blocks = [](rxm::device::TopkTuning& t) { t.row_cluster = 0, t.row_smem = 0, t.row_warp = 0; };
  check_branch_for_sanitizers<rxm::bfloat16_t>(blocks, "row-stream", 2, 128256, 1024);
  check_branch_for_sanitizers<float>(blocks, "row-stream", 1, 262144, 50);
  check_branch_for_sanitizers<rxm::bfloat16_t>(blocks, "row-stream", 2, 128256, 50);
  check_branch_for_sanitizers<rxm::bfloat16_t>(blocks, "row-stream", 3, 32000, 1);
  rxm::device::TopkTuning tuning;
  blocks(tuning);
  expect_path_matches_cpu(spiked_rows<rxm::bfloat16_t>(1, 16384, test_seed()), 1, 16384, 1024, llm_options[0], tuning,
                          "row-stream");
}
