// rxm::Channel on logical devices (several context devices on GPU 0): a kernel pushes random keys
// with values = their global index from every source device; after close(), every device's
// result is checked against a CPU model of the channel: per bucket, the multiset of (key, value)
// equals the expected one (each bucket sorted by value first, since order within a bucket is
// unspecified), and buckets the device does not own are empty. Also: empty sources, all buckets
// owned by one device, m = 1 and m = 4096, keys only with a user functor and an explicit m,
// overflow (the error names the device, capacity and count; push never writes past an inbox:
// checked on a guarded inbox), bucket ids >= m, and bad arguments.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/channel.hpp"
#include "radixmesh/device/channel.cuh"
#include "radixmesh/error.hpp"

namespace rxm = radixmesh;

namespace {

constexpr unsigned char poison = 0xA5;

// A user's bucket function without num_buckets(): a multiplicative hash of the key's bits mod m.
struct mod_hash {
  std::uint32_t m = 1;
  template <class K> RXM_HOST_DEVICE std::uint32_t operator()(K key) const {
    const std::uint64_t bits = std::uint64_t(rxm::to_bits(key));
    return std::uint32_t(((bits * 0x9E3779B97F4A7C15ull) >> 32) % m);
  }
};

template <class K, class V, class F>
__global__ void push_kernel(rxm::ChannelView<K, V, F> view, const K* keys, std::size_t n, std::uint64_t first) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_void_v<V>) view.push(keys[i]);
    else view.push(keys[i], V(first + i));
  }
}

template <class K, class V, class F>
void launch_push(const rxm::ChannelView<K, V, F>& view, const K* keys, std::size_t n, std::uint64_t first,
                 cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = unsigned(std::min<std::size_t>((n + 255) / 256, 1024));
  push_kernel<<<blocks, 256, 0, stream>>>(view, keys, n, first);
  RXM_CUDA_CHECK_LAUNCH();
}

// cudaMalloc hands freshly freed pages out again, so the channel's buffers most likely start
// poisoned. The checks do not rely on it: every result slot is compared, and the poison only
// makes an unwritten slot unlikely to look right.
void poison_free_memory(int ordinal, std::size_t bytes) {
  rxm::DeviceBuffer buffer(ordinal, bytes);
  if (bytes) RXM_CUDA_CHECK(cudaMemset(buffer.data(), poison, bytes));
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
}

// (value, key bits) per tuple; value 0 for keys-only channels.
using Tuple = std::pair<std::uint64_t, std::uint64_t>;

// The channel's model: expected[d][b] = the tuples of bucket b that device d receives.
template <class K, class V, class F> struct Run {
  std::vector<std::vector<K>> keys;                       // per source device
  std::vector<std::vector<std::vector<Tuple>>> expected;  // [device][bucket]
  std::vector<std::size_t> arrivals;                      // per device
};

template <class K, class V, class F>
Run<K, V, F> model(F fn, std::uint32_t m, const std::vector<int>& owners, const std::vector<std::size_t>& per_source,
                   std::uint64_t seed) {
  Run<K, V, F> run;
  const std::size_t devices = per_source.size();
  run.expected.assign(devices, std::vector<std::vector<Tuple>>(m));
  run.arrivals.assign(devices, 0);
  std::uint64_t index = 0;
  for (std::size_t s = 0; s < devices; ++s) {
    run.keys.push_back(rxm::testing::random_bit_patterns<K>(per_source[s], seed + s));
    for (const K& key : run.keys.back()) {
      const std::uint32_t b = fn(key);
      const auto d = std::size_t(owners[b]);
      std::uint64_t value = 0;
      if constexpr (!std::is_void_v<V>) value = std::uint64_t(V(index));
      run.expected[d][b].push_back({value, std::uint64_t(rxm::to_bits(key))});
      ++run.arrivals[d];
      ++index;
    }
  }
  for (auto& device : run.expected)
    for (auto& bucket : device) std::sort(bucket.begin(), bucket.end());
  return run;
}

