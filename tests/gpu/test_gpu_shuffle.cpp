// rxm::shuffle on GPU mesh devices: logical devices of one GPU (Context::local({0, 0, 0, 0}) and
// three of them), and every GPU of the machine where it has several. Every result is compared bit
// for bit with the CPU model (tests/common/shuffle_model.hpp) of the same shards: every built-in
// bucket function (hash included), u32, u64, i32 and f32 keys, 4- and 8-byte values, sizes 0, 1
// and primes, empty shards, every bucket owned by one device, m = 1 and m = 65536, not streamed and
// streamed in 3 tiles. Bad input is
// refused on every device before a key moves.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "common/device_copies.hpp"
#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "common/shuffle_model.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/radixmesh.hpp"
#include "radixmesh/shuffle.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;

namespace {

template <class T> rxm::DeviceArray<T> upload(const std::vector<T>& host, int device) {
  rxm::DeviceArray<T> d(device, host.size());
  if (!host.empty()) RXM_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Random keys; below `bound` when it is not 0 (identity buckets need keys < m).
template <class K> std::vector<K> random_keys(std::size_t n, std::mt19937_64& rng, std::uint64_t bound) {
  std::vector<K> keys(n);
  for (auto& k : keys) {
    if constexpr (std::is_same_v<K, float>) k = float(int(rng() % 20001) - 10000) / 8.0f;  // ties, signs
    else k = K(bound ? rng() % bound : rng());
  }
  return keys;
}

// Shards on the context's devices, the GPU shuffle, and the CPU model of the same data.
template <class K, class V, class F>
void check(rxm::Context& ctx, const std::vector<std::size_t>& sizes, const F& f, const std::vector<int>& owner,
           std::uint64_t seed, const std::string& what, std::uint64_t key_bound = 0) {
  SCOPED_TRACE(what);
  const int p = ctx.mesh_size();
  std::mt19937_64 rng(seed);
  std::vector<std::vector<K>> keys(static_cast<std::size_t>(p));
  std::vector<std::vector<V>> values(static_cast<std::size_t>(p));
  std::uint64_t next = 0;
  for (int d = 0; d < p; ++d) {
    keys[std::size_t(d)] = random_keys<K>(sizes[std::size_t(d)], rng, key_bound);
    values[std::size_t(d)].resize(sizes[std::size_t(d)]);
    for (auto& v : values[std::size_t(d)]) v = V(next++);  // the global index: stability shows
  }
  std::vector<rxm::DeviceArray<K>> dk;
  std::vector<rxm::DeviceArray<V>> dv;
  std::vector<rxm::device_span<const K>> key_spans;
  std::vector<rxm::device_span<const V>> value_spans;
  for (int d = 0; d < p; ++d) {
    dk.push_back(upload(keys[std::size_t(d)], ctx.devices()[std::size_t(d)].id));
    dv.push_back(upload(values[std::size_t(d)], ctx.devices()[std::size_t(d)].id));
  }
  for (int d = 0; d < p; ++d) {
    key_spans.emplace_back(dk[std::size_t(d)]);
    value_spans.emplace_back(dv[std::size_t(d)]);
  }
  const auto want = rxm::testing::shuffle_model(keys, values, f, owner, p);
  for (int tiles : {0, 3}) {  // automatic, and streamed in 3 tiles: the same result
    SCOPED_TRACE(::testing::Message() << "tiles " << tiles);
    auto got = rxm::shuffle(ctx, std::span<const rxm::device_span<const K>>(key_spans),
                            std::span<const rxm::device_span<const V>>(value_spans), f, std::span<const int>(owner),
                            {.tiles = tiles});
    ASSERT_EQ(got.shards.size(), std::size_t(p));
    for (int d = 0; d < p; ++d) {
      const auto& s = got.shards[std::size_t(d)];
      const auto& w = want[std::size_t(d)];
      ASSERT_EQ(s.bucket_offsets, w.offsets) << "device " << d;
      const auto gk = rxm::testing::to_host(s.keys.data(), s.keys.size());
      const auto gv = rxm::testing::to_host(s.values.data(), s.values.size());
      ASSERT_EQ(gk.size(), w.keys.size()) << "device " << d;
      ASSERT_EQ(0, std::memcmp(gk.data(), w.keys.data(), gk.size() * sizeof(K))) << "device " << d << ": keys";
      ASSERT_EQ(gv, w.values) << "device " << d << ": values (global indices: stability)";
    }
  }
  // Keys only: the same keys.
  auto keys_only = rxm::shuffle(ctx, std::span<const rxm::device_span<const K>>(key_spans), f, std::span<const int>(owner));
  for (int d = 0; d < p; ++d) {
    const auto gk = rxm::testing::to_host(keys_only.shards[std::size_t(d)].keys.data(),
                                          keys_only.shards[std::size_t(d)].keys.size());
    ASSERT_EQ(0, std::memcmp(gk.data(), want[std::size_t(d)].keys.data(), gk.size() * sizeof(K)))
        << "keys only, device " << d;
  }
}

std::vector<int> round_robin(std::size_t m, int p) {
  std::vector<int> o(m);
  for (std::size_t b = 0; b < m; ++b) o[b] = int(b % std::size_t(p));
  return o;
}

rxm::Context logical(int p) { return rxm::Context::local(std::vector<int>(std::size_t(p), 0), rxm::Backend::cuda); }

template <class K> void every_bucket_function(rxm::Context& ctx, std::uint64_t seed) {
  const int p = ctx.mesh_size();
  std::vector<std::size_t> sizes;
  for (int d = 0; d < p; ++d) sizes.push_back(d == 1 ? 0 : std::size_t(100003 + 7919 * d));  // device 1 empty
  check<K, std::uint32_t>(ctx, sizes, rxm::buckets::hash{.m = 1000}, round_robin(1000, p), seed, "hash m=1000");
  check<K, std::uint64_t>(ctx, sizes, rxm::buckets::hash{.m = 7}, round_robin(7, p), seed + 1, "hash m=7, 8-byte values");
  constexpr int width = int(sizeof(K) * 8);
  check<K, std::uint32_t>(ctx, sizes, rxm::buckets::radix_digit{.shift = width - 8, .bits = 8}, round_robin(256, p),
                          seed + 2, "radix top 8 bits");
  std::vector<int> one_owner(64, p - 1);  // everything to the last device
  check<K, std::uint32_t>(ctx, sizes, rxm::buckets::hash{.m = 64}, one_owner, seed + 3, "all to one device");
  check<K, std::uint32_t>(ctx, sizes, rxm::buckets::hash{.m = 1}, std::vector<int>{0}, seed + 4, "m = 1");
  check<K, std::uint32_t>(ctx, sizes, rxm::buckets::hash{.m = 65536}, round_robin(65536, p), seed + 5, "m = 65536");
  if constexpr (!std::is_same_v<K, float>) {
    check<K, std::uint32_t>(ctx, sizes, rxm::buckets::identity{.m = 300}, round_robin(300, p), seed + 6, "identity", 300);
    check<K, std::uint32_t>(ctx, sizes, rxm::buckets::delta<K>(K(0), std::numeric_limits<K>::max(), 33),
                            round_robin(33, p), seed + 7, "delta");
  }
}

}  // namespace

TEST(GpuShuffle, LogicalDevicesEveryKeyType) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  for (int p : {4, 3}) {
    auto ctx = logical(p);
    ASSERT_EQ(ctx.mesh_size(), p);
    every_bucket_function<std::uint32_t>(ctx, seed);
    every_bucket_function<std::uint64_t>(ctx, seed + 10);
    every_bucket_function<std::int32_t>(ctx, seed + 20);
    every_bucket_function<float>(ctx, seed + 30);
  }
}

