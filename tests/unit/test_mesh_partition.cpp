// RMG's partition plan on hand-made histograms (expected plans worked out in the comments), and
// against a model: random keys on several devices, refined pass by pass through the plans, must land
// so that the destinations' stably sorted keys, concatenated, equal one stable sort of all keys
// in global order (device, then position).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/random_keys.hpp"
#include "core/mesh/partition_plan.hpp"
#include "radixmesh/error.hpp"

namespace rxm = radixmesh;
using namespace radixmesh::mesh;

namespace {

using Counts = std::vector<std::uint64_t>;

PartitionInput input(int devices, int buckets, Counts histograms, Counts targets) {
  PartitionInput in;
  in.devices = devices;
  in.buckets = buckets;
  in.histograms = std::move(histograms);
  in.targets = std::move(targets);
  return in;
}

PartitionOptions options(double epsilon, double fusion) {
  PartitionOptions o;
  o.epsilon = epsilon;
  o.fusion_fraction = fusion;
  return o;
}

// Two devices, four buckets: device 0 [3,2,1,4], device 1 [1,3,3,3]; bucket totals 4,5,4,7 occupy
// [0,4) [4,9) [9,13) [13,20). Keeping counts (10 each) puts the boundary at 10, inside bucket 2.
const Counts two_devices = {3, 2, 1, 4, 1, 3, 3, 3};

TEST(MeshPartition, SpanningBucketWithoutPadding) {
  const PartitionPlan plan = plan_partition(input(2, 4, two_devices, {10, 10}), options(0, 0));
  ASSERT_EQ(plan.groups.size(), 4u);
  EXPECT_EQ(plan.groups[0].destinations, std::vector<int>{0});
  EXPECT_EQ(plan.groups[1].destinations, std::vector<int>{0});
  EXPECT_EQ(plan.groups[2].fate, BucketFate::spanning);
  EXPECT_EQ(plan.groups[2].destinations, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.groups[2].begin, 9u);
  EXPECT_EQ(plan.groups[2].end, 13u);
  EXPECT_EQ(plan.groups[3].destinations, std::vector<int>{1});
  EXPECT_EQ(plan.spanning, std::vector<std::size_t>{2});
  // Resolved: buckets 0-1 to device 0 (device 0 sends 3+2, device 1 sends 1+3), bucket 3 to
  // device 1 (4 from device 0, 3 from device 1).
  EXPECT_EQ(plan.send, (Counts{5, 4, 4, 3}));
  EXPECT_EQ(plan.received, (Counts{9, 7}));
  EXPECT_EQ(plan.cuts, (Counts{0, 10, 20}));
  EXPECT_TRUE(plan.needs_exchange());
}

TEST(MeshPartition, EpsilonPaddingAvoidsTheSplit) {
  // ε = 0.2: each side may move by ε/2 x 10 = 1 key. Moving the boundary back to 9 costs 1 (device
  // 1 takes bucket 2 whole: 11 keys <= 1.2 x 10); forward to 13 would cost 3.
  const PartitionPlan plan = plan_partition(input(2, 4, two_devices, {10, 10}), options(0.2, 0));
  EXPECT_TRUE(plan.spanning.empty());
  EXPECT_EQ(plan.cuts, (Counts{0, 9, 20}));
  EXPECT_EQ(plan.groups[2].destinations, std::vector<int>{1});
  EXPECT_EQ(plan.received, (Counts{9, 11}));
  // ε = 0.1 allows 0.5 key: not enough, the bucket spans.
  EXPECT_EQ(plan_partition(input(2, 4, two_devices, {10, 10}), options(0.1, 0)).spanning.size(), 1u);
  // ε = 0.6 allows 3 either way: the shorter move (back by 1) wins.
  EXPECT_EQ(plan_partition(input(2, 4, two_devices, {10, 10}), options(0.6, 0)).cuts[1], 9u);
}

TEST(MeshPartition, SecondPassOnTheSpanningBucket) {
  // Bucket 2 of the first pass ([9,13): one key of device 0, three of device 1) refined on a 1-bit
  // digit: device 0 [1,0], device 1 [1,2]; sub-buckets [9,11) and [11,13). The boundary 10 falls
  // inside sub-bucket 0, which spans again; sub-bucket 1 goes to device 1.
  PartitionInput second = input(2, 2, {1, 0, 1, 2}, {10, 10});
  second.first_position = 9;
  const PartitionPlan plan = plan_partition(second, options(0, 0));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].fate, BucketFate::spanning);
  EXPECT_EQ(plan.groups[0].begin, 9u);
  EXPECT_EQ(plan.groups[1].destinations, std::vector<int>{1});
  EXPECT_EQ(plan.send, (Counts{0, 0, 0, 2}));
  // On the last digit the spanning sub-bucket holds equal keys and splits by position: device 0's
  // key is position 9 (device 0's), device 1's key is position 10 (device 1's).
  second.last_digit = true;
  const PartitionPlan last = plan_partition(second, options(0, 0));
  EXPECT_EQ(last.groups[0].fate, BucketFate::split_by_position);
  EXPECT_TRUE(last.spanning.empty());
  EXPECT_EQ(last.send, (Counts{1, 0, 0, 3}));
  EXPECT_EQ(last.received, (Counts{1, 3}));
}

