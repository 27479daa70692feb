// The stable merge of two sorted runs on one GPU (merge path): a kernel finds where each tile of
// merge_threads x ITEMS outputs starts in both runs (one binary search per tile, all at once); the
// merge kernel stages a tile's keys (and values) of both runs in shared memory with coalesced loads,
// each thread finds its first output in the tile by a search of its own and merges ITEMS of them
// with both heads in registers, and the tile goes out in order through shared memory with coalesced
// stores (values taken from where each key came from). An odd ITEMS keeps the threads' strided
// stores into shared memory off each other's banks. bench/phases/merge_two.cu times its shapes
// beside CUB's DeviceMerge, which the library uses: this kernel measured 1.5x slower (calls FC-FE,
// docs/design/mesh-sort.md).
#pragma once
#include <type_traits>

#include "cuda/mesh/sort_field.cuh"

namespace radixmesh::detail::merge {

using u64 = unsigned long long;

constexpr int threads = 512;

// How many of a's elements come before place `diagonal` of the stable merge of a and b.
template <class U, class I>
__device__ I merge_path(const U* a, I na, const U* b, I nb, I diagonal, const SortField<U>& field) {
  I lo = diagonal > nb ? diagonal - nb : 0, hi = diagonal < na ? diagonal : na;
  while (lo < hi) {
    const I mid = (lo + hi) / 2;
    if (field(a[mid]) <= field(b[diagonal - 1 - mid]))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class U, int ITEMS>
__global__ void starts_kernel(const U* a, u64 na, const U* b, u64 nb, u64 tiles, SortField<U> field, u64* a_starts) {
  constexpr u64 tile = u64(threads) * ITEMS;
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const u64 diagonal = t * tile < na + nb ? t * tile : na + nb;
  a_starts[t] = merge_path<U, u64>(a, na, b, nb, diagonal, field);
}

template <int VB> using ValueOf = std::conditional_t<VB == 8, u64, unsigned>;

template <class U, int VB, int ITEMS>
__global__ void __launch_bounds__(threads, 2048 / threads) merge_kernel(const U* a, const U* b, u64 total,
                                                                        const ValueOf<VB>* a_values,
                                                                        const ValueOf<VB>* b_values, const u64* a_starts,
                                                                        SortField<U> field, U* out,
                                                                        ValueOf<VB>* out_values) {
  using V = ValueOf<VB>;
  constexpr int tile = threads * ITEMS;
  __shared__ U keys[tile];  // the tile's keys of a, then of b; then its output, in order
  __shared__ unsigned short source[VB ? tile : 1];  // where in the tile each output came from
  __shared__ V values[VB ? tile : 1];               // the values of the tile's keys
  const u64 d0 = u64(blockIdx.x) * tile, d1 = d0 + tile < total ? d0 + tile : total;
  const u64 a0 = a_starts[blockIdx.x], a1 = a_starts[blockIdx.x + 1], b0 = d0 - a0, b1 = d1 - a1;
  const int la = int(a1 - a0), lb = int(b1 - b0), count = la + lb;
  // Every load of the tile issued before any is used.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int x = int(threadIdx.x) + k * threads;
    const U* from = x < la ? a + (a0 + u64(x)) : b + (b0 + u64(x - la));
    if (x < count) keys[x] = *from;
    if constexpr (VB != 0) {
      const V* value = x < la ? a_values + (a0 + u64(x)) : b_values + (b0 + u64(x - la));
      if (x < count) values[x] = *value;
    }
  }
  __syncthreads();
  // This thread's ITEMS outputs from `diagonal` on, both heads in registers.
  const int diagonal = min(int(threadIdx.x) * ITEMS, count);
  int ia = merge_path<U, int>(keys, la, keys + la, lb, diagonal, field), ib = diagonal - ia;
  U ka = keys[min(ia, tile - 1)], kb = keys[min(la + ib, tile - 1)];
  U fa = field(ka), fb = field(kb);
  U merged[ITEMS];
  unsigned short from[VB ? ITEMS : 1];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const bool take_a = ia < la && (ib >= lb || fa <= fb);
    merged[j] = take_a ? ka : kb;
    if constexpr (VB != 0) from[j] = (unsigned short)(take_a ? ia : la + ib);
    ia += take_a;
    ib += !take_a;
    const U next = keys[min(take_a ? ia : la + ib, tile - 1)];  // the taken side's next head
    if (take_a) {
      ka = next;
      fa = field(next);
    } else {
      kb = next;
      fb = field(next);
    }
  }
  __syncthreads();  // every thread has read its keys: the tile's memory takes the output
#pragma unroll
  for (int j = 0; j < ITEMS; ++j)
    if (diagonal + j < count) {
      keys[diagonal + j] = merged[j];
      if constexpr (VB != 0) source[diagonal + j] = from[j];
    }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int x = int(threadIdx.x) + k * threads;
    if (x < count) {
      out[d0 + u64(x)] = keys[x];
      if constexpr (VB != 0) out_values[d0 + u64(x)] = values[source[x]];
    }
  }
}

// The merge kernel's static shared memory for ITEMS a thread: a tile's keys, and with values their
// sources and the values.
template <class U, int VB> constexpr int shared_bytes(int items) {
  return threads * items * (int(sizeof(U)) + (VB ? 2 + VB : 0));
}

// Items a thread: odd, the most from 15 down whose shared memory stays within the 48 KB a block may
// hold statically.
template <class U, int VB> constexpr int items_for() {
  int items = 15;
  while (items > 1 && shared_bytes<U, VB>(items) > 48 * 1024) items -= 2;
  return items;
}

template <int ITEMS> constexpr u64 tiles(u64 total) { return (total + u64(threads) * ITEMS - 1) / (u64(threads) * ITEMS); }

// Queues the merge of a (na keys) then b (nb keys, both at least one) on `stream`; `starts` holds
// tiles(na + nb) + 1 entries of device memory.
template <class U, int VB, int ITEMS>
void launch(const U* a, u64 na, const U* b, u64 nb, const ValueOf<VB>* a_values, const ValueOf<VB>* b_values,
            SortField<U> field, U* out, ValueOf<VB>* out_values, u64* starts, cudaStream_t stream) {
  const u64 n_tiles = tiles<ITEMS>(na + nb);
  starts_kernel<U, ITEMS><<<unsigned((n_tiles + 1 + 255) / 256), 256, 0, stream>>>(a, na, b, nb, n_tiles, field, starts);
  merge_kernel<U, VB, ITEMS>
      <<<unsigned(n_tiles), threads, 0, stream>>>(a, b, na + nb, a_values, b_values, starts, field, out, out_values);
}

}  // namespace radixmesh::detail::merge
