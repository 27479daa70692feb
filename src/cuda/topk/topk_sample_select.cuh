// Sample select: the large-k path for single rows. Instead of delegates, a strided
// sample of the row gives a lower bound L on the k-th best rank; ONE full read compacts every
// element with rank >= L, stably (index order), into the candidate list; the existing select passes
// find the exact k-th composite (rank, ~index) among those ~k(1 + eps) candidates; and a stable
// filter of the list writes the winners straight to the output in index order (no sort).
//
// 1. sample_start: fixed-stride sample ranks (deterministic, no RNG) and the row's state.
// 2. sample_bound: one block radix-selects the sample rank r = mu + c sqrt(mu) + d (mu = k s / n)
//    with 8-bit digits (s = 2^14); L = the lower edge of the bucket it ends in (count of samples >= L is in
//    [r, r + slack]). If the top-k set holds fewer than r samples, count(rank >= L) >= k: for a
//    non-adversarial row the number of samples in the top-k is ~Binomial(s, k/n), and c = 5
//    standard deviations plus d = 4 make a miss a < 1e-6 event; an adversarial row falls back.
// 3. The full read, rank >= L into the candidate list in index order; past the capacity only
//    counted: compact_read + a scan of its tiles' counts + place_tiles (topk_compact_read.cuh:
//    no chain across tiles).
// 4. sample_check: count < k or count > capacity (adversarial or unlucky input) turns the row
//    back to a raw row (dstate.mode = kRaw): the select passes then run over the whole row and the
//    output filter reads the whole row: exact in every case, only slower. Decided on the device
//    (no host round trip: device::topk never synchronizes).
// 5. select_pass<main> over the candidates (topk_select_passes.cuh), started at the bits L and the
//    row maximum share.
// 6. stable_filter (composite >= the final state) over the list: winners in index order, written
//    decoded to the output (unsorted), or to the winner list for the sorted output's rank sort; a
//    decoupled look-back over tiles taken by ticket (Merrill and Garland, "Single-pass Parallel
//    Prefix Scan with Decoupled Look-back", 2016).
#pragma once
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <type_traits>

#include "cuda/topk/topk_pick.cuh"

namespace radixmesh::detail::topk_gpu {

// s = 2^14 samples (fewer only for rows shorter than that; against 2^16: a quarter of
// sample_bound's work for ~25 % more candidates at k = 2^20, 12 bytes each in a 1 GiB read).
constexpr int kSampleLog2 = 14;
constexpr int kSampleBoundThreads = 1024;  // the one block of sample_bound
constexpr int kSampleDigitBits = 8;        // W is 16, 32 or 64: whole digits

// The sample and the look-back state of the output's stable filter.
template <class U> struct SampleView {
  U* ranks;                    // `count` sample ranks
  std::uint64_t count;         // s
  std::uint64_t r, slack;      // the bound's sample rank (1-based) and its tolerance
  unsigned long long* status;  // per tile: flag (2 bits) and count (62 bits)
  unsigned* ticket;            // the next tile
  std::uint64_t tiles;         // filter tiles of the whole row (the status array's size: a fallback filters the row)
};

// Row 0's state and the counters every later kernel relies on, and the sample's ranks.
template <class U> __global__ void sample_start(Params<U> p, SampleView<U> sv, std::uint64_t hist_words) {
  const std::uint64_t length = p.rows.end(0) - p.rows.begin(0);
  for_each_index(hist_words, [&](std::uint64_t i) { p.hist[i] = 0; });
  for_each_index(sv.tiles, [&](std::uint64_t i) { sv.status[i] = 0; });
  // Sample i is element floor(i n / s) (no overflow for any n < 2^48: i < 2^16).
  for_each_index(sv.count, [&](std::uint64_t i) {
    const std::uint64_t at = i * (length / sv.count) + i * (length % sv.count) / sv.count;
    sv.ranks[i] = rank_of<U>(p.values[at], p.type, p.options);
  });
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    p.counters[0] = 0;
    *sv.ticket = 0;
    RowState<U> s{};
    s.k_left = length < p.k ? length : p.k;
    s.done = length <= p.k;
    s.mode = kDelegates;
    p.state[0] = s;
    p.cand_count[0] = 0;
    p.win_count[0] = 0;
    p.row_max[0] = 0;
  }
}

