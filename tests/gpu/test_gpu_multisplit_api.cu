// The public device-level surface of the multisplit (issue 3):
//  - radixmesh::device::multisplit with buckets::radix_digit forwards digits of raw key bits to the
//    digit engine (CUB's pass for wide digits) and keeps our passes elsewhere (floats, signed keys
//    with the sign bit in the digit): same outputs as the CPU backend element by element, input
//    untouched, the forced own passes agree, too little temp is cudaErrorInvalidValue with outputs
//    untouched;
//  - radixmesh::device::partition (the m = 2 split) against std::stable_partition, and the host
//    rxm::partition with rxm::device_predicate on device-resident spans, and its errors.
// Outputs are poisoned first; values are original indices, so stability is checked element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "common/device_copies.hpp"
#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/multisplit.cuh"
#include "radixmesh/device/multisplit_digit.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace rxm = radixmesh;
using rxm::testing::random_bit_patterns;
using rxm::testing::test_seed;
using rxm::testing::to_host;
using rxm::testing::to_device;
using rxm::testing::poisoned;
using rxm::testing::untouched;
using rxm::testing::poison_byte;

namespace {

// Keys compared as bits (floats: -0.0 is not +0.0, NaNs compare).
template <class K> bool same_bits(const std::vector<K>& a, const std::vector<K>& b, std::size_t& first_difference) {
  first_difference = 0;
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (rxm::to_bits(a[i]) != rxm::to_bits(b[i])) { first_difference = i; return false; }
  return true;
}

rxm::Context& gpu_context() {
  static rxm::Context ctx = rxm::Context::local({}, rxm::Backend::cuda);
  return ctx;
}
rxm::Context& cpu_context() {
  static rxm::Context ctx = rxm::Context::cpu();
  return ctx;
}

template <class K> using value_for = std::conditional_t<sizeof(K) == 8, std::uint64_t, std::uint32_t>;

// Random keys with signed zeros mixed in (floats): the CPU backend orders -0.0 below +0.0, CUB
// does not, so a float digit wrongly sent to CUB's pass shows up here.
template <class K> std::vector<K> digit_test_keys(std::size_t n, std::uint64_t seed) {
  auto keys = random_bit_patterns<K>(n, seed);
  if constexpr (std::is_floating_point_v<K>)
    for (std::size_t i = 0; i < n; i += 7) keys[i] = (i / 7) % 2 ? K(0) : -K(0);
  return keys;
}

// One device-level radix-digit split (keys only, or pairs with V = index) against the CPU backend,
// through the entry's automatic engine (with the checked mode's bad index) and forced own passes.
template <class K, bool Pairs> void check_radix_digit(const std::vector<K>& keys, int shift, int bits) {
  using V = value_for<K>;
  SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << (Pairs ? " pairs" : " keys")
                                    << " n=" << keys.size() << " shift=" << shift << " bits=" << bits);
  const std::size_t n = keys.size();
  const rxm::buckets::radix_digit digit{shift, bits};
  const std::uint32_t m = digit.num_buckets();
  std::vector<V> values(n);
  std::iota(values.begin(), values.end(), V(0));
  std::vector<K> expected(n);
  std::vector<V> expected_values(n);
  std::vector<std::size_t> expected_offsets(m + 1);
  rxm::multisplit(cpu_context(), std::span<const K>(keys), std::span<K>(expected), std::span<const V>(values),
                  std::span<V>(expected_values), digit, std::span<std::size_t>(expected_offsets));

