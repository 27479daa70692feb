// `radixmesh multisplit`, run as a subprocess on the CPU backend: every --buckets form (radix,
// delta, splitters file, identity), keys only and with --values/--values-out, --offsets-out;
// outputs checked against a stable-partition reference built from the library's bucket functor
// (the functor defines the bucket ids; the reference defines the stable order and offsets). Then
// issue 3's bad input: each a clear error, nonzero exit, and no output file left behind.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/random_keys.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/keys.hpp"
#include "test_cli_support.hpp"

namespace {

using namespace rxm_cli_test;

class CliMultisplit : public Cli {
 protected:
  // Keys spread over the type's range, with repeats (so stability is visible) and the awkward size
  // 30011. Fresh per seed; the seed is traced.
  template <class K> std::vector<K> random_keys(std::size_t n, std::uint64_t seed) {
    rxm::GenerateOptions options;
    options.distribution = rxm::Distribution::few_distinct;
    options.distinct = 997;
    options.seed = seed;
    if constexpr (rxm::key_traits<K>::is_float) options.lo = -100.0, options.hi = 100.0;
    std::vector<K> keys(n);
    rxm::generate(std::span<K>(keys), options);
    return keys;
  }

  // Runs `radixmesh multisplit` with keys in k.npy and optional values in v.npy (the input
  // indices as u32), and checks keys, values and offsets against a stable partition by `fn`.
  template <class K, class F>
  void expect_split(const std::vector<K>& keys, const std::string& buckets, const F& fn, std::uint32_t m,
                    bool with_values) {
    SCOPED_TRACE("--buckets " + buckets + (with_values ? " with values" : ""));
    write("k.npy", keys);
    std::vector<std::string> args = {"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets",
                                     buckets, "--offsets-out", path("offsets.npy"), "--backend", "cpu", "--json"};
    std::vector<std::uint32_t> index(keys.size());
    std::iota(index.begin(), index.end(), 0u);
    if (with_values) {
      write("v.npy", index);
      for (const char* a : {"--values", "v.npy", "--values-out", "vout.npy"}) args.push_back(a[0] == '-' ? a : path(a));
    }
    CliRun r = run(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto summary = nlohmann::json::parse(r.out);
    EXPECT_EQ(summary["m"], m);
    EXPECT_EQ(summary["n"], keys.size());

    // Reference: indices stably ordered by bucket id, then the offsets from the counts.
    std::vector<std::uint32_t> id(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) id[i] = fn(keys[i]);
    std::vector<std::uint32_t> order = index;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return id[a] < id[b]; });
    std::vector<std::uint64_t> offsets(std::size_t(m) + 1, 0);
    for (std::uint32_t b : id) ++offsets[b + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());

    EXPECT_EQ(read_back<std::uint64_t>(path("offsets.npy")), offsets);
    const auto out = read_back<K>(path("out.npy"));
    ASSERT_EQ(out.size(), keys.size());
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(rxm::to_bits(out[i]), rxm::to_bits(keys[order[i]])) << "key at " << i;
    if (with_values) {
      EXPECT_EQ(read_back<std::uint32_t>(path("vout.npy")), order) << "values follow their keys, stably";
    }
    for (const auto& f : {"out.npy", "offsets.npy", "vout.npy"}) fs::remove(path(f));
  }
};

// ------------------------------------------------------------------ every --buckets form

TEST_F(CliMultisplit, RadixDigitsOfUnsignedSignedAndFloatKeys) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto u32 = random_keys<std::uint32_t>(30011, seed);
  expect_split(u32, "radix:24:8", rxm::buckets::radix_digit{24, 8}, 256, false);
  expect_split(u32, "radix:0:5", rxm::buckets::radix_digit{0, 5}, 32, true);
  expect_split(u32, "radix:7:0", rxm::buckets::radix_digit{7, 0}, 1, false);  // m = 1
  // Signed and float keys: digits of the order-preserving encoding, so bucket order is key order.
  expect_split(random_keys<std::int64_t>(4099, seed), "radix:56:8", rxm::buckets::radix_digit{56, 8}, 256, true);
  expect_split(random_keys<float>(4099, seed), "radix:20:12", rxm::buckets::radix_digit{20, 12}, 4096, false);
  expect_split(random_keys<std::uint16_t>(4099, seed), "radix:0:16", rxm::buckets::radix_digit{0, 16}, 65536, false);
}

TEST_F(CliMultisplit, DeltaBucketsOverIntegersAndFloats) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_split(random_keys<std::int32_t>(30011, seed), "delta:-2000000000:2000000000:33",
               rxm::buckets::delta<std::int32_t>(-2000000000, 2000000000, 33), 33, true);
  expect_split(random_keys<double>(30011, seed), "delta:-50:50:257", rxm::buckets::delta<double>(-50.0, 50.0, 257), 257,
               false);
  expect_split(random_keys<float>(1031, seed), "delta:-100:100:2", rxm::buckets::delta<float>(-100.f, 100.f, 2), 2,
               true);
}

