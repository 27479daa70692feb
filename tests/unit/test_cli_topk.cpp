// `radixmesh topk` and `radixmesh bench topk`, run as subprocesses on the CPU backend: --rows,
// --row-offsets (empty and short rows, padded), --smallest, --sorted, --index-type, raw input;
// outputs checked against a reference built here (indices ordered by rxm::topk_rank, the
// library's one definition of the order, ties to the lower index). Then issue 4's bad input:
// each a clear error, nonzero exit, and no output file left behind.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/random_keys.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/topk.hpp"
#include "test_cli_support.hpp"

namespace {

using namespace rxm_cli_test;

struct Expected {
  std::vector<std::uint64_t> value_bits;  // rows * k, padding: 0
  std::vector<std::int64_t> indices;      // rows * k, padding: -1
};

// Each row's k best by (topk_rank desc, index asc); unsorted output is in ascending index order.
template <class T>
Expected reference(const std::vector<T>& values, const std::vector<std::uint64_t>& offsets, std::size_t k,
                   const rxm::TopkOptions& o) {
  Expected e;
  for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
    std::vector<std::int64_t> index(offsets[r + 1] - offsets[r]);
    std::iota(index.begin(), index.end(), 0);
    const T* row = values.data() + offsets[r];
    std::stable_sort(index.begin(), index.end(), [&](auto a, auto b) {
      return rxm::topk_rank(row[a], o) > rxm::topk_rank(row[b], o);
    });
    index.resize(std::min(k, index.size()));
    if (!o.sorted) std::sort(index.begin(), index.end());
    for (std::size_t j = 0; j < k; ++j) {
      const bool real = j < index.size();
      e.indices.push_back(real ? index[j] : -1);
      e.value_bits.push_back(real ? std::uint64_t(rxm::to_bits(row[index[j]])) : 0);
    }
  }
  return e;
}

class CliTopk : public Cli {
 protected:
  template <class T> std::vector<T> random_values(std::size_t n, rxm::Distribution d, std::uint64_t seed) {
    rxm::GenerateOptions options;
    options.distribution = d;
    options.seed = seed;
    options.distinct = 50;  // few-distinct: many ties at the k-th value
    std::vector<T> v(n);
    rxm::generate(std::span<T>(v), options);
    return v;
  }

  // Runs topk on values in in.npy and compares both outputs with the reference.
  template <class T, class Index = std::int64_t>
  void expect_topk(const std::vector<T>& values, const std::vector<std::uint64_t>& offsets, std::size_t k,
                   const rxm::TopkOptions& o, std::vector<std::string> shape_args) {
    SCOPED_TRACE("k " + std::to_string(k) + (o.largest ? " largest" : " smallest") + (o.sorted ? " sorted" : ""));
    write("in.npy", values);
    std::vector<std::string> args = {"topk", "--in", path("in.npy"), "-k", std::to_string(k), "--out-values",
                                     path("values.npy"), "--out-indices", path("indices.npy"), "--backend", "cpu"};
    args.insert(args.end(), shape_args.begin(), shape_args.end());
    if (!o.largest) args.push_back("--smallest");
    if (o.sorted) args.push_back("--sorted");
    if (std::is_same_v<Index, std::int32_t>) args.insert(args.end(), {"--index-type", "i32"});
    CliRun r = run(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const Expected e = reference(values, offsets, k, o);
    const auto got_values = read_back<T>(path("values.npy"));
    const auto got_indices = read_back<Index>(path("indices.npy"));
    ASSERT_EQ(got_indices.size(), e.indices.size());
    ASSERT_EQ(got_values.size(), e.indices.size());
    for (std::size_t i = 0; i < e.indices.size(); ++i) {
      ASSERT_EQ(std::int64_t(got_indices[i]), e.indices[i]) << "place " << i;
      ASSERT_EQ(std::uint64_t(rxm::to_bits(got_values[i])), e.value_bits[i]) << "place " << i;
    }
    fs::remove(path("values.npy"));
    fs::remove(path("indices.npy"));
  }
};

std::vector<std::uint64_t> uniform_offsets(std::size_t rows, std::size_t length) {
  std::vector<std::uint64_t> offsets(rows + 1);
  for (std::size_t r = 0; r <= rows; ++r) offsets[r] = r * length;
  return offsets;
}

// ------------------------------------------------------------------ happy paths

TEST_F(CliTopk, OneRowEveryOptionF32) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto v = random_values<float>(30011, rxm::Distribution::few_distinct, seed);
  for (bool largest : {true, false})
    for (bool sorted : {false, true})
      for (std::size_t k : {std::size_t(1), std::size_t(777), std::size_t(30011)})
        expect_topk(v, uniform_offsets(1, v.size()), k, {.largest = largest, .sorted = sorted}, {});
}

