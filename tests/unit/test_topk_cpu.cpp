// The CPU top-k (the reference for the GPU) against an independent model of the documented
// semantics: a stable sort of positions by the keys.hpp order with NaN placed by the NaN policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "common/topk_inputs.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

// True when a should come before b in a top-k (ties: the caller's stable sort keeps positions).
template <class T> bool model_better(T a, T b, const rxm::TopkOptions& o) {
  if (!o.include_nan) {
    const bool na = rxm::is_nan_key(a), nb = rxm::is_nan_key(b);
    if (na != nb) return nb;  // NaN is worse than every number, in both directions; NaNs among
                              // themselves keep their keys.hpp order (by payload)
  }
  const auto ea = rxm::encode_key(a), eb = rxm::encode_key(b);
  return o.largest ? ea > eb : ea < eb;
}

// The model's order of one row: every position, best first (a stable sort, so ties keep ascending
// positions). Sorted once per row and options, then cut to any k by model_take.
template <class T> std::vector<std::int64_t> model_order(const T* row, std::size_t length, const rxm::TopkOptions& o) {
  std::vector<std::int64_t> pos(length);
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](auto a, auto b) { return model_better(row[a], row[b], o); });
  return pos;
}

// Row r's k places (values, indices) from the row's model order, padded as documented.
template <class T>
void model_take(const T* row, std::vector<std::int64_t> order, std::size_t k, bool sorted, T* values,
                std::int64_t* indices) {
  order.resize(std::min(k, order.size()));
  if (!sorted) std::sort(order.begin(), order.end());
  for (std::size_t j = 0; j < k; ++j) {
    values[j] = j < order.size() ? row[order[j]] : rxm::from_bits<T>(0);
    indices[j] = j < order.size() ? order[j] : -1;
  }
}

// The model: rows * k values and indices, padded as documented.
template <class T>
std::pair<std::vector<T>, std::vector<std::int64_t>> model_topk(const std::vector<T>& v,
                                                                 const std::vector<std::uint64_t>& offsets,
                                                                 std::size_t k, const rxm::TopkOptions& o) {
  const std::size_t rows = offsets.size() - 1;
  std::vector<T> values(rows * k);
  std::vector<std::int64_t> indices(rows * k);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = v.data() + offsets[r];
    model_take(row, model_order(row, offsets[r + 1] - offsets[r], o), k, o.sorted, values.data() + r * k,
               indices.data() + r * k);
  }
  return {values, indices};
}

template <class T, class Index>
void expect_same(const rxm::TopkResult<T, Index>& got, const std::vector<T>& values,
                 const std::vector<std::int64_t>& indices) {
  ASSERT_EQ(got.values.size(), values.size());
  ASSERT_EQ(got.indices.size(), indices.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(std::int64_t(got.indices[i]), indices[i]) << "place " << i;
    ASSERT_EQ(rxm::to_bits(got.values[i]), rxm::to_bits(values[i])) << "place " << i;
  }
}

const rxm::TopkOptions all_options[] = {
    {.largest = true, .sorted = false}, {.largest = true, .sorted = true}, {.largest = false, .sorted = false},
    {.largest = false, .sorted = true}, {.largest = true, .sorted = true, .include_nan = true},
    {.largest = false, .sorted = false, .include_nan = true}};

template <class T> void check_single_rows(std::size_t n, bool every_input) {
  auto ctx = rxm::Context::cpu(2);
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (!every_input && input.name != "specials" && input.name != "all-equal") continue;
    const auto v = rxm::testing::make_topk_input<T>(input, n);
    for (std::size_t k : rxm::testing::topk_ks(n))
      for (const auto& o : all_options) {
        if (!every_input && (o.sorted || o.include_nan || k == 2 || k == n - 1)) continue;  // keep CI fast
        SCOPED_TRACE(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name + " n=" + std::to_string(n) +
                     " k=" + std::to_string(k) + " largest=" + std::to_string(o.largest) +
                     " sorted=" + std::to_string(o.sorted) + " nan=" + std::to_string(o.include_nan) +
                     " seed=" + std::to_string(test_seed()));
        auto [mv, mi] = model_topk(v, {0, n}, k, o);
        expect_same(rxm::topk(ctx, std::span<const T>(v), k, o), mv, mi);
      }
  }
}

