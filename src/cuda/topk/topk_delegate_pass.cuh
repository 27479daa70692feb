// The delegate pass (Dr. Top-k): the one kernel that reads the whole input. For every subrange of
// S = 2^alpha elements it writes the subrange's delegate and, fused, the delegates' first digit
// histogram (the delegate select's first pass costs no extra read) and the row's largest rank (the
// range-adaptive start).
//
// The delegate of a subrange is the composite (best rank in it, ~index of the subrange's FIRST
// element), not a real element's composite: the pass needs only the best rank, which the key
// type's native max/min gives (below), and no index. Why that is exact (ties by lowest index
// included), with d_i = (M_i, ~start_i) for subrange i and the k best delegates qualifying:
// - d_i is >= every element of subrange i as a composite (rank <= M_i, index >= start_i), and the
//   delegates are distinct (distinct starts), so exactly k subranges qualify.
// - Every winner w lies in a qualifying subrange. If not, d_w < every qualifying d_i; each
//   qualifying subrange holds an element e_i of rank M_i, and e_i beats w: M_i > rank(w), or
//   M_i == M_w == rank(w) with start_i < start_w, so all of subrange i lies before w's (aligned,
//   disjoint subranges) and e_i has the lower index. k elements beating w: w is no winner.
// - So candidates = the elements of the qualifying subranges whose rank reaches the k-th
//   delegate's resolved rank bits (gather_candidates_wide): at most k * S, and a superset of the winners,
//   on which the exact select runs. (Taking the best (rank, lowest index) element as the delegate
//   costs a compare-and-select chain per element: 0.41 ms against 0.26 for f16/bf16 at n = 2^28,
//   k = 1024, H200, bench_topk; see docs/design/topk.md.)
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cuda/topk/topk_pick.cuh"