TEST_F(CliTopk, UniformRowsOfIntegers) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto v = random_values<std::int32_t>(7 * 1031, rxm::Distribution::uniform, seed);
  expect_topk(v, uniform_offsets(7, 1031), 50, {}, {"--rows", "7"});
  expect_topk<std::int32_t, std::int32_t>(v, uniform_offsets(7, 1031), 1031, {.largest = false, .sorted = true},
                                          {"--rows", "7"});
  const auto u = random_values<std::uint64_t>(4 * 999, rxm::Distribution::few_distinct, seed);
  expect_topk(u, uniform_offsets(4, 999), 998, {.sorted = true}, {"--rows", "4"});
}

TEST_F(CliTopk, RowOffsetsWithEmptyAndShortRowsArePadded) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto v = random_values<double>(2000, rxm::Distribution::normal, seed);
  // Rows of 0, 1, 5, 994 and 1000 values (offsets need not start at 0 nor reach the end).
  const std::vector<std::uint64_t> offsets = {0, 0, 1, 6, 1000, 1000, 2000};
  write("offsets.npy", offsets);
  expect_topk(v, offsets, 8, {}, {"--row-offsets", path("offsets.npy")});
  expect_topk(v, offsets, 8, {.largest = false, .sorted = true}, {"--row-offsets", path("offsets.npy")});
  const std::vector<std::uint64_t> inner = {3, 10, 10, 1500};
  write("offsets.npy", inner);
  expect_topk(v, inner, 20, {.sorted = true}, {"--row-offsets", path("offsets.npy")});
}

