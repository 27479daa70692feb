// The multi-block kernels of the select: row setup, radix passes, the qualifying list and the
// candidate rescan, the winner gather, the range-adaptive start of raw rows.
#pragma once
#include "cuda/topk/topk_scaling.cuh"

namespace radixmesh::detail::topk_gpu {

// Rows that need no select (length <= k) are done at once; others start empty. Also zeroes the
// histograms and pass counters (those of one launch chunk of rows), which the last block of every
// pass leaves zero again: no memset launches.
template <class U>
__global__ void init_rows(Params<U> p, std::size_t row_count, std::uint64_t min_delegate_length,
                          std::uint64_t hist_words, std::uint64_t counter_words) {
  for_each_index(hist_words, [&](std::uint64_t i) { p.hist[i] = 0; });
  for_each_index(counter_words, [&](std::uint64_t i) { p.counters[i] = 0; });
  for_each_index(row_count, [&](std::uint64_t r) {
    const std::uint64_t length = p.rows.end(r) - p.rows.begin(r);
    RowState<U> s{};
    s.k_left = length < p.k ? length : p.k;
    s.done = length <= p.k;
    s.mode = (!s.done && p.alpha > 0 && length >= min_delegate_length) ? kDelegates : kRaw;
    p.state[r] = s;
    if (p.sstate) p.sstate[r] = s;  // RadiK's scaling only: the scaled select starts like the main one
    if (p.row_min) p.row_min[r] = ~0ull;  // TopkStart::range_adaptive only
    RowState<U> d{};
    d.k_left = p.k;
    d.done = s.mode != kDelegates;
    d.mode = s.mode;
    p.dstate[r] = d;
    p.cand_count[r] = 0;
    p.qual_count[r] = 0;
    p.win_count[r] = 0;
    p.row_max[r] = 0;
  });
}


// TopkStart::range_adaptive on rows without delegates: the row's smallest and largest rank (one
// extra read of the row), then start_from_range resolves the bits they share.
template <class U> __global__ void __launch_bounds__(kThreads) row_range(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> s = p.state[r];
  if (s.done || s.mode != kRaw) return;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  unsigned long long lo = ~0ull, hi = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < length;
       i += gridDim.x * std::uint64_t(blockDim.x)) {
    const unsigned long long rank = rank_of<U>(p.values[begin + i], p.type, p.options);
    lo = rank < lo ? rank : lo;
    hi = rank > hi ? rank : hi;
  }
  __shared__ unsigned long long block_lo, block_hi;
  if (threadIdx.x == 0) block_lo = ~0ull, block_hi = 0;
  __syncthreads();
  atomicMin(&block_lo, lo);
  atomicMax(&block_hi, hi);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMin(p.row_min + r, block_lo);
    atomicMax(p.row_max + r, block_hi);
  }
}
template <class U> __global__ void start_from_range(Params<U> p, std::size_t row_count) {
  for_each_index(row_count, [&](std::uint64_t r) {
    RowState<U> m = p.state[r];
    if (m.done || m.mode != kRaw || p.row_min[r] > p.row_max[r]) return;
    start_at_shared_bits(m, U(p.row_min[r]), U(p.row_max[r]), p.W);
    p.state[r] = m;
  });
}

