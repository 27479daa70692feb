// The row-smem path of the GPU top-k: batched rows that fit in one block's shared memory (LLM
// vocabularies of up to about 100,000 16-bit or 50,000 32-bit values) with 2 <= k <= 1024. One
// block per row reads the row once, keeps every value's rank in shared memory, and on the way keeps
// each thread's two best ranks. Those give a lower bound that at least k values reach (each warp's
// ceil(k / warps)-th best of its threads' maxima where that is at most the 8th, else every thread's
// best for k <= 512 and its second best above), so the radix passes that find the k-th rank, 8 bits
// of the rank a pass, count only the few values at or above the bound instead of the whole row (LLM
// logits crowd a few exponents, where every counted value is a contended shared atomic). A 16-bit
// rank takes at most two passes. Equal ranks at the k-th place are taken by lowest position through
// a block scan, never by radix passes over position bits. The winners, exactly min(k, length), are
// then sorted and written as the row-stream path writes its rows. Design and measurements:
// docs/design/topk.md.
#pragma once
#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_row_smem.hpp"
#include "cuda/topk/topk_row_stream.cuh"
#include "radixmesh/device/block_scan.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kSmemThreads = 512;
// 32-bit rows of 32000 values take 125 KiB, a block an SM; the kernel is held to two (at most 64
// registers: it takes 55, no spills, where three blocks' 40 spilled) so that rows of up to ~25,000
// values still fit two an SM.
constexpr int kSmemBlocksPerSm32 = 2;
template <class T> constexpr int row_smem_min_blocks = sizeof(T) == 2 ? kSmemBlocksPerSm : kSmemBlocksPerSm32;
constexpr int kSmemWarps = kSmemThreads / 32;
constexpr int kSmemLoadsInFlight = 4;  // 16-byte loads a thread issues before it uses them
// Warps whose k-th share of the bound is at most this take the warp bound (a shuffle round each).
constexpr unsigned kSmemWarpBoundMax = 8;
// The select counts into a histogram per warp, 256 16-bit bins packed two a word (bin b in word
// b % 128, half b / 128: the crowded bins of logits are neighbours, so they share no word), over
// the warp's own run of vectors, the run it places its winners from: the warp's winners come out
// of its bins, with no pass over the ranks to count them. A warp counts at most a few thousand
// values (the row fits the block's shared memory), well within 16 bits.
constexpr unsigned kSmemHistWords = 128;
// The winners' keys share their space with the select's histograms (never in use at once).
constexpr unsigned kSmemHistKeys = kSmemWarps * kSmemHistWords * sizeof(unsigned) / sizeof(unsigned long long);

// Sorts of at most this many winners (a power of two) take the bitonic steps, larger ones the
// radix passes (16-bit ranks: 2 passes of 4 barriers; 32-bit: 4), by their count of barriers: the
// bitonic sort of 256 keys takes 14 (shuffles below stride 32), of 512 19, of 1024 55.
constexpr unsigned kSmemBitonicMax16 = 128, kSmemBitonicMax32 = 256;

// A block's dynamic shared memory: `keys` 8-byte entries (the winners, or the histograms), then
// the row's ranks with room for its offset from a 16-byte boundary, which the radix sort of k_pad
// winners reuses once they are placed.
constexpr std::size_t row_smem_shared_bytes(unsigned keys, unsigned k_pad, std::uint64_t longest, std::size_t value_bytes) {
  const std::size_t ranks = ((longest + 32 / value_bytes) * value_bytes + 15) / 16 * 16;
  const std::size_t sort = block_radix_sort_scratch_bytes<kSmemWarps>(k_pad);
  return std::size_t(keys) * sizeof(unsigned long long) + (ranks > sort ? ranks : sort);
}

struct SmemShared {
  unsigned long long warp_best[kSmemWarps], warp_bound[kSmemWarps];
  unsigned warp_total[kSmemWarps];
  unsigned long long warp_counts[kSmemWarps];  // a warp's winners (low half) and equals (high half)
  StreamShared stream;  // the warps' histograms summed (hist), the digit decision (find_digit) and the sort
};

