// The `radixmesh` command-line tool, run as a subprocess: every bad input gives one clear error
// line, its documented exit code, and leaves no output or temporary file behind; the happy paths
// (generate -> sort -> read back) give sorted files. Also the --n parser, in process.
#include <algorithm>
#include <fstream>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "common/random_keys.hpp"
#include "radixmesh/keys.hpp"
#include "test_cli_support.hpp"

namespace {

using namespace rxm_cli_test;

// ------------------------------------------------------------------ bad input

TEST_F(Cli, UnknownFlagIsAUsageError) {
  expect_failure(run({"sort", "--frobnicate", "--in", path("a.npy"), "--out", path("b.npy")}), 1, "--frobnicate", {});
}

TEST_F(Cli, NoCommandIsAUsageError) { expect_failure(run({}), 1, "subcommand", {}); }

TEST_F(Cli, MissingInputFile) {
  expect_failure(run({"sort", "--in", path("missing.npy"), "--out", path("out.npy")}), 2, "no such file", {});
}

TEST_F(Cli, UnreadableInputFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every file";
  write("keys.npy", std::vector<std::uint32_t>{3, 1, 2});
  fs::permissions(path("keys.npy"), fs::perms::none);
  expect_failure(run({"sort", "--in", path("keys.npy"), "--out", path("out.npy")}), 2, "permission", {"keys.npy"});
}

TEST_F(Cli, UnsupportedTypeName) {
  expect_failure(run({"generate", "--n", "10", "--type", "u128", "--out", path("out.bin")}), 4,
                 "unsupported --type 'u128'", {});
  std::ofstream(path("keys.bin")) << "0123";
  expect_failure(run({"sort", "--in", path("keys.bin"), "--type", "quux", "--out", path("out.bin")}), 4,
                 "unsupported --type 'quux'", {"keys.bin"});
}

TEST_F(Cli, RawInputNeedsAType) {
  std::ofstream(path("keys.bin")) << "01234567";
  expect_failure(run({"sort", "--in", path("keys.bin"), "--out", path("out.bin")}), 1, "--type", {"keys.bin"});
}

TEST_F(Cli, RawSizeNotAMultipleOfTheElementSize) {
  std::ofstream(path("keys.bin")) << "0123456789";  // 10 bytes: not whole u32s
  CliRun r = run({"sort", "--in", path("keys.bin"), "--type", "u32", "--out", path("out.bin")});
  expect_failure(r, 2, "keys.bin", {"keys.bin"});
}

TEST_F(Cli, ValuesOfADifferentLength) {
  write("keys.npy", std::vector<std::uint32_t>(100, 7));
  write("values.npy", std::vector<std::uint32_t>(99, 1));
  expect_failure(run({"sort", "--in", path("keys.npy"), "--out", path("out.npy"), "--values", path("values.npy"),
                      "--values-out", path("values_out.npy")}),
                 1, "holds 99 values", {"keys.npy", "values.npy"});
  // A raw values file: its size must be 4 or 8 bytes per key.
  std::ofstream(path("values.bin"), std::ios::binary) << std::string(4 * 100 + 2, 'x');
  expect_failure(run({"sort", "--in", path("keys.npy"), "--out", path("out.npy"), "--values", path("values.bin"),
                      "--values-out", path("values_out.bin")}),
                 1, "not 4 or 8 bytes", {"keys.npy", "values.npy", "values.bin"});
}

TEST_F(Cli, ValuesWithoutValuesOut) {
  write("keys.npy", std::vector<std::uint32_t>{1, 2});
  write("values.npy", std::vector<std::uint32_t>{1, 2});
  expect_failure(run({"sort", "--in", path("keys.npy"), "--out", path("out.npy"), "--values", path("values.npy")}), 1,
                 "--values-out", {"keys.npy", "values.npy"});
}

TEST_F(Cli, CountTooLargeForMemoryIsRefusedBeforeAllocating) {
  CliRun r = run({"generate", "--n", "2^50", "--type", "u64", "--out", path("huge.bin")});
  expect_failure(r, 3, "host memory", {});
  EXPECT_NE(r.err.find("available"), std::string::npos);
  EXPECT_NE(r.err.find("needs"), std::string::npos) << "names the bytes needed";
}

TEST_F(Cli, MalformedCount) {
  expect_failure(run({"generate", "--n", "1.5", "--type", "u32", "--out", path("out.bin")}), 1, "whole", {});
  expect_failure(run({"generate", "--n", "ten", "--type", "u32", "--out", path("out.bin")}), 1, "--n 'ten'", {});
}

TEST_F(Cli, UnknownDeviceId) {
  write("keys.npy", std::vector<std::uint32_t>{3, 1, 2});
  CliRun r = run({"sort", "--in", path("keys.npy"), "--out", path("out.npy"), "--devices", "9999"});
  if (gpu_visible())
    expect_failure(r, 1, "unknown CUDA device id 9999", {"keys.npy"});
  else
    expect_failure(r, 4, "CUDA is unavailable", {"keys.npy"});
}

TEST_F(Cli, OutputDirectoryMissing) {
  write("keys.npy", std::vector<std::uint32_t>{3, 1, 2});
  expect_failure(run({"sort", "--in", path("keys.npy"), "--out", path("no/such/dir/out.npy")}), 2, "does not exist",
                 {"keys.npy"});
}

TEST_F(Cli, SpecialFractionNeedsAFloatType) {
  expect_failure(run({"generate", "--n", "10", "--type", "u32", "--special-fraction", "0.1", "--out", path("o.bin")}),
                 1, "floating-point", {});
}

TEST_F(Cli, HelpListsTheExitCodes) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help"}, {"sort", "--help"}, {"multisplit", "--help"}, {"topk", "--help"},
        {"bench", "sort", "--help"}, {"bench", "topk", "--help"}, {"bench", "multisplit", "--help"}}) {
    CliRun r = run(args);
    SCOPED_TRACE(describe(r));
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Exit codes: 0 ok, 1 invalid argument"), std::string::npos);
  }
}

