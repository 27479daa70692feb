// The row-stream block's key buffer in shared memory (StreamBuffer): its exact compaction to the k
// best keys (a sort up to kSortedKeepMax keys, else a radix select), and its sort for the output.
// Design and measurements: docs/design/topk.md.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_stream_common.cuh"

namespace radixmesh::detail::topk_gpu {

// Compactions of at most this many keys sort them (bitonic steps: 36 barrier-separated at 256)
// instead of radix-selecting (up to 8 passes of 4 barriers and contended shared atomics each).
// Above, the passes cost less: with this at 1024, the row-stream blocks' compactions of ~390-810
// keys at k = 192-384 took 4096 x 128256 bf16 k = 192 0.568 ms against 0.457 with it at 256, and
// unsorted output at k = 512 0.469 against 0.346 (one H100, calls HU / HV / HY, docs/design/topk.md).
constexpr unsigned kSortedKeepMax = 256;
// Sorts whose count of keys squared is at most this many times the block's threads rank every key
// against the others (StreamBuffer::sort_by_ranks: count x count / threads comparisons a thread,
// two barriers) instead of the bitonic steps (a barrier a merge stage: 8 at 64 keys). 64: up to 128
// keys in 256-thread blocks, 181 in 512, 256 in 1024.
constexpr unsigned kRankSortWork = 64;

struct StreamBuffer {
  unsigned long long* keys;  // capacity entries
  unsigned long long* keep;  // stream_keep_entries(k_pad) entries: the compaction's destination
  StreamShared& sh;

  // The bits in which keys[0, count) are not all equal (AND and OR over the block, into sh.all and
  // sh.any). Every thread calls it; it ends with a barrier.
  __device__ unsigned long long differing_bits(unsigned count) {
    unsigned long long all = ~0ull, any = 0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) all &= keys[i], any |= keys[i];
    return block_differing_bits(all, any, sh);
  }

