// Top-k kernels, instantiated per key width U (u16, u32, u64), never per key type: the type only
// picks the rank transform (topk_rank, topk.hpp) at run time.
//
// The select works on a combined key per element: its W-bit rank, then IB bits of the complement
// of its position, so that the composite is unique and a larger composite is better (higher rank,
// then lower index). MSD radix passes over the composite find a lower bound L with exactly k
// elements >= L (RadiK §2.3.1, with the index digits making ties deterministic instead of atomic-
// order dependent). Each pass: block histograms in shared memory merged into a global histogram
// (RadiK §3.1.1 hierarchical atomics); the last block to finish picks the bucket and updates the
// row's state, so a pass is one launch and nothing returns to the host. A row whose bucket count
// equals the places left is done (early exit) and later passes skip it.
//
// Delegates (Dr. Top-k): a pass over the input writes the maximum rank of every subrange of S = 2^α
// elements and, fused into it, the first digit histogram of those delegates. The k-th largest
// delegate T is a lower bound of the k-th largest element (k subranges each hold an element >= T),
// so only subranges whose delegate is >= T hold winners: they are rescanned and their elements
// >= T compacted into candidates, and the exact select runs on those alone.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <cub/block/block_scan.cuh>

#include "radixmesh/keys.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::detail::topk_gpu {

constexpr int kThreads = 256;
constexpr int kMaxDigitBits = 11;
constexpr int kMaxBins = 1 << kMaxDigitBits;

enum Mode : int { kRaw = 0, kDelegates = 1 };

template <class U> struct RowState {
  U rank_prefix;            // resolved top bits of the rank, the rest 0
  std::uint64_t nidx_prefix;// resolved top bits of the complemented index (within IB bits)
  std::uint64_t k_left;     // places still to fill among elements matching the prefix
  int resolved;             // composite bits resolved so far
  int done;                 // winners = composite top `resolved` bits >= prefix
  int mode;                 // kRaw: select over the row; kDelegates: over its candidates
  int pad_;
};

// The rows of a batch: equal lengths, or offsets in device memory.
struct RowsView {
  const std::uint64_t* offsets;
  std::uint64_t length;
  __device__ std::uint64_t begin(std::size_t r) const { return offsets ? offsets[r] : r * length; }
  __device__ std::uint64_t end(std::size_t r) const { return offsets ? offsets[r + 1] : (r + 1) * length; }
};

// Everything a kernel needs, passed by value.
template <class U> struct Params {
  const U* values;          // raw bits of the input
  KeyType type;
  TopkOptions options;
  RowsView rows;
  std::uint64_t k;
  int W, IB;                // rank bits, index bits of the composite
  int digit_bits;           // per pass
  int alpha;                // log2 of the delegate subrange
  int beta;                 // delegates per subrange (Dr. Top-k's beta; > 1 only with alpha >= 5)
  RowState<U>* state;       // main select, one per row
  RowState<U>* dstate;      // delegate select, one per row
  unsigned long long* hist; // rows * kMaxBins
  unsigned* counters;       // rows: blocks finished in the current pass
  U* delegates;             // best rank of each subrange
  std::uint32_t* delegate_off;  // its lowest offset within the subrange: the delegate's index
  unsigned long long* row_max;  // rows: the largest rank (from the delegates, or row_range)
  unsigned long long* row_min;  // rows: the smallest rank (row_range: raw rows, TopkStart::range_adaptive)
  RowState<U>* sstate;          // RadiK's scaling: the select over the scaled ranks, one per row
  bool scaling;                 // TopkStart::radik_scaling
  bool range_start;             // start delegate rows at the bits shared by the k-th delegate and the max
  U* cand_rank;
  std::uint64_t* cand_idx;
  unsigned long long* cand_count;  // rows
  std::uint64_t* qual_list;        // rows * k: the qualifying subranges of each row
  unsigned long long* qual_count;  // rows
  int qual_per_warp;               // listed subranges a warp rescans per round
  bool vector_loads;               // the delegate pass may use 16-byte loads
  std::uint64_t cand_cap;          // per row
  U* win_rank;
  std::uint64_t* win_idx;
  unsigned long long* win_count;   // rows
};

// ---- rank transform: the run-time type picks topk_rank<T>; inverse for the output.
template <class U, class F> __device__ __forceinline__ auto with_type(KeyType t, F&& f) {
  if constexpr (sizeof(U) == 2) {
    switch (t) {
      case KeyType::f16: return f(half_t{});
      case KeyType::bf16: return f(bfloat16_t{});
      case KeyType::i16: return f(std::int16_t{});
      default: return f(std::uint16_t{});
    }
  } else if constexpr (sizeof(U) == 4) {
    switch (t) {
      case KeyType::f32: return f(float{});
      case KeyType::i32: return f(std::int32_t{});
      default: return f(std::uint32_t{});
    }
  } else {
    switch (t) {
      case KeyType::f64: return f(double{});
      case KeyType::i64: return f(std::int64_t{});
      default: return f(std::uint64_t{});
    }
  }
}

template <class U> __device__ __forceinline__ U rank_of(U raw, KeyType t, const TopkOptions& o) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    return U(topk_rank(from_bits<T>(key_bits_t<T>(raw)), o));
  });
}

template <class U> __device__ __forceinline__ U raw_of_rank(U rank, KeyType t, const TopkOptions& o) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    U e = rank;
    if (!o.largest) {
      e = U(~rank);
    } else if constexpr (key_traits<T>::is_float) {
      if (!o.include_nan) e = U(rank - U(2 * ((U(1) << key_traits<T>::mantissa_bits) - 1)));
    }
    return U(key_traits<T>::decode_bits(e));
  });
}