// ------------------------------------------------------------------ happy paths

TEST_F(Cli, GenerateThenSortU32) {
  CliRun g = run({"generate", "--dist", "uniform", "--n", "100K", "--type", "u32", "--seed", "7", "--out", path("k.npy")});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  CliRun s = run({"sort", "--in", path("k.npy"), "--out", path("sorted.npy"), "--backend", "cpu"});
  ASSERT_EQ(s.exit_code, 0) << describe(s);
  EXPECT_NE(s.out.find("sorted 100000 u32 keys ascending on cpu"), std::string::npos) << s.out;
  auto in = read_back<std::uint32_t>(path("k.npy"));
  auto out = read_back<std::uint32_t>(path("sorted.npy"));
  ASSERT_EQ(in.size(), 100'000u);
  std::sort(in.begin(), in.end());
  EXPECT_EQ(in, out);
}

TEST_F(Cli, GenerateThenSortF32WithSpecialsAsRawFiles) {
  CliRun g = run({"generate", "--dist", "normal", "--n", "2^16", "--type", "f32", "--special-fraction", "0.05",
               "--out", path("k.bin"), "--json"});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  auto generated = nlohmann::json::parse(g.out);
  EXPECT_EQ(generated["n"], 65536);
  EXPECT_EQ(generated["type"], "f32");
  CliRun s = run({"sort", "--in", path("k.bin"), "--type", "f32", "--out", path("sorted.bin"), "--json"});
  ASSERT_EQ(s.exit_code, 0) << describe(s);
  auto summary = nlohmann::json::parse(s.out);
  EXPECT_EQ(summary["n"], 65536);
  EXPECT_EQ(summary["order"], "ascending");
  auto in = rxm::read_array(path("k.bin"), rxm::KeyType::f32);
  auto out = rxm::read_array(path("sorted.bin"), rxm::KeyType::f32);
  std::vector<float> expected(in.as<float>(), in.as<float>() + in.size());
  std::vector<float> got(out.as<float>(), out.as<float>() + out.size());
  EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return rxm::is_nan_key(x); }))
      << "--special-fraction should give NaNs";
  std::stable_sort(expected.begin(), expected.end(), rxm::key_less<float>{});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(rxm::to_bits(got[i]), rxm::to_bits(expected[i])) << "at " << i;
}