void sync_all_devices(const rxm::Context& ctx) {
  for (const auto& device : ctx.devices()) {
    rxm::detail::DeviceGuard guard(device.id);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

// Pushes every source's keys (values = global index) on the channel's streams, from device
// arrays on each source's GPU.
template <class K, class V, class F> void push_all(rxm::Channel<K, V, F>& ch, const Run<K, V, F>& run) {
  std::vector<rxm::DeviceArray<K>> inputs;
  for (std::size_t s = 0; s < run.keys.size(); ++s) {
    const auto& host = run.keys[s];
    auto& input = inputs.emplace_back(ch.context().devices()[s].id, host.size());
    if (!host.empty())
      RXM_CUDA_CHECK(cudaMemcpy(input.data(), host.data(), host.size() * sizeof(K), cudaMemcpyHostToDevice));
  }
  sync_all_devices(ch.context());  // the copies ran on the legacy stream; the pushes run on non-blocking ones
  std::uint64_t first = 0;
  for (std::size_t s = 0; s < run.keys.size(); ++s) {
    const auto& host = run.keys[s];
    const auto& input = inputs[s];
    rxm::detail::DeviceGuard guard(ch.context().devices()[s].id);
    launch_push(ch.view(int(s)), input.data(), host.size(), first, static_cast<cudaStream_t>(ch.stream(int(s))));
    first += host.size();
  }
  for (std::size_t s = 0; s < run.keys.size(); ++s)  // before `inputs` goes: the kernels read it
    RXM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(ch.stream(int(s)))));
}

template <class T> std::vector<T> to_host(const rxm::device_span<const T>& span) {
  std::vector<T> host(span.size());
  if (!host.empty()) RXM_CUDA_CHECK(cudaMemcpy(host.data(), span.data(), span.size_bytes(), cudaMemcpyDeviceToHost));
  return host;
}

template <class K, class V, class F> void check_results(const rxm::Channel<K, V, F>& ch, const Run<K, V, F>& run) {
  const std::uint32_t m = ch.num_buckets();
  for (std::size_t d = 0; d < run.expected.size(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto keys = to_host(ch.keys(int(d)));
    std::vector<std::uint64_t> values(keys.size(), 0);
    if constexpr (!std::is_void_v<V>) {
      const auto v = to_host(ch.values(int(d)));
      ASSERT_EQ(v.size(), keys.size());
      for (std::size_t i = 0; i < v.size(); ++i) values[i] = std::uint64_t(v[i]);
    }
    const auto offsets = ch.bucket_offsets(int(d));
    ASSERT_EQ(offsets.size(), std::size_t(m) + 1);
    ASSERT_EQ(keys.size(), run.arrivals[d]);
    ASSERT_EQ(offsets[0], 0u);
    ASSERT_EQ(offsets[m], keys.size());
    for (std::uint32_t b = 0; b < m; ++b) {
      ASSERT_LE(offsets[b], offsets[b + 1]) << "bucket " << b;
      std::vector<Tuple> got;
      for (std::size_t i = offsets[b]; i < offsets[b + 1]; ++i)
        got.push_back({values[i], std::uint64_t(rxm::to_bits(keys[i]))});
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, run.expected[d][b]) << "bucket " << b;
    }
  }
}

template <class K, class V, class F>
void round_trip(const std::vector<int>& devices, F fn, std::uint32_t m, const std::vector<int>& owners,
                const std::vector<std::size_t>& per_source) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " m " + std::to_string(m));
  const auto run = model<K, V, F>(fn, m, owners, per_source, seed);
  // Room for exactly what the fullest device receives: its inbox ends full, not overfull.
  const std::size_t capacity = std::max<std::size_t>(*std::max_element(run.arrivals.begin(), run.arrivals.end()), 1);
  auto ctx = rxm::Context::local(devices);
  ASSERT_EQ(ctx.devices().size(), devices.size());
  poison_free_memory(0, 2 * devices.size() * capacity * (sizeof(K) + rxm::detail::value_width<V>()));
  rxm::Channel<K, V, F> ch(ctx, fn, m, owners, capacity);
  push_all(ch, run);
  ch.close();
  check_results(ch, run);
}

std::vector<int> random_owners(std::uint32_t m, int devices, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> owners(m);
  for (auto& o : owners) o = int(rng() % std::uint64_t(devices));
  return owners;
}

std::vector<int> round_robin(std::uint32_t m, int devices) {
  std::vector<int> owners(m);
  for (std::uint32_t b = 0; b < m; ++b) owners[b] = int(b % std::uint32_t(devices));
  return owners;
}

const std::vector<int> four = {0, 0, 0, 0};
const std::vector<int> three = {0, 0, 0};