// ---- RadiK's scaling, made exact (RadiK §4.3; TopkStart::radik_scaling).
// RadiK subtracts a sample x_r (its code: the first element of the task, NaN/inf -> 0) from every
// key before the radix passes, so that inputs sharing their high bits (U[128.6, 128.7]) spread
// over the first digit. Subtraction rounds, so distinct keys can meet (fl(x - c) == fl(y - c)),
// and RadiK then returns whichever of them its atomics pick. But x -> fl(x - c) is monotone
// (non-decreasing, NaN and inf included: c is finite, every NaN stays in the NaN block of the
// ranks), so the order by (scaled rank, original rank, lowest index) IS the order by (original
// rank, lowest index). Hence: (1) a select over the scaled ranks alone (W bits, no index digits)
// finds the scaled rank s of the k-th best and k_left, the places left among the elements whose
// scaled rank equals s (or, on an early exit, whose resolved top bits match: all of them win);
// (2) every element whose scaled rank is above that group wins outright; (3) the usual select on
// the original composite (rank, ~index) runs inside the group for the k_left places. Only f32 and
// f64 (16-bit keys would need device half arithmetic; integer keys gain nothing).
template <class U> __device__ __forceinline__ U scaled_rank(U rank, U sample, KeyType t, const TopkOptions& o) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T x = from_bits<T>(key_bits_t<T>(raw_of_rank<U>(rank, t, o)));
      // A NaN keeps its own rank: every NaN rank lies in the NaN block, beyond every number's, so
      // this stays monotone. Subtracting would not: the H200 run (device run of session 3) failed
      // GpuTopkStart.F64 with include_nan and a NaN on top, as an f64 NaN - c keeps the NaN's
      // payload and quiets it, which reorders NaNs among themselves (f32 gives one canonical NaN,
      // a tie group, and passed).
      if (x != x) return rank;
      const T c = from_bits<T>(key_bits_t<T>(sample));
      return U(topk_rank(T(x - c), o));
    } else {
      return rank;
    }
  });
}

// The sample x_r from the raw bits of the source's first element: NaN and +-inf become 0 (RadiK's
// sampleScaler), so that x - c never makes a NaN from a number.
template <class U> __device__ __forceinline__ U scaling_sample(U raw, KeyType t) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T c = from_bits<T>(key_bits_t<T>(raw));
      return c - c == T(0) ? raw : U(0);  // false for NaN and +-inf
    } else {
      return U(0);
    }
  });
}

// A row's view of the scaled select: the sample and, once that select has run, its state (the
// group). `place` says where an element of original rank `rank` stands: +1 above the group (a
// winner), 0 inside it (the original-key select decides), -1 below it. Off: everything is "inside".
template <class U> struct ScaledView {
  bool on;
  U sample;
  RowState<U> group;
  __device__ __forceinline__ U scaled(U rank, KeyType t, const TopkOptions& o) const {
    return scaled_rank<U>(rank, sample, t, o);
  }
  __device__ __forceinline__ int place(U rank, KeyType t, const TopkOptions& o, int W) const {
    if (!on || group.resolved == 0) return 0;
    const std::uint64_t a = std::uint64_t(scaled(rank, t, o)) >> (W - group.resolved);
    const std::uint64_t b = std::uint64_t(group.rank_prefix) >> (W - group.resolved);
    return a > b ? 1 : a == b ? 0 : -1;
  }
};

// ---- the composite key (rank, ~index): bit arithmetic over W + IB <= 128 bits.
__device__ __forceinline__ std::uint64_t low_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// Bits [low, low + width) of the composite (width <= 16).
template <class U>
__device__ __forceinline__ unsigned composite_digit(U rank, std::uint64_t nidx, int IB, int low, int width) {
  std::uint64_t r;
  if (low >= IB) {
    r = std::uint64_t(rank) >> (low - IB);
  } else {
    const int shift = IB - low;
    r = (nidx >> low) | (shift < 64 ? std::uint64_t(rank) << shift : 0);
  }
  return unsigned(r & low_mask(width));
}

// Do the top `resolved` composite bits equal (ge: are they >=) the prefix's?
template <class U, bool GreaterEqual>
__device__ __forceinline__ bool compare_top(U rank, std::uint64_t nidx, const RowState<U>& s, int W, int IB) {
  const int R = s.resolved;
  if (R == 0) return true;
  if (R <= W) {
    const std::uint64_t a = std::uint64_t(rank) >> (W - R), b = std::uint64_t(s.rank_prefix) >> (W - R);
    return GreaterEqual ? a >= b : a == b;
  }
  if (rank != s.rank_prefix) return GreaterEqual && rank > s.rank_prefix;
  const int shift = IB - (R - W);
  const std::uint64_t a = nidx >> shift, b = s.nidx_prefix >> shift;
  return GreaterEqual ? a >= b : a == b;
}

template <class U>
__device__ __forceinline__ void set_digit(RowState<U>& s, unsigned d, int IB, int low, int width) {
  if (low >= IB) {
    s.rank_prefix = U(s.rank_prefix | (U(d) << (low - IB)));
  } else if (low + width <= IB) {
    s.nidx_prefix |= std::uint64_t(d) << low;
  } else {
    const int in_idx = IB - low;
    s.rank_prefix = U(s.rank_prefix | U(d >> in_idx));
    s.nidx_prefix |= (std::uint64_t(d) & low_mask(in_idx)) << low;
  }
}

// The pass's bit range in the composite of `total_bits`: [low, low + width).
struct PassBits {
  int low, width;
};
// The next digit below the `resolved` top bits (the range-adaptive start may resolve any count).
__device__ __forceinline__ PassBits next_bits(int resolved, int total_bits, int digit_bits) {
  const int hi = total_bits - resolved;
  const int low = hi > digit_bits ? hi - digit_bits : 0;
  return {low, hi - low};
}

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
  // hold the k_left-th best writes it only AFTER it. Without that barrier (the code up to
  // adefc27 read it after the scan) a warp scheduled late could read the state that the
  // picking thread had already updated, find the new, smaller k_left inside its own bins and
  // write a second, wrong digit: too few winners, unwritten output places. It showed only under
  // compute-sanitizer racecheck, which reorders warps, and racecheck could not report it (a race
  // on global memory). See NOTES.md, "The racecheck finding".
  RowState<U> s = *state;
  unsigned long long above;
  BinScan(scan_storage).ExclusiveSum(sum, above);
  __syncthreads();
  if (pick_in_my_bins(local, bins, above, sum, s, total_bits, IB, pb)) *state = s;
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) hist[b] = 0;
  if (threadIdx.x == 0) *counter = 0;
}

__device__ __forceinline__ void zero_smem(unsigned* h, int bins) {
  for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0;
  __syncthreads();
}

