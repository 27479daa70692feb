// C++23's std::float16_t and std::bfloat16_t (<stdfloat>) take the f16 and bf16 paths: the same
// KeyType, the same order of the same bits, the same results from sort and top-k as rxm::half_t /
// rxm::bfloat16_t. Where the compiler has no such type (g++ 12 has neither <stdfloat> nor
// __STDCPP_FLOAT16_T__), the test is skipped and says so. CUDA's __half and __nv_bfloat16 are
// checked by the CUDA package consumer (tests/package/cuda_consumer.cu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <vector>

#include "radixmesh/context.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;

namespace {

// Every 16-bit pattern as both types: equal encodings in both orders, then equal sort and top-k.
template <class Alias, class Storage> void expect_same_path() {
  static_assert(sizeof(Alias) == sizeof(Storage));
  static_assert(rxm::key_type_v<Alias> == rxm::key_type_v<Storage>);
  std::vector<std::uint16_t> bits(1 << 16);
  std::iota(bits.begin(), bits.end(), std::uint16_t(0));
  for (std::uint16_t b : bits) {
    for (auto order : {rxm::Order::ascending, rxm::Order::descending}) {
      ASSERT_EQ(rxm::encode_key(rxm::from_bits<Alias>(b), order), rxm::encode_key(rxm::from_bits<Storage>(b), order))
          << "bits " << b;
    }
  }
  std::reverse(bits.begin(), bits.end());
  std::vector<Alias> alias(bits.size());
  std::vector<Storage> storage(bits.size());
  std::memcpy(alias.data(), bits.data(), bits.size() * 2);
  std::memcpy(storage.data(), bits.data(), bits.size() * 2);
  auto ctx = rxm::Context::cpu(2);
  rxm::sort(ctx, std::span<Alias>(alias));
  rxm::sort(ctx, std::span<Storage>(storage));
  EXPECT_EQ(std::memcmp(alias.data(), storage.data(), bits.size() * 2), 0);
  const auto top_alias = rxm::topk(ctx, std::span<const Alias>(alias), 100);
  const auto top_storage = rxm::topk(ctx, std::span<const Storage>(storage), 100);
  EXPECT_EQ(top_alias.indices, top_storage.indices);
  EXPECT_EQ(std::memcmp(top_alias.values.data(), top_storage.values.data(), 100 * 2), 0);
}

}  // namespace

TEST(StdFloatKeys, Float16TakesTheF16Path) {
#if defined(__STDCPP_FLOAT16_T__)
  expect_same_path<std::float16_t, rxm::half_t>();
#else
  GTEST_SKIP() << "this compiler has no std::float16_t (<stdfloat>, __STDCPP_FLOAT16_T__)";
#endif
}

TEST(StdFloatKeys, Bfloat16TakesTheBf16Path) {
#if defined(__STDCPP_BFLOAT16_T__)
  expect_same_path<std::bfloat16_t, rxm::bfloat16_t>();
#else
  GTEST_SKIP() << "this compiler has no std::bfloat16_t (<stdfloat>, __STDCPP_BFLOAT16_T__)";
#endif
}
