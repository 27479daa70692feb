// The single-GPU sort against std::stable_sort on the encodings: every key type, keys and pairs
// (values = original index, so stability is checked element by element), both orders, bit ranges,
// awkward sizes, adversarial distributions; host-resident input, device-resident input
// (device_span) and the device-level API (radixmesh/device/sort.cuh), each engine; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/sort.cuh"
#include "radixmesh/device_span.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/sort.hpp"

namespace rxm = radixmesh;
using rxm::Order;
using rxm::SortEngine;

namespace {

template <class T> using Bits = rxm::key_bits_t<T>;
template <class T> constexpr int width_of = int(sizeof(T) * 8);

enum class Shape {
  uniform_bits,
  all_equal,
  sorted,
  reverse_sorted,
  few_distinct,
  shared_high_bits,
  float_specials,
  // Aimed at the fix-up of CUB's native float order (src/cuda/sort/native_float.hpp): long runs of
  // both zeros, many sign-set NaNs, one zero sign only, nothing but sign-set NaNs or zeros.
  signed_zeros,
  negative_nans,
  minus_zeros_only,
  all_negative_nans,
  all_zeros,
};
const char* name_of(Shape s) {
  const char* names[] = {"uniform-bits",  "all-equal",     "sorted",           "reverse",
                         "few-distinct",  "shared-high-bits", "float-specials", "signed-zeros",
                         "negative-nans", "minus-zeros-only", "all-negative-nans", "all-zeros"};
  return names[int(s)];
}

// Keys of a distribution, from raw bit patterns so that every encoding edge is reachable.
template <class T> std::vector<T> make_keys(Shape shape, std::size_t n, std::uint64_t seed) {
  std::vector<T> keys = rxm::testing::random_bit_patterns<T>(n, seed);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  const rxm::key_less<T> less{};
  switch (shape) {
    case Shape::uniform_bits: break;
    case Shape::all_equal: std::fill(keys.begin(), keys.end(), keys.empty() ? T{} : keys[0]); break;
    case Shape::sorted: std::stable_sort(keys.begin(), keys.end(), less); break;
    case Shape::reverse_sorted:
      std::stable_sort(keys.begin(), keys.end(), less);
      std::reverse(keys.begin(), keys.end());
      break;
    case Shape::few_distinct: {
      const auto pool = rxm::testing::random_bit_patterns<T>(5, seed + 1);
      for (auto& k : keys) k = pool[rng() % pool.size()];
      break;
    }
    case Shape::shared_high_bits:  // only the low quarter of the bits varies
      for (auto& k : keys) {
        const int low = width_of<T> / 4 > 0 ? width_of<T> / 4 : 1;
        const Bits<T> mask = Bits<T>((Bits<T>(1) << low) - 1);
        k = rxm::from_bits<T>(Bits<T>((rxm::to_bits(k) & mask) | Bits<T>(Bits<T>(0x5A5A5A5A5A5A5A5Aull) & ~mask)));
      }
      break;
    case Shape::float_specials:
      if constexpr (rxm::key_traits<T>::is_float) {
        using traits = rxm::key_traits<T>;
        const Bits<T> sign = Bits<T>(Bits<T>(1) << (width_of<T> - 1));
        const Bits<T> inf = Bits<T>(Bits<T>(~sign) & Bits<T>(~((Bits<T>(1) << traits::mantissa_bits) - 1)));
        const Bits<T> specials[] = {0, sign, inf, Bits<T>(inf | sign), Bits<T>(inf | 1), Bits<T>(inf | sign | 1),
                                    Bits<T>(inf | 2), Bits<T>(inf | sign | 5), 1, Bits<T>(sign | 1)};
        for (auto& k : keys)
          if (rng() % 2) k = rxm::from_bits<T>(specials[rng() % std::size(specials)]);
      }
      break;
    case Shape::signed_zeros:
    case Shape::negative_nans:
    case Shape::minus_zeros_only:
    case Shape::all_negative_nans:
    case Shape::all_zeros:
      if constexpr (rxm::key_traits<T>::is_float) {
        using traits = rxm::key_traits<T>;
        const Bits<T> sign = Bits<T>(Bits<T>(1) << (width_of<T> - 1));
        const Bits<T> inf = Bits<T>(Bits<T>(~sign) & Bits<T>(~((Bits<T>(1) << traits::mantissa_bits) - 1)));
        const Bits<T> payload_mask = Bits<T>((Bits<T>(1) << traits::mantissa_bits) - 1);
        // A sign-set NaN with one of a few payloads (ties) or a random one.
        auto negative_nan = [&] {
          const Bits<T> payload = rng() % 2 ? Bits<T>(1 + rng() % 3) : Bits<T>(rng() & payload_mask);
          return rxm::from_bits<T>(Bits<T>(inf | sign | (payload ? payload : Bits<T>(1))));
        };
        auto zero = [&](bool negative) { return rxm::from_bits<T>(negative ? sign : Bits<T>(0)); };
        for (auto& k : keys) {
          const unsigned draw = unsigned(rng() % 100);
          if (shape == Shape::signed_zeros && draw < 70) k = zero(rng() % 2);
          if (shape == Shape::negative_nans) k = draw < 40 ? negative_nan() : (draw < 50 ? zero(rng() % 2) : k);
          if (shape == Shape::minus_zeros_only && draw < 50) k = zero(true);
          if (shape == Shape::all_negative_nans) k = negative_nan();
          if (shape == Shape::all_zeros) k = zero(rng() % 2);
        }
        if (shape == Shape::minus_zeros_only)  // random bit patterns can hold +0.0 (16-bit types)
          for (auto& k : keys)
            if (rxm::to_bits(k) == 0) k = zero(true);
      }
      break;
  }
  return keys;
}

// The part of a key's encoding that takes part in the order.
template <class T> Bits<T> ranked_bits(T key, Order order, int begin_bit, int end_bit) {
  const int bits = end_bit - begin_bit;
  const Bits<T> mask = bits >= width_of<T> ? Bits<T>(~Bits<T>(0)) : Bits<T>((Bits<T>(1) << bits) - 1);
  return bits == 0 ? Bits<T>(0) : Bits<T>((rxm::encode_key(key, order) >> begin_bit) & mask);
}

struct Case {
  Order order = Order::ascending;
  int value_bytes = 0;  // 0, 4 or 8: values are the original indices
  int begin_bit = 0;
  int end_bit = -1;
  SortEngine engine = SortEngine::automatic;
  rxm::HostStagingPlan host_plan = rxm::HostStagingPlan::automatic;
};

std::string describe(const Case& c, std::size_t n, const char* shape) {
  return std::string("n=") + std::to_string(n) + " shape=" + shape + (c.order == Order::ascending ? " asc" : " desc") +
         " values=" + std::to_string(c.value_bytes) + " bits=[" + std::to_string(c.begin_bit) + "," +
         std::to_string(c.end_bit) + ") engine=" + std::to_string(int(c.engine)) +
         " seed=" + std::to_string(rxm::testing::test_seed());
}

// The expected permutation: std::stable_sort of the indices by the ranked bits.
template <class T> std::vector<std::size_t> expected_order(const std::vector<T>& keys, const Case& c) {
  const int end_bit = c.end_bit < 0 ? width_of<T> : c.end_bit;
  std::vector<Bits<T>> ranks(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ranks[i] = ranked_bits(keys[i], c.order, c.begin_bit, end_bit);
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  return order;
}

template <class T, class V>
void expect_sorted(const std::vector<T>& input, const std::vector<T>& keys, const std::vector<V>* values,
                   const Case& c) {
  const auto order = expected_order(input, c);
  ASSERT_EQ(keys.size(), input.size());
  for (std::size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(rxm::to_bits(keys[i]), rxm::to_bits(input[order[i]])) << "key at " << i;
    if (values) ASSERT_EQ(std::uint64_t((*values)[i]), std::uint64_t(order[i])) << "value at " << i << " (stability)";
  }
}

rxm::Context& gpu_context() {
  static rxm::Context ctx = rxm::Context::local({}, rxm::Backend::cuda);
  return ctx;
}

rxm::SortOptions options_of(const Case& c) {
  return {.order = c.order, .begin_bit = c.begin_bit, .end_bit = c.end_bit, .engine = c.engine, .host_plan = c.host_plan};
}

template <class V> std::vector<V> indices(std::size_t n) {
  std::vector<V> v(n);
  std::iota(v.begin(), v.end(), V(0));
  return v;
}

// Host-resident input: rxm::sort(ctx, std::span...).
template <class T> void check_host(const std::vector<T>& input, const Case& c, const char* shape) {
  SCOPED_TRACE(describe(c, input.size(), shape));
  std::vector<T> keys = input;
  if (c.value_bytes == 0) {
    rxm::sort(gpu_context(), std::span<T>(keys), options_of(c));
    expect_sorted<T, std::uint32_t>(input, keys, nullptr, c);
  } else if (c.value_bytes == 4) {
    auto values = indices<std::uint32_t>(input.size());
    rxm::sort(gpu_context(), std::span<T>(keys), std::span<std::uint32_t>(values), options_of(c));
    expect_sorted(input, keys, &values, c);
  } else {
    auto values = indices<std::uint64_t>(input.size());
    rxm::sort(gpu_context(), std::span<T>(keys), std::span<std::uint64_t>(values), options_of(c));
    expect_sorted(input, keys, &values, c);
  }
}

template <class T> std::vector<T> to_host(const T* device, std::size_t n) {
  std::vector<T> out(n);
  if (n) RXM_CUDA_CHECK(cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}
template <class T> void to_device(T* device, const std::vector<T>& host) {
  if (!host.empty()) RXM_CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// Device-resident input, in place: rxm::sort(ctx, device_span...). `offset` elements into the
// allocation, so that 16-byte-unaligned views are exercised too.
template <class T, class V>
void check_device_span(const std::vector<T>& input, const Case& c, const char* shape, std::size_t offset = 0) {
  SCOPED_TRACE(describe(c, input.size(), shape) + " device_span offset=" + std::to_string(offset));
  const std::size_t n = input.size();
  rxm::DeviceArray<T> keys(0, n + offset);
  rxm::DeviceArray<V> values(0, n + offset);
  to_device(keys.data() + offset, input);
  to_device(values.data() + offset, indices<V>(n));
  rxm::device_span<T> k = rxm::device_span(keys).subspan(offset, n);
  if (c.value_bytes == 0)
    rxm::sort(gpu_context(), k, options_of(c));
  else
    rxm::sort(gpu_context(), k, rxm::device_span(values).subspan(offset, n), options_of(c));
  const auto got_keys = to_host(k.data(), n);
  const auto got_values = to_host(values.data() + offset, n);
  expect_sorted(input, got_keys, c.value_bytes ? &got_values : nullptr, c);
}

// The device-level API into separate, poisoned outputs; the input must come back untouched.
template <class T, class V> void check_device_api(const std::vector<T>& input, const Case& c, const char* shape) {
  SCOPED_TRACE(describe(c, input.size(), shape) + " device API");
  const std::size_t n = input.size();
  const int end_bit = c.end_bit < 0 ? width_of<T> : c.end_bit;
  rxm::DeviceArray<T> keys_in(0, n), keys_out(0, n);
  rxm::DeviceArray<V> values_in(0, n), values_out(0, n);
  to_device(keys_in.data(), input);
  to_device(values_in.data(), indices<V>(n));
  RXM_CUDA_CHECK(cudaMemset(keys_out.data(), 0xA5, n * sizeof(T)));
  RXM_CUDA_CHECK(cudaMemset(values_out.data(), 0xA5, n * sizeof(V)));
  auto run = [&](void* temp, std::size_t& bytes) {
    const bool asc = c.order == Order::ascending;
    if (c.value_bytes == 0) {
      if (asc)
        rxm::cuda::sort_keys(temp, bytes, keys_in.data(), keys_out.data(), n, c.begin_bit, end_bit, nullptr, c.engine);
      else
        rxm::cuda::sort_keys_descending(temp, bytes, keys_in.data(), keys_out.data(), n, c.begin_bit, end_bit,
                                        nullptr, c.engine);
    } else if (asc) {
      rxm::cuda::sort_pairs(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(), values_out.data(), n,
                            c.begin_bit, end_bit, nullptr, c.engine);
    } else {
      rxm::cuda::sort_pairs_descending(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                       values_out.data(), n, c.begin_bit, end_bit, nullptr, c.engine);
    }
  };
  std::size_t temp_bytes = 0;
  run(nullptr, temp_bytes);
  ASSERT_GT(temp_bytes, 0u);
  rxm::DeviceBuffer temp(0, temp_bytes);
  run(temp.data(), temp_bytes);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got_keys = to_host(keys_out.data(), n);
  const auto got_values = to_host(values_out.data(), n);
  expect_sorted(input, got_keys, c.value_bytes ? &got_values : nullptr, c);
  const auto kept = to_host(keys_in.data(), n);
  ASSERT_EQ(0, n ? std::memcmp(kept.data(), input.data(), n * sizeof(T)) : 0) << "keys_in was modified";
}

std::vector<SortEngine> engines() { return {SortEngine::cub_onesweep, SortEngine::multisplit_lsd}; }

template <class T> class GpuSort : public ::testing::Test {};
using KeyTypes = ::testing::Types<std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, std::int8_t, std::int16_t,
                                  std::int32_t, std::int64_t, rxm::half_t, rxm::bfloat16_t, float, double>;
TYPED_TEST_SUITE(GpuSort, KeyTypes);

}  // namespace

TYPED_TEST(GpuSort, HostInputEveryOrderAndValueWidthAtAwkwardSizes) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (std::size_t n : rxm::testing::awkward_sizes)
    for (Order order : {Order::ascending, Order::descending})
      for (int value_bytes : {0, 4, 8}) check_host(make_keys<T>(Shape::uniform_bits, n, seed++), {order, value_bytes}, "uniform-bits");
}

TYPED_TEST(GpuSort, HostInputAdversarialDistributions) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (Shape shape : {Shape::all_equal, Shape::sorted, Shape::reverse_sorted, Shape::few_distinct,
                      Shape::shared_high_bits, Shape::float_specials})
    for (Order order : {Order::ascending, Order::descending})
      check_host(make_keys<T>(shape, (1u << 20) + 7, seed++), {order, 4}, name_of(shape));
}

TYPED_TEST(GpuSort, BitRangesOfTheEncoding) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  constexpr int w = width_of<T>;
  std::uint64_t seed = rxm::testing::test_seed();
  const int ranges[][2] = {{0, w}, {0, 1}, {w - 1, w}, {w / 2, w}, {0, w / 2}, {3, w - 2 > 3 ? w - 2 : w}, {w / 2, w / 2}};
  for (const auto& r : ranges)
    for (Order order : {Order::ascending, Order::descending}) {
      Case c{order, 4, r[0], r[1]};
      const auto keys = make_keys<T>(Shape::uniform_bits, 100'003, seed++);
      check_host(keys, c, "uniform-bits");
      // Each engine forced: the LSD engine's digits must stop at end_bit as CUB's passes do.
      for (SortEngine engine : engines()) {
        c.engine = engine;
        check_device_api<T, std::uint32_t>(keys, c, "uniform-bits");
      }
    }
}

TYPED_TEST(GpuSort, DeviceSpanInPlaceEveryEngine) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (SortEngine engine : engines())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(257), std::size_t(65537), std::size_t(1'000'003)})
      for (Order order : {Order::ascending, Order::descending}) {
        const auto keys = make_keys<T>(Shape::uniform_bits, n, seed++);
        check_device_span<T, std::uint32_t>(keys, {order, 0, 0, -1, engine}, "uniform-bits");
        check_device_span<T, std::uint32_t>(keys, {order, 4, 0, -1, engine}, "uniform-bits", 1);
        check_device_span<T, std::uint64_t>(keys, {order, 8, 0, -1, engine}, "uniform-bits", 3);
      }
}

