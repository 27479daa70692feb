// The context's scratch pools (src/cuda/runtime/scratch.hpp): host-level calls on device spans
// reuse their scratch from call to call. Repeated rxm::sort and rxm::multisplit calls on device
// spans, over growing and shrinking sizes and alternating between two contexts, must give what the
// CPU backend gives (outputs poisoned first, every element checked); Context::release_scratch()
// gives the pool's memory back and the next call still works; an impossible allocation is still
// reported as out of memory with the bytes asked for and the bytes free.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;

namespace {

// Sizes that grow and shrink across the pool's blocks (a few keys up to several MiB of scratch).
const std::vector<std::size_t> sizes = {1000, std::size_t(1) << 20, 4095, 3 * (std::size_t(1) << 20) + 7, 31,
                                        std::size_t(1) << 18, 2 * (std::size_t(1) << 20) + 1};

template <class T> rxm::DeviceArray<T> to_device(const std::vector<T>& host) {
  rxm::DeviceArray<T> d(0, host.size());
  if (!host.empty()) RXM_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <class T> std::vector<T> to_host(const T* device, std::size_t n) {
  std::vector<T> host(n);
  if (n) RXM_CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}
template <class T> rxm::DeviceArray<T> poisoned(std::size_t n) {
  rxm::DeviceArray<T> d(0, n);
  if (n) RXM_CUDA_CHECK(cudaMemset(d.data(), 0xA5, n * sizeof(T)));
  return d;
}
template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

struct Contexts {
  rxm::Context a = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::Context b = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::Context cpu = rxm::Context::cpu();
  rxm::Context& gpu(std::size_t call) { return call % 2 == 0 ? a : b; }
};

// One sort on a device span (keys, or keys with their original index as value) against the CPU backend.
template <class K> void expect_device_sort_matches(rxm::Context& gpu, rxm::Context& cpu, std::size_t n, bool pairs,
                                                   std::uint64_t seed) {
  SCOPED_TRACE("n = " + std::to_string(n) + (pairs ? " pairs" : " keys") + ", seed " + std::to_string(seed));
  const std::vector<K> keys = rxm::testing::random_bit_patterns<K>(n, seed);
  std::vector<K> expected = keys;
  std::vector<std::uint32_t> values(n), expected_values(n);
  std::iota(values.begin(), values.end(), 0u);
  expected_values = values;
  auto d_keys = to_device(keys);
  auto d_values = to_device(values);
  if (pairs) {
    rxm::sort(cpu, std::span<K>(expected), std::span<std::uint32_t>(expected_values));
    rxm::sort(gpu, rxm::device_span(d_keys), rxm::device_span(d_values));
    ASSERT_EQ(to_host(d_values.data(), n), expected_values) << "values (original indices): stability";
  } else {
    rxm::sort(cpu, std::span<K>(expected));
    rxm::sort(gpu, rxm::device_span(d_keys));
  }
  ASSERT_TRUE(same_bits(to_host(d_keys.data(), n), expected));
}

// One multisplit on device spans against the CPU backend: keys and pairs, offsets in host memory.
template <class K, class F> void expect_device_multisplit_matches(rxm::Context& gpu, rxm::Context& cpu, std::size_t n,
                                                                  const F& fn, std::uint32_t m, std::uint64_t seed) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", m = " + std::to_string(m) + ", seed " + std::to_string(seed));
  const std::vector<K> keys = rxm::testing::random_bit_patterns<K>(n, seed);
  std::vector<std::uint32_t> values(n), expected_values(n);
  std::iota(values.begin(), values.end(), 0u);
  std::vector<K> expected(n);
  std::vector<std::size_t> expected_offsets(m + 1);
  rxm::multisplit(cpu, std::span<const K>(keys), std::span<K>(expected), std::span<const std::uint32_t>(values),
                  std::span<std::uint32_t>(expected_values), fn, std::span<std::size_t>(expected_offsets));

