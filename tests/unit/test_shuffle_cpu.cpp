// rxm::shuffle on CPU meshes (threads transport) against the CPU model, bit for bit: every bucket
// function, several key types, values of 4 and 8 bytes (value = a global index, so stability is
// checked element by element), awkward shard sizes and empty shards, owner maps from round-robin
// to everything on one device, m = 1 and m = 65536, meshes of 1 to 7 devices; then bad input.
#include <gtest/gtest.h>

#include <random>

#include "common/error_text.hpp"
#include "common/random_keys.hpp"
#include "common/shuffle_model.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/shuffle.hpp"

namespace rxm = radixmesh;
using rxm::testing::owners;
using rxm::testing::test_seed;

namespace {

const int mesh_sizes[] = {1, 2, 3, 4, 7};
const std::size_t shard_sizes[] = {0, 1, 2, 7, 31, 257, 4093};

// Shards of random keys for a mesh of `size`: device d gets shard_sizes[(d + shift) % 7] keys;
// some devices get none.
template <class K> std::vector<std::vector<K>> random_shards(int size, std::uint64_t seed, std::size_t shift) {
  std::vector<std::vector<K>> shards;
  for (int d = 0; d < size; ++d) {
    const std::size_t n = shard_sizes[(std::size_t(d) + shift) % std::size(shard_sizes)];
    shards.push_back(rxm::testing::random_bit_patterns<K>(n, seed + std::uint64_t(d)));
  }
  return shards;
}

template <class K> std::vector<std::span<const K>> spans_of(const std::vector<std::vector<K>>& v) {
  return {v.begin(), v.end()};
}

// Runs keys-only and (when V is not no_values) keys with values, and compares with the model.
template <class K, class V, class F>
void check(int size, const std::vector<std::vector<K>>& shards, const F& f, const std::vector<int>& owner,
           const std::string& what) {
  auto ctx = rxm::Context::cpu_mesh(unsigned(size), 1);
  std::vector<std::vector<V>> values;
  if constexpr (!std::is_same_v<V, rxm::no_values>) {
    V next = 0;
    for (const auto& s : shards) {
      values.emplace_back(s.size());
      for (auto& v : values.back()) v = next++;
    }
  }
  const auto model = rxm::testing::shuffle_model<K, V>(shards, values, f, owner, size);
  if constexpr (std::is_same_v<V, rxm::no_values>) {
    auto got = rxm::shuffle(ctx, spans_of(shards), f, std::span<const int>(owner));
    ASSERT_EQ(got.shards.size(), std::size_t(size));
    for (int d = 0; d < size; ++d) {
      EXPECT_EQ(got.shards[std::size_t(d)].participant, d);
      rxm::testing::expect_shard_matches<K, V>(got.shards[std::size_t(d)], model[std::size_t(d)],
                                              what + " device " + std::to_string(d));
    }
  } else {
    for (int tiles : {0, 3}) {  // the streamed shuffle (tiles > 1) gives the same result
      auto got = rxm::shuffle(ctx, spans_of(shards), spans_of(values), f, std::span<const int>(owner),
                              {.tiles = tiles});
      for (int d = 0; d < size; ++d)
        rxm::testing::expect_shard_matches<K, V>(got.shards[std::size_t(d)], model[std::size_t(d)],
                                                what + " device " + std::to_string(d) + " tiles " + std::to_string(tiles));
    }
  }
}

template <class K, class F> void check_all_values(int size, std::uint64_t seed, const F& f, std::size_t m,
                                                  const std::string& name) {
  for (const std::string kind : {"round-robin", "block", "skewed"}) {
    const auto shards = random_shards<K>(size, seed, std::size_t(size) + kind.size());
    const auto owner = owners(kind, m, size);
    const std::string what = name + " n " + std::to_string(size) + " owners " + kind + " seed " + std::to_string(seed);
    check<K, rxm::no_values>(size, shards, f, owner, what);
    check<K, std::uint32_t>(size, shards, f, owner, what + " v4");
    check<K, std::uint64_t>(size, shards, f, owner, what + " v8");
  }
}

}  // namespace