  // Keeps the `k` largest of keys[0, count) (count > k) in keys[0, kept) (in order when sorted,
  // else in no order), sets sh.count = kept and returns the new threshold (a later key is taken
  // iff it is greater): the k-th key after a sort, or after a radix select the prefix every kept
  // key shares or exceeds, minus one. The radix select may stop once the bits at and above
  // `loose_below` are resolved and the keys sharing or exceeding that prefix number at most
  // `limit` (<= the `keep` area): then kept = that number, the k best and keys equal to the k-th
  // in those bits (ties of the k-th rank, for loose_below = the rank's lowest bit; their position
  // bits would take up to three more passes). Otherwise kept = k exactly (loose_below = 0).
  // Every thread calls it.
  __device__ unsigned long long keep_best(unsigned count, unsigned k, int loose_below = 0, unsigned limit = 0) {
    if (count <= kSortedKeepMax) {  // a bitonic sort is cheaper than radix passes here
      unsigned size = 1;
      while (size < count) size *= 2;
      sort(count, size, [](unsigned long long key) { return key; });
      if (threadIdx.x == 0) sh.count = k;
      const unsigned long long kth = keys[k - 1];
      __syncthreads();
      return kth;  // exact: a later key is taken iff it beats the k-th
    }
    // The leading bits every key shares are resolved without a pass.
    const unsigned long long differ = differing_bits(count);
    // Bits at and above `high` are resolved to `prefix`.
    int high = differ ? 64 - __clzll((long long)differ) : 0;
    unsigned long long prefix = high == 64 ? 0ull : sh.any >> high;
    unsigned need = k, bucket = 0;
    while (high > 0) {
      auto every_key = [&](unsigned i, unsigned long long& key) { return key = keys[i], true; };
      bucket = radix_select_pass(sh, count, every_key, 0, high, prefix, need);
      if (bucket == need || (high <= loose_below && k - need + bucket <= limit)) break;
      __syncthreads();  // sh.digit and the histogram are rewritten by the next pass
    }
    // Exactly k keys share or exceed the prefix (keys are distinct), or at most `limit`.
    const unsigned kept = k - need + bucket;
    if (threadIdx.x == 0) sh.kept = 0;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
      const unsigned long long key = keys[i];
      if (high == 64 ? true : (key >> high) >= prefix) {
        const unsigned at = atomicAdd(&sh.kept, 1u);
        if (at < kept) keep[at] = key;  // the guard is for safety
      }
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < kept; i += blockDim.x) keys[i] = keep[i];
    if (threadIdx.x == 0) sh.count = kept;
    const unsigned long long floor = high == 64 ? 0ull : prefix << high;
    __syncthreads();
    return floor ? floor - 1 : 0;
  }

  // Keys [0, count) sorted as sort() sorts them, each stored at its rank: its count of keys ahead of
  // it (a greater order, or an equal one at a lower index: stable). A key's `lanes` threads split
  // the others between them and sum their counts by shuffles. count <= blockDim.x: one key a group.
  template <class Order> __device__ void sort_by_ranks(unsigned count, unsigned size, Order order) {
    unsigned lanes = 32;
    while (lanes > 1 && count * lanes > blockDim.x) lanes /= 2;
    const unsigned i = threadIdx.x / lanes, g = threadIdx.x % lanes;
    unsigned ahead = 0;
    unsigned long long x = 0;
    if (i < count) {
      x = keys[i];
      const auto ox = order(x);
#pragma unroll 4
      for (unsigned j = g; j < count; j += lanes) {
        const auto oy = order(keys[j]);
        ahead += oy > ox || (oy == ox && j < i);
      }
    }
    for (unsigned d = lanes / 2; d > 0; d /= 2) ahead += __shfl_xor_sync(0xffffffffu, ahead, d, lanes);
    __syncthreads();  // every key is read
    if (i < count && g == 0) keys[ahead] = x;
    for (unsigned q = count + threadIdx.x; q < size; q += blockDim.x) keys[q] = 0;
    __syncthreads();
  }

  // Keys [0, count) sorted descending by `order(key)` over `size` places (a power of two; places
  // past count hold 0, which sorts last). Bitonic. Up to one key per thread, the steps whose pairs
  // lie 32 or more places apart go through shared memory with a barrier each and the rest of each
  // merge stage runs in registers, a warp per 32 keys exchanging by shuffles, with one barrier for
  // all of them (128 keys: 6 barriers instead of 28). Larger sorts keep a barrier per step: there
  // each thread would compute both sides of several pairs, and on a full GPU (4096 rows, k = 1024)
  // the extra instructions cost more than the barriers save (call AK: 929 against 753 us at
  // 4096 x 32000 bf16, while 1 x 128256 bf16 k = 50 went from 21 to 17 us).
  template <class Order> __device__ void sort(unsigned count, unsigned size, Order order) {
    if (count * count <= kRankSortWork * blockDim.x) {  // count <= blockDim.x: kRankSortWork is below it
      sort_by_ranks(count, size, order);
      return;
    }
    for (unsigned i = count + threadIdx.x; i < size; i += blockDim.x) keys[i] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const unsigned shuffled_below = size <= blockDim.x ? 32 : 1;  // strides below this use shuffles
    for (unsigned block = 2; block <= size; block *= 2) {
      unsigned stride = block / 2;
      for (; stride >= shuffled_below; stride /= 2) {
        for (unsigned t = threadIdx.x; t < size / 2; t += blockDim.x) {
          const unsigned a = 2 * t - (t & (stride - 1)), b = a + stride;
          const unsigned long long x = keys[a], y = keys[b];
          const bool descending = (a & block) == 0;
          if (descending ? order(x) < order(y) : order(x) > order(y)) keys[a] = y, keys[b] = x;
        }
        __syncthreads();
      }
      // Strides below 32: every pair lies inside one aligned group of 32 places. Lanes past
      // `size` (size < 32) only lend their shuffles and write nothing back.
      if (stride == 0) continue;  // every step went through shared memory
      for (unsigned g = warp; g * 32 < size; g += warps) {
        const unsigned at = g * 32 + lane;
        unsigned long long x = at < size ? keys[at] : 0ull;
        const bool descending = (at & block) == 0;
        for (unsigned s = stride; s > 0; s /= 2) {
          const unsigned long long y = __shfl_xor_sync(0xffffffffu, x, s);
          const bool first = (lane & s) == 0;  // the pair's lower place: takes the better key when descending
          const bool y_before = order(y) > order(x);
          if (first == descending ? y_before : order(y) < order(x)) x = y;
        }
        if (at < size) keys[at] = x;
      }
      __syncthreads();
    }
  }
};

}  // namespace radixmesh::detail::topk_gpu