template <class U> __device__ __forceinline__ U max_over_lanes(U v, int group) {
  for (int offset = group / 2; offset > 0; offset /= 2) {
    U other = U(__shfl_xor_sync(0xffffffffu, std::uint64_t(v), offset));
    v = other > v ? other : v;
  }
  return v;
}

// Grid-stride loop over [0, count): the 1-D kernels below run on grids of at most kMaxGrid1d
// blocks, so any number of rows and places works.
constexpr unsigned kMaxGrid1d = 1u << 16;
template <class F> __device__ __forceinline__ void for_each_index(std::uint64_t count, F&& f) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += gridDim.x * std::uint64_t(blockDim.x))
    f(i);
}

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
    p.sstate[r] = s;  // the scaled select starts like the main one
    p.row_min[r] = ~0ull;
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

// Delegates of every subrange of 2^alpha elements: its best (rank, lowest index) — a composite
// like the elements', so delegates never tie and exactly k subranges qualify (Dr. Top-k's
// delegates, made deterministic). Fused: the delegates' first digit histogram (the delegate
// select's first pass costs no extra read) and the row's largest rank (the range-adaptive start).
// This is the one kernel that reads the whole input, and it is bound by instructions as much as
// by bytes, so: the key type is dispatched once (not per element), full tiles skip bounds checks,
// and a lane keeps its first maximum with one compare (its loads come in index order).
// A warp reads tiles of 256 elements, 8 coalesced loads per lane in flight; a subrange of >= 256
// elements is one warp's run of tiles, smaller ones are folded inside a tile (loads, then lanes).
template <class U> __global__ void __launch_bounds__(kThreads) delegate_pass(Params<U> p) {
  constexpr int kLoads = 8, kTile = 32 * kLoads;
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ unsigned long long block_max;
  const std::size_t r = blockIdx.y;
  if (p.dstate[r].done) return;
  const int bins = 1 << p.digit_bits;
  if (threadIdx.x == 0) block_max = 0;
  zero_smem(smem_hist, bins);
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const int alpha = p.alpha;
  const std::uint64_t S = 1ull << alpha, subranges = (length + S - 1) >> alpha;
  U* delegates = p.delegates + (begin >> alpha) + r;
  std::uint32_t* delegate_off = p.delegate_off + (begin >> alpha) + r;
  const U* values = p.values + begin;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x) >> 5;
  const std::uint64_t warps = (gridDim.x * std::uint64_t(blockDim.x)) >> 5;
  const PassBits pb = next_bits(0, p.W + p.IB, p.digit_bits);  // within the rank bits: W >= digit
  unsigned long long lane_max = 0;
  auto emit = [&](std::uint64_t sub, const Best<U>& b) {
    delegates[sub] = b.rank;
    delegate_off[sub] = b.off;
    lane_max = b.rank > lane_max ? b.rank : lane_max;
    atomicAdd(smem_hist + composite_digit(b.rank, 0, p.IB, pb.low, pb.width), 1u);
  };
  with_type<U>(p.type, [&](auto tag) {
    using T = decltype(tag);
    const TopkOptions o = p.options;
    // Ranks of a tile's 8 loads per lane; past the row's end: rank 0 at a later offset (never
    // better than a real element of the same subrange).
    auto load_tile = [&](std::uint64_t base, U (&v)[kLoads]) {
      if (base + kTile <= length) {
#pragma unroll
        for (int u = 0; u < kLoads; ++u) v[u] = values[base + lane + 32 * u];
      } else {
#pragma unroll
        for (int u = 0; u < kLoads; ++u) {
          const std::uint64_t i = base + lane + 32 * u;
          v[u] = i < length ? values[i] : U(0);
        }
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const U rank = U(topk_rank(from_bits<T>(key_bits_t<T>(v[u])), o));
        v[u] = (base + kTile <= length || base + lane + 32 * u < length) ? rank : U(0);
      }
    };
    // 16-byte loads (4 floats, 8 halves, 2 doubles per lane and load): the pass is bound by
    // instructions, and a vector load does the work of V scalar ones with one address. A lane
    // folds its V elements first (ascending offsets, so a strict > keeps the lowest), then lanes.
    constexpr int V = int(16 / sizeof(U));
    constexpr int kVecLoads = 4;  // 16-byte loads in flight per lane
    // Where the vector path was measured faster (H200, bench_topk --ab, device run 3 of session 2,
    // same run): S / V <= 32 lanes per subrange (S <= 32 V) for every width (f32 S = 32: 4096x32768
    // k=50 0.96 -> 0.60 ms; S = 128: 16x2^22 k=512 0.251 -> 0.239, n=2^28 k=2^20 1.75 -> 1.44), and a
    // warp per subrange (S >= 32 V kVecLoads) for 16-bit keys only (f16 0.444 -> 0.414 ms, bf16
    // 0.445 -> 0.422). For 32-bit keys a warp per subrange was slower than the scalar tiles below
    // (n=2^28 k=16 0.432 -> 0.461 ms, k=1024 0.408 -> 0.453, n=2^29 0.685 -> 0.774), and with S =
    // 32 V it had one load in flight per lane (run 2: 16x2^22's delegate pass 219 -> 250 us).
    const bool vector_path = p.vector_loads && S >= std::uint64_t(V) &&
                             (reinterpret_cast<std::uintptr_t>(values) & 15) == 0 &&
                             (S <= std::uint64_t(32 * V) || (sizeof(U) == 2 && S >= std::uint64_t(32 * V * kVecLoads)));
    const uint4* vectors = reinterpret_cast<const uint4*>(values);
    const std::uint64_t full_vectors = length / V, all_vectors = (length + V - 1) / V;
    // Ranks of vector vi (elements past the row's end: rank 0, never better than a real one).
    auto load_vector = [&](std::uint64_t vi, U (&v)[V]) {
      if (vi < full_vectors) {
        const uint4 raw = __ldcs(vectors + vi);  // streamed: read once
        memcpy(v, &raw, 16);
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = U(topk_rank(from_bits<T>(key_bits_t<T>(v[j])), o));
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const std::uint64_t i = vi * V + j;
          v[j] = i < length ? U(topk_rank(from_bits<T>(key_bits_t<T>(values[i])), o)) : U(0);
        }
      }
    };
    auto fold_vector = [&](const U (&v)[V], std::uint32_t first_off, Best<U>& b) {
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (v[j] > b.rank) b = {v[j], first_off + std::uint32_t(j)};
    };
    if (vector_path && S > std::uint64_t(32 * V)) {
      // A warp per subrange: 32 lanes x kVecLoads vectors per step.
      const std::uint32_t sub_vectors = std::uint32_t(S / V);
      for (std::uint64_t sub = warp; sub < subranges; sub += warps) {
        const std::uint64_t first = sub * sub_vectors;
        Best<U> best{0, ~0u};
        for (std::uint32_t t0 = 0; t0 < sub_vectors; t0 += 32 * kVecLoads) {
          U v[kVecLoads][V];
#pragma unroll
          for (int u = 0; u < kVecLoads; ++u) {
            const std::uint32_t t = t0 + 32 * u + lane;
            if (t < sub_vectors && first + t < all_vectors) load_vector(first + t, v[u]);
            else for (int j = 0; j < V; ++j) v[u][j] = 0;
          }
#pragma unroll
          for (int u = 0; u < kVecLoads; ++u) {
            Best<U> b{v[u][0], (t0 + 32 * u + lane) * V};
            fold_vector(v[u], (t0 + 32 * u + lane) * V, b);
            if (b.rank > best.rank || best.off == ~0u) best = b;
          }
        }
        best = best_over_lanes(best, 32);
        if (lane == 0) emit(sub, best);
      }
    } else if (vector_path) {
      // S / V lanes per subrange: a warp covers 32 vectors (32 V / S subranges) per load.
      const int lanes_per_sub = int(S / V);
      const std::uint64_t tiles = (all_vectors + 31) / 32;
      for (std::uint64_t t0 = warp * kVecLoads; t0 < tiles; t0 += warps * kVecLoads) {
        U v[kVecLoads][V];
#pragma unroll
        for (int u = 0; u < kVecLoads; ++u) {
          const std::uint64_t vi = (t0 + u) * 32 + lane;
          if (vi < all_vectors) load_vector(vi, v[u]);
          else for (int j = 0; j < V; ++j) v[u][j] = 0;
        }
#pragma unroll
        for (int u = 0; u < kVecLoads; ++u) {
          if (t0 + u >= tiles) break;  // warp-uniform
          const std::uint64_t vi = (t0 + u) * 32 + lane;
          const std::uint32_t off = std::uint32_t((vi * V) & (S - 1));
          Best<U> b{v[u][0], off};
          fold_vector(v[u], off, b);
          b = best_over_lanes(b, lanes_per_sub);
          if (lane % lanes_per_sub == 0 && vi < all_vectors) emit((vi * V) >> alpha, b);
        }
      }
    } else if (S >= kTile) {
      for (std::uint64_t sub = warp; sub < subranges; sub += warps) {
        U v[kLoads];
        load_tile(sub << alpha, v);
        Best<U> best{v[0], std::uint32_t(lane)};
#pragma unroll
        for (int u = 1; u < kLoads; ++u)
          if (v[u] > best.rank) best = {v[u], std::uint32_t(lane + 32 * u)};
        for (std::uint64_t t = kTile; t < S; t += kTile) {
          load_tile((sub << alpha) + t, v);
#pragma unroll
          for (int u = 0; u < kLoads; ++u)
            if (v[u] > best.rank) best = {v[u], std::uint32_t(t + lane + 32 * u)};
        }
        best = best_over_lanes(best, 32);
        if (lane == 0) emit(sub, best);
      }
    } else {
      const std::uint64_t tiles = (length + kTile - 1) / kTile;
      for (std::uint64_t tile = warp; tile < tiles; tile += warps) {
        const std::uint64_t base = tile * kTile;
        U v[kLoads];
        load_tile(base, v);
        Best<U> b[kLoads];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) b[u] = {v[u], std::uint32_t((lane + 32 * u) & (S - 1))};
        if (S >= 32) {  // fold loads that share a subrange (the later one wins only if better), then lanes
#pragma unroll
          for (int step = 1; step < kLoads; step *= 2)
            if (std::uint64_t(64 * step) <= S) {
#pragma unroll
              for (int u = 0; u + step < kLoads; u += 2 * step)
                if (b[u + step].rank > b[u].rank) b[u] = b[u + step];
            }
          const int loads_per_sub = int(S / 32);
#pragma unroll
          for (int u = 0; u < kLoads; ++u)
            if (u % loads_per_sub == 0) {
              const Best<U> best = best_over_lanes(b[u], 32);
              const std::uint64_t sub = (base + 32 * u) >> alpha;
              if (lane == 0 && sub < subranges) emit(sub, best);
            }
        } else {  // a subrange is a group of S lanes of one load
#pragma unroll
          for (int u = 0; u < kLoads; ++u) {
            const Best<U> best = best_over_lanes(b[u], int(S));
            const std::uint64_t i = base + lane + 32 * u;
            if (lane % int(S) == 0 && i < length) emit(i >> alpha, best);
          }
        }
      }
    }
  });
  if (lane_max) atomicMax(&block_max, lane_max);
  __syncthreads();
  if (threadIdx.x == 0 && block_max) atomicMax(p.row_max + r, block_max);
  merge_and_pick(smem_hist, bins, p.hist + r * bins, p.counters + r, p.dstate + r, p.W + p.IB, p.IB, pb);
}

