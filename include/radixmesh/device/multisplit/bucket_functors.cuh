// radixmesh/device/multisplit/bucket_functors.cuh — what the kernels need to know about a bucket
// functor beyond operator(): whether it has a lookup table (splitters) that is worth staging in
// shared memory, and the staging itself (paper §7.3: search the boundaries in shared memory).
#pragma once
#include <cuda_runtime.h>

#include <concepts>
#include <cstddef>
#include <cstdint>

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

// Functors whose id is cheap to compute again (`static constexpr bool cheap_to_recompute = true`:
// a shift and a mask, as cuda::raw_digit): the scatter passes recompute the bucket of a slot at
// write-out; for every other functor they store it as a byte beside the key at placement (run 1
// of session 4: computing buckets::delta twice made m = 2 slower, 1.84 against 1.57 ms).
template <class F>
concept cheap_to_recompute = requires { requires F::cheap_to_recompute; };

// Bytes of F's lookup table that the kernels would stage (0 for none, or too large: then the
// functor reads its table where it is).
template <class F> std::uint32_t lookup_table_bytes(const F& f) {
  if constexpr (has_lookup_table<F>) {
    const std::size_t bytes = f.table_bytes();
    return bytes <= max_shared_table_bytes ? std::uint32_t(bytes) : 0;
  } else {
    return 0;
  }
}

// Copies the functor's table to `shared` (the whole block; the caller syncs before use) and
// returns the functor reading that copy; F itself when nothing is staged.
template <class F> __device__ __forceinline__ F with_shared_table(const F& f, std::uint32_t bytes, void* shared) {
  if constexpr (has_lookup_table<F>) {
    if (bytes != 0) {
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
  }
  return f;
}

}  // namespace radixmesh::device::multisplit_detail
