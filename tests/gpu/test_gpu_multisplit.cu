// GPU multisplit against the CPU reference (rxm::multisplit on a CPU context): every bucket
// function, key type and value width, m across the one-pass/two-pass edges, the paper's skewed
// distributions, device- and host-resident data, the device-level entry points (user functor,
// digit for gpusort, unaligned pointers), and bad input. Outputs are poisoned first; values are
// original indices, so stability is checked element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/multisplit_inputs.hpp"
#include "common/device_copies.hpp"
#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/multisplit/multisplit_digit.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/multisplit.cuh"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace rxm = radixmesh;
using rxm::testing::random_bit_patterns;
using rxm::testing::test_seed;
using rxm::testing::to_host;
using rxm::testing::to_device;
using rxm::testing::poisoned;

namespace {

template <class K> bool same_bits(const std::vector<K>& a, const std::vector<K>& b, std::size_t& first_difference) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (rxm::to_bits(a[i]) != rxm::to_bits(b[i])) { first_difference = i; return false; }
  return a.size() == b.size();
}

rxm::Context& gpu_context() {
  static rxm::Context ctx = rxm::Context::local({}, rxm::Backend::cuda);
  return ctx;
}
rxm::Context& cpu_context() {
  static rxm::Context ctx = rxm::Context::cpu();
  return ctx;
}

// Runs check(tuning) once per scatter pass that can run at this m, tuning = `base` with that pass
// forced: at m <= 32 the block-tile one, the warp-owned one and the thread-counter one, above it
// the one there is (`base` as given). RXM_MULTISPLIT_SCATTER=<name> keeps only the pass of that
// name at m <= 32 (the sanitizer runs use it to fit the device time).
template <class Check>
void for_each_scatter_kernel(std::uint32_t m, const rxm::MultisplitTuning& base, Check&& check) {
  namespace ms = rxm::device::multisplit_detail;
  using Kernel = rxm::MultisplitScatterKernel;
  static_assert(ms::max_warp_scatter_buckets == ms::max_counter_scatter_buckets);
  if (m > ms::max_warp_scatter_buckets) {
    check(base);
    return;
  }
  const char* only = std::getenv("RXM_MULTISPLIT_SCATTER");
  for (auto kernel : {Kernel::block_tiles, Kernel::warp_owned, Kernel::thread_counters}) {
    const char* name = kernel == Kernel::warp_owned        ? "warp_owned"
                       : kernel == Kernel::thread_counters ? "thread_counters"
                                                           : "block_tiles";
    if (only != nullptr && std::string(only) != name) continue;
    SCOPED_TRACE(::testing::Message() << name << " scatter pass");
    rxm::MultisplitTuning tuning = base;
    tuning.scatter_kernel = kernel;
    check(tuning);
    if (::testing::Test::HasFatalFailure()) return;
  }
}
template <class Check> void for_each_scatter_kernel(std::uint32_t m, Check&& check) {
  for_each_scatter_kernel(m, rxm::MultisplitTuning{}, std::forward<Check>(check));
}

// Device-resident keys (and values = index, when V is not void) through the host API vs the CPU,
// with every scatter pass of this m.
template <class K, class V, class F>
void check_device_resident_once(const std::vector<K>& keys, const F& f, std::uint32_t m,
                                const rxm::MultisplitTuning& tuning);
template <class K, class V, class F>
void check_device_resident(const std::vector<K>& keys, const F& f, std::uint32_t m) {
  for_each_scatter_kernel(m, [&](const rxm::MultisplitTuning& tuning) {
    check_device_resident_once<K, V>(keys, f, m, tuning);
  });
}
template <class K, class V, class F>
void check_device_resident_once(const std::vector<K>& keys, const F& f, std::uint32_t m,
                                const rxm::MultisplitTuning& tuning) {
  const rxm::MultisplitOptions options{.tuning = tuning};
  const std::size_t n = keys.size();
  std::vector<K> expected_keys(n);
  std::vector<std::size_t> expected_offsets(m + 1);
  std::vector<V> values(n), expected_values(n);
  std::iota(values.begin(), values.end(), V(0));
  rxm::multisplit(cpu_context(), std::span<const K>(keys), std::span<K>(expected_keys), std::span<const V>(values),
                  std::span<V>(expected_values), f, std::span<std::size_t>(expected_offsets));

  auto keys_in = to_device(keys);
  auto keys_out = poisoned<K>(n);
  auto values_in = to_device(values);
  auto values_out = poisoned<V>(n);
  rxm::DeviceArray<std::size_t> offsets = poisoned<std::size_t>(m + 1);
  rxm::multisplit(gpu_context(), std::span<const K>(keys_in.data(), n), keys_out.span(),
                  std::span<const V>(values_in.data(), n), values_out.span(), f, offsets.span(), options);
  ASSERT_EQ(to_host(offsets.data(), m + 1), expected_offsets);
  std::size_t at = 0;
  ASSERT_TRUE(same_bits(to_host(keys_out.data(), n), expected_keys, at)) << "first key difference at " << at;
  ASSERT_EQ(to_host(values_out.data(), n), expected_values) << "values (original indices): stability";

  // Keys only, offsets to host memory.
  auto keys_only = poisoned<K>(n);
  std::vector<std::size_t> host_offsets(m + 1, 99);
  rxm::multisplit(gpu_context(), std::span<const K>(keys_in.data(), n), keys_only.span(), f,
                  std::span<std::size_t>(host_offsets), options);
  ASSERT_EQ(host_offsets, expected_offsets);
  ASSERT_TRUE(same_bits(to_host(keys_only.data(), n), expected_keys, at)) << "keys only, first difference at " << at;
}

using rxm::testing::key_of_value;
using rxm::testing::sorted_sample;

// The issue's bucket counts, and 17 (one pass, between 3 and 32, no power of two). Splitter
// tables above 32 KB (u32 m > 8193, u64 m > 4097, bucket_functors.cuh) are searched in global
// memory, not staged in shared memory: m = 65536 reaches that path for every key width above 8 bits.
constexpr std::uint32_t bucket_counts[] = {1, 2, 3, 17, 32, 33, 256, 257, 4096, 65536};

