// The row-compact path of the GPU top-k: batched rows of 16-bit keys of at most 262144 values with
// a large k (LLM logits at k of a few hundred to 1024), a block of 256 threads per row that never
// holds the row, ~25 KB of shared memory (five blocks an SM, where row-smem's copy of a 32000-value
// row allows three). Each block:
//  1. bounds the k-th rank from 2048 sampled values per 65536 of the row (16-byte vectors, one to
//     four a thread, spread over the row, loaded at once): the m-th best sample, m = k f +
//     4 sqrt(k f) + 2 for the sampled fraction f (two radix-select passes of 8 bits), so that about
//     1.5 k values of the row reach it;
//  2. streams the row once, each warp over its own contiguous eighth, four 16-byte vectors in flight
//     a lane, ranks two values an instruction (StreamRank::pair) and compares them with the bound
//     two at a time; one warp scan a round (the four vectors' counts packed) appends the values
//     that reach it as 32-bit (rank, position from the warp's first vector) to the warp's region
//     of survivors (no atomics), so every region is in position order;
//  3. finds the k-th rank among the survivors (the same passes) and how many of its equals win;
//  4. compacts the winners in position order (one block scan of packed counts);
//  5. for sorted output, sorts them on their rank bits alone by the block's stable radix sort (two
//     8-bit passes), so equal ranks stay by lowest position; 6. writes the row.
// A row whose bound admits fewer than k values, or whose survivors overflow a warp's region (rows
// whose sample misleads: sorted or constant rows, masked logits), takes the exact fallback in the
// same block (`exact_winners`: the k-th rank over the whole row by two streamed passes, then the
// winners placed by two more reads). Exact on every input; no temporary storage, no atomics outside shared
// memory; capturable. Design and measurements: docs/design/topk.md.
#pragma once
#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_row_stream.cuh"
#include "radixmesh/device/block_scan.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kCompactThreads = 256, kCompactWarps = kCompactThreads / 32;
constexpr int kCompactBlocksPerSm = 5;
constexpr int kCompactInFlight = 4;  // 16-byte loads a lane issues before it uses them
// A survivor's position counts from its warp's first vector in 16 bits: a warp's eighth of the row
// is at most 32776 values here.
constexpr std::uint64_t kCompactMaxRow = 262144;
// The samples: 2048 values (256 vectors) per 65536 of the row, up to four vectors a thread, so that
// the sampled fraction, and with it the survivors' spread, stays that of a 65536-value row.
constexpr unsigned kCompactSampleSpan = 65536, kCompactMaxSampleVectors = 4;
constexpr unsigned kCompactKeys = kRowStreamMaxK;  // the winners' places
// The bound is the m-th best sample, m = k f + kCompactMargin sqrt(k f) + 2 (f: the sampled
// fraction): fewer than k values reach it only if the row's k best hold m samples, about a
// 4-sigma event. row_compact32_bound_sim.py (1500 rows each of 32000 and 65536 normal logits,
// k = 129, 256, 1024): a margin of 3 failed 0.1-0.5 % of rows, 4 one row of 9000, and the most
// values passing (2714) left every warp's region unfilled; with one sample vector a thread at any
// length, a warp's region overflowed in 3 % of rows of 128256 and 39 % of 256000 at k = 1024, with
// the samples scaled to the row in none of 200 (the most a warp kept: 351 and 368 of 384;
// row_compact32_bound_sim.py --vectors 200).
constexpr float kCompactMargin = 4.0f;
// A warp's region of survivors. With the bound above, 256 slots overflowed in 4.8 % of rows of
// 50264 normal logits at k = 1024 (call IA); bench/phases/row_compact32_bound_sim.py finds 384 never
// overflow up to 65536 values.
constexpr unsigned kCompactRegion = 384;
constexpr unsigned kCompactItems = kCompactWarps * kCompactRegion / kCompactThreads;  // survivors a thread reads

