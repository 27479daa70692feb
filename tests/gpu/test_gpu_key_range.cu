// The mesh sort's key range (src/cuda/mesh/key_range.cu, built in: the library does not export it):
// the smallest and largest sort-key field of a device shard, read in 16-byte vectors with the keys
// before and after the aligned middle one at a time. Against a host loop over the same encoding,
// for every key width, shards starting at every element offset within 16 bytes, sizes around the
// vector and grid edges, both orders and a bit range; and with the extremes planted in the first
// and last key, where a missed head or tail would show.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "core/backends.hpp"
#include "cuda/mesh/key_range.hpp"
#include "cuda/multisplit/runtime_buckets.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;

namespace {

template <class T> void check_type(rxm::KeyType type, const rxm::detail::CudaResources::PerDevice& device) {
  using U = rxm::key_bits_t<T>;
  constexpr int width = int(sizeof(U) * 8);
  constexpr std::size_t per_vector = 16 / sizeof(U);
  const std::vector<std::size_t> sizes = {1, 2, 3, per_vector - 1, per_vector, per_vector + 1, 2 * per_vector + 3,
                                          1000, 65537, (std::size_t(1) << 20) + 5};
  const std::uint64_t seed = rxm::testing::test_seed();
  std::size_t case_number = 0;
  for (std::size_t n : sizes)
    for (std::size_t offset = 0; offset < per_vector; ++offset)
      for (rxm::Order order : {rxm::Order::ascending, rxm::Order::descending})
        for (auto [begin_bit, end_bit] : {std::pair{0, width}, std::pair{3, width - 2}})
          for (bool planted : {false, true}) {
            std::vector<T> keys = rxm::testing::random_bit_patterns<T>(n, seed + ++case_number);
            if (planted && n > 2) std::fill(keys.begin() + 1, keys.end() - 1, keys[n / 2]);
            const rxm::detail::SortPlan plan{type, n, 0, order, begin_bit, end_bit};
            // The host's answer, from the same encoding.
            const auto encoding = rxm::cuda::RuntimeEncoding<U>::of(type);
            const U flip = order == rxm::Order::descending ? U(~U(0)) : U(0);
            const std::uint64_t mask = end_bit - begin_bit >= 64 ? ~0ull : (std::uint64_t(1) << (end_bit - begin_bit)) - 1;
            std::uint64_t lo = ~0ull, hi = 0;
            for (const T& key : keys) {
              const std::uint64_t field = (std::uint64_t(U(encoding(rxm::to_bits(key)) ^ flip)) >> begin_bit) & mask;
              lo = std::min(lo, field);
              hi = std::max(hi, field);
            }
            rxm::DeviceArray<T> on_device(0, n + per_vector);
            RXM_CUDA_CHECK(cudaMemcpy(on_device.data() + offset, keys.data(), n * sizeof(T), cudaMemcpyHostToDevice));
            std::uint64_t got[2] = {0, 0};
            rxm::detail::device_key_range(device, plan, on_device.data() + offset, got);
            ASSERT_EQ(got[0], lo) << "smallest; n " << n << " offset " << offset << " bits [" << begin_bit << ", "
                                  << end_bit << ") planted " << planted << " seed " << seed;
            ASSERT_EQ(got[1], hi) << "largest; n " << n << " offset " << offset << " bits [" << begin_bit << ", "
                                  << end_bit << ") planted " << planted << " seed " << seed;
          }
}

TEST(GpuKeyRange, EveryWidthOffsetSizeOrderAndBitRange) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local();
  const auto& device = rxm::detail::cuda_resources(ctx).of_device(ctx.devices().at(0).id);
  check_type<std::uint8_t>(rxm::KeyType::u8, device);
  check_type<std::int16_t>(rxm::KeyType::i16, device);
  check_type<std::uint32_t>(rxm::KeyType::u32, device);
  check_type<float>(rxm::KeyType::f32, device);
  check_type<std::int64_t>(rxm::KeyType::i64, device);
  check_type<double>(rxm::KeyType::f64, device);
}

TEST(GpuKeyRange, NoKeysGiveAnEmptyRange) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local();
  const auto& device = rxm::detail::cuda_resources(ctx).of_device(ctx.devices().at(0).id);
  std::uint64_t got[2] = {0, 0};
  rxm::detail::device_key_range(device, {rxm::KeyType::u32, 0, 0, rxm::Order::ascending, 0, 32}, nullptr, got);
  EXPECT_GT(got[0], got[1]);
}

}  // namespace