TYPED_TEST(GpuSort, DeviceApiSeparateOutputsEveryEngine) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (SortEngine engine : engines())
    for (std::size_t n : {std::size_t(1), std::size_t(4093), std::size_t(1'000'003)})
      for (Order order : {Order::ascending, Order::descending}) {
        const auto keys = make_keys<T>(n > 4093 ? Shape::few_distinct : Shape::uniform_bits, n, seed++);
        check_device_api<T, std::uint32_t>(keys, {order, 0, 0, -1, engine}, "mixed");
        check_device_api<T, std::uint32_t>(keys, {order, 4, 0, -1, engine}, "mixed");
        check_device_api<T, std::uint64_t>(keys, {order, 8, 0, -1, engine}, "mixed");
      }
}

// ---- floats: CUB's native float sort and the fix-up to our order (src/cuda/sort/native_float.hpp) ----
// The device API and the in-place sort take that path for float keys on CUB's engine over all bits;
// the tests above reach it too (random bit patterns hold sign-set NaNs), these aim at its corners.

namespace {
template <class T> class GpuSortFloat : public ::testing::Test {};
using FloatKeyTypes = ::testing::Types<rxm::half_t, rxm::bfloat16_t, float, double>;
TYPED_TEST_SUITE(GpuSortFloat, FloatKeyTypes);

// Every entry point of the native path on one input: keys, both value widths, separate outputs and
// in place (aligned and not).
template <class T> void check_native_paths(const std::vector<T>& keys, Order order, const char* shape) {
  check_device_api<T, std::uint32_t>(keys, {order, 0}, shape);
  check_device_api<T, std::uint32_t>(keys, {order, 4}, shape);
  check_device_api<T, std::uint64_t>(keys, {order, 8}, shape);
  check_device_span<T, std::uint32_t>(keys, {order, 0}, shape);
  check_device_span<T, std::uint32_t>(keys, {order, 4}, shape, 1);
}

const Shape native_fix_shapes[] = {Shape::float_specials,    Shape::signed_zeros, Shape::negative_nans,
                                   Shape::minus_zeros_only,  Shape::all_zeros,    Shape::all_negative_nans,
                                   Shape::uniform_bits,      Shape::few_distinct};
}  // namespace

