// The mesh sort's groups (src/mesh/sort_groups.hpp) against a model: sources whose keys lie in
// bucket order, cut at random places into one piece per destination; every destination's groups,
// applied to what it received, must hold every key once, in runs of ascending buckets, each bucket's
// keys in the order received (source-major), within the goal unless one bucket alone exceeds it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/random_keys.hpp"
#include "mesh/sort_groups.hpp"
#include "radixmesh/error.hpp"

namespace rxm = radixmesh;
using namespace radixmesh::mesh;

namespace {

struct Element {
  int bucket = 0;
  std::uint64_t id = 0;  // unique: source, then position
  bool operator==(const Element&) const = default;
};

std::vector<Element> by_bucket(std::vector<Element> v) {
  std::stable_sort(v.begin(), v.end(), [](const Element& a, const Element& b) { return a.bucket < b.bucket; });
  return v;
}

void check_case(std::mt19937_64& rng, int P, int m, std::uint64_t goal) {
  std::vector<std::uint64_t> histograms(std::size_t(P * m)), moved(std::size_t(P * P));
  std::vector<std::vector<Element>> sources(static_cast<std::size_t>(P));
  std::vector<std::vector<std::uint64_t>> cuts(static_cast<std::size_t>(P));
  for (int s = 0; s < P; ++s) {
    std::uint64_t n = 0;
    for (int b = 0; b < m; ++b) {
      // Empty, small and large buckets.
      const std::uint64_t c = rng() % 4 == 0 ? 0 : rng() % (rng() % 3 == 0 ? 3 * goal : goal / 2 + 1);
      histograms[std::size_t(s * m + b)] = c;
      for (std::uint64_t e = 0; e < c; ++e) sources[std::size_t(s)].push_back({b, (std::uint64_t(s) << 32) | n++});
    }
    std::vector<std::uint64_t>& cut = cuts[std::size_t(s)];
    cut.push_back(0);
    for (int d = 1; d < P; ++d) cut.push_back(n ? rng() % (n + 1) : 0);
    cut.push_back(n);
    std::sort(cut.begin(), cut.end());
    for (int d = 0; d < P; ++d) moved[std::size_t(s * P + d)] = cut[std::size_t(d + 1)] - cut[std::size_t(d)];
  }
  for (int d = 0; d < P; ++d) {
    std::vector<Element> received;
    for (int s = 0; s < P; ++s)
      received.insert(received.end(), sources[std::size_t(s)].begin() + std::ptrdiff_t(cuts[std::size_t(s)][std::size_t(d)]),
                      sources[std::size_t(s)].begin() + std::ptrdiff_t(cuts[std::size_t(s)][std::size_t(d + 1)]));
    const std::vector<SortGroup> groups = plan_sort_groups(histograms, m, moved, P, d, goal);
    std::vector<Element> grouped(received.size(), Element{-1, ~std::uint64_t(0)});
    std::vector<int> written(received.size(), 0);
    std::uint64_t placed = 0;
    int last_bucket = -1;
    for (const SortGroup& g : groups) {
      ASSERT_EQ(g.begin, placed);
      ASSERT_GT(g.count, 0u);
      std::uint64_t gathered = 0;
      for (const Chunk& c : g.chunks) {
        ASSERT_GE(c.to, g.begin);
        ASSERT_LE(c.to + c.count, g.begin + g.count);
        ASSERT_LE(c.from + c.count, received.size());
        for (std::uint64_t e = 0; e < c.count; ++e) {
          grouped[c.to + e] = received[c.from + e];
          ++written[c.to + e];
        }
        gathered += c.count;
      }
      ASSERT_EQ(gathered, g.count);
      int lo = m, hi = -1;
      for (std::uint64_t e = g.begin; e < g.begin + g.count; ++e) {
        lo = std::min(lo, grouped[e].bucket);
        hi = std::max(hi, grouped[e].bucket);
      }
      EXPECT_GT(lo, last_bucket) << "groups overlap in buckets";
      EXPECT_EQ(g.one_bucket, lo == hi);
      if (g.count > goal) {
        EXPECT_TRUE(g.one_bucket) << "a group over the goal holds several buckets";
      }
      last_bucket = hi;
      placed += g.count;
    }
    ASSERT_EQ(placed, received.size());
    for (int w : written) ASSERT_EQ(w, 1);
    EXPECT_EQ(by_bucket(grouped), by_bucket(received)) << "a bucket's keys changed order";
  }
}

TEST(SortGroups, MatchTheModelOnRandomCuts) {
  const std::uint64_t seed = rxm::testing::test_seed();
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 300; ++t) {
    const int P = 1 + int(rng() % 5), m = 1 + int(rng() % 12);
    const std::uint64_t goal = 1 + rng() % 40;
    SCOPED_TRACE("seed " + std::to_string(seed) + " case " + std::to_string(t));
    check_case(rng, P, m, goal);
    if (HasFatalFailure()) return;
  }
}

TEST(SortGroups, EveryKeyInOneBucket) {
  // One bucket far over the goal, all of it on device 1 of 2: one group, sorted below the digit.
  const std::vector<std::uint64_t> histograms = {0, 100, 0, 0, 50, 0}, moved = {0, 100, 0, 50};
  const std::vector<SortGroup> groups = plan_sort_groups(histograms, 3, moved, 2, 1, 10);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 150u);
  EXPECT_TRUE(groups[0].one_bucket);
  ASSERT_EQ(groups[0].chunks.size(), 2u);
  EXPECT_EQ(groups[0].chunks[1].from, 100u);
  EXPECT_TRUE(plan_sort_groups(histograms, 3, moved, 2, 0, 10).empty());
}

TEST(SortGroups, RefusesCountsThatDisagree) {
  const std::vector<std::uint64_t> histograms = {3, 4}, moved = {8};  // sends 8, holds 7
  EXPECT_THROW(plan_sort_groups(histograms, 2, moved, 1, 0, 4), rxm::Error);
  EXPECT_THROW(plan_sort_groups(histograms, 2, moved, 1, 1, 4), rxm::Error);
}

}  // namespace