TEST_F(CliMultisplit, SplittersFromAFile) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto keys = random_keys<std::uint64_t>(30011, seed);
  // m - 1 boundaries drawn from the keys themselves (so keys equal to a boundary occur), sorted.
  std::vector<std::uint64_t> boundaries(31);
  std::mt19937_64 rng(seed);
  for (auto& b : boundaries) b = keys[rng() % keys.size()];
  std::sort(boundaries.begin(), boundaries.end());
  write("splitters.npy", boundaries);
  expect_split(keys, "splitters:" + path("splitters.npy"),
               rxm::buckets::splitters<std::uint64_t>{boundaries.data(), std::uint32_t(boundaries.size())}, 32, true);

  const auto floats = random_keys<float>(4099, seed);
  const std::vector<float> float_boundaries = {-50.f, -0.0f, 0.0f, 12.5f, 99.f};
  write("fsplitters.npy", float_boundaries);
  expect_split(floats, "splitters:" + path("fsplitters.npy"),
               rxm::buckets::splitters<float>{float_boundaries.data(), 5}, 6, false);
}

TEST_F(CliMultisplit, IdentityBuckets) {
  std::vector<std::uint16_t> keys(5003);
  std::mt19937 rng(rxm::testing::test_seed());
  for (auto& k : keys) k = std::uint16_t(rng() % 40);
  expect_split(keys, "identity:40", rxm::buckets::identity{40}, 40, true);
}

TEST_F(CliMultisplit, RawValuesOfEightBytesWithValuesType) {
  const std::vector<std::uint32_t> keys = {0x300, 0x100, 0x301, 0x200, 0x101};
  write("k.npy", keys);
  const std::vector<std::int64_t> values = {-3, -1, 3, 2, 1};
  std::ofstream(path("v.bin"), std::ios::binary).write(reinterpret_cast<const char*>(values.data()), 40);
  CliRun r = run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "radix:8:2", "--values",
                  path("v.bin"), "--values-type", "i64", "--values-out", path("vout.bin"), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("into 4 buckets on cpu"), std::string::npos) << r.out;
  EXPECT_EQ(read_back<std::uint32_t>(path("out.npy")), (std::vector<std::uint32_t>{0x100, 0x101, 0x200, 0x300, 0x301}));
  auto v = rxm::read_array(path("vout.bin"), rxm::KeyType::i64);
  EXPECT_EQ(std::vector<std::int64_t>(v.as<std::int64_t>(), v.as<std::int64_t>() + 5),
            (std::vector<std::int64_t>{-1, 1, 2, -3, 3}));
}

TEST_F(CliMultisplit, EmptyInputGivesEmptyBuckets) {
  write("k.npy", std::vector<std::uint32_t>{});
  CliRun r = run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "radix:0:2",
                  "--offsets-out", path("offsets.npy"), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(read_back<std::uint32_t>(path("out.npy")).empty());
  EXPECT_EQ(read_back<std::uint64_t>(path("offsets.npy")), (std::vector<std::uint64_t>{0, 0, 0, 0, 0}));
}

// ------------------------------------------------------------------ bad input (issue 3)

TEST_F(CliMultisplit, BucketCountZeroOrAboveTheLimit) {
  write("k.npy", std::vector<std::uint32_t>{5, 1, 9});
  const std::vector<std::string> inputs = {"k.npy"};
  auto split = [&](const std::string& buckets) {
    return run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", buckets, "--offsets-out",
                path("offsets.npy"), "--backend", "cpu"});
  };
  expect_failure(split("delta:0:100:0"), 1, "M = 0 buckets", inputs);
  expect_failure(split("delta:0:100:65537"), 1, "M = 65537 buckets", inputs);
  expect_failure(split("identity:0"), 1, "M = 0 buckets", inputs);
  expect_failure(split("identity:70000"), 1, "M = 70000 buckets", inputs);
  expect_failure(split("radix:0:17"), 1, "is not inside the 32-bit key", inputs);
  expect_failure(split("radix:24:9"), 1, "is not inside the 32-bit key", inputs);
  std::vector<std::uint32_t> many(65536);
  std::iota(many.begin(), many.end(), 0u);
  write("splitters.npy", many);
  expect_failure(split("splitters:" + path("splitters.npy")), 1, "65536 splitters make too many buckets",
                 {"k.npy", "splitters.npy"});
}

TEST_F(CliMultisplit, BucketIdNotBelowMNamesTheKey) {
  // Checked mode (the CLI's only mode): the first key whose id is >= m is named, with its index.
  write("k.npy", std::vector<std::int32_t>{1, 2, 3, 41, 0, -7});
  expect_failure(run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "identity:40",
                      "--offsets-out", path("offsets.npy"), "--backend", "cpu"}),
                 1, "key 41 at index 3 has bucket id 41, not below m = 40", {"k.npy"});
  write("k.npy", std::vector<std::int32_t>{1, 2, -7});
  expect_failure(run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "identity:40",
                      "--backend", "cpu"}),
                 1, "key -7 at index 2", {"k.npy"});
}