TYPED_TEST(GpuSortFloat, NativeOrderFixUpEveryShape) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (Shape shape : native_fix_shapes)
    for (Order order : {Order::ascending, Order::descending})
      check_native_paths(make_keys<T>(shape, 300'007, seed++), order, name_of(shape));
}

// A zero run of more than 1024 of the fix-up's 4096-key tiles: its prefix scan spans many tiles,
// and the partition crosses many blocks.
TYPED_TEST(GpuSortFloat, NativeOrderFixUpZeroRunOfManyTiles) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  const auto keys = make_keys<T>(Shape::signed_zeros, (std::size_t(1) << 23) + 5, seed);
  check_device_api<T, std::uint32_t>(keys, {Order::descending, 4}, "signed-zeros");
  check_device_span<T, std::uint64_t>(keys, {Order::ascending, 8}, "signed-zeros", 3);
}

namespace {
constexpr std::size_t fix_tile = 4096;  // the fix-up's tile (native_order_fix.cu: 256 threads x 16 keys)

// Keys whose CUB-sorted layout is known: `nans` sign-set NaNs, `negatives`, `zeros` of both signs
// (at least one of each when zeros >= 2), `positives` (finite, nonzero), shuffled. CUB's order puts
// the zero run at [nans + negatives, + zeros) ascending and at [positives, + zeros) descending.
template <class T>
std::vector<T> layout_keys(std::size_t nans, std::size_t negatives, std::size_t zeros, std::size_t positives,
                           std::uint64_t seed) {
  using traits = rxm::key_traits<T>;
  const Bits<T> sign = Bits<T>(Bits<T>(1) << (width_of<T> - 1));
  const Bits<T> inf = Bits<T>(Bits<T>(~sign) & Bits<T>(~((Bits<T>(1) << traits::mantissa_bits) - 1)));
  const Bits<T> payload_mask = Bits<T>((Bits<T>(1) << traits::mantissa_bits) - 1);
  std::mt19937_64 rng(seed);
  auto finite = [&] { return Bits<T>(1 + rng() % (std::uint64_t(inf) - 1)); };
  std::vector<T> keys;
  for (std::size_t i = 0; i < nans; ++i) {
    const Bits<T> payload = Bits<T>(rng() % 2 ? 1 + rng() % 3 : rng() & payload_mask);
    keys.push_back(rxm::from_bits<T>(Bits<T>(inf | sign | (payload ? payload : Bits<T>(1)))));
  }
  for (std::size_t i = 0; i < negatives; ++i) keys.push_back(rxm::from_bits<T>(Bits<T>(finite() | sign)));
  for (std::size_t i = 0; i < zeros; ++i)
    keys.push_back(rxm::from_bits<T>(i == 0 ? sign : (i == 1 ? Bits<T>(0) : Bits<T>(rng() % 2 ? sign : 0))));
  for (std::size_t i = 0; i < positives; ++i) keys.push_back(rxm::from_bits<T>(finite()));
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}
}  // namespace