TEST(GpuShuffle, SmallAndEmptyShards) {
  RXM_REQUIRE_GPU();
  auto ctx = logical(4);
  for (std::vector<std::size_t> sizes : {std::vector<std::size_t>{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}, {2, 3, 5, 7}}) {
    check<std::uint32_t, std::uint32_t>(ctx, sizes, rxm::buckets::hash{.m = 5}, round_robin(5, 4), 3, "tiny");
  }
}

TEST(GpuShuffle, EveryGpuWhereThereAreSeveral) {
  RXM_REQUIRE_GPU();
  int count = 0;
  RXM_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "one GPU: the logical-device tests cover the mesh";
  auto ctx = rxm::Context::local({}, rxm::Backend::cuda);
  for (auto t : {rxm::comm::Transport::peer, rxm::comm::Transport::peer_sm, rxm::comm::Transport::nccl}) {
    SCOPED_TRACE(rxm::comm::name_of(t));
    rxm::use_transport(ctx, t);
    every_bucket_function<std::uint32_t>(ctx, test_seed());
    if (HasFatalFailure()) return;
  }
}

TEST(GpuShuffle, BadInputIsRefusedBeforeAnyKeyMoves) {
  RXM_REQUIRE_GPU();
  auto ctx = logical(2);
  std::vector<std::uint32_t> host(100, 1);
  auto a = upload(host, 0), b = upload(host, 0);
  std::vector<rxm::device_span<const std::uint32_t>> shards = {rxm::device_span<const std::uint32_t>(a),
                                                              rxm::device_span<const std::uint32_t>(b)};
  std::vector<int> outside = {0, 2, 1};
  try {
    (void)rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(shards), rxm::buckets::hash{.m = 3},
                       std::span<const int>(outside));
    FAIL() << "an owner outside the mesh was accepted";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the mesh of 2"), std::string::npos) << e.what();
  }
  std::vector<std::span<const std::uint32_t>> host_shards = {std::span<const std::uint32_t>(host),
                                                             std::span<const std::uint32_t>(host)};
  std::vector<int> owner = {0, 1, 1};
  try {
    (void)rxm::shuffle(ctx, std::span<const std::span<const std::uint32_t>>(host_shards), rxm::buckets::hash{.m = 3},
                       std::span<const int>(owner));
    FAIL() << "host spans on GPU mesh devices were accepted";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("device_span"), std::string::npos) << e.what();
  }
}