TEST_F(CliMultisplit, KeysAndValuesOfDifferentLengths) {
  write("k.npy", std::vector<std::uint32_t>(10, 1));
  write("v.npy", std::vector<std::uint64_t>(9, 1));
  expect_failure(run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "radix:0:4",
                      "--values", path("v.npy"), "--values-out", path("vout.npy"), "--backend", "cpu"}),
                 1, "holds 9 values but --in", {"k.npy", "v.npy"});
  // Values of a width multisplit does not carry.
  write("v16.npy", std::vector<std::uint16_t>(10, 1));
  expect_failure(run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "radix:0:4",
                      "--values", path("v16.npy"), "--values-out", path("vout.npy"), "--backend", "cpu"}),
                 4, "carries 4- or 8-byte values", {"k.npy", "v.npy", "v16.npy"});
}

TEST_F(CliMultisplit, UnsupportedOrMissingType) {
  std::ofstream(path("k.bin"), std::ios::binary) << std::string(16, 'x');
  expect_failure(run({"multisplit", "--in", path("k.bin"), "--type", "u128", "--out", path("out.bin"), "--buckets",
                      "radix:0:4", "--backend", "cpu"}),
                 4, "unsupported --type 'u128'", {"k.bin"});
  expect_failure(run({"multisplit", "--in", path("k.bin"), "--out", path("out.bin"), "--buckets", "radix:0:4"}), 1,
                 "--type", {"k.bin"});
  // identity buckets need integer keys.
  write("f.npy", std::vector<float>{1.f, 2.f});
  expect_failure(run({"multisplit", "--in", path("f.npy"), "--out", path("out.npy"), "--buckets", "identity:4",
                      "--backend", "cpu"}),
                 1, "identity:M needs integer keys", {"k.bin", "f.npy"});
}

TEST_F(CliMultisplit, MalformedBucketSpecs) {
  write("k.npy", std::vector<std::uint32_t>{5, 1, 9});
  const std::vector<std::string> inputs = {"k.npy"};
  auto split = [&](const std::string& buckets) {
    return run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", buckets, "--backend", "cpu"});
  };
  expect_failure(split("modulo:7"), 1, "names no bucket function", inputs);
  expect_failure(split("radix:8"), 1, "needs radix:SHIFT:BITS", inputs);
  expect_failure(split("radix:x:8"), 1, "SHIFT 'x' is not an integer", inputs);
  expect_failure(split("delta:9:1:4"), 1, "lo < hi", inputs);
  expect_failure(split("splitters:" + path("missing.npy")), 2, "no such file", inputs);
  write("unsorted.npy", std::vector<std::uint32_t>{9, 3});
  expect_failure(split("splitters:" + path("unsorted.npy")), 1, "not sorted", {"k.npy", "unsorted.npy"});
}

TEST_F(CliMultisplit, OutputDirectoryMissingLeavesNothing) {
  write("k.npy", std::vector<std::uint32_t>{5, 1, 9});
  expect_failure(run({"multisplit", "--in", path("k.npy"), "--out", path("out.npy"), "--buckets", "radix:0:4",
                      "--offsets-out", path("no/such/dir/offsets.npy"), "--backend", "cpu"}),
                 2, "does not exist", {"k.npy"});
}

// ------------------------------------------------------------------ bench multisplit

TEST_F(CliMultisplit, BenchMultisplitSmallOnTheCpu) {
#if RXM_CLI_HAS_CPU_SORT_BENCH
  for (std::vector<std::string> options :
       {std::vector<std::string>{"--type", "u32", "--buckets", "radix:26:6", "--values", "4"},
        {"--type", "f32", "--buckets", "delta:0:1:100"},
        {"--type", "i64", "--dist", "zipf", "--buckets", "radix:48:16", "--values", "8"}}) {
    std::vector<std::string> args = {"bench", "multisplit", "--n", "40000", "--reps", "1", "--warmup", "0",
                                     "--backend", "cpu", "--threads", "2", "--no-results", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    CliRun r = run(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto result = nlohmann::json::parse(r.out);
    EXPECT_TRUE(result["verified"].get<bool>()) << r.out;
    EXPECT_GT(result["ours_median_ms"].get<double>(), 0.0);
    EXPECT_GT(result["floor_ms"].get<double>(), 0.0);
    EXPECT_FALSE(result["best_peer"].get<std::string>().empty());
    EXPECT_EQ(result["entries"].size(), 3u) << "ours, the counting sort and RB-sort";
  }
  expect_failure(run({"bench", "multisplit", "--n", "1000", "--backend", "cpu", "--no-results", "--buckets", "radix:0:17"}),
                 1, "is not inside the 32-bit key", {});
  expect_failure(run({"bench", "multisplit", "--n", "1000", "--backend", "cpu", "--no-results", "--values", "2"}), 1,
                 "--values 2 is not a value width", {});
#else
  GTEST_SKIP() << "the benchmarks are not built";
#endif
}

}  // namespace