template <class T> void check_every_small_size() {
  // 4099: past the one-pass filter's first buffer (k + 256 entries for a small k), so the
  // threshold rejects values and the buffer is cut again.
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(1023), std::size_t(4099)})
    check_single_rows<T>(n, true);
}

}  // namespace

TEST(TopkCpu, F32) { check_every_small_size<float>(); }
TEST(TopkCpu, F64) { check_every_small_size<double>(); }
TEST(TopkCpu, F16) { check_every_small_size<rxm::half_t>(); }
TEST(TopkCpu, BF16) { check_every_small_size<rxm::bfloat16_t>(); }
TEST(TopkCpu, I32) { check_every_small_size<std::int32_t>(); }
TEST(TopkCpu, U32) { check_every_small_size<std::uint32_t>(); }
TEST(TopkCpu, I64) { check_every_small_size<std::int64_t>(); }
TEST(TopkCpu, U64) { check_every_small_size<std::uint64_t>(); }
TEST(TopkCpu, I16U16) {
  check_single_rows<std::int16_t>(1023, true);
  check_single_rows<std::uint16_t>(1023, true);
}
TEST(TopkCpu, LargeRow) { check_single_rows<float>((1 << 20) + 3, false); }

TEST(TopkCpu, BatchWithEmptyShortAndMixedRows) {
  auto ctx = rxm::Context::cpu(2);
  const std::vector<std::uint64_t> offsets = {0, 0, 1, 1, 5, 1029, 1030, 5000, 5000, 9000};
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "specials"), 9000);
  for (std::size_t k : {1, 3, 4, 100, 4000})
    for (const auto& o : all_options) {
      SCOPED_TRACE("k=" + std::to_string(k) + " seed=" + std::to_string(test_seed()));
      auto [mv, mi] = model_topk(v, offsets, k, o);
      expect_same(rxm::topk_batched(ctx, std::span<const float>(v), rxm::Rows::from_offsets(offsets), k, o), mv, mi);
    }
}

TEST(TopkCpu, UniformBatchInt32IndicesAndInputIndices) {
  auto ctx = rxm::Context::cpu(2);
  const std::size_t rows = 7, length = 333, k = 50;
  auto v = rxm::testing::random_bit_patterns<std::int64_t>(rows * length, test_seed());
  std::vector<std::uint64_t> offsets(rows + 1);
  for (std::size_t r = 0; r <= rows; ++r) offsets[r] = r * length;
  auto [mv, mi] = model_topk(v, offsets, k, {});
  expect_same(rxm::topk_batched<std::int64_t, std::int32_t>(ctx, std::span<const std::int64_t>(v),
                                                            rxm::Rows::uniform(rows, length), k),
              mv, mi);
  std::vector<std::int32_t> caller(rows * length);
  for (std::size_t i = 0; i < caller.size(); ++i) caller[i] = std::int32_t(1'000'000 + 3 * i);
  auto got = rxm::topk_batched<std::int64_t, std::int32_t>(ctx, std::span<const std::int64_t>(v),
                                                           rxm::Rows::uniform(rows, length), k, {},
                                                           std::span<const std::int32_t>(caller));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < k; ++j)
      ASSERT_EQ(got.indices[r * k + j], caller[r * length + std::size_t(mi[r * k + j])]);
}