// Zero runs that start or end on a fix-up tile border or one key off it, with no NaN, one, and
// NaN groups longer than a tile (the in-place shift then waits on tiles further back), both orders.
TYPED_TEST(GpuSortFloat, NativeOrderFixUpZeroRunsAtTileBorders) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  const std::size_t T1 = fix_tile;
  for (std::size_t nans : {std::size_t(0), std::size_t(1), T1 + 3, 2 * T1 + 3})
    for (std::size_t begin_at : {(nans / T1 + 1) * T1, (nans / T1 + 1) * T1 + 1, (nans / T1 + 1) * T1 - 1})
      for (std::size_t length : {T1, 2 * T1 - 1, 2 * T1 + 1}) {
        const std::size_t tail = 3 * T1 + 7;
        const std::string shape = "zero run [" + std::to_string(begin_at) + ", +" + std::to_string(length) +
                                  ") nans=" + std::to_string(nans);
        // Ascending: the run starts after the NaN group and the negatives.
        const auto up = layout_keys<T>(nans, begin_at - nans, length, tail, seed++);
        check_device_api<T, std::uint32_t>(up, {Order::ascending, 4}, shape.c_str());
        check_device_span<T, std::uint64_t>(up, {Order::ascending, (begin_at % 2) ? 0 : 8}, shape.c_str(), 1);
        // Descending: the run starts after the positives.
        const auto down = layout_keys<T>(nans, tail, length, begin_at, seed++);
        check_device_api<T, std::uint32_t>(down, {Order::descending, (length % 2) ? 0 : 4}, shape.c_str());
        check_device_span<T, std::uint32_t>(down, {Order::descending, 4}, shape.c_str());
      }
}