// A block's dynamic shared memory: the winners' keys, then the sort's other half and tables. The
// survivors (8 regions of 32-bit entries) live in the other half and the tables until the winners
// are placed.
constexpr std::size_t kCompactSharedBytes =
    kCompactKeys * sizeof(unsigned long long) + block_radix_sort_scratch_bytes<kCompactWarps>(kCompactKeys);
static_assert(kCompactWarps * kCompactRegion * sizeof(unsigned) <= block_radix_sort_scratch_bytes<kCompactWarps>(kCompactKeys),
              "the survivors fit the sort's scratch");

struct CompactShared {
  StreamShared stream;  // the first select pass's histogram (hist) and every pass's decision
  unsigned low_hist[256];  // the second pass's histogram: zeroed with the first, so no barrier between
  unsigned warp_sums[kCompactWarps];
  unsigned warp_count[kCompactWarps];
  unsigned warp_ties[kCompactWarps];
  unsigned overflow;
};

// Where a row's values lie in 16-byte vectors: vector j holds positions 8 j - lead + e (e < 8);
// the first and the last may be partial (`lead`: the values before the row's first 16-byte
// boundary).
struct CompactRow {
  const uint4* from;  // the row's first vector (16-byte aligned, at or before the row)
  const std::uint16_t* row;
  unsigned lead, used, full_first, full_end, vectors;
  __device__ CompactRow(const std::uint16_t* values, unsigned n) : row(values) {
    const auto address = reinterpret_cast<std::uintptr_t>(values);
    lead = unsigned(address % 16 / 2), used = lead + n;
    from = reinterpret_cast<const uint4*>(address - lead * 2);
    full_first = lead ? 1u : 0u, full_end = used / 8, vectors = (used + 7) / 8;
  }
  // Vector j, and which of its 8 lanes lie in the row (bit e: lane e). Partial vectors are read a
  // value at a time, never past the row.
  __device__ uint4 load(unsigned j, unsigned& inside) const {
    if (j >= full_first && j < full_end) return inside = 0xffu, __ldg(from + j);
    unsigned w[4] = {0, 0, 0, 0};
    inside = 0;
#pragma unroll
    for (unsigned e = 0; e < 8; ++e) {
      const unsigned s = j * 8 + e;
      const bool in = s >= lead && s < used;
      if (in) w[e / 2] |= unsigned(row[s - lead]) << (16 * (e & 1));
      inside |= unsigned(in) << e;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
};

// The halves of word h of a vector whose lanes `inside` names, as a mask of 0xffff halves.
__device__ __forceinline__ unsigned inside_halves(unsigned inside, int h) {
  return ((inside >> (2 * h)) & 1u) * 0xffffu | ((inside >> (2 * h + 1)) & 1u) * 0xffff0000u;
}

// The need-th best of 16-bit ranks by two radix-select passes of 8 bits: `kth`, and `take`, how
// many of rank kth are among the best need (at least need ranks are counted). count_pass(hist,
// high, digit) adds every rank to hist (high: by its high byte; else by its low byte where its
// high byte is `digit`). Every thread calls it; it ends with a barrier. Five barriers: both
// histograms are zeroed at once.
template <class CountPass>
__device__ __forceinline__ void compact_select(CompactShared& sh, CountPass count_pass, unsigned need, unsigned& kth, unsigned& take) {
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) sh.stream.hist[b] = 0, sh.low_hist[b] = 0;
  __syncthreads();
  count_pass(sh.stream.hist, true, 0u);
  __syncthreads();
  if (threadIdx.x < 32) find_digit(sh.stream.hist, need, sh.stream);
  __syncthreads();
  const unsigned high = sh.stream.digit;
  need -= sh.stream.above;
  count_pass(sh.low_hist, false, high);
  __syncthreads();
  if (threadIdx.x < 32) find_digit(sh.low_hist, need, sh.stream);
  __syncthreads();
  kth = (high << 8) | sh.stream.digit, take = need - sh.stream.above;
  __syncthreads();  // the decision is read: the next select may rewrite it
}

// Counts a rank into a select pass's histogram (compact_select's count_pass, one rank).
__device__ __forceinline__ void count_rank(unsigned* hist, bool high, unsigned digit, unsigned rank) {
  if (high) atomicAdd(&hist[rank >> 8], 1u);
  else if ((rank >> 8) == digit) atomicAdd(&hist[rank & 0xffu], 1u);
}

// A round of a lane's vectors: kCompactInFlight of them, 32 apart (r[u]: vector base + 32 u +
// lane as 4 words of two packed 16-bit ranks; inside[u]: its lanes in the row, 0 past the warp's
// last vector).
using CompactRanks = unsigned[kCompactInFlight][4];
using CompactInside = unsigned[kCompactInFlight];

// The warp's vectors [first, last), a round of kCompactInFlight loads in flight a lane, coalesced:
// visit(base, r, inside) for each round in order, by every lane at once (the loop is the warp's,
// so visit may use warp collectives).
template <class T, class Visit>
__device__ __forceinline__ void compact_stream_warp(const CompactRow& row, const StreamRank<T>& rank, unsigned first, unsigned last,
                                    Visit visit) {
  const unsigned lane = threadIdx.x & 31;
  for (unsigned base = first; base < last; base += 32 * kCompactInFlight) {
    uint4 x[kCompactInFlight];
    CompactInside inside;
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u) {
      const unsigned j = base + u * 32 + lane;
      inside[u] = 0, x[u] = j < last ? row.load(j, inside[u]) : make_uint4(0, 0, 0, 0);
    }
    CompactRanks r;
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u) {
      const unsigned w[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
#pragma unroll
      for (int h = 0; h < 4; ++h) r[u][h] = rank.pair(w[h]);
    }
    visit(base, r, inside);
  }
}

