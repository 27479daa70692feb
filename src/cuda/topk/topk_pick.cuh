// Picking a radix pass's bucket: the block scan over a histogram and the row-state update, and the
// start at the bits a range's ends share.
#pragma once
#include <cub/block/block_scan.cuh>

#include "cuda/topk/topk_common.cuh"

namespace radixmesh::detail::topk_gpu {

// ---- picking the bucket. A block scans a pass's histogram (thread 0 owns the top bins, `per`
// bins each) and the one thread whose bins hold the k_left-th best updates the row's state.
using BinScan = cub::BlockScan<unsigned long long, kThreads>;
constexpr int kBinsPerThread = kMaxBins / kThreads;

// `get(b)` reads bin b; fills this thread's bins and returns how many elements they hold.
template <class Get>
__device__ __forceinline__ unsigned long long load_my_bins(int bins, unsigned long long (&local)[kBinsPerThread],
                                                           Get&& get) {
  const int per = (bins + kThreads - 1) / kThreads;  // <= kBinsPerThread
  unsigned long long sum = 0;
#pragma unroll
  for (int j = 0; j < kBinsPerThread; ++j) {
    const int b = bins - 1 - (int(threadIdx.x) * per + j);
    local[j] = (j < per && b >= 0) ? get(b) : 0ull;
    sum += local[j];
  }
  return sum;
}

// With `above` elements in the bins of the threads before this one: if the k_left-th best lies
// in this thread's bins, updates `s` (the digit, k_left within the bucket, done) and returns true.
template <class U>
__device__ __forceinline__ bool pick_in_my_bins(const unsigned long long (&local)[kBinsPerThread], int bins,
                                                unsigned long long above, unsigned long long sum, RowState<U>& s,
                                                int total_bits, int IB, PassBits pb) {
  if (!(above < s.k_left && s.k_left <= above + sum)) return false;
  const int per = (bins + kThreads - 1) / kThreads;
  unsigned long long running = above;
#pragma unroll
  for (int j = 0; j < kBinsPerThread; ++j) {
    if (j < per && running + local[j] >= s.k_left) {
      const unsigned d = unsigned(bins - 1 - (int(threadIdx.x) * per + j));
      s.k_left -= running;
      set_digit(s, d, IB, pb.low, pb.width);
      s.resolved = total_bits - pb.low;
      s.done = (local[j] == s.k_left || pb.low == 0) ? 1 : 0;
      return true;
    }
    running += local[j];
  }
  return false;
}

// One histogram pass's tail: merge the block's shared histogram, and the last block of the row
// picks the bucket holding the k_left-th best, updating the row's state.
template <class U>
__device__ void merge_and_pick(unsigned* smem_hist, int bins, unsigned long long* hist, unsigned* counter,
                               RowState<U>* state, int total_bits, int IB, PassBits pb) {
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x)
    if (smem_hist[b]) atomicAdd(hist + b, (unsigned long long)smem_hist[b]);
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  __shared__ typename BinScan::TempStorage scan_storage;
  unsigned long long local[kBinsPerThread];
  const unsigned long long sum = load_my_bins(bins, local, [&](int b) { return __ldcg(hist + b); });
  // Every thread reads the row's state BEFORE the barrier below, and the one thread whose bins
  // hold the k_left-th best writes it only AFTER it. Without that barrier (reading the state
  // after the scan) a warp scheduled late could read the state that the picking thread had
  // already updated, find the new, smaller k_left inside its own bins and write a second, wrong
  // digit: too few winners, unwritten output places. Such a race shows only under
  // compute-sanitizer racecheck, which reorders warps, and racecheck cannot report it (a race on
  // global memory). See docs/design/topk.md, "Correctness invariants".
  RowState<U> s = *state;
  unsigned long long above;
  BinScan(scan_storage).ExclusiveSum(sum, above);
  __syncthreads();
  if (pick_in_my_bins(local, bins, above, sum, s, total_bits, IB, pb)) *state = s;
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) hist[b] = 0;
  if (threadIdx.x == 0) *counter = 0;
}

// The range-adaptive start: every element the select will see has a rank in [lo, hi], so the top
// bits those two share are resolved before the first pass.
template <class U> __device__ __forceinline__ void start_at_shared_bits(RowState<U>& m, U lo, U hi, int W) {
  const std::uint64_t diff = std::uint64_t(lo ^ hi);
  const int common = diff ? W - (64 - __clzll((long long)diff)) : W;
  m.resolved = common;
  m.rank_prefix = common ? U(hi & ~U(low_mask(W - common))) : U(0);
}

}  // namespace radixmesh::detail::topk_gpu