// The lanes of a 16-byte vector of ranks (16- or 32-bit) that are at least `x` (or, Equal, equal
// to it) as a bit mask (bit e: lane e): two 16-bit lanes per instruction where the ranks are 16-bit.
template <class U, bool Equal = false> __device__ __forceinline__ unsigned lanes_at_least(const uint4& v, unsigned x) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if constexpr (sizeof(U) == 2) {
      const unsigned c = Equal ? __vcmpeq2(w[i], x * 0x10001u) : __vcmpgeu2(w[i], x * 0x10001u);
      m |= ((c & 1u) | ((c >> 15) & 2u)) << (2 * i);
    } else {
      m |= ((Equal ? w[i] == x : w[i] >= x) ? 1u : 0u) << i;
    }
  return m;
}
template <class U> __device__ __forceinline__ unsigned lanes_equal(const uint4& v, unsigned x) {
  return lanes_at_least<U, true>(v, x);
}

// Lane e of a 16-byte vector of 16- or 32-bit ranks (e known only at run time: selects, no local array).
template <class U> __device__ __forceinline__ U lane_of(const uint4& v, int e) {
  constexpr int per_word = 4 / int(sizeof(U));
  const int w = e / per_word;
  const unsigned word = w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
  return U(sizeof(U) == 2 ? word >> (16 * (e & 1)) : word);
}