  auto d_keys = to_device(keys);
  auto d_values = to_device(values);
  auto keys_out = poisoned<K>(n);
  auto values_out = poisoned<std::uint32_t>(n);
  std::vector<std::size_t> offsets(m + 1, 99);
  rxm::multisplit(gpu, std::span<const K>(d_keys.data(), n), keys_out.span(),
                  std::span<const std::uint32_t>(d_values.data(), n), values_out.span(), fn,
                  std::span<std::size_t>(offsets));
  ASSERT_EQ(offsets, expected_offsets);
  ASSERT_TRUE(same_bits(to_host(keys_out.data(), n), expected)) << "pairs: keys";
  ASSERT_EQ(to_host(values_out.data(), n), expected_values) << "values (original indices): stability";

  auto keys_only = poisoned<K>(n);
  std::vector<std::size_t> offsets_keys(m + 1, 99);
  rxm::multisplit(gpu, std::span<const K>(d_keys.data(), n), keys_only.span(), fn, std::span<std::size_t>(offsets_keys));
  ASSERT_EQ(offsets_keys, expected_offsets);
  ASSERT_TRUE(same_bits(to_host(keys_only.data(), n), expected)) << "keys only";
}

}  // namespace

TEST(GpuScratch, RepeatedSortsOnDeviceSpansMatchTheCpuBackend) {
  RXM_REQUIRE_GPU();
  Contexts ctx;
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("test seed " + std::to_string(seed));
  for (std::size_t call = 0; call < sizes.size(); ++call) {
    rxm::Context& gpu = ctx.gpu(call);
    expect_device_sort_matches<std::uint32_t>(gpu, ctx.cpu, sizes[call], false, seed + call);
    expect_device_sort_matches<float>(gpu, ctx.cpu, sizes[call], true, seed + 100 + call);  // CUB's native float path + fix-up
    expect_device_sort_matches<std::int64_t>(gpu, ctx.cpu, sizes[call], call % 2 == 1, seed + 200 + call);
  }
  EXPECT_GT(ctx.a.scratch_bytes(), 0u) << "the pool should keep the scratch of the last calls for reuse";
  EXPECT_GT(ctx.b.scratch_bytes(), 0u);
}

TEST(GpuScratch, RepeatedMultisplitsOnDeviceSpansMatchTheCpuBackend) {
  RXM_REQUIRE_GPU();
  Contexts ctx;
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("test seed " + std::to_string(seed));
  std::vector<std::uint32_t> boundaries(31);
  for (std::uint32_t i = 0; i < 31; ++i) boundaries[i] = (i + 1) * (0xFFFFFFFFu / 32);
  const rxm::buckets::splitters<std::uint32_t> by_splitters{boundaries.data(), 31};
  for (std::size_t call = 0; call < sizes.size(); ++call) {
    rxm::Context& gpu = ctx.gpu(call);
    const std::size_t n = sizes[call];
    // The digit split (CUB's pass at 8 bits), the checked engine (delta), the splitter table.
    expect_device_multisplit_matches<std::uint32_t>(gpu, ctx.cpu, n, rxm::buckets::radix_digit{24, 8}, 256, seed + call);
    expect_device_multisplit_matches<std::uint32_t>(gpu, ctx.cpu, n, rxm::buckets::delta<std::uint32_t>(0u, 0xFFFFFFFFu, 33),
                                                    33, seed + 100 + call);
    expect_device_multisplit_matches<std::uint32_t>(gpu, ctx.cpu, n, by_splitters, 32, seed + 200 + call);
    expect_device_multisplit_matches<std::uint64_t>(gpu, ctx.cpu, n, rxm::buckets::radix_digit{40, 5}, 32, seed + 300 + call);
  }
}