  const auto keys_in = to_device(keys);
  const auto values_in = to_device(values);
  for (auto engine : {rxm::device::MultisplitEngine::automatic, rxm::device::MultisplitEngine::own_passes}) {
    SCOPED_TRACE(engine == rxm::device::MultisplitEngine::automatic ? "automatic" : "own passes");
    auto keys_out = poisoned<K>(n);
    auto values_out = poisoned<V>(n);
    auto offsets = poisoned<std::uint32_t>(m + 1);
    auto bad_index = poisoned<unsigned long long>(1);
    auto run = [&](void* temp, std::size_t& temp_bytes) {
      if constexpr (Pairs)
        return rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                       values_out.data(), n, digit, m, offsets.data(), 0, bad_index.data(), engine);
      else
        return rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(), n, digit, m, offsets.data(),
                                       0, bad_index.data(), engine);
    };
    std::size_t temp_bytes = 0;
    ASSERT_EQ(run(nullptr, temp_bytes), cudaSuccess);
    rxm::DeviceBuffer temp(0, temp_bytes);
    ASSERT_EQ(run(temp.data(), temp_bytes), cudaSuccess);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());

    std::size_t at = 0;
    ASSERT_TRUE(same_bits(to_host(keys_out.data(), n), expected, at)) << "first key difference at " << at;
    if constexpr (Pairs) ASSERT_EQ(to_host(values_out.data(), n), expected_values) << "values (indices): stability";
    const auto got_offsets = to_host(offsets.data(), m + 1);
    ASSERT_TRUE(std::equal(got_offsets.begin(), got_offsets.end(), expected_offsets.begin())) << "offsets";
    EXPECT_EQ(to_host(bad_index.data(), 1)[0], ~0ull) << "checked mode: a digit of m = 2^bits is never out of range";
    ASSERT_TRUE(same_bits(to_host(keys_in.data(), n), keys, at)) << "input keys changed at " << at;
    if constexpr (Pairs) ASSERT_EQ(to_host(values_in.data(), n), values) << "input values changed";
  }
}

// The temp bytes the entry reports, for the path checks below.
template <class K> std::size_t entry_temp_bytes(std::size_t n, rxm::buckets::radix_digit digit,
                                                rxm::device::MultisplitEngine engine) {
  std::size_t bytes = 0;
  EXPECT_EQ(rxm::device::multisplit(nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr), n, digit,
                                    digit.num_buckets(), nullptr, 0, nullptr, engine),
            cudaSuccess);
  return bytes;
}

template <class K> void radix_digit_every_case(std::uint64_t seed) {
  constexpr int width = int(sizeof(K) * 8);
  const std::size_t n = (std::size_t(1) << 20) + 7;
  const auto keys = digit_test_keys<K>(n, seed);
  for (int bits : {1, 5, 6, 7, 8, 12, 16}) {
    std::vector<int> shifts = {0, width - bits};  // the lowest digit and the top one (the sign bit, if any)
    if constexpr (std::is_signed_v<K> && std::is_integral_v<K>) shifts.push_back(width - 1 - bits);  // just below it
    if constexpr (width == 64) shifts.push_back(20);
    for (int shift : shifts) {
      check_radix_digit<K, false>(keys, shift, bits);
      if (::testing::Test::HasFatalFailure()) return;
      check_radix_digit<K, true>(keys, shift, bits);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace

TEST(GpuMultisplitApi, DeviceEntryRadixDigitU32) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  radix_digit_every_case<std::uint32_t>(seed);
}

TEST(GpuMultisplitApi, DeviceEntryRadixDigitI32) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  radix_digit_every_case<std::int32_t>(seed);
}

TEST(GpuMultisplitApi, DeviceEntryRadixDigitU64) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  radix_digit_every_case<std::uint64_t>(seed);
}

TEST(GpuMultisplitApi, DeviceEntryRadixDigitF32) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  radix_digit_every_case<float>(seed);
}

// Awkward sizes through both engines of the digit split (tiny inputs, partial tiles).
TEST(GpuMultisplitApi, DeviceEntryRadixDigitAwkwardSizes) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(4095)}) {
    const auto keys = digit_test_keys<std::uint32_t>(n, seed + n);
    for (int bits : {5, 8, 16}) {
      check_radix_digit<std::uint32_t, false>(keys, 32 - bits, bits);
      check_radix_digit<std::uint32_t, true>(keys, 0, bits);
      if (HasFatalFailure()) return;
    }
    const auto floats = digit_test_keys<float>(n, seed + n);
    check_radix_digit<float, true>(floats, 24, 8);
    if (HasFatalFailure()) return;
  }
}