TEST(MeshPartition, ZeroEntropySplitsByPosition) {
  // Every key equal (bucket 2): device 0 holds 5, device 1 none, device 2 seven.
  PartitionInput in = input(3, 4, {0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 0}, {5, 0, 7});
  in.last_digit = true;
  // Keeping counts: positions 0-4 are device 0's and go back to it, 5-11 are device 2's; the empty
  // device 1 takes nothing. Nothing moves.
  const PartitionPlan keep = plan_partition(in, options(0, 0));
  ASSERT_EQ(keep.groups.size(), 1u);
  EXPECT_EQ(keep.groups[0].fate, BucketFate::split_by_position);
  EXPECT_EQ(keep.groups[0].destinations, (std::vector<int>{0, 2}));
  EXPECT_FALSE(keep.needs_exchange());
  // Balanced (4 each): device 0's positions 0-3 stay, 4 goes to device 1; device 2's positions 5-7
  // go to device 1 and 8-11 stay.
  in.targets = balanced_counts(12, 3);
  const PartitionPlan balanced = plan_partition(in, options(0, 0));
  EXPECT_EQ(balanced.send, (Counts{4, 1, 0, 0, 0, 0, 0, 3, 4}));
  EXPECT_EQ(balanced.received, (Counts{4, 4, 4}));
  // Not yet on the last digit, the same bucket spans all three devices and is refined.
  in.last_digit = false;
  EXPECT_EQ(plan_partition(in, options(0, 0)).groups[0].destinations, (std::vector<int>{0, 1, 2}));
}

