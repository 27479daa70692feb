// The GPU top-k's shared device pieces: per-row state, kernel parameters, the run-time type
// dispatch of the rank transform, the composite key (rank, ~index), list appends and the sources a
// select reads from.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "radixmesh/device/block_scan.cuh"
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

// The rows of a batch: equal lengths `stride` values apart (stride >= length: padded rows), or
// offsets in device memory.
struct RowsView {
  const std::uint64_t* offsets;
  std::uint64_t length;
  std::uint64_t stride;
  __device__ std::uint64_t begin(std::size_t r) const { return offsets ? offsets[r] : r * stride; }
  __device__ std::uint64_t end(std::size_t r) const { return offsets ? offsets[r + 1] : r * stride + length; }
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
  std::uint32_t* delegate_off;  // beta > 1 only: each delegate's offset within its subrange
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
  int gather_steps;                // steps of kGatherStep positions a warp rescans per round (_wide)
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
  return with_type<U>(t, [&](auto tag) -> U { return U(TopkRankTransform<decltype(tag)>(o).raw_of(rank)); });
}


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

__device__ __forceinline__ void zero_smem(unsigned* h, int bins) {
  for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0;
  __syncthreads();
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

// A flagged lane's place in a list the warp's flagged lanes append to, in lane order from
// `*count`, with one atomic per warp (every lane calls it; the result means something only where
// flag is set).
template <class C> __device__ __forceinline__ C warp_reserve(bool flag, C* count) {
  const unsigned mask = __ballot_sync(0xffffffffu, flag);
  if (!mask) return 0;
  const int lane = threadIdx.x & 31, first = __ffs(mask) - 1;
  C base = 0;
  if (lane == first) base = atomicAdd(count, C(__popc(mask)));
  return __shfl_sync(0xffffffffu, base, first) + C(__popc(mask & ((1u << lane) - 1)));
}

// A lane's first place for its `n` items in a list the warp's lanes append to, in lane order from
// `*count`, with one atomic per warp (every lane calls it).
template <class C> __device__ __forceinline__ C warp_reserve_n(unsigned n, C* count) {
  const int lane = threadIdx.x & 31;
  const unsigned inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(n);
  const unsigned total = __shfl_sync(0xffffffffu, inclusive, 31);
  C base = 0;
  if (lane == 31 && total) base = atomicAdd(count, C(total));
  return __shfl_sync(0xffffffffu, base, 31) + C(inclusive - n);
}

// Appends the lanes' flagged (rank, index) pairs to a row's list with one atomic per warp.
template <class U>
__device__ __forceinline__ void warp_append(bool flag, U rank, std::uint64_t idx, unsigned long long* count,
                                            U* out_rank, std::uint64_t* out_idx, std::uint64_t cap) {
  const unsigned long long at = warp_reserve(flag, count);
  if (flag && at < cap) {
    out_rank[at] = rank;
    out_idx[at] = idx;
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


// The offset of an empty delegate slot (beta > 1: a subrange with fewer than beta elements).
constexpr std::uint32_t kNoDelegate = ~0u;

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
      case SourceKind::delegates: rank = ranks[i], index = (i << alpha) + (off ? off[i] : 0u); break;
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
  return {nullptr, p.delegates + first, nullptr, beta > 1 ? p.delegate_off + first : nullptr,
          ((length + (1ull << p.alpha) - 1) >> p.alpha) * beta, SourceKind::delegates, p.alpha, p.type, p.options};
}

}  // namespace radixmesh::detail::topk_gpu
