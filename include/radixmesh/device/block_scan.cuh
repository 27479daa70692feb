// radixmesh/device/block_scan.cuh — the warp and block scans every kernel family shares (the
// multisplit's passes, the top-k's block sorts, lists and histograms).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace radixmesh::device::block_scan {

// A mask of the lanes below this one.
__device__ __forceinline__ std::uint32_t lanes_below() {
  std::uint32_t mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

// The sum of x over the warp's lanes up to and including this one; every lane takes part.
template <class T> __device__ __forceinline__ T warp_inclusive_scan(T x) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T y = __shfl_up_sync(0xFFFFFFFFu, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

// Exclusive scan over the block's threads (Warps warps: 256 threads unless said) of 32- or 64-bit
// values (a 64-bit value may hold several lanes of counts that never carry);
// `total` gets the sum. With ProtectWarpSums, a second barrier lets the next call reuse warp_sums
// at once; without it (one barrier) the caller's own barriers must order that reuse, which saves
// one barrier per tile in the thread-counter pass.
template <class T, bool ProtectWarpSums = true, int Warps = 8>
__device__ __forceinline__ T block_exclusive_scan(T x, T* warp_sums, T& total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T inclusive = warp_inclusive_scan(x);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  T before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < Warps; ++w) {
    const T s = warp_sums[w];
    before += w < warp ? s : 0;
    total += s;
  }
  if constexpr (ProtectWarpSums) __syncthreads();
  return before + inclusive - x;
}

}  // namespace radixmesh::device::block_scan