// Which path the entry takes, seen through its temp size: raw-bit digits report the digit
// engine's (automatic), floats and digits holding the sign bit report our passes' (own passes).
TEST(GpuMultisplitApi, DeviceEntryForwardsOnlyRawBitDigits) {
  RXM_REQUIRE_GPU();
  using rxm::device::MultisplitEngine;
  const std::size_t n = (std::size_t(1) << 20) + 7;
  for (int bits : {5, 8, 12}) {
    SCOPED_TRACE(bits);
    std::size_t digit_bytes = 0;
    ASSERT_EQ((rxm::cuda::multisplit_digit<32, 0>(nullptr, digit_bytes, nullptr, nullptr, nullptr, nullptr, n,
                                                  32 - bits, bits, nullptr, 0, rxm::cuda::DigitEngine::automatic)),
              cudaSuccess);
    const rxm::buckets::radix_digit top{32 - bits, bits}, below_sign{31 - bits, bits};
    EXPECT_EQ(entry_temp_bytes<std::uint32_t>(n, top, MultisplitEngine::automatic), digit_bytes);
    std::size_t digit_below_sign = 0;
    ASSERT_EQ((rxm::cuda::multisplit_digit<32, 0>(nullptr, digit_below_sign, nullptr, nullptr, nullptr, nullptr, n,
                                                  31 - bits, bits, nullptr, 0, rxm::cuda::DigitEngine::automatic)),
              cudaSuccess);
    EXPECT_EQ(entry_temp_bytes<std::int32_t>(n, below_sign, MultisplitEngine::automatic), digit_below_sign);
    EXPECT_EQ(entry_temp_bytes<std::int32_t>(n, top, MultisplitEngine::automatic),
              entry_temp_bytes<std::int32_t>(n, top, MultisplitEngine::own_passes));
    EXPECT_EQ(entry_temp_bytes<float>(n, top, MultisplitEngine::automatic),
              entry_temp_bytes<float>(n, top, MultisplitEngine::own_passes));
  }
}

// Too little temp storage: cudaErrorInvalidValue and not one output byte written, through CUB's
// pass (u32, 8 and 12 bits), our passes behind the digit engine (5 bits) and our passes directly
// (floats, a signed digit with the sign bit).
TEST(GpuMultisplitApi, DeviceEntryTooLittleTempLeavesOutputsUntouched) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 20) + 7;
  auto check = [&](auto tag, int shift, int bits, bool pairs) {
    using K = decltype(tag);
    SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << " shift=" << shift << " bits=" << bits
                                      << (pairs ? " pairs" : " keys"));
    const rxm::buckets::radix_digit digit{shift, bits};
    const std::uint32_t m = digit.num_buckets();
    const auto keys_in = to_device(random_bit_patterns<K>(n, test_seed()));
    auto values_in = poisoned<std::uint32_t>(n);
    auto keys_out = poisoned<K>(n);
    auto values_out = poisoned<std::uint32_t>(n);
    auto offsets = poisoned<std::uint32_t>(m + 1);
    auto bad_index = poisoned<unsigned long long>(1);
    auto run = [&](void* temp, std::size_t& temp_bytes) {
      return pairs ? rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(),
                                             static_cast<const std::uint32_t*>(values_in.data()), values_out.data(), n,
                                             digit, m, offsets.data(), 0, bad_index.data())
                   : rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(), n, digit, m,
                                             offsets.data(), 0, bad_index.data());
    };
    std::size_t temp_bytes = 0;
    ASSERT_EQ(run(nullptr, temp_bytes), cudaSuccess);
    ASSERT_GT(temp_bytes, 0u);
    std::size_t short_bytes = temp_bytes - 1;
    rxm::DeviceBuffer temp(0, short_bytes);
    EXPECT_EQ(run(temp.data(), short_bytes), cudaErrorInvalidValue);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(untouched(keys_out.data(), n));
    EXPECT_TRUE(untouched(values_out.data(), n));
    EXPECT_TRUE(untouched(offsets.data(), m + 1));
    EXPECT_TRUE(untouched(bad_index.data(), 1));
  };
  check(std::uint32_t{}, 24, 8, false);
  check(std::uint32_t{}, 24, 8, true);
  check(std::uint32_t{}, 16, 12, false);
  check(std::uint32_t{}, 27, 5, false);
  check(std::uint64_t{}, 56, 8, false);
  check(float{}, 24, 8, false);
  check(std::int32_t{}, 24, 8, true);
}

// ---- two-way partition -------------------------------------------------------------------------