TEST_F(Cli, SortI64DescendingWithValues) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CliRun g = run({"generate", "--dist", "few-distinct", "--distinct", "50", "--n", "30011", "--type", "i64", "--seed",
               std::to_string(seed), "--out", path("k.npy")});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  auto keys = read_back<std::int64_t>(path("k.npy"));
  std::vector<std::uint64_t> index(keys.size());
  std::iota(index.begin(), index.end(), 0);
  write("v.npy", index);
  CliRun s = run({"sort", "--in", path("k.npy"), "--out", path("ks.npy"), "--order", "desc", "--values", path("v.npy"),
               "--values-out", path("vs.npy"), "--backend", "cpu"});
  ASSERT_EQ(s.exit_code, 0) << describe(s);
  auto sorted_keys = read_back<std::int64_t>(path("ks.npy"));
  auto sorted_index = read_back<std::uint64_t>(path("vs.npy"));
  // Expected: a stable descending sort of (key, index).
  std::vector<std::uint64_t> expected = index;
  std::stable_sort(expected.begin(), expected.end(), [&](auto a, auto b) { return keys[a] > keys[b]; });
  ASSERT_EQ(sorted_index, expected);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(sorted_keys[i], keys[sorted_index[i]]);
}

TEST_F(Cli, SortOnCpuMeshDevicesMatchesOneDeviceAndExplains) {
  CliRun g = run({"generate", "--dist", "zipf", "--n", "200003", "--type", "f32", "--out", path("k.npy")});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  std::vector<std::uint32_t> index(200003);
  std::iota(index.begin(), index.end(), 0u);
  write("v.npy", index);
  CliRun one = run({"sort", "--in", path("k.npy"), "--out", path("one.npy"), "--values", path("v.npy"), "--values-out",
                    path("one_v.npy"), "--backend", "cpu"});
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  CliRun mesh = run({"sort", "--in", path("k.npy"), "--out", path("mesh.npy"), "--values", path("v.npy"),
                     "--values-out", path("mesh_v.npy"), "--devices", "cpu:3", "--explain"});
  ASSERT_EQ(mesh.exit_code, 0) << describe(mesh);
  EXPECT_NE(mesh.out.find("partition plan: 3 devices"), std::string::npos) << mesh.out;
  EXPECT_NE(mesh.out.find("steps (ms): upload"), std::string::npos) << mesh.out;
  const auto mesh_keys = rxm::read_array(path("mesh.npy")), one_keys = rxm::read_array(path("one.npy"));
  ASSERT_EQ(mesh_keys.bytes(), one_keys.bytes());
  EXPECT_EQ(0, std::memcmp(mesh_keys.data(), one_keys.data(), one_keys.bytes()));
  EXPECT_EQ(read_back<std::uint32_t>(path("mesh_v.npy")), read_back<std::uint32_t>(path("one_v.npy")));
  CliRun json = run({"sort", "--in", path("k.npy"), "--out", path("mesh.npy"), "--devices", "cpu:4", "--json"});
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  auto summary = nlohmann::json::parse(json.out);
  EXPECT_EQ(summary["mesh"]["counts"].size(), 4u);
  EXPECT_GE(summary["mesh"]["passes"], 1);
  EXPECT_TRUE(summary["mesh"]["plan"]["passes"].is_array());
  CliRun bad = run({"sort", "--in", path("k.npy"), "--out", path("x.npy"), "--devices", "cpu:2", "--digit-bits", "17"});
  expect_failure(bad, 1, "--digit-bits 17", {"k.npy", "v.npy", "one.npy", "one_v.npy", "mesh.npy", "mesh_v.npy"});
  // The merge strategy: the same bytes, its own steps in --explain and --json.
  CliRun merged = run({"sort", "--in", path("k.npy"), "--out", path("merged.npy"), "--values", path("v.npy"),
                       "--values-out", path("merged_v.npy"), "--devices", "cpu:3", "--strategy", "merge", "--explain"});
  ASSERT_EQ(merged.exit_code, 0) << describe(merged);
  EXPECT_NE(merged.out.find("(merge strategy)"), std::string::npos) << merged.out;
  EXPECT_NE(merged.out.find("first merge round"), std::string::npos) << merged.out;
  const auto merged_keys = rxm::read_array(path("merged.npy"));
  ASSERT_EQ(merged_keys.bytes(), one_keys.bytes());
  EXPECT_EQ(0, std::memcmp(merged_keys.data(), one_keys.data(), one_keys.bytes()));
  EXPECT_EQ(read_back<std::uint32_t>(path("merged_v.npy")), read_back<std::uint32_t>(path("one_v.npy")));
  CliRun merged_json =
      run({"sort", "--in", path("k.npy"), "--out", path("merged.npy"), "--devices", "cpu:4", "--strategy", "merge", "--json"});
  ASSERT_EQ(merged_json.exit_code, 0) << describe(merged_json);
  EXPECT_EQ(nlohmann::json::parse(merged_json.out)["mesh"]["strategy"], "merge");
  CliRun bad_strategy =
      run({"sort", "--in", path("k.npy"), "--out", path("x.npy"), "--devices", "cpu:2", "--strategy", "gather"});
  expect_failure(bad_strategy, 1, "--strategy gather",
                 {"k.npy", "v.npy", "one.npy", "one_v.npy", "mesh.npy", "mesh_v.npy", "merged.npy", "merged_v.npy"});
}