namespace radixmesh::detail::topk_gpu {

// ---- folds: a subrange's elements into one word (lanes shuffle it), then its best rank.
// Every fold has: identity(); one(raw) and vec(16 bytes) (elements into a word); combine(a, b);
// finish(word, rank) -> false when the word cannot name the best rank exactly; exact_rank(raw).

// Every element through the rank transform (topk.hpp's topk_rank), then an unsigned max: integers
// (one xor per element), and floats with include_nan (NaN payloads rank among themselves).
template <class U, class T> struct RankFold {
  using Acc = std::conditional_t<sizeof(U) == 8, std::uint64_t, std::uint32_t>;
  TopkOptions o;
  __device__ __forceinline__ static Acc identity() { return 0; }  // rank 0: never above a real element
  __device__ __forceinline__ U exact_rank(U raw) const { return U(topk_rank(from_bits<T>(key_bits_t<T>(raw)), o)); }
  __device__ __forceinline__ Acc one(U raw) const { return exact_rank(raw); }
  __device__ __forceinline__ static Acc combine(Acc a, Acc b) { return a > b ? a : b; }
  __device__ __forceinline__ Acc vec(const uint4& v) const {
    constexpr int V = int(16 / sizeof(U));
    U e[V];
    memcpy(e, &v, 16);
    Acc a = one(e[0]);
#pragma unroll
    for (int j = 1; j < V; ++j) a = combine(a, one(e[j]));
    return a;
  }
  __device__ __forceinline__ bool finish(Acc a, U& rank) const {
    rank = U(a);
    return true;
  }
};

// Bits of a float's magnitude at which a fold's result is not trusted: below the smallest normal
// (zeros: fmaxf/fminf leave the sign of a zero result unspecified, and flush-to-zero would merge
// subnormals with zero) and above infinity (NaN: every element of the subrange was NaN).
template <class T, class U> __device__ __forceinline__ bool native_result_exact(U bits) {
  constexpr int kMantissa = key_traits<T>::mantissa_bits;
  constexpr U kAbs = U(U(~U(0)) >> 1);
  constexpr U kInf = U(kAbs & U(~((U(1) << kMantissa) - 1)));
  const U m = U(bits & kAbs);
  return m >= (U(1) << kMantissa) && m <= kInf;
}

// f32 and f64 without include_nan: fmaxf (largest) or fminf (smallest), which drop a NaN operand:
// NaN ranks below every number for both (topk.hpp), so the best rank is that of the best number,
// and the transform runs once per subrange. NaN is the identity; a NaN, zero or subnormal result
// is refolded exactly (finish says so).
template <class U, class T, bool Largest> struct FloatFold {
  static_assert(sizeof(T) == sizeof(U) && sizeof(U) >= 4);
  using Acc = U;
  TopkOptions o;
  __device__ __forceinline__ static Acc identity() {
    return sizeof(U) == 4 ? Acc(0x7FC00000u) : Acc(0x7FF8000000000000ull);
  }
  __device__ __forceinline__ U exact_rank(U raw) const { return U(topk_rank(from_bits<T>(raw), o)); }
  __device__ __forceinline__ static Acc one(U raw) { return raw; }
  __device__ __forceinline__ static Acc combine(Acc a, Acc b) {
    const T x = from_bits<T>(a), y = from_bits<T>(b);
    if constexpr (sizeof(T) == 4) return to_bits(Largest ? fmaxf(x, y) : fminf(x, y));
    else return to_bits(Largest ? fmax(x, y) : fmin(x, y));
  }
  __device__ __forceinline__ static Acc vec(const uint4& v) {
    if constexpr (sizeof(U) == 4) return combine(combine(v.x, v.y), combine(v.z, v.w));
    else return combine(Acc(v.x) | (Acc(v.y) << 32), Acc(v.z) | (Acc(v.w) << 32));
  }
  __device__ __forceinline__ bool finish(Acc a, U& rank) const {
    if (!native_result_exact<T>(a)) return false;
    rank = U(topk_rank(from_bits<T>(a), o));
    return true;
  }
};

// f16 and bf16 without include_nan: pairs of halves through __hmax2/__hmin2 (one instruction per
// two elements; a NaN operand is dropped as by fmaxf), the pair's halves combined at the end.
template <class T, class H2, bool Largest> struct HalfPairFold {
  using U = std::uint16_t;
  using Acc = std::uint32_t;
  static constexpr int kMantissa = key_traits<T>::mantissa_bits;
  static constexpr Acc kNaN = Acc(((0x7FFFu >> kMantissa) << kMantissa) | (1u << (kMantissa - 1)));
  TopkOptions o;
  __device__ __forceinline__ static Acc identity() { return kNaN | (kNaN << 16); }
  __device__ __forceinline__ U exact_rank(U raw) const { return U(topk_rank(from_bits<T>(raw), o)); }
  __device__ __forceinline__ static Acc one(U raw) { return Acc(raw) | (kNaN << 16); }
  __device__ __forceinline__ static Acc combine(Acc a, Acc b) {
    H2 x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    const H2 m = Largest ? __hmax2(x, y) : __hmin2(x, y);
    Acc r;
    memcpy(&r, &m, 4);
    return r;
  }
  __device__ __forceinline__ static Acc vec(const uint4& v) { return combine(combine(v.x, v.y), combine(v.z, v.w)); }
  __device__ __forceinline__ bool finish(Acc a, U& rank) const {
    const U m = U(combine(one(U(a)), one(U(a >> 16))));  // the better of the pair's halves
    if (!native_result_exact<T>(m)) return false;
    rank = U(topk_rank(from_bits<T>(m), o));
    return true;
  }
};

// The fold for the run-time key type and options: `f(fold)`.
template <class U, class F> __device__ __forceinline__ void with_fold(KeyType t, const TopkOptions& o, F&& f) {
  with_type<U>(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float) {
      if (!o.include_nan) {
        if constexpr (sizeof(T) == 2) {
          using H2 = std::conditional_t<std::is_same_v<T, half_t>, __half2, __nv_bfloat162>;
          if (o.largest) f(HalfPairFold<T, H2, true>{o});
          else f(HalfPairFold<T, H2, false>{o});
        } else {
          if (o.largest) f(FloatFold<U, T, true>{o});
          else f(FloatFold<U, T, false>{o});
        }
        return;
      }
    }
    f(RankFold<U, T>{o});
  });
}