TEST(GpuScratch, ABadBucketIsStillReportedAndOutputsStayUntouchedBetweenReusedCalls) {
  RXM_REQUIRE_GPU();
  Contexts ctx;
  const std::size_t n = 1 << 16;
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = std::uint32_t(i % 200);
  keys[n / 3] = 700;  // id 700 >= m = 256
  auto d_keys = to_device(keys);
  for (int round = 0; round < 3; ++round) {
    auto keys_out = poisoned<std::uint32_t>(n);
    std::vector<std::size_t> offsets(257, 99);
    try {
      rxm::multisplit(ctx.a, std::span<const std::uint32_t>(d_keys.data(), n), keys_out.span(),
                      rxm::buckets::identity{256}, std::span<std::size_t>(offsets));
      ADD_FAILURE() << "no error was thrown";
    } catch (const rxm::Error& e) {
      EXPECT_EQ(int(e.code()), int(rxm::ErrorCode::invalid_argument)) << e.what();
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(n / 3)), std::string::npos) << e.what();
    }
    EXPECT_EQ(offsets, std::vector<std::size_t>(257, 99));
    const auto out = to_host(keys_out.data(), n);
    std::vector<std::uint32_t> poison(n);
    std::memset(poison.data(), 0xA5, n * sizeof(std::uint32_t));
    EXPECT_EQ(out, poison) << "keys_out must stay untouched on error";
    // A good call in between reuses the same pool.
    keys[n / 3] = 5;
    auto good = to_device(keys);
    std::vector<std::size_t> good_offsets(257);
    rxm::multisplit(ctx.a, std::span<const std::uint32_t>(good.data(), n), keys_out.span(), rxm::buckets::identity{256},
                    std::span<std::size_t>(good_offsets));
    EXPECT_EQ(good_offsets.back(), n);
    keys[n / 3] = 700;
  }
}

TEST(GpuScratch, ReleaseGivesThePoolBackAndTheNextCallStillWorks) {
  RXM_REQUIRE_GPU();
  Contexts ctx;
  const std::uint64_t seed = rxm::testing::test_seed();
  SCOPED_TRACE("test seed " + std::to_string(seed));
  const std::size_t n = std::size_t(1) << 22;
  expect_device_sort_matches<std::uint32_t>(ctx.a, ctx.cpu, n, true, seed);
  EXPECT_GE(ctx.a.scratch_bytes(), n * 8) << "a pairs sort of n keys needs at least n keys and n values of scratch";
  EXPECT_EQ(ctx.b.scratch_bytes(), 0u) << "each context has its own pool";
  ctx.a.release_scratch();
  EXPECT_EQ(ctx.a.scratch_bytes(), 0u);
  ctx.a.release_scratch();  // twice is harmless
  expect_device_sort_matches<std::uint32_t>(ctx.a, ctx.cpu, n, false, seed + 1);
  EXPECT_GT(ctx.a.scratch_bytes(), 0u);
  {  // the last copy of a context takes its pool with it; a copy shares it
    rxm::Context copy = ctx.a;
    EXPECT_EQ(copy.scratch_bytes(), ctx.a.scratch_bytes());
  }
  EXPECT_GT(ctx.a.scratch_bytes(), 0u);

  auto cpu = rxm::Context::cpu(1);
  EXPECT_EQ(cpu.scratch_bytes(), 0u);
  cpu.release_scratch();  // nothing to do on the CPU backend
}

TEST(GpuScratch, OutOfMemoryIsStillReportedWithAskedAndFree) {
  RXM_REQUIRE_GPU();
  Contexts ctx;
  const std::uint64_t seed = rxm::testing::test_seed();
  // Fill the pool first, so that the check must see past the memory it keeps.
  expect_device_sort_matches<std::uint32_t>(ctx.a, ctx.cpu, std::size_t(1) << 22, false, seed);
  ASSERT_GT(ctx.a.scratch_bytes(), 0u);
  rxm::DeviceArray<std::uint64_t> keys(0, 16);
  const std::size_t absurd = std::size_t(1) << 44;  // 2^44 keys: 128 TiB
  try {
    rxm::sort(ctx.a, rxm::device_span<std::uint64_t>(keys.data(), absurd, 0));
    ADD_FAILURE() << "no error was thrown";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(int(e.code()), int(rxm::ErrorCode::out_of_memory)) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is free"), std::string::npos) << e.what();
  }
  // A scratch allocation itself that no device can give: the pool's error names asked and free.
  auto& device = rxm::detail::cuda_resources(ctx.a).of_device(0);
  try {
    rxm::detail::ScratchBuffer impossible(device, absurd);
    ADD_FAILURE() << "no error was thrown";
  } catch (const rxm::Error& e) {
    EXPECT_EQ(int(e.code()), int(rxm::ErrorCode::out_of_memory)) << e.what();
    EXPECT_NE(std::string(e.what()).find("could not allocate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is free"), std::string::npos) << e.what();
  }
  // The context is still usable afterwards.
  expect_device_sort_matches<std::uint32_t>(ctx.a, ctx.cpu, std::size_t(1) << 20, true, seed + 1);
}