// One block: the bucket of the r-th best sample rank, 8 bits a pass, until the bucket holds at
// most `slack` samples below the r-th (or every bit is resolved). Writes L into p.dstate[0]
// (prefix with the unresolved bits 0, `resolved` bits, mode kDelegates = "candidates valid").
template <class U> __global__ void __launch_bounds__(kSampleBoundThreads) sample_bound(Params<U> p, SampleView<U> sv) {
  constexpr int W = int(8 * sizeof(U)), kBins = 1 << kSampleDigitBits;
  using Scan = cub::BlockScan<unsigned, kSampleBoundThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ unsigned hist[kBins];
  __shared__ U s_prefix;
  __shared__ int s_resolved, s_done;
  __shared__ std::uint64_t s_left;
  if (threadIdx.x == 0) s_prefix = 0, s_resolved = 0, s_done = 0, s_left = sv.r < sv.count ? sv.r : sv.count;
  const int lane = threadIdx.x & 31;
  const std::uint64_t rounded = (sv.count + 31) & ~31ull;  // whole warps reach the match
  for (int pass = 0; pass < W / kSampleDigitBits; ++pass) {
    __syncthreads();
    if (s_done) break;
    const U prefix = s_prefix;
    const int resolved = s_resolved, shift = W - resolved - kSampleDigitBits;
    const std::uint64_t left = s_left;
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    constexpr int kLoads = 8;  // loads in flight per thread (the ranks come from L2)
    for (std::uint64_t i0 = threadIdx.x; i0 < rounded; i0 += kLoads * std::uint64_t(blockDim.x)) {
      U x[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const std::uint64_t i = i0 + u * std::uint64_t(blockDim.x);
        x[u] = i < sv.count ? sv.ranks[i] : U(0);
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const std::uint64_t i = i0 + u * std::uint64_t(blockDim.x);
        if (i >= rounded) break;  // warp-uniform
        const bool match = i < sv.count && (resolved == 0 || (std::uint64_t(x[u]) >> (W - resolved)) ==
                                                                 (std::uint64_t(prefix) >> (W - resolved)));
        const unsigned digit = match ? unsigned(std::uint64_t(x[u]) >> shift) & (kBins - 1) : unsigned(kBins);
        // The first passes put most samples of a warp in lane 0's bin: one add for those (a ballot),
        // plain shared atomics for the rest (`__match_any_sync` per sample made the kernel take
        // 115 us at s = 2^16 under ncu, against 22 us like this; H200, bench_topk --ab-sample).
        const unsigned lead = __shfl_sync(0xffffffffu, digit, 0);
        const unsigned same = __ballot_sync(0xffffffffu, digit == lead);
        if (digit == lead) {
          if (lane == 0 && lead < unsigned(kBins)) atomicAdd(hist + lead, unsigned(__popc(same)));
        } else if (match) {
          atomicAdd(hist + digit, 1u);
        }
      }
    }
    __syncthreads();
    const unsigned bin = kBins - 1 - threadIdx.x;  // thread t holds bin 255 - t: best first
    const unsigned count = threadIdx.x < kBins ? hist[bin] : 0u;
    unsigned above;
    Scan(scan).ExclusiveSum(count, above);
    if (threadIdx.x < kBins && above < left && left <= std::uint64_t(above) + count) {
      const std::uint64_t in_bucket = left - above;
      s_prefix = U(prefix | U(U(bin) << shift));
      s_resolved = resolved + kSampleDigitBits;
      s_left = in_bucket;
      s_done = count - in_bucket <= sv.slack || resolved + kSampleDigitBits >= W;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    RowState<U> d{};
    d.rank_prefix = s_prefix;
    d.resolved = s_resolved;
    d.done = 1;
    d.mode = kDelegates;
    p.dstate[0] = d;
  }
}

// ---- the stable filter. A tile is kFilterThreads x kFilterLoads x 16 bytes; thread t's group j
// is the 16 bytes at (j kFilterThreads + t) V of the tile, so (j, t, v) is the index order, and
// one block scan of the 4 per-group counts packed into 16-bit fields of a 64-bit word gives every
// group's place in it. It filters ~k candidates (or, after a fallback, the row): the full read of
// the row is compact_read's (topk_compact_read.cuh): this kernel as the full read, with 8 tiles
// per look-back step, measured 0.66-0.76 ms with the key type compiled in, ~0.97 without, against
// compact_read's 0.37-0.54 (H200, f32 n = 2^28, k = 16..2^20, bench_topk --ab-sample).
constexpr int kFilterThreads = 256, kFilterLoads = 4;
template <class U> constexpr int kFilterVector = int(16 / sizeof(U));
template <class U> constexpr std::uint64_t kFilterTile = std::uint64_t(kFilterThreads) * kFilterLoads * kFilterVector<U>;

// A tile's status word: 0 (not yet), an aggregate (its own count) or an inclusive prefix.
constexpr unsigned long long kTileAggregate = 1ull << 62, kTileInclusive = 2ull << 62, kTileValue = (1ull << 62) - 1;

// Warp 0 of the block: the tile's exclusive prefix, publishing its aggregate first and its
// inclusive prefix after (decoupled look-back, 32 predecessors per step).
__device__ __forceinline__ unsigned long long look_back(unsigned long long* status, std::uint64_t tile,
                                                        unsigned long long total) {
  using Word = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
  const int lane = threadIdx.x & 31;
  if (tile == 0) {
    if (lane == 0) Word(status[0]).store(kTileInclusive | total, cuda::memory_order_relaxed);
    return 0;
  }
  if (lane == 0) Word(status[tile]).store(kTileAggregate | total, cuda::memory_order_relaxed);
  unsigned long long exclusive = 0;
  for (std::int64_t look = std::int64_t(tile) - 1;; look -= 32) {
    const std::int64_t mine = look - lane;
    unsigned long long w;
    for (;;) {  // every lane spins until its predecessor has published something
      w = mine >= 0 ? Word(status[mine]).load(cuda::memory_order_relaxed) : kTileInclusive;
      if (__all_sync(0xffffffffu, w != 0)) break;
    }
    const unsigned inclusive = __ballot_sync(0xffffffffu, (w & ~kTileValue) == kTileInclusive);
    unsigned long long v = w & kTileValue;
    if (inclusive && lane > __ffs(inclusive) - 1) v = 0;  // stop at the nearest inclusive prefix
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    exclusive += v;
    if (inclusive) break;
  }
  if (lane == 0) Word(status[tile]).store(kTileInclusive | (exclusive + total), cuda::memory_order_relaxed);
  return exclusive;
}

// Where a stable filter writes: the winner list (ranks and indices, for the sorted output's rank
// sort) or the decoded output itself.
template <class U> struct ListSink {
  U* ranks;
  std::uint64_t* indices;
  __device__ __forceinline__ void put(std::uint64_t at, U rank, std::uint64_t index, const Params<U>&) const {
    ranks[at] = rank;
    indices[at] = index;
  }
};
template <class U, class Index> struct OutputSink {
  U* values;
  Index* indices;
  const Index* input_indices;  // the caller's indices of the row, or null
  __device__ __forceinline__ void put(std::uint64_t at, U rank, std::uint64_t index, const Params<U>& p) const {
    values[at] = raw_of_rank<U>(rank, p.type, p.options);
    indices[at] = input_indices ? input_indices[index] : Index(index);
  }
};

struct FilterLane {
  unsigned long long* status;  // the tile words, zeroed by sample_start
  unsigned* ticket;
  unsigned long long* count;   // the total taken (written by the last tile, uncapped)
  std::uint64_t cap;           // places of the sink
};

// Elements of row 0's candidate list (or of the row itself, after a fallback) whose composite
// (rank, ~index) has its top `decide->resolved` bits >= the prefix go to `sink` in index order. A
// persistent grid: blocks take tiles by ticket, so a tile's predecessors are always running or
// done (the look-back cannot wait on a block that has not started). The next tile's loads go out
// as soon as this tile's flags are taken, so they are in flight during the look-back and the
// writes; the few taken elements are read again (from L2) to be written.
template <class U, class Sink>
__global__ void __launch_bounds__(kFilterThreads, 4) stable_filter(Params<U> p, const RowState<U>* decide,
                                                                   FilterLane lane, Sink sink) {
  constexpr int V = kFilterVector<U>;
  constexpr std::uint64_t T = kFilterTile<U>;
  static_assert(kFilterLoads * 8 <= 32 && V <= 8, "a tile's take bits fit one word");
  using Scan = cub::BlockScan<unsigned long long, kFilterThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ std::uint64_t s_first, s_next;  // the first ticket apart: see below
  __shared__ unsigned long long s_prefix;
  const RowState<U> s = *decide;
  const bool list = p.dstate[0].mode == kDelegates && p.cand_count[0] <= p.cand_cap;
  const std::uint64_t n = list ? std::uint64_t(p.cand_count[0]) : p.rows.end(0) - p.rows.begin(0);
  const std::uint64_t tiles = (n + T - 1) / T, idx_mask = low_mask(p.IB);
  const U* values = p.values + p.rows.begin(0);
  const bool aligned = reinterpret_cast<std::uintptr_t>(values) % 16 == 0;
  // The first element of this thread's group j in tile t.
  auto group_first = [&](std::uint64_t t, int j) {
    return t * T + (std::uint64_t(j) * kFilterThreads + threadIdx.x) * V;
  };
  // Element bits as loaded: the list's ranks, or the row's raw keys.
  U bits[kFilterLoads][V];
  auto load_tile = [&](std::uint64_t t) {
#pragma unroll
    for (int j = 0; j < kFilterLoads; ++j) {
      const std::uint64_t first = group_first(t, j);
      if (!list && aligned && first + V <= n) {  // 16 bytes at once
        union {
          uint4 v;
          U u[V];
        } chunk;
        chunk.v = *reinterpret_cast<const uint4*>(values + first);
#pragma unroll
        for (int v = 0; v < V; ++v) bits[j][v] = chunk.u[v];
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const std::uint64_t i = first + v;
          bits[j][v] = i >= n ? U(0) : list ? p.cand_rank[i] : values[i];
        }
      }
    }
  };
  auto rank_of_bits = [&](U b) -> U { return list ? b : rank_of<U>(b, p.type, p.options); };
  // The first ticket has its own word: the loop's first statement writes s_next while slower
  // threads may still be reading the first ticket (a race that compute-sanitizer racecheck
  // reports when both share one word); every later s_next is read before a barrier that comes
  // before the next write.
  if (threadIdx.x == 0) s_first = atomicAdd(lane.ticket, 1u);
  __syncthreads();
  std::uint64_t tile = s_first;
  if (tile < tiles) load_tile(tile);
  while (tile < tiles) {  // block-uniform
    if (threadIdx.x == 0) s_next = atomicAdd(lane.ticket, 1u);  // every thread has read the last one
    unsigned take = 0;  // bit 8 j + v: element v of group j
    unsigned long long packed = 0;
#pragma unroll
    for (int j = 0; j < kFilterLoads; ++j) {
      const std::uint64_t first = group_first(tile, j);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const std::uint64_t i = first + v;
        if (i >= n) continue;
        const U rank = rank_of_bits(bits[j][v]);
        // The index matters only where the state resolved index bits and the rank is the k-th's.
        const bool need_index = s.resolved > p.W && rank == s.rank_prefix;
        const std::uint64_t index = list ? (need_index ? p.cand_idx[i] : 0) : i;
        if (compare_top<U, true>(rank, ~index & idx_mask, s, p.W, p.IB)) take |= 1u << (8 * j + v);
      }
      packed |= (unsigned long long)__popc((take >> (8 * j)) & 0xffu) << (16 * j);
    }
    unsigned long long before, sums;  // packed: this thread's groups' places, the tile's totals per group j
    Scan(scan).ExclusiveSum(packed, before, sums);
    unsigned taken = 0;
#pragma unroll
    for (int j = 0; j < kFilterLoads; ++j) taken += unsigned((sums >> (16 * j)) & 0xffffu);
    __syncthreads();  // s_next is complete; the scan storage is free again
    const std::uint64_t next = s_next;
    if (next < tiles) load_tile(next);  // the next tile's loads, in flight from here on
    if (threadIdx.x < 32) {
      const unsigned long long prefix = look_back(lane.status, tile, taken);
      if (threadIdx.x == 0) {
        s_prefix = prefix;
        if (tile == tiles - 1) *lane.count = prefix + taken;
      }
    }
    __syncthreads();
    // Group j's place: the tile's prefix, the groups j' < j (every thread's: the order is
    // (j, t, v)), then the threads before this one in group j.
    unsigned long long base = s_prefix;
#pragma unroll
    for (int j = 0; j < kFilterLoads; ++j) {
      unsigned bitsj = (take >> (8 * j)) & 0xffu;
      unsigned long long place = base + ((before >> (16 * j)) & 0xffffu);
      base += (sums >> (16 * j)) & 0xffffu;
      const std::uint64_t first = group_first(tile, j);
      while (bitsj) {
        const int v = __ffs(bitsj) - 1;
        bitsj &= bitsj - 1;
        const std::uint64_t i = first + v;
        if (place < lane.cap)
          sink.put(place, rank_of_bits(list ? p.cand_rank[i] : values[i]), list ? p.cand_idx[i] : i, p);
        ++place;
      }
    }
    __syncthreads();  // s_prefix is rewritten in the next tile
    tile = next;
  }
  if (tiles == 0 && blockIdx.x == 0 && threadIdx.x == 0) *lane.count = 0;
}

// After phase 1: candidates valid (k <= count <= capacity) start the main select at the bits L and
// the row maximum share; otherwise the row goes back to a raw row (the exact fallback).
template <class U> __global__ void sample_check(Params<U> p) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  RowState<U> d = p.dstate[0];
  RowState<U> m = p.state[0];
  const unsigned long long count = p.cand_count[0];
  if (count < m.k_left || count > p.cand_cap) {
    d.mode = kRaw;
    p.dstate[0] = d;
    return;
  }
  if (!m.done && p.range_start) {
    start_at_shared_bits(m, d.rank_prefix, U(p.row_max[0]), p.W);
    p.state[0] = m;
  }
}

}  // namespace radixmesh::detail::topk_gpu