// --device-memory below what the input needs sends it out of core; the bytes match one device's.
TEST_F(Cli, SortOutOfCoreMatchesOneDeviceAndExplains) {
  CliRun g = run({"generate", "--dist", "zipf", "--n", "300007", "--type", "u64", "--out", path("k.npy")});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  CliRun one = run({"sort", "--in", path("k.npy"), "--out", path("one.npy"), "--backend", "cpu", "--order", "desc"});
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  CliRun ooc = run({"sort", "--in", path("k.npy"), "--out", path("ooc.npy"), "--devices", "cpu:2", "--order", "desc",
                    "--device-memory", "1M", "--explain"});
  ASSERT_EQ(ooc.exit_code, 0) << describe(ooc);
  EXPECT_NE(ooc.out.find("out of core: "), std::string::npos) << ooc.out;
  const auto got = rxm::read_array(path("ooc.npy")), want = rxm::read_array(path("one.npy"));
  ASSERT_EQ(got.bytes(), want.bytes());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes()));
  CliRun json = run({"sort", "--in", path("k.npy"), "--out", path("ooc.npy"), "--devices", "cpu:2", "--out-of-core",
                     "always", "--json"});
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  EXPECT_TRUE(nlohmann::json::parse(json.out)["mesh"]["out_of_core"].get<bool>()) << json.out;
  CliRun bad = run({"sort", "--in", path("k.npy"), "--out", path("x.npy"), "--devices", "cpu:2", "--out-of-core", "maybe"});
  expect_failure(bad, 1, "--out-of-core maybe", {"k.npy", "one.npy", "ooc.npy"});
}

TEST_F(Cli, TopkOnCpuMeshDevicesMatchesOneDevice) {
  CliRun g = run({"generate", "--dist", "zipf", "--n", "300006", "--type", "f32", "--out", path("s.npy")});
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"-k", "1000"}, {"-k", "50", "--rows", "7", "--sorted"}, {"-k", "3", "--smallest"},
        {"-k", "777", "--sorted", "--path", "radix-select", "--explain"}}) {
    std::vector<std::string> one = {"topk", "--in", path("s.npy"), "--out-values", path("one_v.npy"),
                                    "--out-indices", path("one_i.npy"), "--backend", "cpu"};
    std::vector<std::string> mesh = {"topk", "--in", path("s.npy"), "--out-values", path("mesh_v.npy"),
                                     "--out-indices", path("mesh_i.npy"), "--devices", "cpu:3"};
    one.insert(one.end(), extra.begin(), extra.end());
    mesh.insert(mesh.end(), extra.begin(), extra.end());
    CliRun a = run(one), b = run(mesh);
    ASSERT_EQ(a.exit_code, 0) << describe(a);
    ASSERT_EQ(b.exit_code, 0) << describe(b);
    EXPECT_NE(b.out.find("on 3 cpu devices"), std::string::npos) << b.out;
    if (extra.back() == "--explain") {
      EXPECT_NE(b.out.find("path: radix select (4 digit passes"), std::string::npos) << b.out;
    }
    EXPECT_EQ(read_back<float>(path("mesh_v.npy")), read_back<float>(path("one_v.npy")));
    EXPECT_EQ(read_back<std::int64_t>(path("mesh_i.npy")), read_back<std::int64_t>(path("one_i.npy")));
  }
  write("offsets.npy", std::vector<std::uint64_t>{0, 10, 300006});
  CliRun bad = run({"topk", "--in", path("s.npy"), "-k", "2", "--row-offsets", path("offsets.npy"), "--devices",
                    "cpu:2", "--out-values", path("x_v.npy"), "--out-indices", path("x_i.npy")});
  expect_failure(bad, 1, "--row-offsets on 2 devices", {"s.npy", "offsets.npy", "one_v.npy", "one_i.npy", "mesh_v.npy", "mesh_i.npy"});
  CliRun path_flag = run({"topk", "--in", path("s.npy"), "-k", "2", "--path", "fastest", "--devices", "cpu:2",
                          "--out-values", path("y_v.npy"), "--out-indices", path("y_i.npy")});
  expect_failure(path_flag, 1, "--path 'fastest' is not a top-k path",
                 {"s.npy", "offsets.npy", "one_v.npy", "one_i.npy", "mesh_v.npy", "mesh_i.npy"});
}