TEST(MeshPartition, FusionAndSortedInput) {
  // Device 0 [1,1,1,1,1,45,0,0], device 1 [0,0,0,0,0,0,20,30]: the boundary (50) is a bucket edge,
  // so every bucket stays on its device: no exchange. Fusion under 0.12 x 50 = 6 keys merges
  // buckets 0-4 (5 keys); bucket 5 is too big to join; 6 and 7 are big.
  const Counts h = {1, 1, 1, 1, 1, 45, 0, 0, 0, 0, 0, 0, 0, 0, 20, 30};
  const PartitionPlan plan = plan_partition(input(2, 8, h, keep_counts(h, 2, 8)), options(0, 0.12));
  ASSERT_EQ(plan.groups.size(), 4u);
  EXPECT_EQ(plan.groups[0].first_bucket, 0);
  EXPECT_EQ(plan.groups[0].last_bucket, 4);
  EXPECT_EQ(plan.groups[0].end, 5u);
  EXPECT_EQ(plan.groups[1].first_bucket, 5);
  EXPECT_FALSE(plan.needs_exchange());
  EXPECT_EQ(plan.send, (Counts{50, 0, 0, 50}));
  // Without fusion: one group per non-empty bucket.
  EXPECT_EQ(plan_partition(input(2, 8, h, keep_counts(h, 2, 8)), options(0, 0)).groups.size(), 8u);

  EXPECT_TRUE(sorted_across_devices({{1, 5, 3}, {0, 0, 0}, {5, 9, 2}}, {3, 0, 2}));
  EXPECT_FALSE(sorted_across_devices({{1, 5, 3}, {4, 9, 2}}, {3, 2}));  // ranges overlap
  EXPECT_FALSE(sorted_across_devices({{1, 5, 3}, {6, 9, 2}}, {2, 3}));  // counts differ from targets
  EXPECT_TRUE(sorted_across_devices({{7, 7, 3}, {7, 7, 2}}, {3, 2}));   // all equal
}

TEST(MeshPartition, RefusesBadInput) {
  EXPECT_THROW(plan_partition(input(2, 4, {1, 2, 3}, {3, 3})), rxm::Error);
  EXPECT_THROW(plan_partition(input(2, 4, two_devices, {10})), rxm::Error);
  EXPECT_THROW(plan_partition(input(2, 4, two_devices, {10, 9})), rxm::Error);  // 20 keys, room for 19
  EXPECT_THROW(plan_partition(input(2, 4, two_devices, {10, 10}), options(-1, 0)), rxm::Error);
  EXPECT_THROW(plan_partition(input(0, 4, {}, {})), rxm::Error);
  EXPECT_THROW(balanced_counts(5, 0), rxm::Error);
  EXPECT_THROW(sorted_across_devices({{0, 0, 0}}, {}), rxm::Error);
  const std::string text = partition_text(plan_partition(input(2, 4, two_devices, {10, 10}), options(0, 0)));
  EXPECT_NE(text.find("bucket 2 [9, 13) spanning -> device 0,1"), std::string::npos) << text;
  EXPECT_EQ(partition_json(plan_partition(input(2, 4, two_devices, {10, 10}))).rfind("{\"devices\":2", 0), 0u);
}

// --- the model ------------------------------------------------------------------------------------

struct Key {
  std::uint32_t value;
  int device;
  std::size_t index;
};

constexpr int digit_bits = 2;
constexpr int key_bits = 8;

// Assigns every key of `keys` (in global order, all sharing the digits above `shift + digit_bits`)
// a destination, refining spanning buckets on the next digit.
void assign(const std::vector<Key>& keys, int shift, std::uint64_t first_position, int devices, const Counts& targets,
            const PartitionOptions& o, std::vector<int>& destination_of, const std::vector<std::size_t>& base,
            std::size_t& passes, Counts& send) {
  ++passes;
  const int buckets = 1 << digit_bits;
  auto digit = [&](const Key& k) { return int((k.value >> shift) & std::uint32_t(buckets - 1)); };
  PartitionInput in;
  in.devices = devices;
  in.buckets = buckets;
  in.histograms.assign(std::size_t(devices * buckets), 0);
  for (const Key& k : keys) ++in.histograms[std::size_t(k.device * buckets + digit(k))];
  in.targets = targets;
  in.first_position = first_position;
  in.last_digit = shift == 0;
  const PartitionPlan plan = plan_partition(in, o);
  for (std::size_t x = 0; x < send.size(); ++x) send[x] += plan.send[x];
  for (const BucketGroup& g : plan.groups) {
    std::vector<Key> members;
    for (const Key& k : keys)
      if (digit(k) >= g.first_bucket && digit(k) <= g.last_bucket) members.push_back(k);
    ASSERT_EQ(members.size(), g.end - g.begin);
    if (g.fate == BucketFate::spanning) {
      assign(members, shift - digit_bits, g.begin, devices, targets, o, destination_of, base, passes, send);
      continue;
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      int d = g.destinations[0];
      for (int x : g.destinations)
        if (g.begin + m >= plan.cuts[std::size_t(x)]) d = x;
      destination_of[base[std::size_t(members[m].device)] + members[m].index] = d;
    }
  }
}