// ---- the fused histogram and row maximum of a delegate pass (both kernels below).
template <class U> struct DelegateTally {
  unsigned* hist;                 // shared: the delegates' first digit
  unsigned long long* block_max;  // shared
  PassBits pb;
  int IB;
  unsigned long long lane_max;
  __device__ __forceinline__ void add(U rank) {
    lane_max = rank > lane_max ? rank : lane_max;
    atomicAdd(hist + composite_digit(rank, 0, IB, pb.low, pb.width), 1u);
  }
};
template <class U> __device__ __forceinline__ DelegateTally<U> open_tally(const Params<U>& p) {
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ unsigned long long block_max;
  if (threadIdx.x == 0) block_max = 0;
  zero_smem(smem_hist, 1 << p.digit_bits);
  // The first digit lies within the rank bits (W >= the digit width).
  return {smem_hist, &block_max, next_bits(0, p.W + p.IB, p.digit_bits), p.IB, 0};
}
// The row maximum, and the first pass's merge and bucket pick for the delegate select.
template <class U> __device__ __forceinline__ void close_tally(const Params<U>& p, std::size_t r, DelegateTally<U>& t) {
  if (t.lane_max) atomicMax(t.block_max, t.lane_max);
  __syncthreads();
  if (threadIdx.x == 0 && *t.block_max) atomicMax(p.row_max + r, *t.block_max);
  const int bins = 1 << p.digit_bits;
  merge_and_pick(t.hist, bins, p.hist + r * bins, p.counters + r, p.dstate + r, p.W + p.IB, p.IB, t.pb);
}

// Every subrange's best rank through `emit(sub, rank)` (called by one lane per subrange). Units
// of V elements (V = 1: scalar loads; V = 16 / sizeof(U): 16-byte loads, rows aligned to 16 bytes
// and S >= V); a warp loads kStep elements per step, kLoads loads in flight per lane, the loads
// streamed (read once). S >= kStep: a warp per subrange over its steps. S < kStep: a step holds
// several subranges: the loads of one subrange fold pairwise, then its lanes fold (all 32, or
// S / V of them when S < 32 V).
template <class U, int V, class Fold, class Emit>
__device__ __forceinline__ void fold_subranges(const U* values, std::uint64_t length, int alpha, const Fold& fold,
                                               Emit&& emit) {
  using Acc = typename Fold::Acc;
  constexpr int kLoads = V > 1 ? 4 : 8;
  constexpr std::uint64_t kStepUnits = 32 * kLoads;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x) >> 5;
  const std::uint64_t warps = (gridDim.x * std::uint64_t(blockDim.x)) >> 5;
  const std::uint64_t S = 1ull << alpha, subranges = (length + S - 1) >> alpha;
  const std::uint64_t units_per_sub = S / V, full_units = length / V, all_units = (length + V - 1) / V;
  const uint4* vectors = reinterpret_cast<const uint4*>(values);
  // One unit folded; past the row's end: the identity (a partial last unit folds its real elements).
  auto load = [&](std::uint64_t unit) -> Acc {
    if (unit < full_units) {
      if constexpr (V == 1) return fold.one(__ldcs(values + unit));
      else return fold.vec(__ldcs(vectors + unit));
    }
    Acc a = Fold::identity();
    for (int j = 0; j < V; ++j)
      if (unit * V + j < length) a = Fold::combine(a, fold.one(values[unit * V + j]));
    return a;
  };
  auto over_lanes = [](Acc a, int group) {
    for (int offset = group / 2; offset > 0; offset /= 2) a = Fold::combine(a, Acc(__shfl_xor_sync(0xffffffffu, a, offset)));
    return a;
  };
  // The exact best rank of subrange `sub` (the whole warp): for the rare results finish rejects.
  auto exact = [&](std::uint64_t sub) -> U {
    const std::uint64_t first = sub << alpha, end = first + S < length ? first + S : length;
    std::uint64_t best = 0;
    for (std::uint64_t i = first + lane; i < end; i += 32) {
      const std::uint64_t rank = fold.exact_rank(values[i]);
      best = rank > best ? rank : best;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const std::uint64_t other = __shfl_xor_sync(0xffffffffu, best, offset);
      best = other > best ? other : best;
    }
    return U(best);
  };
  // Every lane of a group holds the group's fold (after over_lanes); `leader` lanes emit. Called
  // by the whole warp.
  auto finish_groups = [&](Acc a, bool leader, std::uint64_t sub) {
    U rank = 0;
    const bool ok = fold.finish(a, rank);
    for (unsigned redo = __ballot_sync(0xffffffffu, leader && !ok); redo; redo &= redo - 1) {
      const int l = __ffs(redo) - 1;
      const U r = exact(__shfl_sync(0xffffffffu, sub, l));
      if (lane == l) rank = r;
    }
    if (leader) emit(sub, rank);
  };
  if (units_per_sub >= kStepUnits) {
    for (std::uint64_t sub = warp; sub < subranges; sub += warps) {
      const std::uint64_t first = sub * units_per_sub;
      Acc acc = Fold::identity();
      for (std::uint64_t t = 0; t < units_per_sub; t += kStepUnits) {
        Acc a[kLoads];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) a[u] = load(first + t + 32 * u + lane);
#pragma unroll
        for (int u = 0; u < kLoads; ++u) acc = Fold::combine(acc, a[u]);
      }
      finish_groups(over_lanes(acc, 32), lane == 0, sub);
    }
  } else {
    const int loads_per_sub = units_per_sub >= 32 ? int(units_per_sub / 32) : 1;
    const int lanes = units_per_sub >= 32 ? 32 : int(units_per_sub);
    const std::uint64_t steps = (all_units + kStepUnits - 1) / kStepUnits;
    for (std::uint64_t step = warp; step < steps; step += warps) {
      const std::uint64_t base = step * kStepUnits;
      Acc a[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) a[u] = load(base + 32 * u + lane);
#pragma unroll
      for (int w = 1; w < kLoads; w *= 2)
        if (w < loads_per_sub) {
#pragma unroll
          for (int u = 0; u + w < kLoads; u += 2 * w) a[u] = Fold::combine(a[u], a[u + w]);
        }
#pragma unroll
      for (int u = 0; u < kLoads; ++u)
        if (u % loads_per_sub == 0) {  // warp-uniform
          const std::uint64_t sub = ((base + 32 * u + lane) * V) >> alpha;
          finish_groups(over_lanes(a[u], lanes), lane % lanes == 0 && sub < subranges, sub);
        }
    }
  }
}