namespace {

// The predicate, on host and device (the expected result is computed with it on the host): the
// key's low bit clear, or a constant. One type for every shape, so the partition is compiled once
// per key type.
struct Select {
  enum Rule { low_bit_clear, all, none } rule = low_bit_clear;
  template <class K> __host__ __device__ bool operator()(K key) const {
    return rule == low_bit_clear ? (rxm::to_bits(key) & 1u) == 0 : rule == all;
  }
};
constexpr Select low_bit_clear{Select::low_bit_clear};

enum class Shape { random, alternating, all_true, all_false };
const char* name_of(Shape s) {
  switch (s) {
    case Shape::random: return "random";
    case Shape::alternating: return "alternating";
    case Shape::all_true: return "all true";
    default: return "all false";
  }
}

// Keys whose low bit is i % 2 for the alternating shape (low_bit_clear then alternates true/false).
template <class K> std::vector<K> partition_keys(std::size_t n, Shape shape, std::uint64_t seed) {
  auto keys = random_bit_patterns<K>(n, seed);
  if (shape == Shape::alternating)
    for (std::size_t i = 0; i < n; ++i) {
      auto bits = rxm::to_bits(keys[i]);
      bits = decltype(bits)((bits & ~decltype(bits)(1)) | decltype(bits)(i & 1));
      keys[i] = rxm::from_bits<K>(bits);
    }
  return keys;
}

// The expected partition: indices of the selected keys in input order, then the others.
template <class K, class P> std::vector<std::size_t> expected_order(const std::vector<K>& keys, P predicate,
                                                                    std::size_t& selected) {
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  const auto split = std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return predicate(keys[i]); });
  selected = std::size_t(split - order.begin());
  return order;
}

template <class K> void check_device_partition(std::size_t n, Shape shape, Select predicate, std::uint64_t seed) {
  using V = value_for<K>;
  SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << " n=" << n << " " << name_of(shape));
  const auto keys = partition_keys<K>(n, shape, seed);
  std::size_t selected = 0;
  const auto order = expected_order(keys, predicate, selected);
  std::vector<K> expected(n);
  std::vector<V> expected_values(n), values(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = keys[order[i]], expected_values[i] = V(order[i]);
  std::iota(values.begin(), values.end(), V(0));
  const auto keys_in = to_device(keys);
  const auto values_in = to_device(values);

  for (bool pairs : {false, true}) {
    SCOPED_TRACE(pairs ? "pairs" : "keys");
    auto keys_out = poisoned<K>(n);
    auto values_out = poisoned<V>(n);
    auto count = poisoned<std::uint32_t>(1);
    auto run = [&](void* temp, std::size_t& temp_bytes) {
      return pairs ? rxm::device::partition(temp, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                            values_out.data(), n, predicate, count.data())
                   : rxm::device::partition(temp, temp_bytes, keys_in.data(), keys_out.data(), n, predicate,
                                            count.data());
    };
    std::size_t temp_bytes = 0;
    ASSERT_EQ(run(nullptr, temp_bytes), cudaSuccess);
    {  // too little temp: an error, nothing written
      std::size_t short_bytes = temp_bytes - 1;
      rxm::DeviceBuffer short_temp(0, short_bytes);
      ASSERT_EQ(run(short_temp.data(), short_bytes), cudaErrorInvalidValue);
      RXM_CUDA_CHECK(cudaDeviceSynchronize());
      ASSERT_TRUE(untouched(keys_out.data(), n));
      ASSERT_TRUE(untouched(count.data(), 1));
    }
    rxm::DeviceBuffer temp(0, temp_bytes);
    ASSERT_EQ(run(temp.data(), temp_bytes), cudaSuccess);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(to_host(count.data(), 1)[0], selected);
    std::size_t at = 0;
    ASSERT_TRUE(same_bits(to_host(keys_out.data(), n), expected, at)) << "first key difference at " << at;
    if (pairs) ASSERT_EQ(to_host(values_out.data(), n), expected_values) << "values (indices): stability";
    else ASSERT_TRUE(untouched(values_out.data(), n));
    ASSERT_TRUE(same_bits(to_host(keys_in.data(), n), keys, at)) << "input changed at " << at;
  }
}

template <class K> void partition_every_case(std::uint64_t seed) {
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(4095), (std::size_t(1) << 20) + 7}) {
    check_device_partition<K>(n, Shape::random, low_bit_clear, seed + n);
    check_device_partition<K>(n, Shape::alternating, low_bit_clear, seed + n);
    check_device_partition<K>(n, Shape::all_true, Select{Select::all}, seed + n);
    check_device_partition<K>(n, Shape::all_false, Select{Select::none}, seed + n);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace

TEST(GpuMultisplitApi, DevicePartitionAgainstStablePartition) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  partition_every_case<std::uint32_t>(seed);
  partition_every_case<std::uint64_t>(seed);
  partition_every_case<float>(seed);
  partition_every_case<std::uint16_t>(seed);
}