// Delta buckets over a random range of these keys ([-3, 2.5) for floats: random bit patterns
// hold NaN and inf), splitters from a sorted sample of them, and identity buckets (integer keys,
// reduced below m): keys and pairs through the host API, every scatter pass of this m.
template <class K> void delta_splitters_identity(const std::vector<K>& keys, std::uint32_t m, std::uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "m=" << m);
  constexpr int width = int(sizeof(K) * 8);
  auto range = sorted_sample(keys, 2, seed + m);
  if constexpr (rxm::key_traits<K>::is_float) {
    range[0] = key_of_value<K>(-3.0);
    range[1] = key_of_value<K>(2.5);
  } else if (!rxm::key_less<K>{}(range[0], range[1])) {
    range[0] = rxm::decode_key<K>(rxm::key_bits_t<K>(0));
    range[1] = rxm::decode_key<K>(rxm::key_bits_t<K>(~rxm::key_bits_t<K>(0)));
  }
  check_device_resident<K, std::uint32_t>(keys, rxm::buckets::delta<K>(range[0], range[1], m), m);
  auto boundaries = sorted_sample(keys, m - 1, seed + 7 * m);
  check_device_resident<K, std::uint64_t>(keys, rxm::buckets::splitters<K>{boundaries.data(), m - 1}, m);
  if constexpr (std::is_integral_v<K>) {
    std::vector<K> small(keys);
    for (auto& k : small) k = K(rxm::to_bits(k) % std::min<std::uint64_t>(m, std::uint64_t(1) << (width - 1)));
    check_device_resident<K, std::uint32_t>(small, rxm::buckets::identity{m}, m);
  }
}