// Dr. Top-k's beta > 1 (opt-in: TopkProblem::delegate_beta; used when alpha >= 5): the best beta
// elements (rank, lowest index) of every subrange, at slots sub * beta + j, best first. A warp per
// subrange with scalar loads in index order; each lane keeps its own best beta (sorted insertion),
// then beta rounds of a warp arg-max, the winning lane advancing its head. The k-th best delegate
// is still a lower bound of the k-th best element (k delegates >= it are k distinct elements), and
// fewer subranges qualify (those holding a delegate >= it: between k / beta and k), so the rescan
// shrinks; the delegates and their select passes grow by beta. Slots of a subrange with fewer than
// beta elements (the row's last) get offset kNoDelegate: never counted, never qualifying. This
// pass is the simple one (no vector loads, no small-subrange paths): the sweep compares beta with
// it, not with the tuned beta = 1 pass.
constexpr std::uint32_t kNoDelegate = ~0u;
constexpr int kMaxBeta = 4;
template <class U> __global__ void __launch_bounds__(kThreads) delegate_pass_top_beta(Params<U> p) {
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ unsigned long long block_max;
  const std::size_t r = blockIdx.y;
  if (p.dstate[r].done) return;
  const int bins = 1 << p.digit_bits, beta = p.beta, alpha = p.alpha;
  if (threadIdx.x == 0) block_max = 0;
  zero_smem(smem_hist, bins);
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t S = 1ull << alpha, subranges = (length + S - 1) >> alpha;
  const std::uint64_t first = ((begin >> alpha) + r) * std::uint64_t(beta);
  U* delegates = p.delegates + first;
  std::uint32_t* delegate_off = p.delegate_off + first;
  const U* values = p.values + begin;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x) >> 5;
  const std::uint64_t warps = (gridDim.x * std::uint64_t(blockDim.x)) >> 5;
  const PassBits pb = next_bits(0, p.W + p.IB, p.digit_bits);
  unsigned long long lane_max = 0;
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
        if (w.off != kNoDelegate) {
          lane_max = w.rank > lane_max ? w.rank : lane_max;
          atomicAdd(smem_hist + composite_digit(w.rank, 0, p.IB, pb.low, pb.width), 1u);
        }
      }
    }
  }
  if (lane_max) atomicMax(&block_max, lane_max);
  __syncthreads();
  if (threadIdx.x == 0 && block_max) atomicMax(p.row_max + r, block_max);
  merge_and_pick(smem_hist, bins, p.hist + r * bins, p.counters + r, p.dstate + r, p.W + p.IB, p.IB, pb);
}