// Per-vector counts of a round, one 16-bit field a vector (a warp's sum is at most 256 a field), so
// that one warp scan (5 steps of two shuffles) serves the round's kCompactInFlight vectors.
static_assert(kCompactInFlight <= 4, "a round's counts fit 64 bits");
__device__ __forceinline__ unsigned field(unsigned long long packed, int u) { return unsigned(packed >> (16 * u)) & 0xffffu; }

// The values `marks` names (0xffff a half) in each of the round's vectors, counted and scanned
// across the warp: returns the lane's counts; `exclusive` the lanes' before it, `total` the warp's.
__device__ __forceinline__ unsigned long long round_scan(const CompactRanks& marks, unsigned long long& exclusive,
                                                         unsigned long long& total) {
  unsigned long long c = 0;
#pragma unroll
  for (int u = 0; u < kCompactInFlight; ++u) {
    unsigned n = 0;
#pragma unroll
    for (int h = 0; h < 4; ++h) n += __popc(marks[u][h]) / 16;
    c |= (unsigned long long)n << (16 * u);
  }
  const unsigned long long inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(c);
  total = __shfl_sync(0xffffffffu, inclusive, 31), exclusive = inclusive - c;
  return c;
}

// The halves pass[u] marks (0xffff a half) of the round's vectors, put in position order across
// the warp at places at, at + 1, ... (put(place, rank, position)); returns how many the warp put.
template <class Put>
__device__ __forceinline__ unsigned compact_warp_append(const CompactRow& row, unsigned base, const CompactRanks& r,
                                        const CompactRanks& pass, unsigned at, Put put) {
  unsigned long long exclusive, total;
  const unsigned long long c = round_scan(pass, exclusive, total);
  const unsigned lane = threadIdx.x & 31;
  unsigned before = at;  // the places the warp's earlier vectors of the round took
#pragma unroll
  for (int u = 0; u < kCompactInFlight; ++u) {
    if (field(c, u)) {
      unsigned place = before + field(exclusive, u);
      const unsigned position = (base + 32 * u + lane) * 8 - row.lead;  // of lane 0 (wraps for the first vector, whose lane 0 is outside then)
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        if (pass[u][h] & 0xffffu) put(place++, r[u][h] & 0xffffu, position + 2 * h);
        if (pass[u][h] >> 16) put(place++, r[u][h] >> 16, position + 2 * h + 1);
      }
    }
    before += field(total, u);
  }
  return before - at;
}

