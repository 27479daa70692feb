// The host API's run-time bucket functors (src/cuda/multisplit/runtime_buckets.cuh), on the CPU:
// they are host-device code, and every shape must give the ids of the public functors
// (buckets.hpp) on every key type, since the GPU split is checked against the CPU backend, which
// runs those. Also the splitter prefix index's narrowing (buckets::detail::splitter_index), with
// an index built here by its definition, on tables that make its bins uneven.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "common/multisplit_inputs.hpp"
#include "common/random_keys.hpp"
#include "cuda/multisplit/runtime_buckets.cuh"
#include "radixmesh/buckets.hpp"

namespace rxm = radixmesh;
using rxm::testing::random_bit_patterns;
using rxm::testing::test_seed;

namespace {

// Random bit patterns plus the patterns where encodings turn: zeros, the sign bit, all ones,
// infinities and NaNs of floats (as bits: they are only special to float keys).
template <class T> std::vector<T> keys_for_encoding(std::uint64_t seed) {
  using U = rxm::key_bits_t<T>;
  auto keys = random_bit_patterns<T>(20000, seed);
  const U sign = U(U(1) << (sizeof(U) * 8 - 1));
  for (U bits : {U(0), sign, U(~U(0)), U(sign - 1), U(sign + 1), U(1), U(~U(1))}) keys.push_back(rxm::from_bits<T>(bits));
  if constexpr (rxm::key_traits<T>::is_float) {
    constexpr int mantissa = rxm::key_traits<T>::mantissa_bits;
    const U inf = U(U(sign - 1) & U(~U((U(1) << mantissa) - 1)));
    for (U bits : {inf, U(inf | sign), U(inf + 1), U(inf | sign | 1), U(sign - 1)}) keys.push_back(rxm::from_bits<T>(bits));
  }
  return keys;
}

template <class T> void encoding_matches(std::uint64_t seed) {
  using U = rxm::key_bits_t<T>;
  SCOPED_TRACE(rxm::name_of(rxm::key_type_v<T>));
  const auto encoding = rxm::cuda::RuntimeEncoding<U>::of(rxm::key_type_v<T>);
  std::size_t wrong = 0;
  for (const T key : keys_for_encoding<T>(seed)) wrong += encoding(rxm::to_bits(key)) != rxm::encode_key(key);
  EXPECT_EQ(wrong, 0u);
}

// The run-time functor of `spec`'s kind for keys T, as multisplit_host.cu fills it.
template <class T> rxm::cuda::RuntimeBucketParams<rxm::key_bits_t<T>> params_for(rxm::detail::BucketSpec::Kind kind,
                                                                               std::uint32_t m) {
  rxm::cuda::RuntimeBucketParams<rxm::key_bits_t<T>> p;
  p.encoding = rxm::cuda::RuntimeEncoding<rxm::key_bits_t<T>>::of(rxm::key_type_v<T>);
  p.type = rxm::key_type_v<T>;
  p.kind = kind;
  p.m = m;
  return p;
}

template <class T> void delta_shape_matches(std::uint64_t seed) {
  using U = rxm::key_bits_t<T>;
  SCOPED_TRACE(rxm::name_of(rxm::key_type_v<T>));
  const auto keys = keys_for_encoding<T>(seed);
  std::mt19937_64 rng(seed);
  for (const std::uint32_t m : {2u, 33u, 256u, 4096u}) {
    U lo = U(rng()), hi = U(rng());
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) hi = U(lo + 1);
    const rxm::buckets::delta<T> reference(rxm::decode_key<T>(lo), rxm::decode_key<T>(hi), m);
    auto p = params_for<T>(rxm::detail::BucketSpec::Kind::delta, m);
    p.delta_lo_encoded = reference.lo_encoded;
    p.delta_width = reference.width;
    p.delta_reciprocal = rxm::buckets::detail::delta_reciprocal(reference.width);
    const rxm::cuda::RuntimeBuckets<U, rxm::cuda::RuntimeShape::delta_integer> shaped(p);
    const rxm::cuda::RuntimeBuckets<U, rxm::cuda::RuntimeShape::any> any(p);
    std::size_t wrong = 0;
    for (const T key : keys) {
      const std::uint32_t expected = reference(key);
      wrong += shaped(rxm::to_bits(key)) != expected || any(rxm::to_bits(key)) != expected;
    }
    EXPECT_EQ(wrong, 0u) << "m=" << m;
  }
}