// Lists the subranges whose delegate is >= T' (the k-th best delegate, a composite: exactly k
// subranges qualify), so that the rescan can spread them over every warp: with heavy ties (f16,
// bf16, U[128.6, 128.7]) the qualifying subranges are the lowest-index ones holding the top value,
// all in the first few blocks' share of the delegates, and scanning them where they were found
// serialized the rescan on those blocks (f16 n = 2^28 k = 1024: 0.39 ms of ncu time). Block 0 also
// starts the main select where the candidates' ranks diverge: they all lie in [T'.rank, row max],
// so the bits those two share are resolved for free (the range-adaptive digits that replace
// RadiK's scaling, §4.3: inputs that share high bits, such as U[128.6, 128.7], lose no pass).
// Row r's share of it for this block (every thread of the block calls it), t = the row's final
// delegate state.
template <class U, bool Groups>
__device__ __forceinline__ void list_row_qualifying(const Params<U>& p, std::size_t r, const RowState<U>& t) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && p.range_start) {
    RowState<U> m = p.state[r];
    start_at_shared_bits(m, t.rank_prefix, U(p.row_max[r]), p.W);
    p.state[r] = m;
  }
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t subranges = (length + (1ull << p.alpha) - 1) >> p.alpha;
  // Groups (beta > 1): a subrange's first delegate is its best: it qualifies when any of its beta
  // do. (A compile-time 1 otherwise: the default kernel stays the one measured.)
  const std::uint64_t beta = Groups ? std::uint64_t(p.beta) : 1;
  const U* delegates = p.delegates + ((begin >> p.alpha) + r) * beta;
  // beta = 1: a delegate stands for its subrange's first index (offset 0; topk_delegate_pass.cuh).
  const std::uint32_t* delegate_off = Groups ? p.delegate_off + ((begin >> p.alpha) + r) * beta : nullptr;
  const std::uint64_t idx_mask = low_mask(p.IB);
  const int lane = threadIdx.x & 31;
  std::uint64_t* list = p.qual_list + r * p.k;
  for (std::uint64_t g0 = std::uint64_t(blockIdx.x) * kThreads; g0 < subranges;
       g0 += std::uint64_t(gridDim.x) * kThreads) {
    const std::uint64_t mine = g0 + threadIdx.x;
    const bool qualifies =
        mine < subranges &&
        compare_top<U, true>(delegates[mine * beta], ~((mine << p.alpha) + (Groups ? delegate_off[mine * beta] : 0u)) & idx_mask,
                             t, p.W, p.IB);
    const unsigned mask = __ballot_sync(0xffffffffu, qualifies);
    const unsigned long long at = reserve_for_warp(__popc(mask), p.qual_count + r);
    const unsigned long long position = at + __popc(mask & ((1u << lane) - 1));
    if (qualifies && position < p.k) list[position] = mine;
  }
}
template <class U, bool Groups> __global__ void __launch_bounds__(kThreads) list_qualifying(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> t = p.dstate[r];
  if (t.mode == kDelegates) list_row_qualifying<U, Groups>(p, r, t);
}

// The rescan of the listed subranges, compacting their elements >= T' into the row's candidates
// (at most k * 2^alpha, the capacity), with many loads in flight. One listed subrange per warp
// takes 34 us for f32 n = 2^28 k = 1024 under ncu (1024 subranges x 1024 elements, 4 MB: 32
// elements a load, read twice, so 64 dependent round trips per warp: latency-bound; 17 % slower
// at k = 16 than this kernel, within 1 % at large k; H200, bench_topk --ab-rescan). Here the listed
// subranges form one concatenated range of listed x 2^alpha positions, cut into steps of
// kGatherStep; lane l's u-th element of a step is position step + 32u + l (a load instruction
// still reads 32 consecutive elements of one subrange when 2^alpha >= 32), and all kGatherLoads
// loads of a step are issued before any is used. A warp takes p.gather_steps steps per round and
// the block reserves their places with one atomic (as above); with one step per round (OneStep:
// every k <= 1024 at n = 2^28) the takers are written from registers, with more they are read
// again (a separate instantiation, so that neither keeps the other's registers live).
// The list order is not fixed (block reservations race) and nothing reads it in order.
// At most 64 registers (4 blocks per SM, as the delegate pass whose grid it runs on: without the
// bound ptxas used 78-95 registers, 3 blocks per SM, so that grid would run in 1.33 waves).
constexpr int kGatherLoads = 8;
constexpr std::uint64_t kGatherStep = 32 * kGatherLoads;