// Appends the lanes' flagged (rank, index) pairs to a row's list with one atomic per warp.
template <class U>
__device__ __forceinline__ void warp_append(bool flag, U rank, std::uint64_t idx, unsigned long long* count,
                                            U* out_rank, std::uint64_t* out_idx, std::uint64_t cap) {
  const unsigned mask = __ballot_sync(0xffffffffu, flag);
  if (!mask) return;
  const int lane = threadIdx.x & 31;
  unsigned long long base = 0;
  if (lane == __ffs(mask) - 1) base = atomicAdd(count, (unsigned long long)__popc(mask));
  base = __shfl_sync(0xffffffffu, base, __ffs(mask) - 1);
  if (flag) {
    const unsigned long long at = base + __popc(mask & ((1u << lane) - 1));
    if (at < cap) {
      out_rank[at] = rank;
      out_idx[at] = idx;
    }
  }
}

// Block-wide exclusive prefix of per-warp counts with one atomic per block on `counter`: returns
// this warp's first place in the row's list (every thread of the block must call it).
__device__ __forceinline__ unsigned long long reserve_for_warp(unsigned warp_count, unsigned long long* counter) {
  constexpr int kWarps = kThreads / 32;
  __shared__ unsigned warp_offset[kWarps];
  __shared__ unsigned long long block_base;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) warp_offset[w] = warp_count;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
    for (int i = 0; i < kWarps; ++i) {
      const unsigned c = warp_offset[i];
      warp_offset[i] = total;
      total += c;
    }
    block_base = total ? atomicAdd(counter, (unsigned long long)total) : 0;
  }
  __syncthreads();
  const unsigned long long at = block_base + warp_offset[w];
  __syncthreads();  // the shared words are rewritten by the next call
  return at;
}

// The range-adaptive start: every element the select will see has a rank in [lo, hi], so the top
// bits those two share are resolved before the first pass.
template <class U> __device__ __forceinline__ void start_at_shared_bits(RowState<U>& m, U lo, U hi, int W) {
  const std::uint64_t diff = std::uint64_t(lo ^ hi);
  const int common = diff ? W - (64 - __clzll((long long)diff)) : W;
  m.resolved = common;
  m.rank_prefix = common ? U(hi & ~U(low_mask(W - common))) : U(0);
}

// TopkStart::range_adaptive on rows without delegates: the row's smallest and largest rank (one
// extra read of the row), then start_from_range resolves the bits they share.
template <class U> __global__ void __launch_bounds__(kThreads) row_range(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> s = p.state[r];
  if (s.done || s.mode != kRaw) return;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  unsigned long long lo = ~0ull, hi = 0;
  with_type<U>(p.type, [&](auto tag) {
    using T = decltype(tag);
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < length;
         i += gridDim.x * std::uint64_t(blockDim.x)) {
      const unsigned long long rank = U(topk_rank(from_bits<T>(key_bits_t<T>(p.values[begin + i])), p.options));
      lo = rank < lo ? rank : lo;
      hi = rank > hi ? rank : hi;
    }
  });
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