// A null count pointer is allowed; unaligned pointers take the scalar load path.
TEST(GpuMultisplitApi, DevicePartitionWithoutCountAndUnaligned) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = (std::size_t(1) << 20) + 7;
  const auto keys = random_bit_patterns<std::uint32_t>(n, seed);
  std::size_t selected = 0;
  const std::vector<std::uint32_t> tail(keys.begin() + 1, keys.end());
  const auto order = expected_order(tail, low_bit_clear, selected);
  const auto keys_in = to_device(keys);
  auto keys_out = poisoned<std::uint32_t>(n);
  std::size_t temp_bytes = 0;
  ASSERT_EQ(rxm::device::partition(nullptr, temp_bytes, keys_in.data() + 1, keys_out.data() + 1, n - 1, low_bit_clear,
                                   nullptr),
            cudaSuccess);
  rxm::DeviceBuffer temp(0, temp_bytes);
  ASSERT_EQ(rxm::device::partition(temp.data(), temp_bytes, keys_in.data() + 1, keys_out.data() + 1, n - 1,
                                   low_bit_clear, nullptr),
            cudaSuccess);
  const auto got = to_host(keys_out.data() + 1, n - 1);
  for (std::size_t i = 0; i < n - 1; ++i) ASSERT_EQ(got[i], tail[order[i]]) << "at " << i;
  EXPECT_TRUE(untouched(keys_out.data(), 1));
}

namespace {

template <class F> std::string error_of(F&& call) {
  try {
    call();
  } catch (const rxm::Error& e) {
    return e.what();
  }
  return "(no error)";
}

template <class K> void check_host_partition_on_device(std::size_t n, std::uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << rxm::name_of(rxm::key_type_v<K>) << " n=" << n);
  const auto keys = partition_keys<K>(n, Shape::random, seed);
  std::size_t selected = 0;
  const auto order = expected_order(keys, low_bit_clear, selected);
  const auto keys_in = to_device(keys);
  auto keys_out = poisoned<K>(n);
  const std::size_t got_selected = rxm::partition(gpu_context(), std::span<const K>(keys_in.data(), n),
                                                  keys_out.span(), rxm::device_predicate{low_bit_clear});
  EXPECT_EQ(got_selected, selected);
  const auto got = to_host(keys_out.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(rxm::to_bits(got[i]), rxm::to_bits(keys[order[i]])) << "at " << i;
}

}  // namespace

TEST(GpuMultisplitApi, HostPartitionOnDeviceSpans) {
  RXM_REQUIRE_GPU();
  const auto seed = test_seed();
  SCOPED_TRACE(seed);
  for (std::size_t n : {std::size_t(0), std::size_t(31), (std::size_t(1) << 20) + 7}) {
    check_host_partition_on_device<std::uint32_t>(n, seed + n);
    check_host_partition_on_device<float>(n, seed + n);
    check_host_partition_on_device<std::uint64_t>(n, seed + n);
    check_host_partition_on_device<std::uint16_t>(n, seed + n);
    if (HasFatalFailure()) return;
  }
}

// Each wrong combination throws rxm::Error naming the fix, with the output untouched.
TEST(GpuMultisplitApi, HostPartitionErrors) {
  RXM_REQUIRE_GPU();
  const std::size_t n = 4099;
  const auto keys = random_bit_patterns<std::uint32_t>(n, test_seed());
  const auto keys_in = to_device(keys);
  auto keys_out = poisoned<std::uint32_t>(n);
  const std::span<const std::uint32_t> device_in(keys_in.data(), n);

  // A host predicate on device-resident keys.
  std::string message = error_of([&] {
    rxm::partition(gpu_context(), device_in, keys_out.span(), [](std::uint32_t k) { return (k & 1u) == 0; });
  });
  EXPECT_NE(message.find("device_predicate"), std::string::npos) << message;
  EXPECT_TRUE(untouched(keys_out.data(), n));

  // A device predicate on host-resident keys.
  std::vector<std::uint32_t> host_out(n, 7u);
  message = error_of([&] {
    rxm::partition(gpu_context(), std::span<const std::uint32_t>(keys), std::span<std::uint32_t>(host_out),
                   rxm::device_predicate{low_bit_clear});
  });
  EXPECT_NE(message.find("host memory"), std::string::npos) << message;
  EXPECT_TRUE(std::all_of(host_out.begin(), host_out.end(), [](std::uint32_t k) { return k == 7u; }));

  // Device keys in, host keys out.
  message = error_of([&] {
    rxm::partition(gpu_context(), device_in, std::span<std::uint32_t>(host_out), rxm::device_predicate{low_bit_clear});
  });
  EXPECT_NE(message.find("keys_out is host memory"), std::string::npos) << message;
  EXPECT_TRUE(std::all_of(host_out.begin(), host_out.end(), [](std::uint32_t k) { return k == 7u; }));

  // A device predicate on a CPU context.
  message = error_of([&] {
    rxm::partition(cpu_context(), std::span<const std::uint32_t>(keys), std::span<std::uint32_t>(host_out),
                   rxm::device_predicate{low_bit_clear});
  });
  EXPECT_NE(message.find("CPU context"), std::string::npos) << message;

  // Lengths differ.
  message = error_of([&] {
    rxm::partition(gpu_context(), device_in, keys_out.span().first(n - 1), rxm::device_predicate{low_bit_clear});
  });
  EXPECT_NE(message.find("keys_out has"), std::string::npos) << message;
  EXPECT_TRUE(untouched(keys_out.data(), n));
}