// The index by its definition (the kernels build the same in shared memory, bucket_functors.cuh).
template <class U>
rxm::buckets::detail::splitter_index<U> index_by_definition(const std::vector<U>& table, std::vector<std::uint16_t>& lower) {
  rxm::buckets::detail::splitter_index<U> index;
  index.bins = rxm::buckets::detail::splitter_index_bins(std::uint32_t(table.size()));
  index.first = table.front();
  int span_bits = 0, bin_bits = 0;
  for (U s = U(table.back() - table.front()); s != 0; s = U(s >> 1)) ++span_bits;
  while ((1u << bin_bits) < index.bins) ++bin_bits;
  index.shift = span_bits > bin_bits ? span_bits - bin_bits : 0;
  lower.assign(index.bins + 1, 0);
  for (std::uint32_t b = 0; b <= index.bins; ++b)
    lower[b] = std::uint16_t(std::count_if(table.begin(), table.end(), [&](U x) {
      return (std::uint64_t(U(x - index.first)) >> index.shift) < b;
    }));
  index.lower = lower.data();
  return index;
}

template <class T> void splitters_shape_matches(std::uint64_t seed) {
  using U = rxm::key_bits_t<T>;
  SCOPED_TRACE(rxm::name_of(rxm::key_type_v<T>));
  for (const std::uint32_t count : {16u, 255u, 1000u, 4095u}) {
    int shape = 0;
    for (const auto& encoded : rxm::testing::uneven_boundary_encodings<U>(count, seed + count)) {
      SCOPED_TRACE(::testing::Message() << "count=" << count << " table " << shape++);
      std::vector<T> table(count);
      for (std::uint32_t i = 0; i < count; ++i) table[i] = rxm::decode_key<T>(encoded[i]);
      const rxm::buckets::splitters<T> reference{table.data(), count};
      auto p = params_for<T>(rxm::detail::BucketSpec::Kind::splitters, count + 1);
      p.encoded_splitters = encoded.data();
      p.splitter_count = count;
      std::vector<std::uint16_t> lower;
      const auto index = index_by_definition(encoded, lower);
      ASSERT_NE(index.bins, 0u);
      const rxm::cuda::RuntimeBuckets<U, rxm::cuda::RuntimeShape::splitters> plain(p);
      const auto indexed = plain.with_index(index);
      const auto public_indexed = reference.with_index(index);
      // Keys: random, and the boundaries and their encoding neighbours.
      auto keys = keys_for_encoding<T>(seed + count);
      for (U b : encoded)
        for (U d : {U(0), U(1), U(~U(0))}) keys.push_back(rxm::decode_key<T>(U(b + d)));
      std::size_t wrong = 0;
      for (const T key : keys) {
        const std::uint32_t expected = reference(key);
        const U raw = rxm::to_bits(key);
        wrong += plain(raw) != expected || indexed(raw) != expected || public_indexed(key) != expected;
      }
      EXPECT_EQ(wrong, 0u);
    }
  }
}

}  // namespace

TEST(RuntimeBuckets, EncodingWithoutBranchesIsEncodeKey) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  encoding_matches<std::uint8_t>(seed);
  encoding_matches<std::int8_t>(seed);
  encoding_matches<std::uint16_t>(seed);
  encoding_matches<std::int16_t>(seed);
  encoding_matches<rxm::half_t>(seed);
  encoding_matches<rxm::bfloat16_t>(seed);
  encoding_matches<std::uint32_t>(seed);
  encoding_matches<std::int32_t>(seed);
  encoding_matches<float>(seed);
  encoding_matches<std::uint64_t>(seed);
  encoding_matches<std::int64_t>(seed);
  encoding_matches<double>(seed);
}