// The delegate pass (beta = 1): every subrange's best rank (see the top of this file).
template <class U> __device__ __forceinline__ void delegate_pass_body(const Params<U>& p) {
  const std::size_t r = blockIdx.y;
  if (p.dstate[r].done) return;
  DelegateTally<U> tally = open_tally(p);
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  U* delegates = p.delegates + (begin >> p.alpha) + r;
  const U* values = p.values + begin;
  constexpr int V = int(16 / sizeof(U));
  const bool vectors = p.vector_loads && (1ull << p.alpha) >= std::uint64_t(V) &&
                       (reinterpret_cast<std::uintptr_t>(values) & 15) == 0;
  auto emit = [&](std::uint64_t sub, U rank) {
    delegates[sub] = rank;
    tally.add(rank);
  };
  with_fold<U>(p.type, p.options, [&](const auto& fold) {
    if (vectors) fold_subranges<U, V>(values, length, p.alpha, fold, emit);
    else fold_subranges<U, 1>(values, length, p.alpha, fold, emit);
  });
  close_tally(p, r, tally);
}
template <class U> __global__ void __launch_bounds__(kThreads) delegate_pass(Params<U> p) { delegate_pass_body(p); }
// The same pass held to 48 registers (5 blocks per SM instead of 4; TopkTuning::
// delegate_pass_five_blocks): ptxas (sm_90) spills 236-684 bytes per thread there (40 registers,
// 6 blocks: 524-2072), yet the H200 measured it faster for f32 and f16/bf16 at every k timed
// (bench_topk --ab-rescan, docs/design/topk.md): the default for 16- and 32-bit keys.
constexpr int kDelegatePassBoundedBlocks = 5;
template <class U>
__global__ void __launch_bounds__(kThreads, kDelegatePassBoundedBlocks) delegate_pass_bounded(Params<U> p) {
  delegate_pass_body(p);
}