TEST_F(CliTopk, HalfTypesFromARawFileAndJson) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto v = random_values<rxm::bfloat16_t>(4096, rxm::Distribution::uniform, seed);
  std::ofstream(path("in.bin"), std::ios::binary).write(reinterpret_cast<const char*>(v.data()), 2 * 4096);
  CliRun r = run({"topk", "--in", path("in.bin"), "--type", "bf16", "-k", "16", "--rows", "2", "--out-values",
                  path("values.bin"), "--out-indices", path("indices.npy"), "--backend", "cpu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["rows"], 2);
  EXPECT_EQ(summary["k"], 16);
  EXPECT_EQ(summary["type"], "bf16");
  const Expected e = reference(v, uniform_offsets(2, 2048), 16, {});
  EXPECT_EQ(read_back<std::int64_t>(path("indices.npy")), e.indices);
  const auto values = rxm::read_array(path("values.bin"), rxm::KeyType::bf16);
  ASSERT_EQ(values.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(values.as<rxm::bfloat16_t>()[i].bits, e.value_bits[i]) << i;
}

// ------------------------------------------------------------------ bad input (issue 4)

class CliTopkBadInput : public CliTopk {
 protected:
  void SetUp() override {
    CliTopk::SetUp();
    write("in.npy", std::vector<float>{5, 1, 9, 3, 3, 7, 0, 2, 8, 6});
  }
  CliRun topk(std::vector<std::string> extra) {
    std::vector<std::string> args = {"topk", "--out-values", path("values.npy"), "--out-indices", path("indices.npy"),
                                     "--backend", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  }
};

TEST_F(CliTopkBadInput, KIsZero) {
  expect_failure(topk({"--in", path("in.npy"), "-k", "0"}), 1, "k = 0", {"in.npy"});
}

TEST_F(CliTopkBadInput, KAboveNNamesBoth) {
  CliRun r = topk({"--in", path("in.npy"), "-k", "11"});
  expect_failure(r, 1, "k = 11", {"in.npy"});
  EXPECT_NE(r.err.find("n = 10"), std::string::npos) << r.err;
  CliRun rows = topk({"--in", path("in.npy"), "-k", "6", "--rows", "2"});
  expect_failure(rows, 1, "k = 6", {"in.npy"});
  EXPECT_NE(rows.err.find("n = 5"), std::string::npos) << rows.err;
}

TEST_F(CliTopkBadInput, EmptyInput) {
  write("empty.npy", std::vector<float>{});
  expect_failure(topk({"--in", path("empty.npy"), "-k", "1"}), 1, "empty", {"in.npy", "empty.npy"});
}

TEST_F(CliTopkBadInput, RowOffsetsThatDecreaseOrRunPastTheData) {
  write("decreasing.npy", std::vector<std::uint64_t>{0, 6, 4, 10});
  expect_failure(topk({"--in", path("in.npy"), "-k", "2", "--row-offsets", path("decreasing.npy")}), 1,
                 "decrease at row 1 (6 > 4)", {"in.npy", "decreasing.npy"});
  write("past.npy", std::vector<std::uint64_t>{0, 5, 11});
  expect_failure(topk({"--in", path("in.npy"), "-k", "2", "--row-offsets", path("past.npy")}), 1,
                 "run to 11 past the 10 values", {"in.npy", "decreasing.npy", "past.npy"});
  write("one.npy", std::vector<std::uint64_t>{0});
  expect_failure(topk({"--in", path("in.npy"), "-k", "2", "--row-offsets", path("one.npy")}), 1,
                 "fewer than 2 offsets", {"in.npy", "decreasing.npy", "past.npy", "one.npy"});
}

TEST_F(CliTopkBadInput, RowsThatDoNotDivideTheValues) {
  expect_failure(topk({"--in", path("in.npy"), "-k", "1", "--rows", "3"}), 1, "--rows 3 does not divide", {"in.npy"});
  expect_failure(topk({"--in", path("in.npy"), "-k", "1", "--rows", "0"}), 1, "--rows 0", {"in.npy"});
}

TEST_F(CliTopkBadInput, UnsupportedType) {
  write("bytes.npy", std::vector<std::uint8_t>{1, 2, 3});
  expect_failure(topk({"--in", path("bytes.npy"), "-k", "1"}), 4, "not supported", {"in.npy", "bytes.npy"});
  std::ofstream(path("raw.bin"), std::ios::binary) << std::string(8, 'x');
  expect_failure(topk({"--in", path("raw.bin"), "--type", "f128", "-k", "1"}), 4, "unsupported --type 'f128'",
                 {"in.npy", "bytes.npy", "raw.bin"});
  expect_failure(topk({"--in", path("raw.bin"), "-k", "1"}), 1, "pass --type", {"in.npy", "bytes.npy", "raw.bin"});
  expect_failure(topk({"--in", path("in.npy"), "-k", "1", "--index-type", "u16"}), 1, "--index-type 'u16'",
                 {"in.npy", "bytes.npy", "raw.bin"});
}

TEST_F(CliTopkBadInput, ResultsTooLargeAreRefusedBeforeAnyWork) {
  // 1024 empty rows padded to k = 2^40 places each: the outputs cannot fit (the disk is checked
  // first, then host memory); the message names what is needed, and nothing is left behind.
  write("offsets.npy", std::vector<std::uint64_t>(1025, 0));
  CliRun r = topk({"--in", path("in.npy"), "-k", "2^40", "--row-offsets", path("offsets.npy")});
  expect_failure(r, 2, "needs", {"in.npy", "offsets.npy"});
  EXPECT_NE(r.err.find("free"), std::string::npos) << r.err;
}

TEST_F(CliTopkBadInput, MissingInputOrOutputDirectory) {
  expect_failure(topk({"--in", path("missing.npy"), "-k", "1"}), 2, "no such file", {"in.npy"});
  expect_failure(run({"topk", "--in", path("in.npy"), "-k", "1", "--out-values", path("values.npy"), "--out-indices",
                      path("no/dir/indices.npy"), "--backend", "cpu"}),
                 2, "does not exist", {"in.npy"});
}

// ------------------------------------------------------------------ bench topk

TEST_F(CliTopk, BenchTopkSmallOnTheCpu) {
#if RXM_CLI_HAS_CPU_SORT_BENCH
  for (std::vector<std::string> options : {std::vector<std::string>{"--type", "f32", "--rows", "4"},
                                           {"--type", "i64", "--smallest", "--sorted", "--dist", "few-distinct"},
                                           {"--type", "f16", "--dist", "uniform", "--lo", "128.6", "--hi", "128.7"}}) {
    std::vector<std::string> args = {"bench", "topk", "--n", "40000", "-k", "100", "--reps", "1", "--warmup", "0",
                                     "--backend", "cpu", "--threads", "2", "--no-results", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    CliRun r = run(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto result = nlohmann::json::parse(r.out);
    EXPECT_TRUE(result["verified"].get<bool>()) << r.out;
    EXPECT_NE(result["verified_against"].get<std::string>().find("std::nth_element"), std::string::npos);
    EXPECT_GT(result["ours_median_ms"].get<double>(), 0.0);
    EXPECT_GT(result["floor_ms"].get<double>(), 0.0);
    EXPECT_FALSE(result["best_peer"].get<std::string>().empty());
    EXPECT_EQ(result["entries"].size(), 3u) << "ours and two std:: peers";
  }
#else
  GTEST_SKIP() << "the benchmarks are not built";
#endif
}

TEST_F(CliTopk, BenchTopkBadArguments) {
#if RXM_CLI_HAS_CPU_SORT_BENCH
  auto bench = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"bench", "topk", "--n", "1000", "--backend", "cpu", "--no-results", "--reps", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  expect_failure(bench({"-k", "0"}), 1, "k = 0", {});
  expect_failure(bench({"-k", "300", "--rows", "4"}), 1, "n = 250", {});
  expect_failure(bench({"-k", "1", "--rows", "3"}), 1, "--rows 3 does not divide --n 1000", {});
  expect_failure(bench({"-k", "1", "--type", "u8"}), 4, "not supported", {});
#else
  GTEST_SKIP() << "the benchmarks are not built";
#endif
}

}  // namespace
