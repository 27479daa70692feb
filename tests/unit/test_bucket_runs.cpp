// The greedy runs of buckets (src/mesh/bucket_runs.hpp) that the mesh sort's groups and the
// out-of-core levels gather: on random bucket sizes (empty, small, above the goal, above the
// alone mark), every bucket with elements lies in exactly one run, in ascending order; a run
// marked alone is one bucket above the mark; every other run holds at most the goal unless it is
// one bucket, and could not take its next bucket.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mesh/bucket_runs.hpp"

using radixmesh::mesh::bucket_runs;
using radixmesh::mesh::BucketRun;

namespace {

void check_runs(const std::vector<std::uint64_t>& begin, std::uint64_t goal, std::uint64_t alone_above) {
  const std::uint32_t m = std::uint32_t(begin.size() - 1);
  auto size = [&](std::uint32_t b) { return begin[b + 1] - begin[b]; };
  const std::vector<BucketRun> runs = bucket_runs(begin, goal, alone_above);
  std::uint32_t next = 0;
  for (const BucketRun& r : runs) {
    ASSERT_LT(r.first, r.last);
    ASSERT_LE(r.last, m);
    for (std::uint32_t b = next; b < r.first; ++b) EXPECT_EQ(size(b), 0u) << "bucket " << b << " in no run";
    const std::uint64_t count = begin[r.last] - begin[r.first];
    EXPECT_GT(count, 0u) << "an empty run";
    if (r.alone) {
      EXPECT_EQ(r.last - r.first, 1u);
      EXPECT_GT(count, alone_above);
    } else {
      for (std::uint32_t b = r.first; b < r.last; ++b) EXPECT_LE(size(b), alone_above);
      if (r.last - r.first > 1) {
        EXPECT_LE(count, goal);
      }
      if (r.last < m) {
        EXPECT_TRUE(count + size(r.last) > goal || size(r.last) > alone_above) << "the run could take its next bucket";
      }
    }
    next = r.last;
  }
  for (std::uint32_t b = next; b < m; ++b) EXPECT_EQ(size(b), 0u) << "bucket " << b << " in no run";
}

}  // namespace

TEST(BucketRuns, RandomBucketsAgainstTheRules) {
  std::mt19937_64 rng(20261128);
  for (int round = 0; round < 2000; ++round) {
    const std::uint32_t m = 1 + std::uint32_t(rng() % 300);
    const std::uint64_t goal = 1 + rng() % 1000, alone_above = goal + rng() % (rng() % 2 ? 1 : 3000);
    std::vector<std::uint64_t> begin(m + 1, 0);
    for (std::uint32_t b = 0; b < m; ++b) {
      const unsigned kind = unsigned(rng() % 8);
      const std::uint64_t c = kind < 2 ? 0 : kind < 6 ? rng() % (goal / 3 + 1) : kind < 7 ? goal + rng() % goal : alone_above + 1 + rng() % 100;
      begin[b + 1] = begin[b] + c;
    }
    SCOPED_TRACE("round " + std::to_string(round));
    check_runs(begin, goal, alone_above);
  }
}

TEST(BucketRuns, EdgeCases) {
  EXPECT_TRUE(bucket_runs(std::vector<std::uint64_t>{}, 10).empty());
  EXPECT_TRUE(bucket_runs(std::vector<std::uint64_t>{0}, 10).empty());
  EXPECT_TRUE(bucket_runs(std::vector<std::uint64_t>{0, 0, 0, 0}, 10).empty());
  // Without an alone mark, a bucket above the goal is a run of its own, not marked alone.
  const auto big = bucket_runs(std::vector<std::uint64_t>{0, 3, 50, 52}, 10);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[1].first, 1u);
  EXPECT_EQ(big[1].last, 2u);
  EXPECT_FALSE(big[1].alone);
  // Buckets exactly at the goal fill a run; the alone mark is exclusive.
  const auto at = bucket_runs(std::vector<std::uint64_t>{0, 5, 10, 20, 21}, 10, 10);
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[0].last, 2u);
  EXPECT_FALSE(at[1].alone);
  EXPECT_EQ(at[2].first, 3u);
}
