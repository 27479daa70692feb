// rxm::sort_rows on a CUDA context against the CPU backend's, byte for byte: every key type, keys
// alone and with 4- and 8-byte values, ascending and descending, a bit range, ties, NaN and -0.0
// (random bit patterns), one row, rows of one key, many short rows (the segmented sort), rows
// longer than the segmented sort takes (row by row), and an empty batch.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

template <class K, class V>
void check(rxm::Context& gpu, std::size_t rows, std::size_t length, const rxm::SortOptions& o, const std::string& what) {
  auto keys = rxm::testing::random_bit_patterns<K>(rows * length, test_seed() + rows * 131 + length);
  for (std::size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i / 2];  // ties
  std::vector<V> values(keys.size());
  std::iota(values.begin(), values.end(), V(0));
  auto want_keys = keys, got_keys = keys;
  auto want_values = values, got_values = values;
  auto cpu = rxm::Context::cpu(2);
  rxm::sort_rows(cpu, std::span(want_keys), std::span(want_values), length, o);
  rxm::sort_rows(gpu, std::span(got_keys), std::span(got_values), length, o);
  ASSERT_EQ(got_values, want_values) << what;
  ASSERT_EQ(std::memcmp(got_keys.data(), want_keys.data(), keys.size() * sizeof(K)), 0) << what;
  // Keys alone.
  auto alone_want = keys, alone_got = keys;
  rxm::sort_rows(cpu, std::span(alone_want), length, o);
  rxm::sort_rows(gpu, std::span(alone_got), length, o);
  ASSERT_EQ(std::memcmp(alone_got.data(), alone_want.data(), keys.size() * sizeof(K)), 0) << what << " (keys alone)";
}

template <class K> void every_shape(rxm::Context& gpu) {
  const std::string type = std::string(rxm::name_of(rxm::key_type_v<K>));
  struct Shape { std::size_t rows, length; };
  for (const Shape s : {Shape{1, 1000}, Shape{500, 1}, Shape{3, 2}, Shape{1000, 77}, Shape{37, 4097}, Shape{2, 70000}})
    for (bool descending : {false, true}) {
      rxm::SortOptions o;
      if (descending) o.order = rxm::Order::descending;
      const std::string what = type + " " + std::to_string(s.rows) + " x " + std::to_string(s.length) +
                               (descending ? " descending" : "");
      check<K, std::uint32_t>(gpu, s.rows, s.length, o, what);
      check<K, std::uint64_t>(gpu, s.rows, s.length, o, what + " (8-byte values)");
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(GpuSortRows, EveryTypeAndShapeMatchesTheCpu) {
  RXM_REQUIRE_GPU();
  auto gpu = rxm::Context::local({0}, rxm::Backend::cuda);
  every_shape<std::uint8_t>(gpu);
  every_shape<std::int8_t>(gpu);
  every_shape<std::uint16_t>(gpu);
  every_shape<std::int16_t>(gpu);
  every_shape<std::uint32_t>(gpu);
  every_shape<std::int32_t>(gpu);
  every_shape<std::uint64_t>(gpu);
  every_shape<std::int64_t>(gpu);
  every_shape<rxm::half_t>(gpu);
  every_shape<rxm::bfloat16_t>(gpu);
  every_shape<float>(gpu);
  every_shape<double>(gpu);
}

TEST(GpuSortRows, BitRangeAndEmptyBatch) {
  RXM_REQUIRE_GPU();
  auto gpu = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::SortOptions o;
  o.begin_bit = 4;
  o.end_bit = 20;
  check<std::uint32_t, std::uint32_t>(gpu, 300, 1000, o, "u32 bits [4, 20)");
  std::vector<float> none;
  rxm::sort_rows(gpu, std::span(none), 8);
  EXPECT_TRUE(none.empty());
}

}  // namespace