// RadiK's scaling, step (1) to (3): the main select continues inside the scaled select's group
// with its k_left. An early exit of the scaled select (the group's count equals k_left before all
// W bits were resolved) means the whole group wins. Otherwise the group is {x : fl(x - c) == s},
// and every such x lies within half an ulp of s from c + s: the ranks of that interval's ends
// (rounded outward) bound the group's original ranks, so the main select starts at the bits they
// share (for exact subtractions, as for U[0.6, 0.7] and U[128.6, 128.7] with c from the same
// range (Sterbenz), all W rank bits: only the index digits are left). s = +-inf or NaN: no bound.
template <class U>
__device__ __forceinline__ void start_inside_group(RowState<U>& m, const RowState<U>& g, U sample, KeyType t,
                                                   const TopkOptions& o, int W) {
  if (m.done) return;
  m.k_left = g.k_left;
  m.done = g.resolved < W ? 1 : 0;
  if (m.done) return;
  with_type<U>(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T scaled = from_bits<T>(key_bits_t<T>(raw_of_rank<U>(g.rank_prefix, t, o)));
      const T c = from_bits<T>(key_bits_t<T>(sample));
      if (!(scaled - scaled == T(0))) return;  // inf or NaN
      constexpr int kMantissa = key_traits<T>::mantissa_bits;
      constexpr int kMinExponent = sizeof(T) == 4 ? -126 : -1022;
      const int e = scaled == T(0) ? kMinExponent : (ilogb(scaled) > kMinExponent ? ilogb(scaled) : kMinExponent);
      // [L, H] = c + s -+ half an ulp of s, computed rounded outward (directed double adds); for
      // f32 its ends then round INWARD to floats (the smallest float >= L is still <= every member,
      // which is a float), so that an exact subtraction gives lo = hi = the one original value.
      const double half_ulp = ldexp(1.0, e - kMantissa - 1);
      const double low = __dsub_rd(__dadd_rd(double(c), double(scaled)), half_ulp);
      const double high = __dadd_ru(__dadd_ru(double(c), double(scaled)), half_ulp);
      T lo, hi;
      if constexpr (sizeof(T) == 4) lo = __double2float_ru(low), hi = __double2float_rd(high);
      else lo = low, hi = high;  // f64: one double wider on each side than needed
      const U a = U(topk_rank(lo, o)), b = U(topk_rank(hi, o));  // largest = false reverses them
      start_at_shared_bits(m, a < b ? a : b, a < b ? b : a, W);
    }
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
template <class U, bool Groups> __global__ void __launch_bounds__(kThreads) list_qualifying(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> t = p.dstate[r];
  if (t.mode != kDelegates) return;
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
  const std::uint32_t* delegate_off = p.delegate_off + ((begin >> p.alpha) + r) * beta;
  const std::uint64_t idx_mask = low_mask(p.IB);
  const int lane = threadIdx.x & 31;
  std::uint64_t* list = p.qual_list + r * p.k;
  for (std::uint64_t g0 = std::uint64_t(blockIdx.x) * kThreads; g0 < subranges;
       g0 += std::uint64_t(gridDim.x) * kThreads) {
    const std::uint64_t mine = g0 + threadIdx.x;
    const bool qualifies =
        mine < subranges && compare_top<U, true>(delegates[mine * beta],
                                                 ~((mine << p.alpha) + delegate_off[mine * beta]) & idx_mask, t, p.W, p.IB);
    const unsigned mask = __ballot_sync(0xffffffffu, qualifies);
    const unsigned long long at = reserve_for_warp(__popc(mask), p.qual_count + r);
    const unsigned long long position = at + __popc(mask & ((1u << lane) - 1));
    if (qualifies && position < p.k) list[position] = mine;
  }
}

// Rescans the listed subranges and compacts their elements >= T' into the row's candidates: at
// most k * 2^alpha, the capacity. Each warp takes `qual_per_warp` listed subranges per round (at
// least one per warp for small k; up to 32 for large k, to keep the atomics few), counts its
// takers, reserves their places with one atomic per block (RadiK §3.1.2 aggregates its flushes
// for the same reason), then reads the same subranges again, now from L1/L2, and writes them.
template <class U> __global__ void __launch_bounds__(kThreads) gather_candidates(Params<U> p) {
  const std::size_t r = blockIdx.y;
  const RowState<U> t = p.dstate[r];
  if (t.mode != kDelegates) return;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t S = 1ull << p.alpha;
  const std::uint64_t listed = p.qual_count[r] < p.k ? p.qual_count[r] : p.k;
  const std::uint64_t* list = p.qual_list + r * p.k;
  const std::uint64_t idx_mask = low_mask(p.IB);
  const int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
  constexpr int kWarps = kThreads / 32;
  U* out_rank = p.cand_rank + r * p.cand_cap;
  std::uint64_t* out_idx = p.cand_idx + r * p.cand_cap;
  const std::uint64_t per_warp = std::uint64_t(p.qual_per_warp), per_block = per_warp * kWarps;
  // One pass over the warp's listed subranges: `visit(take mask, lane takes, rank, index)`.
  auto scan = [&](std::uint64_t first, auto&& visit) {
    for (std::uint64_t e = first; e < first + per_warp && e < listed; ++e) {
      const std::uint64_t base = list[e] << p.alpha;
      for (std::uint64_t j = 0; j < S; j += 32) {
        const std::uint64_t i = base + j + lane;
        const bool in_row = j + lane < S && i < length;
        const U rank = in_row ? rank_of<U>(p.values[begin + i], p.type, p.options) : U(0);
        const bool take = in_row && compare_top<U, true>(rank, ~i & idx_mask, t, p.W, p.IB);
        visit(__ballot_sync(0xffffffffu, take), take, rank, i);
      }
    }
  };
  for (std::uint64_t b0 = std::uint64_t(blockIdx.x) * per_block; b0 < listed; b0 += std::uint64_t(gridDim.x) * per_block) {
    const std::uint64_t first = b0 + std::uint64_t(warp_in_block) * per_warp;
    unsigned count = 0;
    scan(first, [&](unsigned mask, bool, U, std::uint64_t) { count += __popc(mask); });
    unsigned long long at = reserve_for_warp(count, p.cand_count + r);
    scan(first, [&](unsigned mask, bool take, U rank, std::uint64_t i) {
      const unsigned long long position = at + __popc(mask & ((1u << lane) - 1));
      if (take && position < p.cand_cap) {
        out_rank[position] = rank;
        out_idx[position] = i;
      }
      at += __popc(mask);
    });
  }
}

enum class SourceKind { row, candidates, delegates };

// Where a select reads (rank, index) pairs from: a row's raw values, its candidates, or its
// delegates (index = subrange start + the delegate's offset).
template <class U> struct Source {
  const U* raw;
  const U* ranks;
  const std::uint64_t* idx;
  const std::uint32_t* off;
  std::uint64_t count;
  SourceKind kind;
  int alpha;
  KeyType type;
  TopkOptions options;
  // Raw bits of the first element (RadiK's x_r), 0 for an empty source.
  __device__ __forceinline__ U first_raw() const {
    if (count == 0) return U(0);
    return kind == SourceKind::row ? raw[0] : raw_of_rank<U>(ranks[0], type, options);
  }
  __device__ __forceinline__ void load(std::uint64_t i, U& rank, std::uint64_t& index) const {
    switch (kind) {
      case SourceKind::candidates: rank = ranks[i], index = idx[i]; break;
      case SourceKind::delegates: rank = ranks[i], index = (i << alpha) + off[i]; break;
      default: rank = rank_of<U>(raw[i], type, options), index = i; break;
    }
  }
};

// A row's main source: its candidates when the delegates produced them (they always fit: the
// capacity check is a guard), else the whole row.
template <class U> __device__ __forceinline__ Source<U> row_source(const Params<U>& p, std::size_t r) {
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const bool cand = p.dstate[r].mode == kDelegates && p.cand_count[r] <= p.cand_cap;
  return {p.values + begin, p.cand_rank + r * p.cand_cap, p.cand_idx + r * p.cand_cap, nullptr,
          cand ? std::uint64_t(p.cand_count[r]) : length, cand ? SourceKind::candidates : SourceKind::row,
          p.alpha, p.type, p.options};
}
// `beta` delegates per subrange (slot sub * beta + j; the index of slot i is then
// ((i / beta) << alpha) + off[i], which Source::load does not know: see select_pass).
template <class U>
__device__ __forceinline__ Source<U> delegate_source(const Params<U>& p, std::size_t r, std::uint64_t beta) {
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t first = ((begin >> p.alpha) + r) * beta;
  return {nullptr, p.delegates + first, nullptr, p.delegate_off + first,
          ((length + (1ull << p.alpha) - 1) >> p.alpha) * beta, SourceKind::delegates, p.alpha, p.type, p.options};
}

template <class U> __device__ __forceinline__ ScaledView<U> scaled_view(const Params<U>& p, std::size_t r,
                                                                       const Source<U>& src) {
  if (!p.scaling) return {false, U(0), {}};
  return {true, scaling_sample<U>(src.first_raw(), p.type), p.sstate[r]};
}

// Run after the scaled select's passes (multi-block path): see start_inside_group.
template <class U> __global__ void begin_after_scaling(Params<U> p, std::size_t row_count) {
  for_each_index(row_count, [&](std::uint64_t r) {
    RowState<U> m = p.state[r];
    if (m.done) return;
    const Source<U> src = row_source(p, r);
    start_inside_group(m, p.sstate[r], scaling_sample<U>(src.first_raw(), p.type), p.type, p.options, p.W);
    p.state[r] = m;
  });
}

// Which select a pass belongs to: over the delegates (delegate_groups: beta > 1 per subrange), over
// the scaled ranks (RadiK's scaling), the main one over the row's source, or the main one inside
// the scaled group (RadiK's scaling). The opt-in stages are separate instantiations, so that the
// default passes (delegates, main) stay the code measured in session 2.
enum class Stage { delegates, delegate_groups, scaled, main, grouped };

// One pass of a select: the next digit below the bits resolved so far. (Warp-aggregating the
// shared-memory adds with __match_any_sync was measured slower on H200 than plain adds: see the
// notes.)
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

// ---- the one-block path: the whole select of a row in one block.
// Largest k it keeps in shared memory.
constexpr int kBlockSelectMaxK = 2048;

// Used when k <= kBlockSelectMaxK and a row's source is small: a delegate row's candidates (about
// k of them for most inputs, up to k * 2^alpha for adversarial ones such as ascending input, which
// then cost this one block more time), or a short raw row. Every radix pass with a shared-memory
// histogram and the bucket picked inside the block (no global histogram, no last-block handshake,
// one launch instead of one per pass), then the winners gathered into shared memory, ordered there
// (bitonic sort: ascending index, or best first with ties by index) and written out. It replaces
// the select launches, the winner gather, CUB's sort(s) and the output kernel: the fixed per-call
// cost that dominated the batched shapes.
template <class U, class Index, bool Scaled>
__global__ void __launch_bounds__(kThreads) block_select(Params<U> p, const Index* input_indices, U* out_values,
                                                         Index* out_indices) {
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ U win_rank[kBlockSelectMaxK];
  __shared__ std::uint64_t win_idx[kBlockSelectMaxK];
  __shared__ RowState<U> shared_state;
  __shared__ unsigned win_count;
  __shared__ typename BinScan::TempStorage scan_storage;
  const std::size_t r = blockIdx.y;
  const Source<U> src = row_source(p, r);
  const int bins = 1 << p.digit_bits, total_bits = p.W + p.IB;
  const std::uint64_t idx_mask = low_mask(p.IB);
  RowState<U> s = p.state[r];
  if (threadIdx.x == 0) shared_state = s, win_count = 0;
  __syncthreads();
  [[maybe_unused]] ScaledView<U> sv{false, U(0), {}};
  if constexpr (Scaled) {
    // RadiK's scaling: the select over the scaled ranks first (W bits, no index digits), then the
    // main select below inside its group. (The default instantiation, Scaled = false, is the
    // code measured in session 2: the session-3 version with both selects in one generic lambda
    // and the group check on every element measured 1.6-1.9x slower on raw rows, H200 run of
    // session 3, rows sweep, which is why the scaled parts are compiled in only here.)
    sv = scaled_view(p, r, src);
    RowState<U> g = s;
    const int max_scaled_passes = (p.W + p.digit_bits - 1) / p.digit_bits + 1;
    for (int pass = 0; !g.done && pass < max_scaled_passes; ++pass) {
      zero_smem(smem_hist, bins);
      const PassBits pb = next_bits(g.resolved, p.W, p.digit_bits);
      for (std::uint64_t i = threadIdx.x; i < src.count; i += kThreads) {
        U rank;
        std::uint64_t idx;
        src.load(i, rank, idx);
        const U key = sv.scaled(rank, p.type, p.options);
        if (compare_top<U, false>(key, 0, g, p.W, 0)) atomicAdd(smem_hist + composite_digit(key, 0, 0, pb.low, pb.width), 1u);
      }
      __syncthreads();
      unsigned long long local[kBinsPerThread];
      const unsigned long long sum = load_my_bins(bins, local, [&](int b) { return (unsigned long long)smem_hist[b]; });
      unsigned long long above;
      BinScan(scan_storage).ExclusiveSum(sum, above);
      RowState<U> next = g;
      if (pick_in_my_bins(local, bins, above, sum, next, p.W, 0, pb)) shared_state = next;
      __syncthreads();
      g = shared_state;
    }
    sv.group = g;
    start_inside_group(s, g, sv.sample, p.type, p.options, p.W);
    __syncthreads();  // every thread has read shared_state
    if (threadIdx.x == 0) shared_state = s;
    __syncthreads();
  }
  const int max_passes = (total_bits + p.digit_bits - 1) / p.digit_bits + 1;
  for (int pass = 0; !s.done && pass < max_passes; ++pass) {
    zero_smem(smem_hist, bins);
    const PassBits pb = next_bits(s.resolved, total_bits, p.digit_bits);
    for (std::uint64_t i = threadIdx.x; i < src.count; i += kThreads) {
      U rank;
      std::uint64_t idx;
      src.load(i, rank, idx);
      if constexpr (Scaled) {
        if (sv.place(rank, p.type, p.options, p.W) != 0) continue;
      }
      const std::uint64_t nidx = ~idx & idx_mask;
      if (compare_top<U, false>(rank, nidx, s, p.W, p.IB))
        atomicAdd(smem_hist + composite_digit(rank, nidx, p.IB, pb.low, pb.width), 1u);
    }
    __syncthreads();
    unsigned long long local[kBinsPerThread];
    const unsigned long long sum = load_my_bins(bins, local, [&](int b) { return (unsigned long long)smem_hist[b]; });
    unsigned long long above;
    BinScan(scan_storage).ExclusiveSum(sum, above);
    RowState<U> next = s;  // every thread's copy is `s`; only the picking thread writes the shared one
    if (pick_in_my_bins(local, bins, above, sum, next, total_bits, p.IB, pb)) shared_state = next;
    __syncthreads();
    s = shared_state;
  }
  // The winners, in any order, into shared memory (exactly min(k, length) of them).
  const std::uint64_t rounded = (src.count + 31) & ~31ull;
  const int lane = threadIdx.x & 31;
  for (std::uint64_t i = threadIdx.x; i < rounded; i += kThreads) {
    U rank = 0;
    std::uint64_t idx = 0;
    const bool in = i < src.count;
    if (in) src.load(i, rank, idx);
    const bool win = is_winner<U, Scaled>(in, rank, idx, idx_mask, s, sv, p);
    const unsigned mask = __ballot_sync(0xffffffffu, win);
    if (!mask) continue;
    unsigned base = 0;
    if (lane == __ffs(mask) - 1) base = atomicAdd(&win_count, unsigned(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, __ffs(mask) - 1);
    const unsigned at = base + __popc(mask & ((1u << lane) - 1));
    if (win && at < unsigned(kBlockSelectMaxK)) win_rank[at] = rank, win_idx[at] = idx;
  }
  __syncthreads();
  const unsigned count = win_count < unsigned(kBlockSelectMaxK) ? win_count : unsigned(kBlockSelectMaxK);
  unsigned size = 1;
  while (size < count) size *= 2;
  for (unsigned i = count + threadIdx.x; i < size; i += kThreads) win_rank[i] = 0, win_idx[i] = ~0ull;
  __syncthreads();
  // Bitonic sort of the `size` entries: ascending index, or (sorted) best rank first, ties by index.
  const bool by_rank = p.options.sorted;
  auto before = [&](unsigned a, unsigned b) {
    if (by_rank && win_rank[a] != win_rank[b]) return win_rank[a] > win_rank[b];
    return win_idx[a] < win_idx[b];
  };
  for (unsigned block = 2; block <= size; block *= 2)
    for (unsigned stride = block / 2; stride > 0; stride /= 2) {
      for (unsigned t = threadIdx.x; t < size / 2; t += kThreads) {
        const unsigned a = 2 * t - (t & (stride - 1)), b = a + stride;
        const bool forward = (a & block) == 0;
        if (forward ? before(b, a) : before(a, b)) {
          const U tr = win_rank[a];
          win_rank[a] = win_rank[b], win_rank[b] = tr;
          const std::uint64_t ti = win_idx[a];
          win_idx[a] = win_idx[b], win_idx[b] = ti;
        }
      }
      __syncthreads();
    }
  const std::uint64_t begin = p.rows.begin(r);
  for (std::uint64_t q = threadIdx.x; q < p.k; q += kThreads) {
    const std::uint64_t at = r * p.k + q;
    if (q < count) {
      out_values[at] = raw_of_rank<U>(win_rank[q], p.type, p.options);
      out_indices[at] = input_indices ? input_indices[begin + win_idx[q]] : Index(win_idx[q]);
    } else {  // a row shorter than k
      out_values[at] = 0;
      out_indices[at] = Index(-1);
    }
  }
  if (threadIdx.x == 0) p.win_count[r] = count;  // for the RXM_TOPK_DEBUG check
}

// Places past a short row's winners: index `pad` (sorts after every real index), rank 0.
template <class U> __global__ void pad_winners(Params<U> p, std::size_t row_count, std::uint64_t pad) {
  for_each_index(row_count * p.k, [&](std::uint64_t i) {
    const std::uint64_t r = i / p.k, j = i % p.k;
    if (j >= p.win_count[r]) {
      p.win_rank[i] = 0;
      p.win_idx[i] = pad;
    }
  });
}

// Final output: values from their ranks (the transform is a bijection), indices as asked.
template <class U, class Index>
__global__ void write_output(Params<U> p, std::size_t row_count, const U* ranks, const std::uint64_t* idx,
                             std::uint64_t pad, const Index* input_indices, U* out_values, Index* out_indices) {
  for_each_index(row_count * p.k, [&](std::uint64_t i) {
    const std::uint64_t position = idx[i];
    if (position == pad) {
      out_values[i] = 0;
      out_indices[i] = Index(-1);
      return;
    }
    out_values[i] = raw_of_rank<U>(ranks[i], p.type, p.options);
    out_indices[i] = input_indices ? input_indices[p.rows.begin(i / p.k) + position] : Index(position);
  });
}

__global__ inline void segment_offsets(std::uint64_t* offsets, std::size_t row_count, std::uint64_t k) {
  for_each_index(row_count + 1, [&](std::uint64_t i) { offsets[i] = i * k; });
}

}  // namespace radixmesh::detail::topk_gpu