TEST(ShuffleCpu, HashBucketsEveryKeyTypeAndMesh) {
  const std::uint64_t seed = test_seed();
  for (int size : mesh_sizes)
  {
    for (std::uint32_t m : {1u, 2u, 7u, 65536u})
      check_all_values<std::uint32_t>(size, seed, rxm::buckets::hash{.m = m}, m, "hash u32 m " + std::to_string(m));
    const rxm::buckets::hash f{.m = 256};
    check_all_values<std::uint64_t>(size, seed, f, 256, "hash u64");
    check_all_values<std::int32_t>(size, seed, f, 256, "hash i32");
    check_all_values<float>(size, seed, f, 256, "hash f32");
  }
}

TEST(ShuffleCpu, EveryBucketFunction) {
  const std::uint64_t seed = test_seed();
  for (int size : {1, 3, 4}) {
    check_all_values<std::uint32_t>(size, seed, rxm::buckets::radix_digit{.shift = 24, .bits = 8}, 256, "radix");
    check_all_values<std::int32_t>(size, seed, rxm::buckets::radix_digit{.shift = 16, .bits = 16}, 65536, "radix16");
    check_all_values<float>(size, seed, rxm::buckets::delta<float>(-1e30f, 1e30f, 100), 100, "delta f32");
    check_all_values<std::uint64_t>(size, seed, rxm::buckets::delta<std::uint64_t>(0, ~0ull, 33), 33, "delta u64");
    const std::vector<std::int32_t> bounds = {-1000000, 0, 5, 1 << 30};
    check_all_values<std::int32_t>(size, seed, rxm::buckets::splitters<std::int32_t>{bounds.data(), 4}, 5, "splitters");
    auto user = [](std::uint32_t k) { return k % 5u; };  // a user functor: m from bucket_owner
    check_all_values<std::uint32_t>(size, seed, user, 5, "user");
  }
  // identity: keys below m.
  for (int size : {2, 7}) {
    std::vector<std::vector<std::uint32_t>> shards(static_cast<std::size_t>(size));
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    for (auto& s : shards) s.resize(rng() % 300, 0);
    for (auto& s : shards)
      for (auto& k : s) k = rng() % 1000;
    check<std::uint32_t, std::uint64_t>(size, shards, rxm::buckets::identity{.m = 1000}, owners("block", 1000, size),
                                        "identity");
  }
}

TEST(ShuffleCpu, HashSpreadsSequentialKeys) {
  std::vector<std::size_t> counts(16);
  const rxm::buckets::hash f{.m = 16};
  for (std::uint32_t k = 0; k < 16000; ++k) ++counts[f(k)];
  for (auto c : counts) {
    EXPECT_GT(c, 800u);
    EXPECT_LT(c, 1200u);
  }
  EXPECT_EQ(f(std::uint32_t(5)), f(std::uint64_t(5))) << "the hash is of the key's bits, widened";
}

TEST(ShuffleCpu, ContextOfOneDevice) {
  auto ctx = rxm::Context::cpu(2);
  std::vector<std::uint32_t> keys = {5, 3, 9, 3, 1};
  std::vector<std::span<const std::uint32_t>> shards = {keys};
  std::vector<int> owner(4, 0);
  auto got = rxm::shuffle(ctx, shards, rxm::buckets::radix_digit{.shift = 0, .bits = 2}, std::span<const int>(owner));
  EXPECT_EQ(got.shards[0].keys, (std::vector<std::uint32_t>{5, 9, 1, 3, 3}));
  EXPECT_EQ(got.shards[0].bucket(3).size(), 2u);
}

// Unchecked, a key whose id is >= m goes to bucket m - 1 and its owner (here device 0, while
// device 2 owns the highest-placed buckets), with or without tiles.
TEST(ShuffleCpu, UncheckedOutOfRangeIdsGoToTheLastBucket) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  std::vector<std::vector<std::uint32_t>> keys = {{1, 9, 3}, {7, 0}, {2, 3, 12, 1}};
  const std::vector<int> owner = {2, 1, 2, 0};
  for (int tiles : {1, 2}) {
    auto got = rxm::shuffle(ctx, spans_of(keys), rxm::buckets::identity{.m = 4}, std::span<const int>(owner),
                            {.checked = false, .tiles = tiles});
    EXPECT_EQ(got.shards[0].keys, (std::vector<std::uint32_t>{9, 3, 7, 3, 12})) << "tiles " << tiles;
    EXPECT_EQ(got.shards[0].bucket(3).size(), 5u);
    EXPECT_EQ(got.shards[1].keys, (std::vector<std::uint32_t>{1, 1}));
    EXPECT_EQ(got.shards[2].keys, (std::vector<std::uint32_t>{0, 2})) << "bucket 0, then bucket 2";
    EXPECT_EQ(got.shards[2].bucket(2).size(), 1u);
  }
}