// An n-d .npy is sorted along its last axis, each row on its own (numpy.sort's default), values
// following their keys stably, and written with its shape; --flatten sorts it as one array.
TEST_F(Cli, SortsAnNdNpyAlongItsLastAxis) {
  const std::vector<std::size_t> shape = {3, 4, 5};
  const std::size_t n = 60, row = 5;
  std::vector<std::int32_t> keys(n);
  std::vector<std::uint32_t> index(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = std::int32_t((i * 7919) % 13) - 6, index[i] = std::uint32_t(i);
  for (const auto& [name, data, type] : {std::tuple("k.npy", static_cast<const void*>(keys.data()), rxm::KeyType::i32),
                                         std::tuple("v.npy", static_cast<const void*>(index.data()), rxm::KeyType::u32)}) {
    rxm::ArrayFileWriter w(path(name), type, n, std::nullopt, shape);
    w.write(data, n);
    w.publish();
  }
  CliRun s = run({"sort", "--in", path("k.npy"), "--out", path("ks.npy"), "--values", path("v.npy"), "--values-out",
                  path("vs.npy"), "--backend", "cpu"});
  ASSERT_EQ(s.exit_code, 0) << describe(s);
  EXPECT_NE(s.out.find("in rows of 5"), std::string::npos) << s.out;
  EXPECT_EQ(rxm::inspect_array_file(path("ks.npy"), std::nullopt).shape, shape);
  EXPECT_EQ(rxm::inspect_array_file(path("vs.npy"), std::nullopt).shape, shape);
  const auto sorted_keys = read_back<std::int32_t>(path("ks.npy"));
  const auto sorted_index = read_back<std::uint32_t>(path("vs.npy"));
  for (std::size_t r = 0; r < n / row; ++r) {
    std::vector<std::uint32_t> order(row);
    std::iota(order.begin(), order.end(), std::uint32_t(r * row));
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    for (std::size_t j = 0; j < row; ++j) {
      EXPECT_EQ(sorted_index[r * row + j], order[j]) << "row " << r;
      EXPECT_EQ(sorted_keys[r * row + j], keys[order[j]]) << "row " << r;
    }
  }
  CliRun flat = run({"sort", "--in", path("k.npy"), "--out", path("flat.npy"), "--flatten", "--backend", "cpu"});
  ASSERT_EQ(flat.exit_code, 0) << describe(flat);
  EXPECT_EQ(rxm::inspect_array_file(path("flat.npy"), std::nullopt).shape, std::vector<std::size_t>{n});
  auto all = keys;
  std::sort(all.begin(), all.end());
  EXPECT_EQ(read_back<std::int32_t>(path("flat.npy")), all);
  // Rows on several devices: a clear error naming --flatten, nothing written.
  CliRun mesh = run({"sort", "--in", path("k.npy"), "--out", path("m.npy"), "--devices", "cpu:2"});
  expect_failure(mesh, 1, "has 3 dimensions, and its rows are sorted on one device",
                 {"k.npy", "v.npy", "ks.npy", "vs.npy", "flat.npy"});
}

TEST_F(Cli, RawValuesWidthFollowsTheFileSize) {
  write("k.npy", std::vector<std::uint16_t>{5, 3, 9, 3});
  std::vector<std::uint32_t> values = {50, 30, 90, 31};
  std::ofstream(path("v.bin"), std::ios::binary).write(reinterpret_cast<const char*>(values.data()), 16);
  CliRun s = run({"sort", "--in", path("k.npy"), "--out", path("ks.npy"), "--values", path("v.bin"), "--values-out",
               path("vs.bin")});
  ASSERT_EQ(s.exit_code, 0) << describe(s);
  EXPECT_EQ(read_back<std::uint16_t>(path("ks.npy")), (std::vector<std::uint16_t>{3, 3, 5, 9}));
  auto vs = rxm::read_array(path("vs.bin"), rxm::KeyType::u32);
  EXPECT_EQ(std::vector<std::uint32_t>(vs.as<std::uint32_t>(), vs.as<std::uint32_t>() + 4),
            (std::vector<std::uint32_t>{30, 31, 50, 90}));
}

TEST_F(Cli, InfoDescribesTheMachine) {
  CliRun r = run({"info"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("CPU:"), std::string::npos);
  EXPECT_NE(r.out.find("CUDA:"), std::string::npos);
  CliRun j = run({"info", "--json"});
  ASSERT_EQ(j.exit_code, 0) << describe(j);
  auto info = nlohmann::json::parse(j.out);
  EXPECT_GT(info["cpu"]["threads"].get<unsigned>(), 0u);
  if (info["cuda"]["devices"].empty()) {
    EXPECT_FALSE(info["cuda"]["reason"].get<std::string>().empty());
  }
}

TEST_F(Cli, BenchSortSmallOnTheCpu) {
#if RXM_CLI_HAS_CPU_SORT_BENCH
  // Pairs (--values 4): with keys only, bench/cpu_sort_benchmark.cpp memcpy's from an empty
  // values buffer's null pointer, which UBSan (the CI's sanitizer run) rejects.
  CliRun r = run({"bench", "sort", "--n", "50K", "--values", "4", "--reps", "1", "--backend", "cpu", "--no-results",
                  "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto result = nlohmann::json::parse(r.out);
  EXPECT_TRUE(result["verified"].get<bool>());
  EXPECT_GT(result["ours_median_ms"].get<double>(), 0.0);
  EXPECT_EQ(result["value_bytes"], 4);
  EXPECT_FALSE(result["best_peer"].get<std::string>().empty());
#else
  GTEST_SKIP() << "the CPU sort benchmark (rxm_bench_sort) is not built";
#endif
}

// ------------------------------------------------------------------ --n parsing, in process

TEST(CliCount, AcceptsTheUsualSpellings) {
  using radixmesh::cli::parse_count;
  EXPECT_EQ(parse_count("100000000"), 100'000'000u);
  EXPECT_EQ(parse_count("1e8"), 100'000'000u);
  EXPECT_EQ(parse_count("1E8"), 100'000'000u);
  EXPECT_EQ(parse_count("2^28"), std::size_t(1) << 28);
  EXPECT_EQ(parse_count("100M"), 100'000'000u);
  EXPECT_EQ(parse_count("1.5K"), 1500u);
  EXPECT_EQ(parse_count("1.1M"), 1'100'000u);
  EXPECT_EQ(parse_count("256Mi"), std::size_t(256) << 20);
  EXPECT_EQ(parse_count("2G"), 2'000'000'000u);
  EXPECT_EQ(parse_count("1.5e3"), 1500u);
  EXPECT_EQ(parse_count("0"), 0u);
  EXPECT_EQ(parse_count(" 7 "), 7u);
}

TEST(CliCount, RejectsWhatIsNotAWholeCount) {
  using radixmesh::cli::parse_count;
  for (const char* bad : {"", "-3", "abc", "1.5", "1e-3", "2^99", "1e30", "12x", "M", "0x10", "1e", "2^", "1..5"}) {
    try {
      parse_count(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const rxm::Error& e) {
      EXPECT_EQ(e.code(), rxm::ErrorCode::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find("fix:"), std::string::npos) << bad;
    }
  }
}

TEST(CliExitCodes, FollowTheErrorCodes) {
  using namespace radixmesh::cli;
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::invalid_argument), 1);
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::io), 2);
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::out_of_memory), 3);
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::unsupported), 4);
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::device), 5);
  EXPECT_EQ(exit_code_of(rxm::ErrorCode::internal), 6);
}

}  // namespace