// The checked mode at the device level (bad_index given): a split whose ids are all < m is the
// same as unchecked (the CPU backend's stable order, element by element); a split with ids >= m
// reports the first such index and leaves keys_out and values_out untouched (the scatter passes
// read the counting pass's verdict on the device). Every pass shape: warp-owned (m = 2),
// thread counters (m = 32, keys), block tiles (m = 32 pairs, m = 256), two passes with a
// counting pass (m = 1000) and two passes with a histogram (m = 5000).
TEST(GpuMultisplitApi, DeviceCheckedModeWritesNothingOnBadIds) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 20) + 7;
  for (const std::uint32_t m : {2u, 32u, 256u, 1000u, 5000u}) {
    for (const bool pairs : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "m=" << m << (pairs ? " pairs" : " keys"));
      const rxm::buckets::identity ids{m};
      auto host_keys = random_bit_patterns<std::uint32_t>(n, test_seed() + m);
      for (auto& k : host_keys) k %= m;
      std::vector<std::uint32_t> host_values(n);
      std::iota(host_values.begin(), host_values.end(), 0u);
      auto run = [&](const std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& keys_out_host,
                     std::vector<std::uint32_t>& values_out_host, bool& untouched_outputs) {
        const auto keys_in = to_device(keys);
        const auto values_in = to_device(host_values);
        auto keys_out = poisoned<std::uint32_t>(n);
        auto values_out = poisoned<std::uint32_t>(n);
        auto offsets = poisoned<std::uint32_t>(m + 1);
        auto bad_index = poisoned<unsigned long long>(1);
        auto call = [&](void* temp, std::size_t& temp_bytes) {
          return pairs ? rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                                 values_out.data(), n, ids, m, offsets.data(), 0, bad_index.data())
                       : rxm::device::multisplit(temp, temp_bytes, keys_in.data(), keys_out.data(), n, ids, m,
                                                 offsets.data(), 0, bad_index.data());
        };
        std::size_t temp_bytes = 0;
        EXPECT_EQ(call(nullptr, temp_bytes), cudaSuccess);
        rxm::DeviceBuffer temp(0, temp_bytes);
        EXPECT_EQ(call(temp.data(), temp_bytes), cudaSuccess);
        RXM_CUDA_CHECK(cudaDeviceSynchronize());
        untouched_outputs = untouched(keys_out.data(), n) && (!pairs || untouched(values_out.data(), n));
        keys_out_host = to_host(keys_out.data(), n);
        values_out_host = to_host(values_out.data(), n);
        return to_host(bad_index.data(), 1)[0];
      };
      std::vector<std::uint32_t> keys_out, values_out;
      bool untouched_outputs = false;
      EXPECT_EQ(run(host_keys, keys_out, values_out, untouched_outputs), ~0ull) << "all ids are below m";
      std::vector<std::uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return host_keys[a] < host_keys[b]; });
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i)
        wrong += keys_out[i] != host_keys[order[i]] || (pairs && values_out[i] != order[i]);
      EXPECT_EQ(wrong, 0u) << "checked split with no bad id differs from the stable order";

      const std::size_t first_bad = n / 3 + 5, second_bad = n - 2;
      host_keys[second_bad] = m + 7;
      host_keys[first_bad] = 0xFFFFFFFFu;
      EXPECT_EQ(run(host_keys, keys_out, values_out, untouched_outputs), first_bad);
      EXPECT_TRUE(untouched_outputs) << "a checked split with a bad id wrote its outputs";
    }
  }
}