TEST(ShuffleCpu, BadInputIsAClearErrorNamingTheDevice) {
  auto ctx = rxm::Context::cpu_mesh(3, 1);
  std::vector<std::vector<std::uint32_t>> keys = {{1, 2}, {3}, {4, 5, 6}};
  auto shards = spans_of(keys);
  const rxm::buckets::hash f{.m = 4};
  std::vector<int> owner = {0, 1, 2, 3};  // 3 is outside the mesh
  std::string what = rxm::testing::error_text([&] { rxm::shuffle(ctx, shards, f, std::span<const int>(owner)); });
  EXPECT_NE(what.find("bucket 3 is owned by mesh device 3"), std::string::npos) << what;
  EXPECT_NE(what.find("fix:"), std::string::npos) << what;

  std::vector<int> short_owner = {0, 1, 2};
  what = rxm::testing::error_text([&] { rxm::shuffle(ctx, shards, f, std::span<const int>(short_owner)); });
  EXPECT_NE(what.find("bucket_owner has 3 entries for m = 4"), std::string::npos) << what;

  owner = {0, 1, 2, 0};
  std::vector<std::vector<std::uint32_t>> values = {{1, 2}, {3, 4}, {4, 5, 6}};
  what = rxm::testing::error_text([&] { rxm::shuffle(ctx, shards, spans_of(values), f, std::span<const int>(owner)); });
  EXPECT_NE(what.find("mesh device 1 has 1 keys and 2 values"), std::string::npos) << what;

  auto shards_two = std::vector<std::span<const std::uint32_t>>(shards.begin(), shards.begin() + 2);
  what = rxm::testing::error_text([&] { rxm::shuffle(ctx, shards_two, f, std::span<const int>(owner)); });
  EXPECT_NE(what.find("2 shards for 3 local mesh devices"), std::string::npos) << what;

  // A bucket id >= m on device 2 (identity of its first key, 4, with m = 4).
  what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, shards, rxm::buckets::identity{.m = 4}, std::span<const int>(owner));
  });
  EXPECT_NE(what.find("mesh device 2"), std::string::npos) << what;
  EXPECT_NE(what.find("index 0 of mesh device 2 (bits 0x4) has bucket id 4"), std::string::npos) << what;

  // In a streamed shuffle the index is the key's within its shard, whatever tile holds it.
  std::vector<std::uint32_t> late_bad = {0, 1, 2, 3, 0, 1, 2, 9, 0, 1};
  std::vector<std::span<const std::uint32_t>> with_late_bad = {shards[0], shards[1], late_bad};
  what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, with_late_bad, rxm::buckets::identity{.m = 4}, std::span<const int>(owner), {.tiles = 4});
  });
  EXPECT_NE(what.find("index 7 of mesh device 2 (bits 0x9) has bucket id 9"), std::string::npos) << what;
  what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, shards, f, std::span<const int>(owner), {.tiles = -1});
  });
  EXPECT_NE(what.find("tiles = -1"), std::string::npos) << what;

  // Unsorted splitters: the bucket function's own check.
  const std::vector<std::uint32_t> bad_bounds = {5, 1, 9};
  what = rxm::testing::error_text([&] {
    rxm::shuffle(ctx, shards, rxm::buckets::splitters<std::uint32_t>{bad_bounds.data(), 3}, std::span<const int>(owner));
  });
  EXPECT_NE(what.find("not sorted"), std::string::npos) << what;

  // The context is still usable after the errors.
  auto got = rxm::shuffle(ctx, shards, f, std::span<const int>(owner));
  std::size_t total = 0;
  for (const auto& s : got.shards) total += s.keys.size();
  EXPECT_EQ(total, 6u);
}