TEST(MeshPartition, MatchesAStableSortOfRandomShards) {
  std::mt19937_64 rng(rxm::testing::test_seed());
  SCOPED_TRACE("seed " + std::to_string(rxm::testing::test_seed()));
  std::size_t most_passes = 0;
  for (int round = 0; round < 300; ++round) {
    const int devices = 1 + int(rng() % 5);
    const std::uint32_t distinct = 1 + std::uint32_t(rng() % 40);  // few distinct keys: ties across devices
    std::vector<Key> keys;
    std::vector<std::size_t> base;
    for (int d = 0; d < devices; ++d) {
      base.push_back(keys.size());
      const std::size_t n = rng() % 4 == 0 ? 0 : rng() % 60;
      for (std::size_t i = 0; i < n; ++i)
        keys.push_back(Key{std::uint32_t(rng() % distinct) * (256 / distinct), d, i});
    }
    const Counts targets = rng() % 2 ? balanced_counts(keys.size(), devices) : [&] {
      Counts c(std::size_t(devices), 0);
      for (const Key& k : keys) ++c[std::size_t(k.device)];
      return c;
    }();
    const double epsilon = round % 3 == 0 ? 0.0 : round % 3 == 1 ? 0.05 : 0.4;
    std::vector<int> destination_of(keys.size(), -1);
    std::size_t passes = 0;
    Counts send(std::size_t(devices * devices), 0);
    if (!keys.empty())
      assign(keys, key_bits - digit_bits, 0, devices, targets, options(epsilon, 0.05), destination_of, base, passes,
             send);
    most_passes = std::max(most_passes, passes);
    for (int d : destination_of) ASSERT_GE(d, 0) << "round " << round << ": a key got no destination";
    // The plans' send counts are the keys that went from each device to each destination.
    Counts moved(send.size(), 0);
    for (std::size_t i = 0; i < keys.size(); ++i) ++moved[std::size_t(keys[i].device * devices + destination_of[i])];
    EXPECT_EQ(send, moved) << "round " << round;

    // Each destination's keys in global order, stably sorted, concatenated = the global stable sort.
    std::vector<Key> reference = keys;
    std::stable_sort(reference.begin(), reference.end(), [](const Key& a, const Key& b) { return a.value < b.value; });
    std::vector<Key> result;
    Counts received(std::size_t(devices), 0);
    for (int d = 0; d < devices; ++d) {
      std::vector<Key> mine;
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (destination_of[i] == d) mine.push_back(keys[i]);
      received[std::size_t(d)] = mine.size();
      std::stable_sort(mine.begin(), mine.end(), [](const Key& a, const Key& b) { return a.value < b.value; });
      result.insert(result.end(), mine.begin(), mine.end());
    }
    ASSERT_EQ(result.size(), keys.size()) << "a key got no destination";
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(result[i].value, reference[i].value) << "round " << round << " position " << i;
      ASSERT_EQ(result[i].device, reference[i].device) << "round " << round << " position " << i;
      ASSERT_EQ(result[i].index, reference[i].index) << "round " << round << " position " << i;
    }
    for (int d = 0; d < devices; ++d) {
      if (epsilon == 0) {
        EXPECT_EQ(received[std::size_t(d)], targets[std::size_t(d)]);
      }
      EXPECT_LE(double(received[std::size_t(d)]), (1 + epsilon) * double(targets[std::size_t(d)]) + 1e-9);
    }
  }
  EXPECT_GT(most_passes, 2u);  // some spanning buckets were refined down to the last digit
}

}  // namespace