namespace {
// Runs the type-erased entry on `threads` host threads with outputs poisoned, so a place the
// backend forgets to write shows up as a mismatch.
template <class T>
void expect_model_on_threads(const std::vector<T>& v, rxm::Rows rows, std::size_t k, const rxm::TopkOptions& o,
                             unsigned threads, const std::vector<T>& model_values,
                             const std::vector<std::int64_t>& model_indices) {
  auto ctx = rxm::Context::cpu(threads);
  std::vector<T> out_values(model_values.size(), rxm::from_bits<T>(rxm::key_bits_t<T>(0x5a5a5a5a5a5a5a5aull)));
  std::vector<std::int64_t> out_indices(model_indices.size(), 0x5a5a5a5a);
  rxm::detail::TopkRequest rq;
  rq.type = rxm::key_type_v<T>;
  rq.values = v.data();
  rq.total = v.size();
  rq.rows = rows;
  rq.k = k;
  rq.options = o;
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  rxm::detail::topk_host(ctx, rq);
  for (std::size_t i = 0; i < model_values.size(); ++i) {
    ASSERT_EQ(out_indices[i], model_indices[i]) << "place " << i << " threads " << threads;
    ASSERT_EQ(rxm::to_bits(out_values[i]), rxm::to_bits(model_values[i])) << "place " << i << " threads " << threads;
  }
}
}  // namespace

// One long row on 1, 3 and 8 threads: the buffer is cut many times (ascending input makes every
// value beat the threshold), the row is split into chunks whose bounds do not divide it (ties
// and equal runs straddle them), k from 1 to n/2, every input distribution.
TEST(TopkCpu, LongRowsOnManyThreads) {
  const rxm::TopkOptions options[] = {{.largest = true, .sorted = false},
                                      {.largest = false, .sorted = true},
                                      {.largest = true, .sorted = true, .include_nan = true}};
  for (std::size_t n : {std::size_t(5003), std::size_t((1 << 17) + 7), std::size_t((1 << 19) + 1)})
    for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
      const auto v = rxm::testing::make_topk_input<float>(input, n);
      for (const auto& o : options) {
        const auto order = model_order(v.data(), n, o);
        for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(100), std::size_t(3000), n / 2}) {
          std::vector<float> mv(k);
          std::vector<std::int64_t> mi(k);
          model_take(v.data(), order, k, o.sorted, mv.data(), mi.data());
          for (unsigned threads : {1u, 3u, 8u}) {
            SCOPED_TRACE(input.name + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                         " largest=" + std::to_string(o.largest) + " sorted=" + std::to_string(o.sorted) +
                         " nan=" + std::to_string(o.include_nan) + " threads=" + std::to_string(threads) +
                         " seed=" + std::to_string(test_seed()));
            expect_model_on_threads(v, rxm::Rows::uniform(1, n), k, o, threads, mv, mi);
          }
        }
      }
    }
}

// Many rows (more than threads, and fewer): empty rows, rows shorter than k, rows of exactly k,
// rows long enough to be split, on 1, 3 and 8 threads; f64 specials and few-distinct i32 (ties).
template <class T> void check_many_rows(const std::string& input_name) {
  std::mt19937_64 rng(test_seed());
  std::vector<std::uint64_t> offsets = {0};
  for (int r = 0; r < 300; ++r) offsets.push_back(offsets.back() + (r % 7 == 0 ? 0 : rng() % 3000));
  std::vector<std::uint64_t> few = {0, 0, 200'003, 200'003 + 100};  // fewer rows than threads
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != input_name) continue;
    for (const auto* offs : {&offsets, &few}) {
      const auto v = rxm::testing::make_topk_input<T>(input, offs->back());
      for (std::size_t k : {std::size_t(1), std::size_t(7), std::size_t(100), std::size_t(1500)})
        for (const auto& o : all_options) {
          auto [mv, mi] = model_topk(v, *offs, k, o);
          for (unsigned threads : {1u, 3u, 8u}) {
            SCOPED_TRACE(input.name + " rows=" + std::to_string(offs->size() - 1) + " k=" + std::to_string(k) +
                         " largest=" + std::to_string(o.largest) + " sorted=" + std::to_string(o.sorted) +
                         " nan=" + std::to_string(o.include_nan) + " threads=" + std::to_string(threads) +
                         " seed=" + std::to_string(test_seed()));
            expect_model_on_threads(v, rxm::Rows::from_offsets(*offs), k, o, threads, mv, mi);
          }
        }
    }
  }
}
// A long row whose only large values sit on a regular stride: a strided sample of it is not
// representative (the backend may sample a long scan to start its threshold), so a bound taken
// from such a sample is reached by fewer than k values and must not lose any winner.
TEST(TopkCpu, LargeValuesOnARegularStride) {
  const std::size_t n = std::size_t(1) << 20;
  for (std::size_t stride : {std::size_t(128), std::size_t(256), std::size_t(4096)}) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = i % stride == 0 ? 1000.0f + float(i / stride) : float(i % 1000) / 1000;
    for (const rxm::TopkOptions o : {rxm::TopkOptions{.largest = true}, rxm::TopkOptions{.largest = false}}) {
      const auto order = model_order(v.data(), n, o);
      for (std::size_t k : {std::size_t(1), std::size_t(100), std::size_t(5000)}) {
        std::vector<float> mv(k);
        std::vector<std::int64_t> mi(k);
        model_take(v.data(), order, k, o.sorted, mv.data(), mi.data());
        for (unsigned threads : {1u, 2u, 8u}) {
          SCOPED_TRACE("stride=" + std::to_string(stride) + " k=" + std::to_string(k) +
                       " largest=" + std::to_string(o.largest) + " threads=" + std::to_string(threads));
          expect_model_on_threads(v, rxm::Rows::uniform(1, n), k, o, threads, mv, mi);
        }
      }
    }
  }
}
TEST(TopkCpu, ManyRowsOnManyThreadsF64Specials) { check_many_rows<double>("specials"); }
TEST(TopkCpu, ManyRowsOnManyThreadsI32FewDistinct) { check_many_rows<std::int32_t>("few-distinct"); }