// The exact winners of a row whose sampled bound failed: the k-th rank over the whole row (two
// radix-select passes, each a read of the row), each warp's counts of values above it and equal to it, then the winners
// (all above, the first `take` equals by position) put straight into keys[0, wanted) in position
// order. Four reads of the row. Every thread calls it; it ends with a barrier.
template <class T>
__device__ __noinline__ void exact_winners(CompactShared& sh, const CompactRow& row, const StreamRank<T>& rank,
                                           unsigned n, unsigned wanted, unsigned first, unsigned last,
                                           const StreamKey<16>& key, unsigned long long* keys) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned kth, take;
  compact_select(sh, [&](unsigned* hist, bool high, unsigned digit) {
    compact_stream_warp<T>(row, rank, first, last, [&](unsigned, const CompactRanks& r, const CompactInside& inside) {
#pragma unroll
      for (int u = 0; u < kCompactInFlight; ++u)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if ((inside[u] >> e) & 1u) count_rank(hist, high, digit, (r[u][e / 2] >> (16 * (e & 1))) & 0xffffu);
    });
  }, wanted, kth, take);
  const unsigned kth2 = kth * 0x10001u;
  unsigned above = 0, equal = 0;
  compact_stream_warp<T>(row, rank, first, last, [&](unsigned, const CompactRanks& r, const CompactInside& inside) {
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u)
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const unsigned in = inside_halves(inside[u], h);
        above += __popc(__vcmpgtu2(r[u][h], kth2) & in) / 16, equal += __popc(__vcmpeq2(r[u][h], kth2) & in) / 16;
      }
  });
  above = __shfl_sync(0xffffffffu, ::radixmesh::device::block_scan::warp_inclusive_scan(above), 31);
  equal = __shfl_sync(0xffffffffu, ::radixmesh::device::block_scan::warp_inclusive_scan(equal), 31);
  if (lane == 0) sh.warp_count[warp] = above, sh.warp_ties[warp] = equal;
  __syncthreads();
  unsigned ties_before = 0, out_before = 0;  // over the warps before this one
  for (unsigned w = 0; w < warp; ++w) {
    const unsigned e = sh.warp_ties[w], taken = ties_before < take ? min(e, take - ties_before) : 0u;
    out_before += sh.warp_count[w] + taken, ties_before += e;
  }
  unsigned out_run = 0, tie_run = 0;
  compact_stream_warp<T>(row, rank, first, last, [&](unsigned base, const CompactRanks& r, const CompactInside& inside) {
    CompactRanks pass, eq;
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u)
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const unsigned in = inside_halves(inside[u], h);
        pass[u][h] = __vcmpgtu2(r[u][h], kth2) & in, eq[u][h] = __vcmpeq2(r[u][h], kth2) & in;
      }
    unsigned long long e_exclusive, e_total;
    round_scan(eq, e_exclusive, e_total);
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u) {
      unsigned tie = ties_before + tie_run + field(e_exclusive, u);  // this lane's first equal's index among the row's
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        if (eq[u][h] & 0xffffu) pass[u][h] |= tie++ < take ? 0xffffu : 0u;
        if (eq[u][h] >> 16) pass[u][h] |= tie++ < take ? 0xffff0000u : 0u;
      }
      tie_run += field(e_total, u);
    }
    out_run += compact_warp_append(row, base, r, pass, out_before + out_run,
                                   [&](unsigned place, unsigned rk, unsigned pos) { keys[place] = key.make(rk, pos); });
  });
  __syncthreads();
}

