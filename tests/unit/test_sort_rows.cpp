// rxm::sort_rows on the CPU backend: every row sorted on its own, stable, against std::stable_sort
// of each row with key_less (keys.hpp's order), for many short rows (one thread per row), few long
// rows (every thread per row), every key type, with values, descending, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/error_text.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

template <class K> void check_rows(std::size_t rows, std::size_t length, bool descending, unsigned threads) {
  auto keys = rxm::testing::random_bit_patterns<K>(rows * length, test_seed() + rows * 31 + length);
  for (std::size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i / 2];  // ties
  std::vector<std::uint32_t> index(keys.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = std::uint32_t(i % length);
  auto want = keys;
  auto want_index = index;
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::size_t> order(length);
    std::iota(order.begin(), order.end(), 0);
    const K* row = keys.data() + r * length;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return descending ? rxm::key_less<K>{}(row[b], row[a]) : rxm::key_less<K>{}(row[a], row[b]);
    });
    for (std::size_t j = 0; j < length; ++j) {
      want[r * length + j] = row[order[j]];
      want_index[r * length + j] = std::uint32_t(order[j]);
    }
  }
  auto ctx = rxm::Context::cpu(threads);
  rxm::SortOptions o;
  if (descending) o.order = rxm::Order::descending;
  rxm::sort_rows(ctx, std::span(keys), std::span(index), length, o);
  const std::string what = std::string(rxm::name_of(rxm::key_type_v<K>)) + " " + std::to_string(rows) + " x " +
                           std::to_string(length) + (descending ? " desc" : "") + " threads " + std::to_string(threads);
  ASSERT_EQ(0, std::memcmp(keys.data(), want.data(), keys.size() * sizeof(K))) << what;
  ASSERT_EQ(index, want_index) << what;
}

template <class K> void every_shape() {
  for (unsigned threads : {1u, 2u, 5u})
    for (auto [rows, length] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 1}, {1, 100003}, {3, 70001},
                                {257, 33}, {1000, 129}, {2, 2}})
      for (bool descending : {false, true}) check_rows<K>(rows, length, descending, threads);
}

TEST(SortRows, EveryTypeEveryShape) {
  every_shape<std::uint8_t>();
  every_shape<std::int16_t>();
  every_shape<rxm::half_t>();
  every_shape<float>();
  every_shape<std::uint32_t>();
  every_shape<double>();
  every_shape<std::int64_t>();
}

TEST(SortRows, KeysOnlyAndBadInput) {
  auto ctx = rxm::Context::cpu(2);
  std::vector<std::int32_t> keys = {3, 1, 2, 9, 7, 8};
  rxm::sort_rows(ctx, std::span(keys), 3);
  EXPECT_EQ(keys, (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9}));
  std::vector<std::int32_t> empty;
  rxm::sort_rows(ctx, std::span(empty), 0);
  using rxm::testing::error_text;
  EXPECT_NE(error_text([&] { rxm::sort_rows(ctx, std::span(keys), 4); }).find("6 keys are not a whole number of rows of 4"),
            std::string::npos);
  EXPECT_NE(error_text([&] { rxm::sort_rows(ctx, std::span(keys), 0); }).find("rows of length 0"), std::string::npos);
  std::vector<std::uint32_t> short_values(5);
  EXPECT_NE(error_text([&] { rxm::sort_rows(ctx, std::span(keys), std::span(short_values), 3); })
                .find("keys and values differ in length"),
            std::string::npos);
  auto mesh = rxm::Context::cpu_mesh(2, 1);
  EXPECT_NE(error_text([&] { rxm::sort_rows(mesh, std::span(keys), 3); }).find("a context of 2 mesh devices"),
            std::string::npos);
  EXPECT_EQ(keys, (std::vector<std::int32_t>{1, 2, 3, 7, 8, 9}));  // untouched by the failed calls
}

}  // namespace