// (rank, offset) pairs: the better is the higher rank, then the lower offset (lowest index wins).
template <class U> struct Best {
  U rank;
  std::uint32_t off;
  __device__ __forceinline__ void take(U r, std::uint32_t o) {
    if (r > rank || (r == rank && o < off)) rank = r, off = o;
  }
};
template <class U> __device__ __forceinline__ Best<U> best_over_lanes(Best<U> b, int group) {
  for (int offset = group / 2; offset > 0; offset /= 2) {
    const U r = U(__shfl_xor_sync(0xffffffffu, std::uint64_t(b.rank), offset));
    const std::uint32_t o = __shfl_xor_sync(0xffffffffu, b.off, offset);
    b.take(r, o);
  }
  return b;
}

// Dr. Top-k's beta > 1 (opt-in: TopkTuning::delegate_beta; used when alpha >= 5): the best beta
// elements (rank, lowest index) of every subrange, at slots sub * beta + j, best first. A warp per
// subrange with scalar loads in index order; each lane keeps its own best beta (sorted insertion),
// then beta rounds of a warp arg-max, the winning lane advancing its head. The k-th best delegate
// is still a lower bound of the k-th best element (k delegates >= it are k distinct elements), and
// fewer subranges qualify (those holding a delegate >= it: between k / beta and k), so the rescan
// shrinks; the delegates and their select passes grow by beta. Slots of a subrange with fewer than
// beta elements (the row's last) get offset kNoDelegate: never counted, never qualifying. This
// pass is the simple one (no vector loads, no small-subrange paths): the sweep compares beta with
// it, not with the tuned beta = 1 pass.
constexpr int kMaxBeta = 4;
template <class U> __global__ void __launch_bounds__(kThreads) delegate_pass_top_beta(Params<U> p) {
  const std::size_t r = blockIdx.y;
  if (p.dstate[r].done) return;
  DelegateTally<U> tally = open_tally(p);
  const int beta = p.beta, alpha = p.alpha;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t S = 1ull << alpha, subranges = (length + S - 1) >> alpha;
  const std::uint64_t first = ((begin >> alpha) + r) * std::uint64_t(beta);
  U* delegates = p.delegates + first;
  std::uint32_t* delegate_off = p.delegate_off + first;
  const U* values = p.values + begin;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x) >> 5;
  const std::uint64_t warps = (gridDim.x * std::uint64_t(blockDim.x)) >> 5;
  auto better = [](const Best<U>& a, const Best<U>& b) {  // a before b (an empty slot is last)
    return b.off == kNoDelegate || (a.off != kNoDelegate && (a.rank > b.rank || (a.rank == b.rank && a.off < b.off)));
  };
  for (std::uint64_t sub = warp; sub < subranges; sub += warps) {
    const std::uint64_t base = sub << alpha;
    Best<U> mine[kMaxBeta];
#pragma unroll
    for (int j = 0; j < kMaxBeta; ++j) mine[j] = {U(0), kNoDelegate};
    for (std::uint64_t t = lane; t < S && base + t < length; t += 32) {
      Best<U> c{rank_of<U>(values[base + t], p.type, p.options), std::uint32_t(t)};
#pragma unroll
      for (int j = 0; j < kMaxBeta; ++j)
        if (j < beta && better(c, mine[j])) {
          const Best<U> displaced = mine[j];
          mine[j] = c, c = displaced;
        }
    }
    int head = 0;
    for (int j = 0; j < beta; ++j) {
      Best<U> h{U(0), kNoDelegate};
#pragma unroll
      for (int m = 0; m < kMaxBeta; ++m)
        if (m == head) h = mine[m];
      const Best<U> w = best_over_lanes(h, 32);  // an empty head (0, ~0u) loses to every element
      if (h.off != kNoDelegate && h.off == w.off) ++head;
      if (lane == 0) {
        delegates[sub * beta + j] = w.rank;
        delegate_off[sub * beta + j] = w.off;
        if (w.off != kNoDelegate) tally.add(w.rank);
      }
    }
  }
  close_tally(p, r, tally);
}

}  // namespace radixmesh::detail::topk_gpu