TEST(GpuChannel, U32PairsRadix256FourLogical) {
  round_trip<std::uint32_t, std::uint32_t>(four, rxm::buckets::radix_digit{24, 8}, 256, round_robin(256, 4),
                                           {100'000, 0, 123'457, 5'000});
}

TEST(GpuChannel, U64PairsM4096ThreeLogical) {
  round_trip<std::uint64_t, std::uint64_t>(three, rxm::buckets::radix_digit{52, 12}, 4096,
                                           random_owners(4096, 3, 7), {70'001, 65'537, 1});
}

TEST(GpuChannel, F32PairsFourLogical) {
  round_trip<float, std::uint32_t>(four, rxm::buckets::radix_digit{23, 9}, 512, random_owners(512, 4, 11),
                                   {4'093, 50'000, 0, 257});
}

TEST(GpuChannel, KeysOnlyUserFunctorExplicitM) {
  round_trip<std::uint32_t, void>(four, mod_hash{1000}, 1000, random_owners(1000, 4, 13), {33'333, 1, 0, 65'536});
}

TEST(GpuChannel, EveryGpuWhereThereAreSeveral) {  // pushes into peer memory over NVLink
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) GTEST_SKIP() << "needs two GPUs or more";
  std::vector<int> gpus(static_cast<std::size_t>(count));
  std::vector<std::size_t> sizes;
  for (int g = 0; g < count; ++g) {
    gpus[std::size_t(g)] = g;
    sizes.push_back(g == 1 ? 0 : std::size_t(90'001 + 7'919 * g));
  }
  round_trip<std::uint32_t, std::uint32_t>(gpus, rxm::buckets::radix_digit{24, 8}, 256, random_owners(256, count, 17),
                                           sizes);
}

TEST(GpuChannel, OneBucket) {
  round_trip<std::uint64_t, std::uint32_t>(three, rxm::buckets::radix_digit{0, 0}, 1, {2}, {1'000, 2'000, 3'000});
}

TEST(GpuChannel, AllBucketsOwnedByOneDevice) {
  round_trip<std::uint32_t, std::uint64_t>(four, rxm::buckets::radix_digit{26, 6}, 64, std::vector<int>(64, 1),
                                           {200'000, 200'000, 200'000, 200'000});
}

TEST(GpuChannel, EmptySourcesEverywhere) {
  round_trip<std::uint32_t, std::uint32_t>(three, rxm::buckets::radix_digit{28, 4}, 16, round_robin(16, 3),
                                           {0, 0, 0});
}

TEST(GpuChannel, PushStreamsNamedAtClose) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = rxm::testing::test_seed();
  using F = rxm::buckets::radix_digit;
  const auto owners = round_robin(16, 3);
  const auto run = model<std::uint32_t, std::uint32_t, F>(F{28, 4}, 16, owners, {10'000, 20'000, 30'000}, seed);
  auto ctx = rxm::Context::local(three);
  auto ch = rxm::make_channel<std::uint32_t, std::uint32_t>(ctx, F{28, 4}, owners, 30'000);
  cudaStream_t own = nullptr;
  RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  std::vector<rxm::DeviceArray<std::uint32_t>> inputs;
  std::uint64_t first = 0;
  for (std::size_t s = 0; s < 3; ++s) {
    auto& input = inputs.emplace_back(0, run.keys[s].size());
    RXM_CUDA_CHECK(cudaMemcpy(input.data(), run.keys[s].data(), run.keys[s].size() * 4, cudaMemcpyHostToDevice));
  }
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t s = 0; s < 3; ++s) {
    launch_push(ch.view(int(s)), inputs[s].data(), run.keys[s].size(), first, own);
    first += run.keys[s].size();
  }
  void* const streams[] = {own};
  ch.close(streams);
  check_results(ch, run);
  RXM_CUDA_CHECK(cudaStreamDestroy(own));
}

// Overflow through the channel: the error names the device, its capacity and the count it was
// sent, and the channel then keeps no result.
TEST(GpuChannel, OverflowThrowsWithTheNumbers) {
  RXM_REQUIRE_GPU();
  using F = rxm::buckets::radix_digit;
  const std::vector<int> owners = {0, 1};  // bucket = top bit
  const auto run = model<std::uint32_t, std::uint32_t, F>(F{31, 1}, 2, owners, {3'000, 3'000}, 99);
  const std::size_t capacity = 1'000;
  auto ctx = rxm::Context::local({0, 0});
  auto ch = rxm::make_channel<std::uint32_t, std::uint32_t>(ctx, F{31, 1}, owners, capacity);
  push_all(ch, run);
  try {
    ch.close();
    FAIL() << "close() did not throw on overflow";
  } catch (const rxm::Error& e) {
    const std::string message = e.what();
    for (std::size_t d = 0; d < 2; ++d) {
      EXPECT_NE(message.find("device " + std::to_string(d) + " (GPU 0) was sent " + std::to_string(run.arrivals[d]) +
                             " tuples"),
                std::string::npos)
          << message;
    }
    EXPECT_NE(message.find("capacity of 1000"), std::string::npos) << message;
    EXPECT_NE(message.find("fix: a larger capacity"), std::string::npos) << message;
  }
  EXPECT_THROW(ch.keys(0), rxm::Error);
  EXPECT_THROW(ch.close(), rxm::Error);
}

// push() itself on a guarded inbox: 5000 pushes into room for 1000, with guard slots after it
// poisoned. Exactly `capacity` slots are written (distinct pushed tuples), the guard is untouched,
// and the counter counts every push.
TEST(GpuChannel, PushNeverWritesPastTheInbox) {
  RXM_REQUIRE_GPU();
  constexpr std::size_t capacity = 1'000, guard = 4'096, n = 5'000;
  using F = rxm::buckets::radix_digit;
  using View = rxm::ChannelView<std::uint32_t, std::uint32_t, F>;
  rxm::DeviceArray<std::uint32_t> keys_in(0, n), inbox_keys(0, capacity + guard), inbox_values(0, capacity + guard);
  rxm::DeviceArray<unsigned long long> counters(0, 2);
  rxm::DeviceArray<std::uint16_t> owners(0, 1);
  rxm::DeviceArray<rxm::detail::ChannelTarget> targets(0, 1);
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = std::uint32_t(i * 2654435761u);
  const rxm::detail::ChannelTarget target{inbox_keys.data(), inbox_values.data(), counters.data()};
  RXM_CUDA_CHECK(cudaMemcpy(keys_in.data(), keys.data(), n * 4, cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(inbox_keys.data(), poison, (capacity + guard) * 4));
  RXM_CUDA_CHECK(cudaMemset(inbox_values.data(), poison, (capacity + guard) * 4));
  RXM_CUDA_CHECK(cudaMemset(counters.data(), 0, 2 * sizeof(unsigned long long)));
  RXM_CUDA_CHECK(cudaMemset(owners.data(), 0, sizeof(std::uint16_t)));
  RXM_CUDA_CHECK(cudaMemcpy(targets.data(), &target, sizeof target, cudaMemcpyHostToDevice));
  View view{F{0, 0}};
  view.owners = owners.data();
  view.targets = targets.data();
  view.invalid = counters.data() + 1;
  view.m = 1;
  view.capacity = capacity;
  launch_push(view, keys_in.data(), n, 0, nullptr);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long host_counters[2];
  RXM_CUDA_CHECK(cudaMemcpy(host_counters, counters.data(), sizeof host_counters, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host_counters[0], n);
  EXPECT_EQ(host_counters[1], 0u);
  std::vector<std::uint32_t> got_keys(capacity + guard), got_values(capacity + guard);
  RXM_CUDA_CHECK(cudaMemcpy(got_keys.data(), inbox_keys.data(), got_keys.size() * 4, cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got_values.data(), inbox_values.data(), got_values.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < capacity; ++i) {
    const std::uint32_t v = got_values[i];
    ASSERT_LT(v, n) << "slot " << i << " was not written";
    ASSERT_FALSE(seen[v]) << "value " << v << " written twice";
    seen[v] = true;
    ASSERT_EQ(got_keys[i], keys[v]) << "slot " << i;
  }
  const std::uint32_t poison_word = 0xA5A5A5A5u;
  for (std::size_t i = capacity; i < capacity + guard; ++i) {
    ASSERT_EQ(got_keys[i], poison_word) << "key written past the inbox at slot " << i;
    ASSERT_EQ(got_values[i], poison_word) << "value written past the inbox at slot " << i;
  }
}

TEST(GpuChannel, BucketIdsAtOrAboveMAreRefusedAtClose) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0});
  const std::vector<int> owners = {0, 1, 0, 1, 0, 1, 0, 1};
  auto ch = rxm::make_channel<std::uint32_t>(ctx, rxm::buckets::identity{8}, owners, 100);
  std::vector<std::uint32_t> keys(16);
  for (std::uint32_t i = 0; i < 16; ++i) keys[i] = i;  // 8 of them have id >= 8
  rxm::DeviceArray<std::uint32_t> input(0, keys.size());
  RXM_CUDA_CHECK(cudaMemcpy(input.data(), keys.data(), keys.size() * 4, cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  launch_push(ch.view(0), input.data(), keys.size(), 0, static_cast<cudaStream_t>(ch.stream(0)));
  try {
    ch.close();
    FAIL() << "close() did not throw on bucket ids >= m";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("8 pushed keys had bucket ids >= m = 8"), std::string::npos) << e.what();
  }
}

TEST(GpuChannel, LifecycleErrors) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0});
  auto ch = rxm::make_channel<std::uint32_t, std::uint32_t>(ctx, rxm::buckets::radix_digit{31, 1},
                                                             std::vector<int>{0, 1}, 10);
  EXPECT_THROW(ch.keys(0), rxm::Error);  // still open
  EXPECT_THROW(ch.view(2), rxm::Error);  // no such device
  ch.close();
  EXPECT_EQ(ch.keys(1).size(), 0u);
  EXPECT_EQ(ch.bucket_offsets(1).size(), 3u);
  EXPECT_THROW(ch.view(0), rxm::Error);
  EXPECT_THROW(ch.close(), rxm::Error);
}

// The error's code and that its message contains `text`.
template <class Make> void expect_error(Make make, rxm::ErrorCode code, const std::string& text) {
  try {
    make();
    ADD_FAILURE() << "no error; expected one containing \"" << text << "\"";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fix:"), std::string::npos) << e.what();
  }
}

TEST(GpuChannel, BadArguments) {
  using F = rxm::buckets::radix_digit;
  using rxm::ErrorCode;
  const auto cpu = rxm::Context::cpu(1);
  expect_error([&] { rxm::make_channel<std::uint32_t>(cpu, F{30, 2}, std::vector<int>{0, 0, 0, 0}, 10); },
               ErrorCode::unsupported, "CPU backend");
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local({0, 0, 0});
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, std::vector<int>{0, 1, 2}, 10); },
               ErrorCode::invalid_argument, "owner map has 3 entries for m = 4");
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, std::vector<int>{0, 1, 2, 3}, 10); },
               ErrorCode::invalid_argument, "bucket 3 is owned by device 3");
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, std::vector<int>{0, -1, 2, 0}, 10); },
               ErrorCode::invalid_argument, "bucket 1 is owned by device -1");
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, std::vector<int>{0, 1, 2, 0}, 0); },
               ErrorCode::invalid_argument, "capacity is 0");
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, std::vector<int>{0, 1, 2, 0}, 1ull << 33); },
               ErrorCode::invalid_argument, "capacity of 8589934592 tuples is above");
  // Three receivers of 4e9 16-byte tuples, twice each, on one GPU: far more than any GPU has.
  expect_error(
      [&] {
        rxm::make_channel<std::uint64_t, std::uint64_t>(ctx, F{62, 2}, std::vector<int>{0, 1, 2, 0},
                                                        4'000'000'000ull);
      },
      ErrorCode::out_of_memory, "channel: GPU 0 needs");
  expect_error(
      [&] {
        rxm::make_channel<std::uint64_t, std::uint64_t>(ctx, F{62, 2}, std::vector<int>{0, 1, 2, 0},
                                                        4'000'000'000ull);
      },
      ErrorCode::out_of_memory, " is free");
  expect_error([&] { rxm::make_channel<std::uint32_t, std::uint16_t>(ctx, F{30, 2}, std::vector<int>{0, 1, 2, 0}, 10); },
               ErrorCode::invalid_argument, "values of 2 bytes are not supported");
  expect_error([&] { rxm::make_channel<std::uint32_t>(ctx, F{30, 2}, 8, std::vector<int>(8, 0), 10); },
               ErrorCode::invalid_argument, "the bucket function has 4 buckets, not m = 8");
}

}  // namespace