template <class U, bool OneStep>
__global__ void __launch_bounds__(kThreads, 4) gather_candidates_wide(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> t = p.dstate[r];
  if (t.mode != kDelegates) return;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t listed = p.qual_count[r] < p.k ? p.qual_count[r] : p.k;
  const std::uint64_t positions = listed << p.alpha, in_subrange = (1ull << p.alpha) - 1;
  const std::uint64_t* list = p.qual_list + r * p.k;
  const std::uint64_t idx_mask = low_mask(p.IB);
  const int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
  constexpr int kWarps = kThreads / 32;
  U* out_rank = p.cand_rank + r * p.cand_cap;
  std::uint64_t* out_idx = p.cand_idx + r * p.cand_cap;
  const std::uint64_t steps = OneStep ? 1 : std::uint64_t(p.gather_steps), per_block = steps * kWarps * kGatherStep;
  U rank[kGatherLoads];
  std::uint64_t idx[kGatherLoads];
  unsigned mask[kGatherLoads];  // the warp's takers of each load (lane l takes if bit l is set)
  // One step from position `first` (warp-uniform; every lane reaches the ballots).
  auto load_step = [&](std::uint64_t first) {
    U raw[kGatherLoads];
    bool in[kGatherLoads];
#pragma unroll
    for (int u = 0; u < kGatherLoads; ++u) {
      const std::uint64_t v = first + u * 32 + lane;
      in[u] = v < positions;
      idx[u] = in[u] ? (list[v >> p.alpha] << p.alpha) + (v & in_subrange) : 0;
      in[u] = in[u] && idx[u] < length;
      raw[u] = in[u] ? p.values[begin + idx[u]] : U(0);
    }
#pragma unroll
    for (int u = 0; u < kGatherLoads; ++u) {
      rank[u] = rank_of<U>(raw[u], p.type, p.options);
      // The rank alone against the k-th delegate's resolved bits (index 0 passes any index digit):
      // a delegate stands for its subrange's first index, so tied elements later in a qualifying
      // subrange may still win (proof: topk_delegate_pass.cuh).
      mask[u] = __ballot_sync(0xffffffffu, in[u] && compare_top<U, true>(rank[u], idx_mask, t, p.W, p.IB));
    }
  };
  for (std::uint64_t b0 = std::uint64_t(blockIdx.x) * per_block; b0 < positions;
       b0 += std::uint64_t(gridDim.x) * per_block) {
    const std::uint64_t first = b0 + std::uint64_t(warp_in_block) * steps * kGatherStep;
    unsigned count = 0;
    for (std::uint64_t q = 0; q < steps; ++q) {
      if (first + q * kGatherStep >= positions) break;  // warp-uniform
      load_step(first + q * kGatherStep);
#pragma unroll
      for (int u = 0; u < kGatherLoads; ++u) count += __popc(mask[u]);
    }
    unsigned long long at = reserve_for_warp(count, p.cand_count + r);
    for (std::uint64_t q = 0; q < steps; ++q) {
      if (first + q * kGatherStep >= positions) break;
      if (!OneStep) load_step(first + q * kGatherStep);  // one step: still in registers
#pragma unroll
      for (int u = 0; u < kGatherLoads; ++u) {
        const unsigned long long position = at + __popc(mask[u] & ((1u << lane) - 1));
        if ((mask[u] >> lane) & 1u && position < p.cand_cap) {
          out_rank[position] = rank[u];
          out_idx[position] = idx[u];
        }
        at += __popc(mask[u]);
      }
    }
  }
}

// Which select a pass belongs to: over the delegates (delegate_groups: beta > 1 per subrange), over
// the scaled ranks (RadiK's scaling), the main one over the row's source, or the main one inside
// the scaled group (RadiK's scaling). The opt-in stages are separate instantiations, so that the
// default passes (delegates, main) carry none of the opt-ins' checks.
enum class Stage { delegates, delegate_groups, scaled, main, grouped };

