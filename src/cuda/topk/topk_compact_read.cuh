// Sample select's full read without a serial chain across tiles: the only full read of the
// sample-select path.
//
// Why: a look-back filter (as stable_filter) as the full read ran at ~1.1 TB/s on the H200 (0.66-0.76
// ms at 2^28 f32 with the key type compiled in, bench_topk --ab-sample; docs/design/topk.md): a
// decoupled look-back and a block scan per 16 KiB of tile, ~50 instructions per element. Candidates are rare
// (k (1 + eps) / n of the row), so here the common case is a compare only:
// 1. compact_read (one wave of blocks, grid-stride over 32 KiB tiles): 8 x 16-byte loads in flight
//    per thread, the rank transform of the one key type compiled in, rank >= L as one compare
//    (sample_bound's L has zeros below its resolved bits). `__syncthreads_or` of the takers: a tile
//    without any writes only count[t] = 0. A tile with takers ranks them in index order (warp scans
//    of packed per-group counts, then one warp scans the tile's 64 (group, warp) counts), reserves
//    its segment of the staging list with ONE atomicAdd on the row's candidate count (which is
//    therefore the uncapped total) and writes its candidates there, in index order within the tile.
//    Past the capacity: only counted (sample_check's device-side fallback).
// 2. cub::DeviceScan::ExclusiveSum over count[] (tile order): each tile's place in the list.
// 3. place_tiles: a warp per tile copies its segment from the staging list to that place. The
//    candidate list is then the same index-ordered list the look-back filter wrote: the select
//    passes and the output filter are unchanged.
// The row maximum (sample_check starts the select at the bits it shares with L) is the largest
// taken rank: every rank >= L is taken, so the row's largest is among them, and only takers pay.
#pragma once
#include <cstdint>

#include "cuda/topk/topk_common.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kCompactThreads = 256, kCompactLoads = 8;
constexpr int kCompactWarps = kCompactThreads / 32;
template <class U> constexpr std::uint64_t kCompactTile = std::uint64_t(kCompactThreads) * kCompactLoads * (16 / sizeof(U));

// The per-tile records and the staging list of compact_read.
template <class U> struct CompactLists {
  unsigned long long* count;   // per tile: elements taken
  unsigned long long* offset;  // per tile: its segment in the staging list
  unsigned long long* place;   // per tile: its place in the candidate list (exclusive scan of count)
  U* stage_rank;               // p.cand_cap places, in tile arrival order
  std::uint64_t* stage_idx;
  std::uint64_t tiles;
};

template <class U, class Key>
__global__ void __launch_bounds__(kCompactThreads, 4) compact_read(Params<U> p, CompactLists<U> cl) {
  constexpr int V = int(16 / sizeof(U)), J = kCompactLoads;
  constexpr std::uint64_t T = kCompactTile<U>;
  static_assert(V <= 8 && J % 2 == 0, "a group's take bits fit one byte; groups pair into 16-bit fields");
  __shared__ unsigned s_before[J * kCompactWarps];  // per (group j, warp): taken before it in the tile
  __shared__ unsigned long long s_base;             // the tile's segment in the staging list
  const U bound = p.dstate[0].rank_prefix;
  const std::uint64_t n = p.rows.end(0) - p.rows.begin(0);
  const U* values = p.values + p.rows.begin(0);
  const bool aligned = reinterpret_cast<std::uintptr_t>(values) % 16 == 0;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  auto rank_of_bits = [&](U b) { return U(topk_rank(from_bits<Key>(key_bits_t<Key>(b)), p.options)); };
  U best = 0;  // the largest taken rank of this thread
  for (std::uint64_t tile = blockIdx.x; tile < cl.tiles; tile += gridDim.x) {  // block-uniform
    // Group j of this thread: the V elements at t0 + (j kCompactThreads + threadIdx.x) V.
    const std::uint64_t t0 = tile * T;
    const bool full = aligned && t0 + T <= n;
    // The loads stay as 16-byte words (16-bit keys split into 64 registers spilled 200 bytes).
    union Chunk {
      uint4 v;
      U u[V];
    } chunk[J];
    if (full) {
#pragma unroll
      for (int j = 0; j < J; ++j)
        chunk[j].v = *reinterpret_cast<const uint4*>(values + t0 + (std::uint64_t(j) * kCompactThreads + threadIdx.x) * V);
    } else {
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const std::uint64_t i = t0 + (std::uint64_t(j) * kCompactThreads + threadIdx.x) * V + v;
          chunk[j].u[v] = i < n ? values[i] : U(0);
        }
    }
    unsigned take[J];  // bit v: element v of group j
    bool any = false;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      take[j] = 0;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const bool inside = full || t0 + (std::uint64_t(j) * kCompactThreads + threadIdx.x) * V + v < n;
        if (inside && rank_of_bits(chunk[j].u[v]) >= bound) take[j] |= 1u << v;
      }
      any |= take[j] != 0;
    }
    if (!__syncthreads_or(any)) {  // the common case
      if (threadIdx.x == 0) cl.count[tile] = 0;
      continue;
    }
    // Index order in the tile is (group j, warp, lane, v). Per pair of groups, one warp scan of the
    // two counts packed in 16-bit fields (a warp's group holds at most 32 V <= 256); skipped where
    // the warp took nothing.
    unsigned lane_before[J];
