// `radixmesh shuffle` on CPU mesh devices, run as a subprocess: each device's output file against
// the shuffle's CPU model of the same slices (tests/common/shuffle_model.hpp), values too; owners
// round-robin, block and from a file; bad owners and missing values-out refused with nothing
// written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "common/random_keys.hpp"
#include "common/shuffle_model.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/generate.hpp"
#include "test_cli_support.hpp"

namespace {

using namespace rxm_cli_test;

class CliShuffle : public Cli {
 protected:
  // The input cut into `p` equal slices, as the command does.
  template <class T> std::vector<std::vector<T>> slices(const std::vector<T>& all, int p) {
    std::vector<std::vector<T>> out;
    for (int d = 0; d < p; ++d)
      out.emplace_back(all.begin() + std::ptrdiff_t(all.size() * std::size_t(d) / std::size_t(p)),
                       all.begin() + std::ptrdiff_t(all.size() * std::size_t(d + 1) / std::size_t(p)));
    return out;
  }
};

TEST_F(CliShuffle, EveryDeviceFileMatchesTheModel) {
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<std::uint32_t> keys(20011);
  rxm::generate(std::span<std::uint32_t>(keys), {.distribution = rxm::Distribution::uniform, .seed = seed});
  std::vector<std::uint64_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0ull);
  write("k.npy", keys);
  write("v.npy", values);
  const int p = 3;
  std::vector<int> from_file(100);
  for (std::size_t b = 0; b < from_file.size(); ++b) from_file[b] = int((b * 7) % 3);
  write("owners.npy", from_file);
  for (const std::string owners : {"round-robin", "block", "owners.npy"}) {
    SCOPED_TRACE("--owners " + owners);
    std::vector<int> owner(100);
    for (int b = 0; b < 100; ++b)
      owner[std::size_t(b)] = owners == "round-robin" ? b % p : owners == "block" ? b * p / 100 : from_file[std::size_t(b)];
    CliRun r = run({"shuffle", "--in", path("k.npy"), "--out-prefix", path("out"), "--buckets", "hash:100", "--owners",
                    owners == "owners.npy" ? path(owners) : owners, "--devices", "cpu:3", "--values", path("v.npy"),
                    "--values-out-prefix", path("vout"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"], p);
    const auto want = rxm::testing::shuffle_model(slices(keys, p), slices(values, p), rxm::buckets::hash{.m = 100},
                                                  owner, p);
    for (int d = 0; d < p; ++d) {
      const std::string tag = "." + std::to_string(d);
      EXPECT_EQ(read_back<std::uint32_t>(path("out" + tag + ".npy")), want[std::size_t(d)].keys) << "device " << d;
      EXPECT_EQ(read_back<std::uint64_t>(path("vout" + tag + ".npy")), want[std::size_t(d)].values) << "device " << d;
      EXPECT_EQ(read_back<std::uint64_t>(path("out" + tag + ".offsets.npy")), want[std::size_t(d)].offsets)
          << "device " << d;
      for (const auto& f : {"out" + tag + ".npy", "vout" + tag + ".npy", "out" + tag + ".offsets.npy"})
        fs::remove(path(f));
    }
  }
}

TEST_F(CliShuffle, BadOwnersAndMissingOutputsWriteNothing) {
  std::vector<std::uint32_t> keys(1000, 5);
  write("k.npy", keys);
  std::vector<int> too_few(10, 0);
  write("owners.npy", too_few);
  expect_failure(run({"shuffle", "--in", path("k.npy"), "--out-prefix", path("out"), "--buckets", "hash:64",
                      "--owners", path("owners.npy"), "--devices", "cpu:2"}),
                 1, "owners", {"k.npy", "owners.npy"});
  std::vector<int> outside(64, 5);
  write("owners.npy", outside);
  expect_failure(run({"shuffle", "--in", path("k.npy"), "--out-prefix", path("out"), "--buckets", "hash:64",
                      "--owners", path("owners.npy"), "--devices", "cpu:2"}),
                 1, "outside the mesh", {"k.npy", "owners.npy"});
  expect_failure(run({"shuffle", "--in", path("k.npy"), "--out-prefix", path("out"), "--buckets", "hash:64",
                      "--devices", "cpu:2", "--values", path("k.npy")}),
                 1, "--values-out-prefix", {"k.npy", "owners.npy"});
}

}  // namespace