// One pass of a select: the next digit below the bits resolved so far. (Warp-aggregating the
// shared-memory adds with __match_any_sync measured slower on an H200 than plain adds, k = 1024
// 0.45 -> 0.50 ms with bench_topk: docs/design/topk.md.)
template <class U, Stage St>
__global__ void __launch_bounds__(kThreads) select_pass(Params<U> p) {
  __shared__ unsigned smem_hist[kMaxBins];
  const std::size_t r = blockIdx.y;
  constexpr bool kOnDelegates = St == Stage::delegates || St == Stage::delegate_groups;
  RowState<U>* state = (kOnDelegates ? p.dstate : St == Stage::scaled ? p.sstate : p.state) + r;
  const RowState<U> s = *state;
  if (s.done) return;
  const int bins = 1 << p.digit_bits;
  zero_smem(smem_hist, bins);
  const std::uint64_t beta = St == Stage::delegate_groups ? std::uint64_t(p.beta) : 1;
  const Source<U> src = kOnDelegates ? delegate_source(p, r, beta) : row_source(p, r);
  [[maybe_unused]] const ScaledView<U> sv =
      St == Stage::scaled || St == Stage::grouped ? scaled_view(p, r, src) : ScaledView<U>{false, U(0), {}};
  // The scaled select resolves the W rank bits only: its ties are the group the main select splits.
  const int IB = St == Stage::scaled ? 0 : p.IB;
  const int total_bits = p.W + IB;
  const PassBits pb = next_bits(s.resolved, total_bits, p.digit_bits);
  const std::uint64_t idx_mask = low_mask(p.IB);
  constexpr int kLoads = 4;  // loads in flight per thread
  const std::uint64_t stride = gridDim.x * std::uint64_t(blockDim.x);
  const std::uint64_t rounded = (src.count + 31) & ~31ull;  // whole warps in every iteration
  for (std::uint64_t i0 = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i0 < rounded;
       i0 += kLoads * stride) {
    U rank[kLoads];
    std::uint64_t idx[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      rank[u] = 0, idx[u] = 0;
      const std::uint64_t i = i0 + u * stride;
      if constexpr (St == Stage::delegate_groups) {
        if (i < src.count) rank[u] = src.ranks[i], idx[u] = ((i / beta) << p.alpha) + src.off[i];
      } else {
        if (i < src.count) src.load(i, rank[u], idx[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      if (i0 + u * stride >= rounded) break;  // warp-uniform
      const bool in = i0 + u * stride < src.count;
      U key = rank[u];
      std::uint64_t nidx = ~idx[u] & idx_mask;
      bool alive = in;
      if constexpr (St == Stage::delegate_groups) {  // a short subrange's empty slots
        alive = in && src.off[i0 + u * stride] != kNoDelegate;
      } else if constexpr (St == Stage::scaled) {
        key = sv.scaled(rank[u], p.type, p.options), nidx = 0;
      } else if constexpr (St == Stage::grouped) {
        alive = in && sv.place(rank[u], p.type, p.options, p.W) == 0;
      }
      alive = alive && compare_top<U, false>(key, nidx, s, p.W, IB);
      if (alive) atomicAdd(smem_hist + composite_digit(key, nidx, IB, pb.low, pb.width), 1u);
    }
  }
  merge_and_pick(smem_hist, bins, p.hist + r * bins, p.counters + r, state, total_bits, IB, pb);
}

// Whether element (rank, idx) of a row is among its winners once the row's state `s` is final:
// it matches the resolved prefix of (rank, ~index) — or, with RadiK's scaling, its scaled rank lies
// above the scaled tie group, or inside it and it matches the prefix. `in`: the element exists.
template <class U, bool Scaled>
__device__ __forceinline__ bool is_winner(bool in, U rank, std::uint64_t idx, std::uint64_t idx_mask,
                                          const RowState<U>& s, [[maybe_unused]] const ScaledView<U>& sv,
                                          const Params<U>& p) {
  if constexpr (Scaled) {
    const int place = in ? sv.place(rank, p.type, p.options, p.W) : -1;
    return place > 0 || (place == 0 && compare_top<U, true>(rank, ~idx & idx_mask, s, p.W, p.IB));
  } else {
    return in && compare_top<U, true>(rank, ~idx & idx_mask, s, p.W, p.IB);
  }
}

// Writes each row's winners (exactly min(k, length)) in any order; the sort that follows fixes it.
// Scaled: RadiK's scaling (above its group, or in it and selected).
template <class U, bool Scaled> __global__ void __launch_bounds__(kThreads) gather_winners(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> s = p.state[r];
  const Source<U> src = row_source(p, r);
  [[maybe_unused]] const ScaledView<U> sv = Scaled ? scaled_view(p, r, src) : ScaledView<U>{false, U(0), {}};
  const std::uint64_t idx_mask = low_mask(p.IB);
  const std::uint64_t rounded = (src.count + 31) & ~31ull;  // whole warps reach the ballot
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < rounded;
       i += gridDim.x * std::uint64_t(blockDim.x)) {
    U rank = 0;
    std::uint64_t idx = 0;
    const bool in = i < src.count;
    if (in) src.load(i, rank, idx);
    const bool win = is_winner<U, Scaled>(in, rank, idx, idx_mask, s, sv, p);
    warp_append(win, rank, idx, p.win_count + r, p.win_rank + r * p.k, p.win_idx + r * p.k, p.k);
  }
}

}  // namespace radixmesh::detail::topk_gpu