namespace {
// Runs the type-erased entry with poisoned outputs; expects the error and untouched outputs.
void expect_rejected(rxm::detail::TopkRequest rq, rxm::ErrorCode code, const std::vector<std::string>& words) {
  auto ctx = rxm::Context::cpu(2);
  std::vector<float> out_values(64, 7.0f);
  std::vector<std::int64_t> out_indices(64, 77);
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  try {
    rxm::detail::topk_host(ctx, rq);
    FAIL() << "expected an error";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fix"), std::string::npos) << e.what();
  }
  for (float x : out_values) EXPECT_EQ(x, 7.0f);
  for (auto i : out_indices) EXPECT_EQ(i, 77);
}
}  // namespace

TEST(TopkCpu, BadInput) {
  const std::vector<float> v(100, 1.0f);
  rxm::detail::TopkRequest rq;
  rq.type = rxm::KeyType::f32;
  rq.values = v.data();
  rq.total = v.size();
  rq.rows = rxm::Rows::uniform(1, 100);
  rq.k = 0;
  expect_rejected(rq, rxm::ErrorCode::invalid_argument, {"k = 0", "100"});
  rq.k = 101;
  expect_rejected(rq, rxm::ErrorCode::invalid_argument, {"k = 101", "n = 100"});
  auto empty = rq;
  empty.total = 0, empty.rows = rxm::Rows::uniform(1, 0), empty.k = 1;
  expect_rejected(empty, rxm::ErrorCode::invalid_argument, {"empty"});
  rq.k = 5;
  const std::vector<std::uint64_t> decreasing = {0, 50, 40, 100}, past = {0, 50, 101};
  rq.rows = rxm::Rows::from_offsets(decreasing);
  expect_rejected(rq, rxm::ErrorCode::invalid_argument, {"decrease", "row 1"});
  rq.rows = rxm::Rows::from_offsets(past);
  expect_rejected(rq, rxm::ErrorCode::invalid_argument, {"101", "past"});
  rq.rows = rxm::Rows::uniform(3, 30);
  expect_rejected(rq, rxm::ErrorCode::invalid_argument, {"3 rows of 30"});
  auto bytes = rq;
  bytes.type = rxm::KeyType::u8, bytes.rows = rxm::Rows::uniform(1, 100);
  expect_rejected(bytes, rxm::ErrorCode::unsupported, {"u8"});
  // The typed API throws too (and returns nothing).
  auto ctx = rxm::Context::cpu(2);
  EXPECT_THROW(rxm::topk(ctx, std::span<const float>(v), 0), rxm::Error);
  EXPECT_THROW(rxm::topk(ctx, std::span<const float>(), 1), rxm::Error);
}