// One block per row of the launch: the row's min(k, length) best keys, sorted (best first, or by
// position) and written as the row's output. p.k_pad: a power of two >= k; p.capacity: the keys'
// entries (at least k_pad and kSmemHistKeys).
template <class T> __global__ void __launch_bounds__(kSmemThreads, row_smem_min_blocks<T>) row_smem(StreamParams<T> p) {
  using U = key_bits_t<T>;
  constexpr int W = 8 * sizeof(U);
  constexpr int E = 16 / int(sizeof(U));  // values per 16-byte vector
  constexpr unsigned kTop = unsigned((1ull << W) - 1);
  using Wide = std::conditional_t<(W < 32), unsigned, unsigned long long>;  // a rank + 1; 0: none
  extern __shared__ __align__(16) unsigned char row_smem_bytes[];
  __shared__ SmemShared sh;
  unsigned long long* keys = reinterpret_cast<unsigned long long*>(row_smem_bytes);
  auto* hist = reinterpret_cast<unsigned(*)[kSmemHistWords]>(row_smem_bytes);  // [warp][word], during the select
  U* slots = reinterpret_cast<U*>(row_smem_bytes + std::size_t(p.capacity) * sizeof(unsigned long long));
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::size_t r = p.row0 + blockIdx.x;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const U* row = p.values + begin;
  const StreamRank<T> rank(p.options);
  const StreamKey<W> key(p.index_bits);
  const unsigned wanted = unsigned(std::min<std::uint64_t>(p.k, length));
  const unsigned n = unsigned(length);  // fits: the row fits the block's shared memory

  // Slot s holds the rank of position s - lead (lead: the row's values before its first 16-byte
  // boundary), so that whole vectors of the row land in whole vectors of slots. Only the first
  // and the last vector may hold slots outside the row (`edge`; `inside` masks their lanes).
  const auto address = reinterpret_cast<std::uintptr_t>(row);
  const unsigned lead = unsigned((address % 16) / sizeof(U));
  const unsigned used = lead + n, vectors = (used + E - 1) / E;
  const unsigned full_first = lead ? 1 : 0, full_end = used / E;
  auto edge = [&](unsigned j) { return j < full_first || j >= full_end; };
  auto inside = [&](unsigned j) {
    const unsigned s0 = j * E;
    const unsigned first = s0 < lead ? unsigned(lead - s0) : 0u;
    const unsigned last = used - s0 < unsigned(E) ? unsigned(used - s0) : unsigned(E);
    return ((1u << last) - 1) & ~((1u << first) - 1);
  };
  const uint4* from = reinterpret_cast<const uint4*>(address - lead * sizeof(U));
  uint4* to = reinterpret_cast<uint4*>(slots);
  Wide best1 = 0, best2 = 0;
  auto offer = [&](U rk) {
    const Wide v = Wide(rk) + 1;
    if (v > best1) best2 = best1, best1 = v;
    else if (v > best2) best2 = v;
  };
  for (unsigned j0 = full_first + t; j0 < full_end; j0 += kSmemLoadsInFlight * kSmemThreads) {
    uint4 v[kSmemLoadsInFlight];
#pragma unroll
    for (int b = 0; b < kSmemLoadsInFlight; ++b)
      if (const unsigned j = j0 + unsigned(b) * kSmemThreads; j < full_end) v[b] = __ldcs(from + j);
#pragma unroll
    for (int b = 0; b < kSmemLoadsInFlight; ++b) {
      const unsigned j = j0 + unsigned(b) * kSmemThreads;
      if (j >= full_end) break;
      U lanes[E];
      memcpy(lanes, &v[b], 16);
#pragma unroll
      for (int e = 0; e < E; ++e) lanes[e] = rank(lanes[e]), offer(lanes[e]);
      memcpy(&v[b], lanes, 16);
      to[j] = v[b];
    }
  }
  // At most two partial vectors: the first (the row starts inside it) and the last.
  if (t < 2) {
    const unsigned j = t == 0 ? (lead ? 0 : vectors) : (full_end >= full_first ? full_end : vectors);
    if (j < vectors) {
      U lanes[E];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const unsigned s = j * E + e;
        lanes[e] = 0;
        if (s >= lead && s < used) lanes[e] = rank(row[s - lead]), offer(lanes[e]);
      }
      memcpy(&to[j], lanes, 16);
    }
  }

  // The row's best rank and the bound (rank + 1; 0: none) that at least `wanted` values reach.
  const unsigned per_warp = (wanted + kSmemWarps - 1) / kSmemWarps;
  Wide bound = 0;
  if (per_warp <= kSmemWarpBoundMax) {
    // The warp's per_warp-th best of its threads' maxima: every round drops the lanes holding the
    // round's maximum (at least one), so after round i at least i lanes reach it.
    Wide mine = best1;
    for (unsigned i = 0; i < per_warp; ++i) {
      Wide top = mine;
      for (int d = 16; d > 0; d /= 2) {
        const Wide other = __shfl_xor_sync(0xffffffffu, top, d);
        top = other > top ? other : top;
      }
      bound = top;
      if (mine == top) mine = 0;
    }
  } else {
    bound = wanted <= unsigned(kSmemThreads) ? best1 : best2;  // threads x (1 or 2) >= k (k <= 1024)
    for (int d = 16; d > 0; d /= 2) {
      const Wide other = __shfl_xor_sync(0xffffffffu, bound, d);
      bound = other < bound ? other : bound;
    }
  }
  Wide best = best1;
  for (int d = 16; d > 0; d /= 2) {
    const Wide other = __shfl_xor_sync(0xffffffffu, best, d);
    best = other > best ? other : best;
  }
  if (lane == 0) sh.warp_best[warp] = best, sh.warp_bound[warp] = bound;
  for (unsigned b = t; b < kSmemWarps * kSmemHistWords; b += kSmemThreads) hist[0][b] = 0;
  __syncthreads();  // the slots, the warps' figures, the zeroed histograms
  unsigned long long block_best = 0, block_bound = ~0ull;
  for (int w = 0; w < kSmemWarps; ++w) {
    block_best = sh.warp_best[w] > block_best ? sh.warp_best[w] : block_best;
    block_bound = sh.warp_bound[w] < block_bound ? sh.warp_bound[w] : block_bound;
  }

  // The select: ranks at bits [high, W) resolved to `prefix`, `need` places left among the values
  // at or above `low` that share it. All of them win when length <= k.
  const unsigned low = wanted < length && block_bound ? unsigned(block_bound - 1) : 0u;
  int high = 0;
  unsigned long long prefix = 0;
  unsigned need = wanted;
  bool exact = wanted == length;  // the winners are exactly the ranks >= the threshold below
  // The rank bits in which the winners may differ: they lie in [low, top], so they share every
  // bit above the highest in which low and top differ (the sort's span).
  int rank_span = W;
  if (!exact && block_best) {
    const unsigned top = unsigned(block_best - 1), differ = low ^ top;
    high = differ ? 32 - __clz(int(differ)) : 0;
    prefix = (unsigned long long)top >> high;
    rank_span = high;
  }
  // Warp w's vectors, [w0, w1): the run it counts in every pass and places its winners from.
  const unsigned run = (vectors + kSmemWarps - 1) / kSmemWarps;
  const unsigned w0 = std::min<unsigned>(vectors, warp * run), w1 = std::min<unsigned>(vectors, w0 + run);
  // Once a pass ran, sh.warp_counts[w] holds warp w's winners above the k-th rank (low half) and
  // its equals (high half) as its bins give them: the bins above each pass's digit, the digit's bin
  // too where the pass ended the select, and the last pass's digit bin as the equals.
  const bool passes = !exact && high > 0;
  if (lane == 0) sh.warp_counts[warp] = 0;
  for (int pass = 0; !exact && high > 0; ++pass) {
    const int shift = high > 8 ? high - 8 : 0, width = high - shift;
    if (pass > 0) {
      for (unsigned b = t; b < kSmemWarps * kSmemHistWords; b += kSmemThreads) hist[0][b] = 0;
      __syncthreads();
    }
    // Only lanes at or above both `low` and the bucket's first rank can count.
    const unsigned from_rank = unsigned(prefix << high) > low ? unsigned(prefix << high) : low;
    unsigned* counts = hist[warp];
    auto count = [&](const uint4& v, unsigned j) {
      unsigned m = lanes_at_least<U>(v, from_rank);
      if (m && edge(j)) m &= inside(j);
      if (!m) return;
      U lanes[E];
      memcpy(lanes, &v, 16);
#pragma unroll
      for (int e = 0; e < E; ++e)
        if ((m >> e) & 1u) {
          const unsigned x = lanes[e];
          if (((unsigned long long)x >> high) == prefix) {
            const unsigned bin = (x >> shift) & ((1u << width) - 1);
            atomicAdd(&counts[bin % kSmemHistWords], 1u << (16 * (bin / kSmemHistWords)));
          }
        }
    };
    // Two vectors a step: their loads and tests overlap (a thread's steps are a chain of latencies).
    for (unsigned j = w0 + lane; j < w1; j += 64) {
      const unsigned j2 = j + 32;
      const uint4 v = to[j], v2 = j2 < w1 ? to[j2] : uint4{};
      count(v, j);
      if (j2 < w1) count(v2, j2);
    }
    __syncthreads();
    if (t < kSmemHistWords) {
      unsigned low_half = 0, high_half = 0;
      for (int w = 0; w < kSmemWarps; ++w) {
        const unsigned c = hist[w][t];
        low_half += c & 0xffffu, high_half += c >> 16;
      }
      sh.stream.hist[t] = low_half, sh.stream.hist[t + kSmemHistWords] = high_half;
    }
    __syncthreads();
    if (t < 32) find_digit(sh.stream.hist, need, sh.stream);
    __syncthreads();
    const unsigned digit = sh.stream.digit, above = sh.stream.above, bucket = sh.stream.bucket;
    need -= above;
    prefix = (prefix << width) | digit;
    high = shift;
    exact = bucket == need;
    {  // this warp's bins above the digit (low half) and at it (high half)
      unsigned mine = 0;
#pragma unroll 1
      for (unsigned w = lane; w < kSmemHistWords; w += 32)
#pragma unroll
        for (unsigned h = 0; h < 2; ++h) {
          const unsigned bin = w + kSmemHistWords * h, n_bin = (counts[w] >> (16 * h)) & 0xffffu;
          mine += bin > digit ? n_bin : bin == digit ? n_bin << 16 : 0u;
        }
      for (int d = 16; d > 0; d /= 2) mine += __shfl_xor_sync(0xffffffffu, mine, d);
      if (lane == 0) {  // the winners above accumulate; the equals are this pass's, unless it ended the select
        const unsigned long long above_before = sh.warp_counts[warp] & 0xffffffffu;
        sh.warp_counts[warp] = above_before + (mine & 0xffffu) + (exact ? mine >> 16 : 0u) +
                               (exact ? 0ull : (unsigned long long)(mine >> 16) << 32);
      }
    }
    __syncthreads();  // sh.stream's decision and the histograms are rewritten by the next pass
  }

  // The winners, in position order: every rank at or above the threshold; when the k-th rank's
  // equals are not all taken (`prefix` is that rank), the ranks above it and its first `need`
  // equals. Warp w takes its run of vectors: its counts of winners and equals (from its bins, or
  // counted here where no pass ran), a block scan of those counts gives each warp its first places,
  // and the warp places its keys round by round (lane l the round's l-th vector). The keys
  // overwrite the histograms, whose last reader passed the barrier above.
  const bool above_any = exact || prefix < kTop, equals = !exact && need > 0;
  const unsigned threshold =
      exact ? (unsigned(prefix << high) > low ? unsigned(prefix << high) : low) : unsigned(prefix) + 1u;
  const unsigned x = unsigned(prefix);
  auto winners = [&](unsigned j, uint4& v, unsigned& above, unsigned& equal) {
    v = to[j];
    above = above_any ? lanes_at_least<U>(v, threshold) : 0u;
    equal = equals ? lanes_equal<U>(v, x) : 0u;
    if ((above | equal) && edge(j)) above &= inside(j), equal &= inside(j);
  };
  // A lane's count of winners above the k-th rank (low half) and of its equals (high half).
  auto counted = [](unsigned above, unsigned equal) {
    return (unsigned long long)__popc(above) | (unsigned long long)__popc(equal) << 32;
  };
  if (!passes) {  // no pass counted: the warp counts its winners here
    unsigned long long mine = 0;
    if (wanted > 0)
      for (unsigned j = w0 + lane; j < w1; j += 64) {  // two vectors a step: their loads overlap
        uint4 v;
        unsigned above, equal;
        winners(j, v, above, equal);
        mine += counted(above, equal);
        if (j + 32 < w1) winners(j + 32, v, above, equal), mine += counted(above, equal);
      }
    for (int d = 16; d > 0; d /= 2) mine += __shfl_xor_sync(0xffffffffu, mine, d);
    if (lane == 0) sh.warp_counts[warp] = mine;
  }
  __syncthreads();
  unsigned long long before = 0;
  for (unsigned w = 0; w < warp; ++w) before += sh.warp_counts[w];
  if (wanted > 0)
    for (unsigned j0 = w0; j0 < w1; j0 += 32) {  // whole-warp rounds
      const unsigned j = j0 + lane;
      uint4 v = make_uint4(0, 0, 0, 0);
      unsigned above = 0, equal = 0;
      if (j < w1) winners(j, v, above, equal);
      // The round's counts are at most 8 a lane, so the warp scans them packed in 16-bit halves of
      // one word (5 shuffles, not the 10 of a 64-bit scan).
      const unsigned c = unsigned(__popc(above)) | unsigned(__popc(equal)) << 16;
      if (!__any_sync(0xffffffffu, c != 0)) continue;
      const unsigned inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(c), exclusive = inclusive - c;
      unsigned above_before = unsigned(before) + (exclusive & 0xffffu), equal_before = unsigned(before >> 32) + (exclusive >> 16);
      const unsigned round = __shfl_sync(0xffffffffu, inclusive, 31);
      before += (round & 0xffffu) | (unsigned long long)(round >> 16) << 32;
      for (unsigned m = above | equal; m; m &= m - 1) {  // the lane's candidates, by position
        const int e = __ffs(int(m)) - 1;
        const bool is_above = (above >> e) & 1u;
        const unsigned at = above_before + (is_above ? std::min(equal_before, need) : equal_before);
        if ((is_above || equal_before < need) && at < wanted) keys[at] = key.make(lane_of<U>(v, e), j * E + e - lead);
        above_before += is_above, equal_before += !is_above;
      }
    }
  __syncthreads();

  // Sorted output: best first, equal ranks by position (the order they are in). The rank bits
  // alone decide, by the stable radix sort where its passes are fewer than the bitonic steps; of
  // those, only the span in which the winners differ (the best 1024 of 32000 normal logits share
  // their sign and top exponent bits: a pass fewer).
  const unsigned long long* ordered = keys;
  if (p.options.sorted && wanted > 1) {
    if (p.k_pad > (W == 16 ? kSmemBitonicMax16 : kSmemBitonicMax32)) {
      auto* other = reinterpret_cast<unsigned long long*>(slots);  // the ranks are read no more
      ordered = block_radix_sort_descending<kSmemWarps, 2>(keys, other, p.k_pad, wanted, 64 - W, 64 - W + rank_span,
                                                           sh.warp_total);
    } else {
      StreamBuffer buf{keys, keys, sh.stream};
      buf.sort(wanted, p.k_pad, [](unsigned long long k) { return k; });
    }
  }
  for (unsigned q = t; q < p.k; q += kSmemThreads) write_place(p, r, begin, q, q < wanted ? ordered[q] : 0ull);
}

}  // namespace radixmesh::detail::topk_gpu