// One block per row of the launch: the row's min(k, length) best keys, sorted (best first, or by
// position) and written as the row's output. 16-bit keys, rows of at most kCompactMaxRow values,
// k <= kCompactKeys; dynamic shared memory kCompactSharedBytes.
template <class T>
__global__ void __launch_bounds__(kCompactThreads, kCompactBlocksPerSm) row_compact(StreamParams<T> p) {
  static_assert(sizeof(key_bits_t<T>) == 2, "16-bit keys");
  extern __shared__ __align__(16) unsigned long long row_compact_bytes[];
  __shared__ CompactShared sh;
  unsigned long long* keys = row_compact_bytes;  // kCompactKeys
  unsigned long long* other = keys + kCompactKeys;
  unsigned* survivors = reinterpret_cast<unsigned*>(other);  // kCompactWarps regions, dead before the sort
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::size_t r = p.row0 + blockIdx.x;
  const std::uint64_t begin = p.rows.begin(r);
  const unsigned n = unsigned(p.rows.end(r) - begin);  // at most kCompactMaxRow
  const StreamRank<T> rank(p.options);
  const StreamKey<16> key(p.index_bits);
  const unsigned wanted = min(p.k, n);
  const CompactRow row(p.values + begin, n);
  // Warp w streams vectors [first, last).
  const unsigned first = row.vectors * warp / kCompactWarps, last = row.vectors * (warp + 1) / kCompactWarps;

  if (wanted > 0) {
    // 1. The bound: the m-th best of the samples, 16-byte vectors of 8 values, `per_thread` a
    // thread (vector floor(i V / vectors) of V = min(256 per_thread, vectors), i = t + 256 j: loads
    // issued together, a latency, and a fraction of the row's sectors, where single values a
    // stride apart touch every 32-byte sector of a 32000-value row).
    const unsigned per_thread = min(kCompactMaxSampleVectors, (n + kCompactSampleSpan - 1) / kCompactSampleSpan);
    const unsigned sampled = min(unsigned(kCompactThreads) * per_thread, row.vectors);
    const bool every = sampled == row.vectors;  // short rows: every vector, s = n
    unsigned sample_inside[kCompactMaxSampleVectors], sample[kCompactMaxSampleVectors][4];
#pragma unroll
    for (unsigned j = 0; j < kCompactMaxSampleVectors; ++j) {
      const unsigned i = t + j * kCompactThreads;
      uint4 v = make_uint4(0, 0, 0, 0);
      sample_inside[j] = 0;
      if (j < per_thread && i < sampled) v = row.load(unsigned(std::uint64_t(i) * row.vectors / sampled), sample_inside[j]);
      sample[j][0] = rank.pair(v.x), sample[j][1] = rank.pair(v.y), sample[j][2] = rank.pair(v.z), sample[j][3] = rank.pair(v.w);
    }
    // s: the samples (8 a vector; the first and the last vector of the row may be partial, at most
    // 14 lanes fewer, which m leaves room for).
    const unsigned s = every ? n : 8 * sampled;
    const float kf = float(wanted) * float(s) / float(n);
    const unsigned m = min(every ? n : s - 14, unsigned(kf + kCompactMargin * sqrtf(kf)) + 2);
    if (t == 0) sh.overflow = 0;
    unsigned bound, unused;
    compact_select(sh, [&](unsigned* hist, bool high, unsigned digit) {
#pragma unroll
      for (unsigned j = 0; j < kCompactMaxSampleVectors; ++j)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if ((sample_inside[j] >> e) & 1u) count_rank(hist, high, digit, (sample[j][e / 2] >> (16 * (e & 1))) & 0xffffu);
    }, m, bound, unused);
    const unsigned bound2 = bound * 0x10001u;

    // 2. The stream: the values that reach the bound, in the warp's region in position order.
    unsigned* region = survivors + warp * kCompactRegion;
    const unsigned origin = first * 8 - row.lead;  // the position of the warp's first vector's lane 0 (wraps for warp 0)
    unsigned count = 0;
    compact_stream_warp<T>(row, rank, first, last, [&](unsigned base, const CompactRanks& r, const CompactInside& inside) {
      CompactRanks pass;
#pragma unroll
      for (int u = 0; u < kCompactInFlight; ++u)
#pragma unroll
        for (int h = 0; h < 4; ++h) pass[u][h] = __vcmpgeu2(r[u][h], bound2) & inside_halves(inside[u], h);
      count += compact_warp_append(row, base, r, pass, count, [&](unsigned place, unsigned rk, unsigned pos) {
        if (place < kCompactRegion) region[place] = (rk << 16) | (pos - origin);
      });
    });
    if (lane == 0) {
      sh.warp_count[warp] = count < kCompactRegion ? count : kCompactRegion;
      if (count > kCompactRegion) sh.overflow = 1;
    }
    __syncthreads();
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < kCompactWarps; ++w) total += sh.warp_count[w];
    if (sh.overflow || total < wanted) {  // the whole block takes this branch
      exact_winners<T>(sh, row, rank, n, wanted, first, last, key, keys);
    } else {
      // 3. The k-th rank among the survivors; thread t holds kCompactItems consecutive slots of
      // one region.
      const unsigned my_region = t / (kCompactRegion / kCompactItems);
      const unsigned my_first = (t % (kCompactRegion / kCompactItems)) * kCompactItems;
      const unsigned my_count = sh.warp_count[my_region];
      const unsigned my_origin = row.vectors * my_region / kCompactWarps * 8 - row.lead;  // as `origin` of that warp
      unsigned item[kCompactItems];
#pragma unroll
      for (unsigned j = 0; j < kCompactItems; ++j)
        item[j] = my_first + j < my_count ? survivors[my_region * kCompactRegion + my_first + j] : 0u;
      unsigned kth, ties;  // ties: how many of rank kth win
      compact_select(sh, [&](unsigned* hist, bool high, unsigned digit) {
#pragma unroll
        for (unsigned j = 0; j < kCompactItems; ++j)
          if (my_first + j < my_count) count_rank(hist, high, digit, item[j] >> 16);
      }, wanted, kth, ties);

      // 4. The winners in position order: above kth, and the first `ties` equal to it.
      unsigned above = 0, equal = 0;
#pragma unroll
      for (unsigned j = 0; j < kCompactItems; ++j) {
        const unsigned rk = item[j] >> 16;
        const bool valid = my_first + j < my_count;
        above += valid && rk > kth, equal += valid && rk == kth;
      }
      unsigned sum;
      const unsigned before = ::radixmesh::device::block_scan::block_exclusive_scan<unsigned, true, kCompactWarps>(
          above | (equal << 16), sh.warp_sums, sum);
      unsigned above_before = before & 0xffffu, equal_before = before >> 16;
#pragma unroll
      for (unsigned j = 0; j < kCompactItems; ++j) {
        const unsigned rk = item[j] >> 16;
        if (my_first + j >= my_count) continue;
        if (rk > kth) {
          keys[above_before + min(equal_before, ties)] = key.make(rk, (item[j] & 0xffffu) + my_origin);
          ++above_before;
        } else if (rk == kth) {
          if (equal_before < ties) keys[above_before + equal_before] = key.make(rk, (item[j] & 0xffffu) + my_origin);
          ++equal_before;
        }
      }
      __syncthreads();  // the survivors are read: `other` may be overwritten
    }
  }

  // 5. Sorted output: best first on the rank bits alone (stable: equal ranks stay by position).
  const unsigned long long* ordered = keys;
  if (p.options.sorted && wanted > 1)
    ordered = block_radix_sort_descending<kCompactWarps, kCompactKeys / kCompactThreads>(
        keys, other, kCompactKeys, wanted, StreamKey<16>::rank_shift, 64, sh.warp_sums);
  // 6. Written.
  for (unsigned q = t; q < p.k; q += kCompactThreads) write_place(p, r, begin, q, q < wanted ? ordered[q] : 0ull);
}

}  // namespace radixmesh::detail::topk_gpu