template <class K> void every_bucket_function(std::size_t n, std::uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << " n=" << n << " seed=" << seed);
  const auto keys = random_bit_patterns<K>(n, seed);
  constexpr int width = int(sizeof(K) * 8);
  for (int bits : {1, 5, 8, 12}) {
    if (bits > width) continue;
    check_device_resident<K, std::uint32_t>(keys, rxm::buckets::radix_digit{width - bits, bits}, 1u << bits);
    check_device_resident<K, std::uint64_t>(keys, rxm::buckets::radix_digit{0, bits}, 1u << bits);
  }
  for (std::uint32_t m : bucket_counts) {
    delta_splitters_identity(keys, m, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace

TEST(GpuMultisplit, EveryKeyTypeBucketFunctionAndValueWidth) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (std::size_t n : {0ul, 1ul, 31ul, 4095ul, (1ul << 20) + 7}) {
    every_bucket_function<std::uint8_t>(n, seed);
    every_bucket_function<std::uint16_t>(n, seed);
    every_bucket_function<std::uint32_t>(n, seed);
    every_bucket_function<std::uint64_t>(n, seed);
    every_bucket_function<std::int8_t>(n, seed);
    every_bucket_function<std::int16_t>(n, seed);
    every_bucket_function<std::int32_t>(n, seed);
    every_bucket_function<std::int64_t>(n, seed);
    every_bucket_function<rxm::half_t>(n, seed);
    every_bucket_function<rxm::bfloat16_t>(n, seed);
    every_bucket_function<float>(n, seed);
    every_bucket_function<double>(n, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

namespace {

// Bucket ids drawn from one of the paper's distributions (§6.4): 0 uniform, 1 everything in one
// bucket, 2 binomial B(m - 1, 0.5), 3 0.25-uniform (a quarter uniform, the rest in one bucket),
// 4 sorted (ids ascending with the index).
constexpr int distribution_count = 5;
std::vector<std::uint32_t> bucket_ids(int distribution, std::uint32_t m, std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint32_t> ids(n);
  std::binomial_distribution<std::uint32_t> binomial(m - 1, 0.5);
  const std::uint32_t one_bucket = std::uint32_t(rng() % m);
  for (std::size_t i = 0; i < n; ++i) {
    switch (distribution) {
      case 0: ids[i] = std::uint32_t(rng() % m); break;
      case 1: ids[i] = one_bucket; break;
      case 2: ids[i] = binomial(rng); break;
      case 3: ids[i] = (rng() % 4 == 0) ? std::uint32_t(rng() % m) : one_bucket; break;
      default: ids[i] = std::uint32_t(std::uint64_t(i) * m / n); break;
    }
  }
  return ids;
}

// Keys whose bucket under `f` is ids[i] (each key drawn at random inside its bucket's range), so a
// distribution of ids means the same for every functor. The CPU backend's histogram confirms it.
template <class K, class F>
void check_shaped_keys(const std::vector<std::uint32_t>& ids, const std::vector<K>& keys, const F& f, std::uint32_t m) {
  std::vector<std::size_t> id_counts(m, 0), counts(m);
  for (auto id : ids) ++id_counts[id];
  rxm::histogram(cpu_context(), std::span<const K>(keys), f, std::span<std::size_t>(counts));
  ASSERT_EQ(counts, id_counts) << "the keys were not shaped to their bucket ids";
  check_device_resident<K, std::uint64_t>(keys, f, m);
}

// Delta buckets: m ranges of delta_width over [delta_lo, delta_lo + m * delta_width) of int32
// keys (negative lo: the encoding flips the sign bit), bucket b = [lo + b * width, lo + (b + 1) * width).
// Splitters: boundary j = (j + 1) * splitter_stride (j < m - 1) over u32 keys, so bucket b is
// [b * stride, (b + 1) * stride).
constexpr std::int32_t delta_lo = -1'000'003, delta_width = 29;
constexpr std::uint32_t splitter_stride = 61;

void check_distribution_delta_and_splitters(const std::vector<std::uint32_t>& ids, std::uint32_t m,
                                            std::mt19937_64& rng) {
  {
    SCOPED_TRACE("delta buckets");
    std::vector<std::int32_t> keys(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      keys[i] = delta_lo + std::int32_t(ids[i]) * delta_width + std::int32_t(rng() % delta_width);
    const rxm::buckets::delta<std::int32_t> f(delta_lo, delta_lo + std::int32_t(m) * delta_width, m);
    check_shaped_keys(ids, keys, f, m);
    if (::testing::Test::HasFatalFailure()) return;
  }
  SCOPED_TRACE("splitters");
  std::vector<std::uint32_t> keys(ids.size()), boundaries(m - 1);
  for (std::size_t i = 0; i < ids.size(); ++i) keys[i] = ids[i] * splitter_stride + std::uint32_t(rng() % splitter_stride);
  for (std::uint32_t j = 0; j + 1 < m; ++j) boundaries[j] = (j + 1) * splitter_stride;
  check_shaped_keys(ids, keys, rxm::buckets::splitters<std::uint32_t>{boundaries.data(), m - 1}, m);
}

}  // namespace

// Ids drawn from the paper's distributions (§6.4), every m of the issue, through identity, delta
// and splitter buckets (keys shaped so that their ids follow the distribution). Identity runs the
// big uniform cases at 2^26 (2^20 with RXM_MULTISPLIT_QUICK); delta and splitters stop at 2^20 + 7.
TEST(GpuMultisplit, DistributionsAndBucketCounts) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::size_t big = std::getenv("RXM_MULTISPLIT_QUICK") ? (1u << 20) : (1u << 26);
  for (std::uint32_t m : bucket_counts) {
    for (int distribution = 0; distribution < distribution_count; ++distribution) {
      for (std::size_t n : {4095ul, (1ul << 20) + 7}) {
        SCOPED_TRACE(::testing::Message() << "m=" << m << " distribution=" << distribution << " seed=" << seed);
        const std::size_t size = (distribution == 0 && (m == 32 || m == 256 || m == 65536) && n > 4095) ? big : n;
        {
          SCOPED_TRACE(::testing::Message() << "identity buckets, n=" << size);
          check_device_resident<std::uint32_t, std::uint32_t>(bucket_ids(distribution, m, size, rng),
                                                              rxm::buckets::identity{m}, m);
        }
        if (HasFatalFailure()) return;
        SCOPED_TRACE(::testing::Message() << "n=" << n);
        check_distribution_delta_and_splitters(bucket_ids(distribution, m, n, rng), m, rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(GpuMultisplit, HostResidentInputOnCudaContext) {
  RXM_REQUIRE_GPU();
  const auto keys = random_bit_patterns<float>(300'007, test_seed());
  std::vector<std::uint64_t> values(keys.size());
  std::iota(values.begin(), values.end(), 0ull);
  const auto fn = rxm::buckets::radix_digit{24, 8};
  std::vector<float> expected(keys.size()), got(keys.size());
  std::vector<std::uint64_t> expected_values(keys.size()), got_values(keys.size(), ~0ull);
  std::vector<std::size_t> expected_offsets(257), offsets(257);
  rxm::multisplit(cpu_context(), std::span<const float>(keys), std::span<float>(expected),
                  std::span<const std::uint64_t>(values), std::span<std::uint64_t>(expected_values), fn,
                  std::span<std::size_t>(expected_offsets));
  rxm::multisplit(gpu_context(), std::span<const float>(keys), std::span<float>(got),
                  std::span<const std::uint64_t>(values), std::span<std::uint64_t>(got_values), fn,
                  std::span<std::size_t>(offsets));
  EXPECT_EQ(offsets, expected_offsets);
  std::size_t at = 0;
  EXPECT_TRUE(same_bits(got, expected, at)) << at;
  EXPECT_EQ(got_values, expected_values);
  std::vector<std::size_t> counts(256);
  rxm::histogram(gpu_context(), std::span<const float>(keys), fn, std::span<std::size_t>(counts));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(counts[b], expected_offsets[b + 1] - expected_offsets[b]);
}

namespace {
// A user's functor for the device-level entry point: a hash, so ids follow no key order.
struct HashBuckets {
  std::uint32_t m;
  __host__ __device__ std::uint32_t operator()(std::uint32_t k) const { return (k * 2654435761u >> 7) % m; }
};
struct TooLarge {  // id m for keys divisible by 1000: the checked mode must find the first one
  std::uint32_t m;
  __host__ __device__ std::uint32_t operator()(std::uint32_t k) const { return k % 1000 == 999 ? m : k % m; }
};
}  // namespace

TEST(GpuMultisplit, DeviceLevelUserFunctorCheckedModeAndUnalignedPointers) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (1u << 20) + 3;
  auto keys = random_bit_patterns<std::uint32_t>(n, test_seed());
  using rxm::device::MultisplitEngine;
  for (std::uint32_t m : {7u, 300u, 5000u}) for_each_scatter_kernel(m, [&](const rxm::MultisplitTuning& tuning) {
    SCOPED_TRACE(m);
    HashBuckets fn{m};
    std::vector<std::uint32_t> expected(n);
    std::vector<std::size_t> expected_offsets(m + 1);
    rxm::multisplit(cpu_context(), std::span<const std::uint32_t>(keys), std::span<std::uint32_t>(expected), fn,
                    std::span<std::size_t>(expected_offsets));
    // Offset by one element: the kernels take the scalar (unaligned) load path.
    auto keys_in = to_device(keys);
    auto keys_out = poisoned<std::uint32_t>(n + 1);
    auto offsets = poisoned<std::uint32_t>(m + 1);
    std::size_t temp_bytes = 0;
    ASSERT_EQ(rxm::device::multisplit(nullptr, temp_bytes, keys_in.data() + 1, keys_out.data() + 1, n - 1, fn, m,
                                      offsets.data(), 0, nullptr, MultisplitEngine::automatic, tuning), cudaSuccess);
    rxm::DeviceBuffer temp(0, temp_bytes);
    ASSERT_EQ(rxm::device::multisplit(temp.data(), temp_bytes, keys_in.data() + 1, keys_out.data() + 1, n - 1, fn, m,
                                      offsets.data(), 0, nullptr, MultisplitEngine::automatic, tuning), cudaSuccess);
    std::vector<std::uint32_t> expected_shifted(n - 1);
    std::vector<std::size_t> expected_shifted_offsets(m + 1);
    rxm::multisplit(cpu_context(), std::span<const std::uint32_t>(keys).subspan(1),
                    std::span<std::uint32_t>(expected_shifted), fn, std::span<std::size_t>(expected_shifted_offsets));
    auto got = to_host(keys_out.data() + 1, n - 1);
    EXPECT_EQ(got, expected_shifted);
    auto got_offsets = to_host(offsets.data(), m + 1);
    EXPECT_TRUE(std::equal(got_offsets.begin(), got_offsets.end(), expected_shifted_offsets.begin()));
  });
  // Checked mode: the smallest index with an id >= m comes back; ids are clamped meanwhile.
  for (std::uint32_t m : {300u, 17u}) for_each_scatter_kernel(m, [&](const rxm::MultisplitTuning& tuning) {
    SCOPED_TRACE(m);
    TooLarge bad{m};
    auto keys_in = to_device(keys);
    auto keys_out = poisoned<std::uint32_t>(n);
    rxm::DeviceArray<unsigned long long> bad_index(0, 1);
    std::size_t temp_bytes = 0;
    ASSERT_EQ(rxm::device::multisplit(nullptr, temp_bytes, keys_in.data(), keys_out.data(), n, bad, m, nullptr, 0,
                                      nullptr, MultisplitEngine::automatic, tuning),
              cudaSuccess);
    rxm::DeviceBuffer temp(0, temp_bytes);
    ASSERT_EQ(rxm::device::multisplit(temp.data(), temp_bytes, keys_in.data(), keys_out.data(), n, bad, m, nullptr,
                                      0, bad_index.data(), MultisplitEngine::automatic, tuning), cudaSuccess);
    const auto first = std::find_if(keys.begin(), keys.end(), [](std::uint32_t k) { return k % 1000 == 999; });
    EXPECT_EQ(to_host(bad_index.data(), 1)[0], first == keys.end() ? ~0ull : std::uint64_t(first - keys.begin()));
  });
}

// The public splitters functor at device level (its boundaries in device memory): one pass with
// the table staged in shared memory (m = 1000), and two passes (m = 5000, 20 KB of boundaries,
// staged per pass); keys and values, against the CPU on the same boundaries in host memory.
TEST(GpuMultisplit, DeviceLevelSplittersSearchedInSharedMemory) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (1u << 20) + 11;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  const auto keys = random_bit_patterns<std::uint32_t>(n, seed);
  std::vector<std::uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  using rxm::device::MultisplitEngine;
  for (std::uint32_t m : {2u, 17u, 1000u, 4096u, 5000u}) for_each_scatter_kernel(m, [&](const rxm::MultisplitTuning& tuning) {
    SCOPED_TRACE(m);
    const auto boundaries = sorted_sample(keys, m - 1, seed + m);
    std::vector<std::uint32_t> expected(n), expected_values(n);
    std::vector<std::size_t> expected_offsets(m + 1);
    rxm::multisplit(cpu_context(), std::span<const std::uint32_t>(keys), std::span<std::uint32_t>(expected),
                    std::span<const std::uint32_t>(values), std::span<std::uint32_t>(expected_values),
                    rxm::buckets::splitters<std::uint32_t>{boundaries.data(), m - 1},
                    std::span<std::size_t>(expected_offsets));
    auto boundaries_d = to_device(boundaries);
    const rxm::buckets::splitters<std::uint32_t> fn{boundaries_d.data(), m - 1};
    auto keys_in = to_device(keys);
    auto values_in = to_device(values);
    auto keys_out = poisoned<std::uint32_t>(n);
    auto values_out = poisoned<std::uint32_t>(n);
    auto offsets = poisoned<std::uint32_t>(m + 1);
    std::size_t temp_bytes = 0;
    ASSERT_EQ(rxm::device::multisplit(nullptr, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                      values_out.data(), n, fn, m, offsets.data(), 0, nullptr,
                                      MultisplitEngine::automatic, tuning), cudaSuccess);
    rxm::DeviceBuffer temp(0, temp_bytes);
    ASSERT_EQ(rxm::device::multisplit(temp.data(), temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                      values_out.data(), n, fn, m, offsets.data(), 0, nullptr,
                                      MultisplitEngine::automatic, tuning), cudaSuccess);
    EXPECT_EQ(to_host(keys_out.data(), n), expected);
    EXPECT_EQ(to_host(values_out.data(), n), expected_values);
    const auto got_offsets = to_host(offsets.data(), m + 1);
    EXPECT_TRUE(std::equal(got_offsets.begin(), got_offsets.end(), expected_offsets.begin()));
  });
}

namespace {

// Splitter tables that stress the prefix index the kernels build over a staged table, as keys.
template <class K> std::vector<std::vector<K>> adversarial_splitter_tables(std::uint32_t count, std::uint64_t seed) {
  std::vector<std::vector<K>> tables;
  for (const auto& encodings : rxm::testing::uneven_boundary_encodings<rxm::key_bits_t<K>>(count, seed)) {
    std::vector<K> table(count);
    for (std::uint32_t i = 0; i < count; ++i) table[i] = rxm::decode_key<K>(encodings[i]);
    tables.push_back(table);
  }
  return tables;
}

// Random bit patterns, every second one replaced by a boundary or an encoding neighbour of one.
template <class K> std::vector<K> keys_at_boundaries(const std::vector<K>& table, std::size_t n, std::uint64_t seed) {
  using E = rxm::key_bits_t<K>;
  auto keys = random_bit_patterns<K>(n, seed);
  std::mt19937_64 rng(seed + 1);
  for (std::size_t i = 0; i < n; i += 2) {
    const E b = rxm::encode_key(table[rng() % table.size()]);
    keys[i] = rxm::decode_key<K>(E(b + E(int(rng() % 3) - 1)));
  }
  return keys;
}

// The public functor at device level on a table in device memory, keys only, against the CPU.
template <class K> void check_device_level_splitters(const std::vector<K>& keys, const std::vector<K>& table) {
  const std::size_t n = keys.size();
  const auto m = std::uint32_t(table.size() + 1);
  std::vector<K> expected(n);
  std::vector<std::size_t> expected_offsets(m + 1);
  rxm::multisplit(cpu_context(), std::span<const K>(keys), std::span<K>(expected),
                  rxm::buckets::splitters<K>{table.data(), m - 1}, std::span<std::size_t>(expected_offsets));
  const auto table_d = to_device(table);
  const auto keys_in = to_device(keys);
  auto keys_out = poisoned<K>(n);
  auto offsets = poisoned<std::uint32_t>(m + 1);
  const rxm::buckets::splitters<K> fn{table_d.data(), m - 1};
  std::size_t temp_bytes = 0;
  ASSERT_EQ(rxm::device::multisplit(nullptr, temp_bytes, keys_in.data(), keys_out.data(), n, fn, m, offsets.data()),
            cudaSuccess);
  rxm::DeviceBuffer temp(0, temp_bytes);
  ASSERT_EQ(rxm::device::multisplit(temp.data(), temp_bytes, keys_in.data(), keys_out.data(), n, fn, m, offsets.data()),
            cudaSuccess);
  std::size_t at = 0;
  EXPECT_TRUE(same_bits(to_host(keys_out.data(), n), expected, at)) << "first key difference at " << at;
  const auto got_offsets = to_host(offsets.data(), m + 1);
  EXPECT_TRUE(std::equal(got_offsets.begin(), got_offsets.end(), expected_offsets.begin()));
}

template <class K> void adversarial_splitters(std::uint64_t seed) {
  SCOPED_TRACE(rxm::name_of(rxm::key_type_v<K>));
  for (const std::uint32_t count : {15u, 16u, 255u, 1000u, 4095u}) {
    int shape = 0;
    for (const auto& table : adversarial_splitter_tables<K>(count, seed + count)) {
      SCOPED_TRACE(::testing::Message() << "count=" << count << " table shape " << shape++);
      const auto keys = keys_at_boundaries(table, (std::size_t(1) << 16) + 3, seed + count + shape);
      check_device_resident<K, std::uint32_t>(keys, rxm::buckets::splitters<K>{table.data(), count}, count + 1);
      check_device_level_splitters(keys, table);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace

// The prefix index over staged splitter tables (splitter_index) on tables that make its bins uneven,
// through the host API (every scatter pass) and the public functor at device level.
TEST(GpuMultisplit, SplitterIndexOnAdversarialTables) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  adversarial_splitters<std::uint8_t>(seed);
  adversarial_splitters<std::int16_t>(seed);
  adversarial_splitters<rxm::half_t>(seed);
  adversarial_splitters<std::uint32_t>(seed);
  adversarial_splitters<std::int32_t>(seed);
  adversarial_splitters<float>(seed);
  adversarial_splitters<std::int64_t>(seed);
  adversarial_splitters<double>(seed);
}

// The digit entry point gpusort builds on, every key width and value width.
// skew_shift > 0 narrows the keys (key >> skew_shift): few distinct digits, long runs of one bucket.
// Our own engine with every scatter pass of m = 2^bits (for_each_scatter_kernel), then the
// automatic engine where it differs (CUB's onesweep pass for wide digits, multisplit_digit.hpp).
// `base`: the tuning every run starts from (for_each_scatter_kernel then forces each pass).
template <int KeyBits, int ValueBytes>
void check_digit_once(std::size_t n, int shift, int bits, int skew_shift, rxm::cuda::DigitEngine engine,
                      const rxm::MultisplitTuning& tuning = {});
template <int KeyBits, int ValueBytes>
void check_digit(std::size_t n, int shift, int bits, int skew_shift = 0, const rxm::MultisplitTuning& base = {}) {
  using rxm::cuda::DigitEngine;
  for_each_scatter_kernel(1u << bits, base, [&](const rxm::MultisplitTuning& tuning) {
    check_digit_once<KeyBits, ValueBytes>(n, shift, bits, skew_shift, DigitEngine::own, tuning);
  });
  if (rxm::cuda::chosen_digit_engine(DigitEngine::automatic, KeyBits, bits, ValueBytes) != DigitEngine::own) {
    SCOPED_TRACE("automatic digit engine (CUB's onesweep pass)");
    check_digit_once<KeyBits, ValueBytes>(n, shift, bits, skew_shift, DigitEngine::automatic, base);
  }
}
template <int KeyBits, int ValueBytes>
void check_digit_once(std::size_t n, int shift, int bits, int skew_shift, rxm::cuda::DigitEngine engine,
                      const rxm::MultisplitTuning& tuning) {
  using U = rxm::cuda::digit_key_t<KeyBits>;
  using V = std::conditional_t<ValueBytes == 8, std::uint64_t, std::uint32_t>;
  SCOPED_TRACE(::testing::Message() << "KeyBits=" << KeyBits << " ValueBytes=" << ValueBytes << " shift=" << shift
                                    << " bits=" << bits << " n=" << n << " skew_shift=" << skew_shift);
  auto keys = random_bit_patterns<U>(n, test_seed());
  if (skew_shift > 0)
    for (auto& k : keys) k = U(k >> skew_shift);
  std::vector<V> values(n);
  std::iota(values.begin(), values.end(), V(0));
  std::vector<U> expected(n);
  std::vector<V> expected_values(n);
  const std::uint32_t m = 1u << bits;
  std::vector<std::size_t> expected_offsets(m + 1);
  rxm::multisplit(cpu_context(), std::span<const U>(keys), std::span<U>(expected), std::span<const V>(values),
                  std::span<V>(expected_values), rxm::buckets::radix_digit{shift, bits},
                  std::span<std::size_t>(expected_offsets));
  auto keys_in = to_device(keys);
  auto values_in = to_device(values);
  auto keys_out = poisoned<U>(n);
  auto values_out = poisoned<V>(n);
  auto offsets = poisoned<std::uint32_t>(m + 1);
  std::size_t temp_bytes = 0;
  ASSERT_EQ((rxm::cuda::multisplit_digit<KeyBits, ValueBytes>(nullptr, temp_bytes, keys_in.data(), keys_out.data(),
                                                               values_in.data(), values_out.data(), n, shift, bits,
                                                               offsets.data(), nullptr, engine, tuning)), cudaSuccess);
  rxm::DeviceBuffer temp(0, temp_bytes);
  ASSERT_EQ((rxm::cuda::multisplit_digit<KeyBits, ValueBytes>(temp.data(), temp_bytes, keys_in.data(),
                                                               keys_out.data(), values_in.data(), values_out.data(), n,
                                                               shift, bits, offsets.data(), nullptr, engine, tuning)),
            cudaSuccess);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(to_host(keys_out.data(), n), expected);
  EXPECT_EQ(to_host(keys_in.data(), n), keys);  // the input stays untouched
  if (ValueBytes != 0) EXPECT_EQ(to_host(values_out.data(), n), expected_values);
  auto got_offsets = to_host(offsets.data(), m + 1);
  EXPECT_TRUE(std::equal(got_offsets.begin(), got_offsets.end(), expected_offsets.begin()));
}

// Every tuning gives the same results: the ranking method forced either way (ballots at m <= 4,
// __match_any_sync above) and the scatter pass with one and with two tile buffers.
TEST(GpuMultisplit, TuningSwitchesGiveTheSameResults) {
  RXM_REQUIRE_GPU();
  using Method = rxm::MultisplitRankMethod;
  auto all_cases = [](const rxm::MultisplitTuning& tuning) {
    for (std::size_t n : {4095ul, (1ul << 20) + 7}) {
      check_digit<32, 0>(n, 24, 8, 0, tuning);
      check_digit<32, 4>(n, 27, 5, 0, tuning);
      check_digit<32, 0>(n, 30, 2, 0, tuning);
      check_digit<64, 8>(n, 52, 12, 0, tuning);
      check_digit<16, 4>(n, 0, 16, 0, tuning);
      check_digit<8, 4>(n, 0, 8, 0, tuning);
    }
  };
  for (auto method : {Method::ballot, Method::match_any}) {
    SCOPED_TRACE(method == Method::ballot ? "ballot ranking" : "match_any ranking");
    all_cases({.rank_method = method});
    if (HasFatalFailure()) return;
  }
  for (int stages : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << stages << " scatter tile buffer(s)");
    all_cases({.scatter_stages = stages});
    if (HasFatalFailure()) return;
  }
}

// Small cases of every m <= 32 scatter pass (the sanitizer runs take this filter): partial
// sub-tiles and tiles, empty warp parts at the end of a chunk, every key and value width, the
// splitters functor (ids stored beside the keys) and skewed digits; m = 1 and 2 run the
// thread-counter pass's one-word counters, m = 3..32 its sixteen words.
TEST(GpuMultisplit, SmallScatterPasses) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const rxm::MultisplitTuning eight_windows{.warp_scatter_windows = 8};  // per sub-tile (4-byte keys only)
  for (std::size_t n : {1ul, 31ul, 513ul, 4095ul, 20003ul}) {
    check_digit<32, 0>(n, 27, 5);
    check_digit<32, 0>(n, 27, 5, 0, eight_windows);
    check_digit<32, 0>(n, 0, 1, 0, eight_windows);
    check_digit<32, 4>(n, 31, 1);
    check_digit<32, 8>(n, 2, 3, 3);
    check_digit<8, 8>(n, 3, 5);
    check_digit<16, 4>(n, 0, 2);
    check_digit<64, 0>(n, 59, 5);
    check_digit<64, 8>(n, 60, 4);
    if (HasFatalFailure()) return;
    SCOPED_TRACE(::testing::Message() << "splitters n=" << n << " seed=" << seed);
    const auto keys = random_bit_patterns<std::uint32_t>(n, seed);
    const auto boundaries = sorted_sample(keys, 16, seed + 17);
    check_device_resident<std::uint32_t, std::uint32_t>(keys, rxm::buckets::splitters<std::uint32_t>{boundaries.data(), 16}, 17);
    if (HasFatalFailure()) return;
  }
}

// Small cases of the wide-bucket passes (m > 32: block tiles with 8-bit ids at m <= 256, two
// passes over the id's digits above, the offsets from the counting pass to 4096 and from the
// global histogram above), our own engine only (the sanitizer runs take *Small*): delta, identity
// and splitters (u32 m = 65536 and u64 m = 5000 and 65536 search their table in global memory)
// through the host API, keys and pairs, and radix digits through the digit entry forced to our
// engine. Outputs poisoned, every element and the m + 1 offsets checked against the CPU backend.
TEST(GpuMultisplit, SmallWideBuckets) {
  RXM_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const std::size_t n = 20'003;
  for (std::uint32_t m : {256u, 257u, 4096u, 5000u, 65536u}) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " seed=" << seed);
    {
      SCOPED_TRACE("u32 keys");
      delta_splitters_identity(random_bit_patterns<std::uint32_t>(n, seed + m), m, seed);
    }
    if (HasFatalFailure()) return;
    {
      SCOPED_TRACE("u64 keys");
      delta_splitters_identity(random_bit_patterns<std::uint64_t>(n, seed + m), m, seed);
    }
    if (HasFatalFailure()) return;
  }
  using rxm::cuda::DigitEngine;
  check_digit_once<32, 0>(n, 24, 8, 0, DigitEngine::own);
  check_digit_once<32, 4>(n, 3, 12, 0, DigitEngine::own);
  check_digit_once<64, 8>(n, 40, 16, 0, DigitEngine::own);
  check_digit_once<32, 0>(n, 16, 16, 0, DigitEngine::own);
}

TEST(GpuMultisplit, DigitEntryPointForSort) {
  RXM_REQUIRE_GPU();
  for (std::size_t n : {0ul, 1ul, 4097ul, (1ul << 20) + 7}) {
    check_digit<8, 0>(n, 0, 8);
    check_digit<8, 4>(n, 3, 5);
    check_digit<16, 8>(n, 4, 12);
    check_digit<16, 0>(n, 0, 16);
    check_digit<32, 0>(n, 24, 8);
    check_digit<32, 4>(n, 8, 8);
    check_digit<32, 8>(n, 0, 4);
    check_digit<32, 4>(n, 16, 16);
    check_digit<64, 0>(n, 56, 8);
    check_digit<64, 8>(n, 20, 11);
    check_digit<64, 4>(n, 0, 0);
  }
  // The LSD sort's split case (top 4 bits, n = 2^22 + 3: a 3-key last tile), uniform and skewed.
  for (int skew : {0, 2, 3, 30}) {
    check_digit<32, 0>((1u << 22) + 3, 28, 4, skew);
    check_digit<32, 4>((1u << 22) + 3, 28, 4, skew);
    check_digit<32, 8>((1u << 22) + 3, 28, 4, skew);
    check_digit<64, 4>((1u << 22) + 3, 60, 4, skew);
  }
}

TEST(GpuMultisplit, BadInputLeavesOutputsUntouched) {
  RXM_REQUIRE_GPU();
  const std::size_t n = 10'000;
  std::vector<std::uint32_t> keys(n);
  std::iota(keys.begin(), keys.end(), 0u);
  auto keys_in = to_device(keys);
  auto keys_out = poisoned<std::uint32_t>(n);
  auto untouched = [&] {
    auto out = to_host(keys_out.data(), n);
    return std::all_of(out.begin(), out.end(), [](auto v) { return v == 0xA5A5A5A5u; });
  };
  auto expect_error = [&](auto&& call, const char* needle, rxm::ErrorCode code) {
    try {
      call();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const rxm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(e.code(), code) << e.what();
    }
    EXPECT_TRUE(untouched()) << needle;
  };
  const std::span<const std::uint32_t> in(keys_in.data(), n);
  std::vector<std::size_t> offsets(257), one(1), too_many(65538);
  using E = rxm::ErrorCode;
  expect_error([&] { rxm::multisplit(gpu_context(), in, keys_out.span(), rxm::buckets::identity{256}, std::span(offsets)); },
               "key 256 at index 256 has bucket id 256", E::invalid_argument);
  expect_error([&] { rxm::multisplit(gpu_context(), in, keys_out.span(), rxm::buckets::radix_digit{0, 8}, std::span(one)); },
               "m = 0", E::invalid_argument);
  expect_error([&] {
    rxm::multisplit(gpu_context(), in, keys_out.span(), HashBuckets{65537}, std::span(too_many));
  }, "m = 65537", E::invalid_argument);
  expect_error([&] {
    rxm::multisplit(gpu_context(), in, keys_out.span().first(n - 1), rxm::buckets::radix_digit{0, 8}, std::span(offsets));
  }, "keys_out has 9999", E::invalid_argument);
  std::vector<std::uint32_t> host_out(n);
  expect_error([&] {
    rxm::multisplit(gpu_context(), in, std::span<std::uint32_t>(host_out), rxm::buckets::radix_digit{0, 8}, std::span(offsets));
  }, "keys_out is host memory", E::invalid_argument);
  expect_error([&] { rxm::multisplit(gpu_context(), in, keys_out.span(), HashBuckets{256}, std::span(offsets)); },
               "user bucket functor", E::invalid_argument);
  expect_error([&] {
    rxm::multisplit(gpu_context(), in, keys_out.span(), rxm::buckets::radix_digit{0, 8}, std::span(offsets),
                    {.tuning = {.scatter_stages = 3}});
  }, "tuning.scatter_stages = 3", E::invalid_argument);
  // Fast mode sends id 256.. to the last bucket and reports nothing.
  rxm::multisplit(gpu_context(), in, keys_out.span(), rxm::buckets::identity{256}, std::span(offsets), {.checked = false});
  EXPECT_EQ(offsets[256], n);
  EXPECT_EQ(offsets[255], 255u);
  EXPECT_EQ(to_host(keys_out.data(), n), keys);
}

namespace {
// The exact byte counts a memory error names (format_bytes: "1.000 GiB (1073741824 bytes)").
std::vector<std::uint64_t> byte_counts_in(const std::string& message) {
  std::vector<std::uint64_t> counts;
  for (auto at = message.find(" bytes)"); at != std::string::npos; at = message.find(" bytes)", at + 1)) {
    const auto open = message.rfind('(', at);
    if (open != std::string::npos) counts.push_back(std::strtoull(message.c_str() + open + 1, nullptr, 10));
  }
  return counts;
}
}  // namespace

// Not enough device memory: with all but a few hundred MiB of the device held, a two-pass split
// (m = 65536) of 2^28 device-resident u32 keys needs more than 1 GiB of scratch (a copy of the
// keys). The error names how much was asked for (a count of at least the keys' size, below the
// device's total) and how much is free (a count below the keys' size); keys_out and the offsets
// stay untouched. A context of its own: no scratch cached by the tests before it.
TEST(GpuMultisplit, NotEnoughDeviceMemoryNamesAskedAndFree) {
  RXM_REQUIRE_GPU();
  rxm::Context ctx = rxm::Context::local({0}, rxm::Backend::cuda);
  const std::uint32_t m = 65536;
  const std::size_t n = std::size_t(1) << 28, key_bytes = n * sizeof(std::uint32_t);
  rxm::DeviceArray<std::uint32_t> keys_in(0, n);
  RXM_CUDA_CHECK(cudaMemset(keys_in.data(), 0, key_bytes));  // every key in bucket 0
  auto keys_out = poisoned<std::uint32_t>(n);
  std::vector<std::size_t> offsets(m + 1);
  const std::span<const std::uint32_t> in(keys_in.data(), n);
  // Warm up (kernels loaded, the context's resources made) before the memory is held.
  rxm::multisplit(ctx, in.first(4096), keys_out.span().first(4096), rxm::buckets::identity{m}, std::span(offsets));
  RXM_CUDA_CHECK(cudaMemset(keys_out.data(), 0xA5, key_bytes));
  std::fill(offsets.begin(), offsets.end(), 777);

  std::size_t free_bytes = 0, total_bytes = 0;
  std::optional<rxm::DeviceBuffer> hold;
  for (std::size_t margin = std::size_t(256) << 20; !hold && margin <= (std::size_t(768) << 20); margin += 128 << 20) {
    RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (free_bytes <= margin) break;
    try {
      hold.emplace(0, free_bytes - margin);
    } catch (const rxm::Error&) {  // not one piece of that size: leave more
    }
  }
  ASSERT_TRUE(hold.has_value()) << "could not hold the device's free memory (" << free_bytes << " bytes free)";
  std::string message;
  try {
    rxm::multisplit(ctx, in, keys_out.span(), rxm::buckets::identity{m}, std::span(offsets));
    ADD_FAILURE() << "no error with all but a few hundred MiB of the device held";
  } catch (const rxm::Error& e) {
    message = e.what();
    EXPECT_EQ(e.code(), rxm::ErrorCode::out_of_memory) << message;
  }
  hold.reset();
  EXPECT_NE(message.find("free"), std::string::npos) << message;
  const auto counts = byte_counts_in(message);
  EXPECT_TRUE(std::any_of(counts.begin(), counts.end(), [&](auto c) { return c >= key_bytes && c < total_bytes; }))
      << "no byte count asked for: " << message;
  EXPECT_TRUE(std::any_of(counts.begin(), counts.end(), [&](auto c) { return c < key_bytes; }))
      << "no byte count free: " << message;
  EXPECT_TRUE(std::all_of(offsets.begin(), offsets.end(), [](auto v) { return v == 777; }));
  const auto out = to_host(keys_out.data(), n);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](auto v) { return v == 0xA5A5A5A5u; })) << "keys_out was written";
}

// The device-level entry's argument errors: m = 0, m above 65536 (size query and run), a tuning
// knob out of range and too little temporary storage return cudaErrorInvalidValue before anything runs; keys, values and
// offsets stay untouched. One pass (m = 256) and two passes with the global histogram (65536).
TEST(GpuMultisplit, DeviceLevelArgumentErrorsLeaveOutputsUntouched) {
  RXM_REQUIRE_GPU();
  const std::size_t n = 10'000;
  auto keys_in = to_device(random_bit_patterns<std::uint32_t>(n, test_seed()));
  std::vector<std::uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  auto values_in = to_device(values);
  auto keys_out = poisoned<std::uint32_t>(n);
  auto values_out = poisoned<std::uint32_t>(n);
  auto offsets = poisoned<std::uint32_t>(65538);
  auto expect_untouched = [&](const char* what) {
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << what;
    auto poison = [](auto v) { return v == 0xA5A5A5A5u; };
    const auto k = to_host(keys_out.data(), n), v = to_host(values_out.data(), n);
    const auto o = to_host(offsets.data(), 65538);
    EXPECT_TRUE(std::all_of(k.begin(), k.end(), poison)) << "keys_out written: " << what;
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), poison)) << "values_out written: " << what;
    EXPECT_TRUE(std::all_of(o.begin(), o.end(), poison)) << "offsets written: " << what;
  };
  for (bool pairs : {false, true}) {
    for (std::uint32_t m : {256u, 65536u}) {
      SCOPED_TRACE(::testing::Message() << (pairs ? "pairs" : "keys only") << " m=" << m);
      const HashBuckets fn{m};
      using rxm::device::MultisplitEngine;
      auto call = [&](void* temp, std::size_t& bytes, std::uint32_t buckets, const rxm::MultisplitTuning& tuning = {}) {
        return pairs ? rxm::device::multisplit(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                               values_out.data(), n, fn, buckets, offsets.data(), 0, nullptr,
                                               MultisplitEngine::automatic, tuning)
                     : rxm::device::multisplit(temp, bytes, keys_in.data(), keys_out.data(), n, fn, buckets,
                                               offsets.data(), 0, nullptr, MultisplitEngine::automatic, tuning);
      };
      std::size_t temp_bytes = 0;
      ASSERT_EQ(call(nullptr, temp_bytes, m), cudaSuccess);
      ASSERT_GT(temp_bytes, 0u);
      rxm::DeviceBuffer temp(0, temp_bytes);
      std::size_t too_little = temp_bytes - 1;
      EXPECT_EQ(call(temp.data(), too_little, m), cudaErrorInvalidValue);
      expect_untouched("too little temporary storage");
      for (std::uint32_t bad_m : {0u, 65537u}) {
        std::size_t bytes = temp_bytes;
        EXPECT_EQ(call(nullptr, bytes, bad_m), cudaErrorInvalidValue) << "size query, m = " << bad_m;
        EXPECT_EQ(call(temp.data(), bytes, bad_m), cudaErrorInvalidValue) << "m = " << bad_m;
        expect_untouched(bad_m == 0 ? "m = 0" : "m = 65537");
      }
      for (const rxm::MultisplitTuning bad : {rxm::MultisplitTuning{.scatter_stages = 3},
                                              rxm::MultisplitTuning{.warp_scatter_windows = 4}}) {
        std::size_t bytes = temp_bytes;
        EXPECT_EQ(call(nullptr, bytes, m, bad), cudaErrorInvalidValue) << "size query, a knob out of range";
        EXPECT_EQ(call(temp.data(), bytes, m, bad), cudaErrorInvalidValue) << "a knob out of range";
        expect_untouched("a tuning knob out of range");
      }
    }
  }
}

// Pointers of a device outside the context: needs two GPUs.
TEST(GpuMultisplit, PointerFromDeviceOutsideContext) {
  RXM_REQUIRE_GPU();
  if (rxm::discover_cuda().topology.devices.size() < 2) GTEST_SKIP() << "needs two GPUs";
  rxm::Context only_first = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::DeviceArray<std::uint32_t> keys(1, 100), out(1, 100);
  std::vector<std::size_t> offsets(3);
  EXPECT_THROW(rxm::multisplit(only_first, std::span<const std::uint32_t>(keys.data(), 100), out.span(),
                               rxm::buckets::radix_digit{0, 1}, std::span(offsets)),
               rxm::Error);
}
