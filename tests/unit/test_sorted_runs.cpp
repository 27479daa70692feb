// The sorted runs' cuts and merge (src/mesh/sorted_runs.hpp), against std::stable_sort of the runs
// concatenated: cuts_of_runs (keys_at_places + cuts_at_places) puts exactly targets[b] elements before every cut,
// ties going to the earlier run, and merge_runs equals the stable sort byte for byte (keys and the
// values that carry each element's place), for 1 to 12 runs (the scan and the heap), empty runs,
// heavy ties, both orders, bit ranges and every share count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "mesh/sorted_runs.hpp"

namespace rxm = radixmesh;

namespace {

struct Case {
  std::vector<std::vector<std::uint32_t>> runs;  // each sorted by the case's sort key, stable
  rxm::mesh::SortKey<std::uint32_t> sk;
};

// `count` runs of random lengths (some empty) over `distinct` key values, each stably sorted.
Case random_case(std::mt19937_64& rng, std::size_t count, std::uint32_t distinct, rxm::mesh::SortKey<std::uint32_t> sk) {
  Case c{{}, sk};
  for (std::size_t r = 0; r < count; ++r) {
    std::vector<std::uint32_t> run(rng() % 4 == 0 ? 0 : rng() % 3000);
    for (auto& k : run) k = std::uint32_t(rng() % distinct) * 2654435761u;
    std::stable_sort(run.begin(), run.end(), [&](auto a, auto b) { return sk(a) < sk(b); });
    c.runs.push_back(run);
  }
  return c;
}

// The stable merge: every run's elements with (run, position) as values, stable-sorted by key.
std::vector<std::pair<std::uint32_t, std::uint64_t>> expected(const Case& c) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> all;
  for (std::size_t r = 0; r < c.runs.size(); ++r)
    for (std::size_t i = 0; i < c.runs[r].size(); ++i) all.emplace_back(c.runs[r][i], (r << 32) | i);
  std::stable_sort(all.begin(), all.end(), [&](auto a, auto b) { return c.sk(a.first) < c.sk(b.first); });
  return all;
}

}  // namespace

TEST(SortedRuns, MergeEqualsTheStableSortOfTheRuns) {
  std::mt19937_64 rng(rxm::testing::test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    rxm::mesh::SortKey<std::uint32_t> sk;
    sk.order = trial % 2 ? rxm::Order::descending : rxm::Order::ascending;
    if (trial % 5 == 0) sk.begin_bit = 8, sk.end_bit = 20;  // a bit range: many more ties
    const std::size_t count = 1 + std::size_t(trial % 12);
    const Case c = random_case(rng, count, trial % 3 == 0 ? 3 : 100000, sk);
    std::vector<rxm::mesh::Run<std::uint32_t>> runs;
    std::vector<std::vector<std::uint64_t>> values(count);
    for (std::size_t r = 0; r < count; ++r) {
      for (std::size_t i = 0; i < c.runs[r].size(); ++i) values[r].push_back((r << 32) | i);
      runs.push_back({c.runs[r].data(), reinterpret_cast<const std::byte*>(values[r].data()), c.runs[r].size()});
    }
    const auto want = expected(c);
    for (unsigned threads : {1u, 3u, 8u}) {
      std::vector<std::uint32_t> out(want.size(), 0xDEADBEEF);
      std::vector<std::uint64_t> out_values(want.size(), ~0ull);
      rxm::mesh::merge_runs(runs, out.data(), reinterpret_cast<std::byte*>(out_values.data()), 8, sk, threads);
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(out[i], want[i].first) << "trial " << trial << " threads " << threads << " at " << i;
        ASSERT_EQ(out_values[i], want[i].second) << "trial " << trial << " threads " << threads << " at " << i;
      }
    }
  }
}

TEST(SortedRuns, CutsPutExactlyTheTargetsBeforeThemStably) {
  std::mt19937_64 rng(rxm::testing::test_seed() + 1);
  for (int trial = 0; trial < 100; ++trial) {
    rxm::mesh::SortKey<std::uint32_t> sk;
    const Case c = random_case(rng, 1 + std::size_t(trial % 7), trial % 2 ? 2 : 50000, sk);
    const auto want = expected(c);
    std::vector<std::uint64_t> targets = {0, want.size()};
    for (int t = 0; t < 20; ++t) targets.push_back(want.empty() ? 0 : rng() % (want.size() + 1));
    std::vector<rxm::mesh::Run<std::uint32_t>> runs;
    for (const auto& run : c.runs) runs.push_back({run.data(), nullptr, run.size()});
    const auto cut = rxm::mesh::cuts_of_runs(runs, targets, sk);
    for (std::size_t b = 0; b < targets.size(); ++b) {
      // The first targets[b] elements of the stable merge are exactly each run's prefix up to its cut.
      std::vector<std::uint64_t> taken(c.runs.size(), 0);
      for (std::size_t i = 0; i < targets[b]; ++i) ++taken[want[i].second >> 32];
      for (std::size_t r = 0; r < c.runs.size(); ++r)
        ASSERT_EQ(cut[r][b], taken[r]) << "trial " << trial << " target " << targets[b] << " run " << r;
    }
  }
}

TEST(SortedRuns, SixtyFourBitKeysAtTheTopOfTheRange) {
  rxm::mesh::SortKey<std::uint64_t> sk;
  const std::vector<std::uint64_t> a = {0, 5, UINT64_MAX, UINT64_MAX}, b = {UINT64_MAX - 1, UINT64_MAX};
  const std::vector<rxm::mesh::Run<std::uint64_t>> runs = {{a.data(), nullptr, a.size()}, {b.data(), nullptr, b.size()}};
  std::vector<std::uint64_t> out(6);
  rxm::mesh::merge_runs(runs, out.data(), nullptr, 0, sk, 1);
  EXPECT_EQ(out, (std::vector<std::uint64_t>{0, 5, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX, UINT64_MAX}));
  const auto keys = rxm::mesh::keys_at_places({4, 6}, 64, [&](const std::vector<std::uint64_t>& cand) {
    std::vector<std::uint64_t> sums(cand.size(), 0);
    for (std::size_t i = 0; i < cand.size(); ++i)
      for (const auto& r : runs) sums[i] += rxm::mesh::count_below(r.keys, r.n, cand[i], sk);
    return sums;
  });
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{UINT64_MAX, UINT64_MAX}));
}