// Nothing but zeros (both signs: the whole array is the run) or nothing but sign-set NaNs (the
// rotation is the identity), at tile multiples and one past them, every entry point.
TYPED_TEST(GpuSortFloat, NativeOrderFixUpAllZerosOrAllNaNs) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (std::size_t n : {std::size_t(2), fix_tile, fix_tile + 1, 3 * fix_tile, 3 * fix_tile + 1, std::size_t(1) << 20})
    for (Order order : {Order::ascending, Order::descending}) {
      check_native_paths(make_keys<T>(Shape::all_zeros, n, seed++), order, "all-zeros");
      check_native_paths(make_keys<T>(Shape::all_negative_nans, n, seed++), order, "all-negative-nans");
      check_native_paths(layout_keys<T>(n - 1, 0, 0, 1, seed++), order, "all-negative-nans but one");
    }
}

// Small and fast, for the sanitizers: gpu-check's racecheck filter (*Small*) picks these by name.
// A few fix-up tiles and CUB's small-input paths, every float type, keys and pairs, both orders.
TYPED_TEST(GpuSortFloat, SmallNativeOrderFixUpForSanitizers) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  for (std::size_t n : {std::size_t(3), std::size_t(12'289)})
    for (Order order : {Order::ascending, Order::descending}) {
      const auto keys = make_keys<T>(n > 3 ? Shape::signed_zeros : Shape::negative_nans, n, seed++);
      check_device_api<T, std::uint32_t>(keys, {order, 4}, "small");
      check_device_span<T, std::uint64_t>(keys, {order, 8}, "small", 1);
    }
  check_device_api<T, std::uint32_t>(make_keys<T>(Shape::float_specials, 5'000, seed++), {Order::ascending, 0},
                                     "small float-specials");
}

// Small and fast, for the sanitizers: every key type through the encoded path of each engine, and
// host input (the whole plan, chunked staging).
TYPED_TEST(GpuSort, SmallEveryEngineForSanitizers) {
  RXM_REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t seed = rxm::testing::test_seed();
  const auto keys = make_keys<T>(Shape::uniform_bits, 5'003, seed);
  for (SortEngine engine : engines())
    check_device_api<T, std::uint32_t>(keys, {Order::descending, 4, 0, -1, engine}, "small");
  check_device_api<T, std::uint32_t>(keys, {Order::ascending, 4, 1, width_of<T> - 1}, "small bit range");
  check_host(keys, {Order::ascending, 8}, "small");
}

// Host input of 2^22 keys and more can take the split plan (sort_host.cpp): a top-digit split,
// then per-bucket sorts overlapped with the download. Skew puts everything in one bucket.
TEST(GpuSortSplitPlan, HostInputSkewedAndBitRanges) {
  RXM_REQUIRE_GPU();
  // Forced: on its own the plan is chosen only for unsigned ascending keys.
  constexpr auto split = rxm::HostStagingPlan::split;
  const std::size_t n = (std::size_t(1) << 22) + 3;
  std::uint64_t seed = rxm::testing::test_seed();
  for (Shape shape : {Shape::uniform_bits, Shape::all_equal, Shape::few_distinct, Shape::shared_high_bits,
                      Shape::reverse_sorted}) {
    check_host(make_keys<std::uint32_t>(shape, n, seed++), {Order::ascending, 0, 0, -1, {}, split}, name_of(shape));
    check_host(make_keys<std::int64_t>(shape, n, seed++), {Order::descending, 8, 0, -1, {}, split}, name_of(shape));
  }
  check_host(make_keys<float>(Shape::float_specials, n, seed++), {Order::ascending, 4, 0, -1, {}, split},
             "float-specials");
  check_host(make_keys<std::uint32_t>(Shape::uniform_bits, n, seed++), {Order::ascending, 4, 5, 29, {}, split},
             "uniform-bits");
  check_host(make_keys<double>(Shape::uniform_bits, n, seed++), {Order::descending, 0, 40, 64, {}, split},
             "uniform-bits");
}

// 2^26 keys: several chunks of the host pipeline, and CUB's multi-portion path.
TEST(GpuSortLarge, TwoToThe26KeysAndPairs) {
  RXM_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 26;
  std::uint64_t seed = rxm::testing::test_seed();
  check_host(make_keys<std::uint32_t>(Shape::uniform_bits, n, seed), {Order::ascending, 0}, "uniform-bits");
  check_host(make_keys<float>(Shape::float_specials, n, seed + 1), {Order::descending, 4}, "float-specials");
  for (SortEngine engine : engines())
    check_device_span<std::uint64_t, std::uint32_t>(make_keys<std::uint64_t>(Shape::shared_high_bits, n, seed + 2),
                                                    {Order::ascending, 4, 0, -1, engine}, "shared-high-bits");
}

// ---- bad input: each is an rxm::Error with a clear message, outputs untouched ----

namespace {
template <class F> std::string error_of(F&& f, rxm::ErrorCode expected) {
  try {
    f();
  } catch (const rxm::Error& e) {
    EXPECT_EQ(int(e.code()), int(expected)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was thrown";
  return {};
}
}  // namespace

TEST(GpuSortBadInput, DeviceSpanOnCpuContext) {
  RXM_REQUIRE_GPU();
  rxm::DeviceArray<std::uint32_t> keys(0, 16);
  auto cpu = rxm::Context::cpu(1);
  auto message = error_of([&] { rxm::sort(cpu, rxm::device_span(keys)); }, rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("CPU context"), std::string::npos) << message;
}

TEST(GpuSortBadInput, HostMemoryOrWrongDeviceInADeviceSpan) {
  RXM_REQUIRE_GPU();
  std::vector<std::uint32_t> host(16, 7);
  auto message = error_of([&] { rxm::sort(gpu_context(), rxm::device_span<std::uint32_t>(host.data(), 16, 0)); },
                          rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("host memory"), std::string::npos) << message;
  EXPECT_EQ(host, std::vector<std::uint32_t>(16, 7));

  rxm::DeviceArray<std::uint32_t> keys(0, 16);
  message = error_of([&] { rxm::sort(gpu_context(), rxm::device_span<std::uint32_t>(keys.data(), 16, 5)); },
                     rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("not one of this context's devices"), std::string::npos) << message;
}

TEST(GpuSortBadInput, MemoryOfADeviceOutsideTheContext) {
  RXM_REQUIRE_GPU();
  if (rxm::discover_cuda().topology.devices.size() < 2) GTEST_SKIP() << "needs two GPUs";
  auto ctx0 = rxm::Context::local({0}, rxm::Backend::cuda);
  rxm::DeviceArray<std::uint32_t> on_device1(1, 64);
  auto message = error_of([&] { rxm::sort(ctx0, rxm::device_span(on_device1)); }, rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("device 1"), std::string::npos) << message;
  // A span that claims device 0 for memory of device 1.
  message = error_of([&] { rxm::sort(ctx0, rxm::device_span<std::uint32_t>(on_device1.data(), 64, 0)); },
                     rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("its memory is device 1"), std::string::npos) << message;
}

TEST(GpuSortBadInput, KeysAndValuesOfDifferentLengths) {
  RXM_REQUIRE_GPU();
  std::vector<float> keys = {3, 1, 2};
  std::vector<std::uint32_t> values = {0, 1};
  error_of([&] { rxm::sort(gpu_context(), std::span<float>(keys), std::span<std::uint32_t>(values)); },
           rxm::ErrorCode::invalid_argument);
  EXPECT_EQ(keys, (std::vector<float>{3, 1, 2}));
  rxm::DeviceArray<float> dk(0, 3);
  rxm::DeviceArray<std::uint32_t> dv(0, 2);
  auto message = error_of([&] { rxm::sort(gpu_context(), rxm::device_span(dk), rxm::device_span(dv)); },
                          rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("3 keys but 2 values"), std::string::npos) << message;
}

TEST(GpuSortBadInput, NotEnoughDeviceMemoryNamesNeededAndFree) {
  RXM_REQUIRE_GPU();
  // A real allocation with an absurd length: the check must fire before anything is touched.
  rxm::DeviceArray<std::uint64_t> keys(0, 16);
  const std::size_t absurd = std::size_t(1) << 44;  // 2^44 keys: 128 TiB
  auto message = error_of([&] { rxm::sort(gpu_context(), rxm::device_span<std::uint64_t>(keys.data(), absurd, 0)); },
                          rxm::ErrorCode::out_of_memory);
  EXPECT_NE(message.find("needs"), std::string::npos) << message;
  EXPECT_NE(message.find("is free"), std::string::npos) << message;
  // Through the device API: the temp size for the absurd sort cannot be allocated, and says why.
  std::size_t temp_bytes = 0;
  rxm::cuda::sort_keys<std::uint64_t>(nullptr, temp_bytes, nullptr, nullptr, absurd);
  EXPECT_GT(temp_bytes, absurd);
  message = error_of([&] { rxm::DeviceBuffer temp(0, temp_bytes); }, rxm::ErrorCode::out_of_memory);
  EXPECT_NE(message.find("free"), std::string::npos) << message;
}

TEST(GpuSortBadInput, DeviceApiArguments) {
  RXM_REQUIRE_GPU();
  rxm::DeviceArray<std::int32_t> a(0, 1000), b(0, 1000);
  std::size_t temp_bytes = 0;
  error_of([&] { rxm::cuda::sort_keys(nullptr, temp_bytes, a.data(), a.data(), 1000); },
           rxm::ErrorCode::invalid_argument);  // in place is not the device API's contract
  error_of([&] { rxm::cuda::sort_keys(nullptr, temp_bytes, a.data(), a.data() + 10, 1000); },
           rxm::ErrorCode::invalid_argument);  // overlapping
  error_of([&] { rxm::cuda::sort_keys(nullptr, temp_bytes, a.data(), b.data(), 1000, 8, 40); },
           rxm::ErrorCode::invalid_argument);  // bit range beyond 32 bits
  rxm::cuda::sort_keys(nullptr, temp_bytes, a.data(), b.data(), 1000);
  rxm::DeviceBuffer temp(0, temp_bytes);
  std::size_t too_small = temp_bytes - 1;
  auto message = error_of([&] { rxm::cuda::sort_keys(temp.data(), too_small, a.data(), b.data(), 1000); },
                          rxm::ErrorCode::invalid_argument);
  EXPECT_NE(message.find("temporary storage"), std::string::npos) << message;
  std::vector<float> keys = {2, 1};
  error_of([&] { rxm::sort(gpu_context(), std::span<float>(keys), rxm::SortOptions{.begin_bit = 4, .end_bit = 2}); },
           rxm::ErrorCode::invalid_argument);
  EXPECT_EQ(keys, (std::vector<float>{2, 1}));
}