#pragma unroll
    for (int j = 0; j < J; j += 2) {
      const unsigned packed = unsigned(__popc(take[j])) | unsigned(__popc(take[j + 1])) << 16;
      unsigned inclusive = packed;
      if (__any_sync(0xffffffffu, packed != 0)) {
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
          const unsigned other = __shfl_up_sync(0xffffffffu, inclusive, o);
          if (lane >= o) inclusive += other;
        }
      }
      const unsigned exclusive = inclusive - packed;
      lane_before[j] = exclusive & 0xffffu;
      lane_before[j + 1] = exclusive >> 16;
      if (lane == 31) {
        s_before[j * kCompactWarps + warp] = inclusive & 0xffffu;
        s_before[(j + 1) * kCompactWarps + warp] = inclusive >> 16;
      }
    }
    __syncthreads();
    if (warp == 0) {  // the tile's J x 8 = 64 (group, warp) counts, two per lane, in index order
      static_assert(J * kCompactWarps == 64, "two (group, warp) counts per lane of warp 0");
      const unsigned a = s_before[2 * lane], b = s_before[2 * lane + 1];
      unsigned inclusive = a + b;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const unsigned other = __shfl_up_sync(0xffffffffu, inclusive, o);
        if (lane >= o) inclusive += other;
      }
      const unsigned total = __shfl_sync(0xffffffffu, inclusive, 31);
      s_before[2 * lane] = inclusive - a - b;
      s_before[2 * lane + 1] = inclusive - b;
      if (lane == 0) {
        const unsigned long long base = atomicAdd(p.cand_count, (unsigned long long)total);
        cl.count[tile] = total;
        cl.offset[tile] = base;
        s_base = base;
      }
    }
    __syncthreads();
    const unsigned long long base = s_base;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      unsigned bitsj = take[j];
      if (!bitsj) continue;
      unsigned long long at = base + s_before[j * kCompactWarps + warp] + lane_before[j];
      const std::uint64_t first = t0 + (std::uint64_t(j) * kCompactThreads + threadIdx.x) * V;
      // The few taken elements are read again (L1/L2 hits): the tile's loads need not stay in
      // registers through the scans (kept, the f32 read spilled 200 bytes under 64 registers).
      while (bitsj) {
        const int v = __ffs(bitsj) - 1;
        bitsj &= bitsj - 1;
        const U rank = rank_of_bits(values[first + v]);
        best = rank > best ? rank : best;
        if (at < p.cand_cap) {
          cl.stage_rank[at] = rank;
          cl.stage_idx[at] = first + v;
        }
        ++at;
      }
    }
    // s_before and s_base are rewritten only after the next tile's __syncthreads_or.
  }
  unsigned long long m = best;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, m, o);
    m = other > m ? other : m;
  }
  if (lane == 0 && m) atomicMax(p.row_max, m);
}

// Step 3: each tile's staging segment to its place in the candidate list (a warp per tile).
// Nothing to do after an overflow: sample_check then turns the row back to a raw row.
template <class U> __global__ void place_tiles(Params<U> p, CompactLists<U> cl) {
  if (p.cand_count[0] > p.cand_cap) return;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * (blockDim.x / 32);
  const int lane = threadIdx.x & 31;
  for (std::uint64_t tile = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; tile < cl.tiles;
       tile += warps) {
    const unsigned long long count = cl.count[tile];
    if (!count) continue;
    const unsigned long long from = cl.offset[tile], to = cl.place[tile];
    for (unsigned long long e = lane; e < count; e += 32) {
      p.cand_rank[to + e] = cl.stage_rank[from + e];
      p.cand_idx[to + e] = cl.stage_idx[from + e];
    }
  }
}

}  // namespace radixmesh::detail::topk_gpu
