// radixmesh/device/multisplit/bucket_functors.cuh — what the kernels need to know about a bucket
// functor beyond operator(): whether it has a lookup table (splitters) that is worth staging in
// shared memory, and the staging itself (paper §7.3: search the boundaries in shared memory).
#pragma once
#include <cuda_runtime.h>

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "radixmesh/buckets.hpp"
#include "radixmesh/device/multisplit/common.cuh"

namespace radixmesh::device::multisplit_detail {

// Bucket functors with a lookup table (splitters: buckets::splitters, the host API's runtime
// functor) expose table(), table_bytes() and with_table(copy); the kernels copy the table to
// shared memory once per block and search it there, when it fits.
template <class F>
concept has_lookup_table = requires(const F& f, const void* copy) {
  { f.table() } -> std::convertible_to<const void*>;
  { f.table_bytes() } -> std::convertible_to<std::size_t>;
  { f.with_table(copy) } -> std::convertible_to<F>;
};
constexpr std::size_t max_shared_table_bytes = 32 * 1024;  // 4095 splitters of 8 bytes

// Lookup tables that are sorted boundaries (buckets::splitters, the host API's runtime functor):
// the kernels also build a prefix index over their shared copy (buckets::detail::splitter_index)
// and hand it to the functor with with_index.
template <class F>
concept has_splitter_index = has_lookup_table<F> && requires(const F& f, std::uint32_t i) {
  { f.boundary_count() } -> std::convertible_to<std::uint32_t>;
  f.encoded_boundary(i);
  { f.with_index(buckets::detail::splitter_index<decltype(f.encoded_boundary(i))>{}) } -> std::convertible_to<F>;
};

// Shared bytes of the index beside a staged table of `count` boundaries (0: no index).
__host__ __device__ constexpr std::size_t splitter_index_bytes(std::uint32_t count) {
  const std::uint32_t bins = buckets::detail::splitter_index_bins(count);
  return bins == 0 ? 0 : align16((std::size_t(bins) + 1) * sizeof(std::uint16_t));
}

// Functors whose id is cheap to compute again (`static constexpr bool cheap_to_recompute = true`:
// a shift and a mask, as cuda::raw_digit): the scatter passes recompute the bucket of a slot at
// write-out; for every other functor they store it as a byte beside the key at placement
// (the warp-owned pass took 1.84 ms at delta m = 2 computing the id twice, 1.36 storing the byte;
// H200, 2^28 u32, bench_multisplit --m 2).
template <class F>
concept cheap_to_recompute = requires { requires F::cheap_to_recompute; };

// Shared bytes that the kernels would stage for F's lookup table, its index included (0 for
// none, or too large: then the functor reads its table where it is).
template <class F> std::uint32_t lookup_table_bytes(const F& f) {
  if constexpr (has_lookup_table<F>) {
    const std::size_t bytes = f.table_bytes();
    if (bytes == 0 || bytes > max_shared_table_bytes) return 0;
    if constexpr (has_splitter_index<F>) return std::uint32_t(align16(bytes) + splitter_index_bytes(f.boundary_count()));
    return std::uint32_t(bytes);
  } else {
    return 0;
  }
}

// Builds the prefix index of `f`'s staged boundaries at `lower` (the whole block; the table is
// in shared memory and visible, the caller syncs before the index is used).
template <class F>
__device__ __forceinline__ F with_built_index(const F& f, std::uint16_t* lower) {
  using E = decltype(f.encoded_boundary(0));
  const std::uint32_t count = f.boundary_count();
  buckets::detail::splitter_index<E> index;
  index.lower = lower;
  index.bins = buckets::detail::splitter_index_bins(count);
  index.first = f.encoded_boundary(0);
  const E span = E(f.encoded_boundary(count - 1) - index.first);
  int span_bits = 0;
  for (E s = span; s != 0; s = E(s >> 1)) ++span_bits;
  int bin_bits = 0;
  while ((1u << bin_bits) < index.bins) ++bin_bits;
  index.shift = span_bits > bin_bits ? span_bits - bin_bits : 0;  // (last - first) >> shift < bins
  for (std::uint32_t b = threadIdx.x; b <= index.bins; b += blockDim.x) {
    std::uint32_t lo = 0, hi = count;  // the first boundary whose bin is >= b
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) / 2;
      const std::uint64_t bin = std::uint64_t(E(f.encoded_boundary(mid) - index.first)) >> index.shift;
      if (bin < b) lo = mid + 1; else hi = mid;
    }
    lower[b] = std::uint16_t(lo);
  }
  return f.with_index(index);
}

// Copies the functor's table to `shared` (the whole block) and returns the functor reading it.
template <class F> __device__ __forceinline__ F with_table_copy(const F& f, void* shared) {
  const std::uint32_t bytes = std::uint32_t(f.table_bytes());
  const void* table = f.table();
  if (reinterpret_cast<std::uintptr_t>(table) % 4 == 0 && bytes % 4 == 0) {
    const auto* src = static_cast<const std::uint32_t*>(table);
    auto* dst = static_cast<std::uint32_t*>(shared);
    for (std::uint32_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) dst[i] = src[i];
  } else {
    const auto* src = static_cast<const unsigned char*>(table);
    auto* dst = static_cast<unsigned char*>(shared);
    for (std::uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
  }
  return f.with_table(shared);
}

// Copies the functor's table to `shared` (the whole block; the caller syncs before use), builds
// its index after it when it has one (lookup_table_bytes counted it), and returns the functor
// reading that copy; F itself when nothing is staged. `bytes` is lookup_table_bytes(f) or 0.
template <class F> __device__ __forceinline__ F with_shared_table(const F& f, std::uint32_t bytes, void* shared) {
  if constexpr (has_lookup_table<F>) {
    if (bytes != 0) {
      const F staged = with_table_copy(f, shared);
      if constexpr (has_splitter_index<F>) {
        const std::size_t table = align16(f.table_bytes());
        if (bytes > table) {  // the index: built over the shared copy once every entry is there
          __syncthreads();
          return with_built_index(staged, reinterpret_cast<std::uint16_t*>(static_cast<unsigned char*>(shared) + table));
        }
      }
      return staged;
    }
  }
  return f;
}

}  // namespace radixmesh::device::multisplit_detail