TEST(RuntimeBuckets, DeltaShapeMatchesPublicFunctor) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  delta_shape_matches<std::uint32_t>(seed);
  delta_shape_matches<std::int32_t>(seed);
  delta_shape_matches<std::uint64_t>(seed);
  delta_shape_matches<std::int64_t>(seed);
}

TEST(RuntimeBuckets, SplittersShapeAndPrefixIndexMatchPublicFunctor) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  splitters_shape_matches<std::uint8_t>(seed);
  splitters_shape_matches<std::int16_t>(seed);
  splitters_shape_matches<rxm::bfloat16_t>(seed);
  splitters_shape_matches<std::uint32_t>(seed);
  splitters_shape_matches<float>(seed);
  splitters_shape_matches<std::int64_t>(seed);
  splitters_shape_matches<double>(seed);
}

namespace {

// The hash shape (three 32-bit multiplicative remainders) against buckets::hash's 64-bit `%`, at
// every awkward m (1, powers of two, primes, 2^16 - 1, 2^16), on every key of this width's types.
template <class T> void hash_shape_matches(std::uint64_t seed) {
  using U = rxm::key_bits_t<T>;
  const auto keys = keys_for_encoding<T>(seed);
  for (std::uint32_t m : {1u, 2u, 3u, 7u, 255u, 256u, 1000u, 1024u, 4093u, 65521u, 65535u, 65536u}) {
    rxm::cuda::RuntimeBucketParams<U> p;
    p.type = rxm::key_type_v<T>;
    p.kind = rxm::detail::BucketSpec::Kind::hash;
    p.m = m;
    p.hash = rxm::cuda::HashBuckets::of(m);
    const rxm::cuda::RuntimeBuckets<U, rxm::cuda::RuntimeShape::hash> shaped(p);
    const rxm::cuda::RuntimeBuckets<U, rxm::cuda::RuntimeShape::any> any(p);
    const rxm::buckets::hash f{.m = m};
    for (T k : keys) {
      const U bits = rxm::to_bits(k);
      ASSERT_EQ(shaped(bits), f(k)) << "m " << m << " bits " << std::uint64_t(bits);
      ASSERT_EQ(any(bits), f(k)) << "m " << m;
    }
  }
}

}  // namespace

TEST(RuntimeBuckets, HashShapeMatchesPublicFunctor) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed);
  hash_shape_matches<std::uint32_t>(seed);
  hash_shape_matches<float>(seed);
  hash_shape_matches<std::int64_t>(seed);
  hash_shape_matches<double>(seed);
}

TEST(RuntimeBuckets, RemapSendsIdsBelowMAndTheRestPastEveryBucketOrWhereTold) {
  rxm::cuda::RuntimeBucketParams<std::uint32_t> p;
  p.kind = rxm::detail::BucketSpec::Kind::identity;
  p.m = 4;
  const std::uint32_t remap[4] = {2, 0, 1, 1};  // 4 ids onto 3 buckets, as the shuffle's owners
  p.remap = remap;
  const rxm::cuda::RuntimeBuckets<std::uint32_t, rxm::cuda::RuntimeShape::any> f(p);
  for (std::uint32_t k = 0; k < 4; ++k) EXPECT_EQ(f(k), remap[k]);
  EXPECT_EQ(f(9), 0xFFFFFFFFu) << "an id >= m goes past every bucket, so the checked mode finds it";
  p.remap_out_of_range = remap[3];  // unchecked: where id m - 1 goes
  const rxm::cuda::RuntimeBuckets<std::uint32_t, rxm::cuda::RuntimeShape::any> unchecked(p);
  EXPECT_EQ(unchecked(9), 1u);
}
