// The row-compact path of the GPU top-k: batched rows of 16-bit keys of at most 65536 values with a
// large k (LLM logits at k of a few hundred to 1024), a block of 256 threads per row that never
// holds the row, ~25 KB of shared memory (five blocks an SM, where row-smem's copy of a 32000-value
// row allows three). Each block:
//  1. bounds the k-th rank from 2048 sampled values: the m-th best sample, m = k f + 3 sqrt(k f) + 1
//     for the sampled fraction f (two radix-select passes of 8 bits), so that about 1.4 k values of
//     the row reach it;
//  2. streams the row once, each warp over its own contiguous eighth, four 16-byte vectors in flight
//     a lane, ranks two values an instruction (StreamRank::pair) and compares them with the bound
//     two at a time; a warp scan appends the values that reach it as 32-bit (rank, position) to the
//     warp's region of survivors (no atomics), so every region is in position order;
//  3. finds the k-th rank among the survivors (the same passes) and how many of its equals win;
//  4. compacts the winners in position order (one block scan of packed counts);
//  5. for sorted output, sorts them on their rank bits alone by the block's stable radix sort (two
//     8-bit passes), so equal ranks stay by lowest position; 6. writes the row.
// A row whose bound admits fewer than k values, or whose survivors overflow a warp's region (rows
// whose sample misleads: sorted or constant rows, masked logits), takes the exact fallback in the
// same block (`exact_winners`: the k-th rank over the whole row by two passes, then the winners
// placed by two more reads). Exact on every input; no temporary storage, no atomics outside shared
// memory; capturable. Design and measurements: docs/design/topk.md.
#pragma once
#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_row_stream.cuh"
#include "radixmesh/device/block_scan.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kCompactThreads = 256, kCompactWarps = kCompactThreads / 32;
constexpr int kCompactBlocksPerSm = 5;
constexpr int kCompactInFlight = 4;  // 16-byte loads a lane issues before it uses them
constexpr std::uint64_t kCompactMaxRow = 65536;  // positions fit the survivors' 16 bits
constexpr unsigned kCompactKeys = kRowStreamMaxK;  // the winners' places
constexpr unsigned kCompactSamples = 2048;
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
  StreamShared stream;  // the radix-select passes' histogram and decision
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
    std::uint16_t lanes[8];
    inside = 0;
#pragma unroll
    for (unsigned e = 0; e < 8; ++e) {
      const unsigned s = j * 8 + e;
      const bool in = s >= lead && s < used;
      lanes[e] = in ? row[s - lead] : std::uint16_t(0);
      inside |= unsigned(in) << e;
    }
    uint4 v;
    memcpy(&v, lanes, 16);
    return v;
  }
};

// The halves of word h of a vector whose lanes `inside` names, as a mask of 0xffff halves.
__device__ __forceinline__ unsigned inside_halves(unsigned inside, int h) {
  return ((inside >> (2 * h)) & 1u) * 0xffffu | ((inside >> (2 * h + 1)) & 1u) * 0xffff0000u;
}

// The need-th best 16-bit rank among the keys counted(i, key) names (i < count; at least need of
// them) by two radix-select passes: `kth`, and `take`, how many of rank kth are among the best
// need. Every thread calls it; it ends with a barrier.
template <class Counted>
__device__ void compact_select(CompactShared& sh, unsigned count, Counted counted, unsigned need, unsigned& kth,
                               unsigned& take) {
  int high = 16;
  unsigned long long prefix = 0;
  radix_select_pass(sh.stream, count, counted, 0, high, prefix, need);
  __syncthreads();
  radix_select_pass(sh.stream, count, counted, 0, high, prefix, need);
  kth = unsigned(prefix), take = need;
  __syncthreads();
}

// The warp's vectors [first, last), kCompactInFlight loads in flight a lane: visit(j, r, inside)
// for each of the lane's vectors in order (r: its 4 words of two packed 16-bit ranks; inside: its
// lanes in the row, 0 past `last`), by every lane at once (the loop is the warp's, so visit may
// use warp collectives).
template <class T, class Visit>
__device__ void compact_stream_warp(const CompactRow& row, const StreamRank<T>& rank, unsigned first, unsigned last,
                                    Visit visit) {
  const unsigned lane = threadIdx.x & 31;
  for (unsigned base = first; base < last; base += 32 * kCompactInFlight) {
    uint4 x[kCompactInFlight];
    unsigned inside[kCompactInFlight];
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u) {
      const unsigned j = base + u * 32 + lane;
      inside[u] = 0, x[u] = j < last ? row.load(j, inside[u]) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kCompactInFlight; ++u) {
      const unsigned w[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
      unsigned r[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) r[h] = rank.pair(w[h]);
      visit(base + u * 32 + lane, r, inside[u]);
    }
  }
}

// The halves `pass` marks (0xffff a half) of the lane's vector j, put in position order across the
// warp at places base, base + 1, ... (put(place, rank, position)); returns how many the warp put.
template <class Put>
__device__ unsigned compact_warp_append(const CompactRow& row, unsigned j, const unsigned (&r)[4],
                                        const unsigned (&pass)[4], unsigned base, Put put) {
  unsigned c = 0;
#pragma unroll
  for (int h = 0; h < 4; ++h) c += __popc(pass[h]) / 16;
  const unsigned inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(c);
  const unsigned total = __shfl_sync(0xffffffffu, inclusive, 31);
  unsigned place = base + inclusive - c;
  if (c) {
    const unsigned position = j * 8 - row.lead;  // of lane 0 (wraps for the first vector; its lane 0 is outside then)
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      if (pass[h] & 0xffffu) put(place++, r[h] & 0xffffu, position + 2 * h);
      if (pass[h] >> 16) put(place++, r[h] >> 16, position + 2 * h + 1);
    }
  }
  return total;
}

// The exact winners of a row whose sampled bound failed: the k-th rank over the whole row (two
// radix-select passes), each warp's counts of values above it and equal to it, then the winners
// (all above, the first `take` equals by position) put straight into keys[0, wanted) in position
// order. Four reads of the row. Every thread calls it; it ends with a barrier.
template <class T>
__device__ __noinline__ void exact_winners(CompactShared& sh, const CompactRow& row, const StreamRank<T>& rank,
                                           unsigned n, unsigned wanted, unsigned first, unsigned last,
                                           const StreamKey<16>& key, unsigned long long* keys) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned kth, take;
  compact_select(sh, n, [&](unsigned i, unsigned long long& k) { return k = rank(row.row[i]), true; }, wanted, kth,
                 take);
  const unsigned kth2 = kth * 0x10001u;
  unsigned above = 0, equal = 0;
  compact_stream_warp<T>(row, rank, first, last, [&](unsigned, const unsigned (&r)[4], unsigned inside) {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const unsigned in = inside_halves(inside, h);
      above += __popc(__vcmpgtu2(r[h], kth2) & in) / 16, equal += __popc(__vcmpeq2(r[h], kth2) & in) / 16;
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
  compact_stream_warp<T>(row, rank, first, last, [&](unsigned j, const unsigned (&r)[4], unsigned inside) {
    unsigned gt[4], eq[4], e = 0;
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const unsigned in = inside_halves(inside, h);
      gt[h] = __vcmpgtu2(r[h], kth2) & in, eq[h] = __vcmpeq2(r[h], kth2) & in;
      e += __popc(eq[h]) / 16;
    }
    const unsigned e_inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(e);
    const unsigned e_total = __shfl_sync(0xffffffffu, e_inclusive, 31);
    unsigned tie = ties_before + tie_run + e_inclusive - e;  // this lane's first equal's index among the row's
    unsigned pass[4];
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      pass[h] = gt[h];
      if (eq[h] & 0xffffu) pass[h] |= tie++ < take ? 0xffffu : 0u;
      if (eq[h] >> 16) pass[h] |= tie++ < take ? 0xffff0000u : 0u;
    }
    out_run += compact_warp_append(row, j, r, pass, out_before + out_run,
                                   [&](unsigned place, unsigned rk, unsigned pos) { keys[place] = key.make(rk, pos); });
    tie_run += e_total;
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
    // 1. The bound: the m-th best of s samples (positions floor(i n / s)).
    const unsigned s = min(kCompactSamples, n);
    const float kf = float(wanted) * float(s) / float(n);
    const unsigned m = min(s, unsigned(kf + 3.0f * sqrtf(kf)) + 1);
    if (t == 0) sh.overflow = 0;
    unsigned bound, unused;
    compact_select(sh, s, [&](unsigned i, unsigned long long& k) {
      return k = rank(row.row[std::uint64_t(i) * n / s]), true;
    }, m, bound, unused);
    const unsigned bound2 = bound * 0x10001u;

    // 2. The stream: the values that reach the bound, in the warp's region in position order.
    unsigned* region = survivors + warp * kCompactRegion;
    unsigned count = 0;
    compact_stream_warp<T>(row, rank, first, last, [&](unsigned j, const unsigned (&r)[4], unsigned inside) {
      unsigned pass[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) pass[h] = __vcmpgeu2(r[h], bound2) & inside_halves(inside, h);
      count += compact_warp_append(row, j, r, pass, count, [&](unsigned place, unsigned rk, unsigned pos) {
        if (place < kCompactRegion) region[place] = (rk << 16) | pos;
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
      unsigned item[kCompactItems];
#pragma unroll
      for (unsigned j = 0; j < kCompactItems; ++j)
        item[j] = my_first + j < my_count ? survivors[my_region * kCompactRegion + my_first + j] : 0u;
      unsigned kth, ties;  // ties: how many of rank kth win
      compact_select(sh, kCompactWarps * kCompactRegion, [&](unsigned i, unsigned long long& k) {
        return i % kCompactRegion < sh.warp_count[i / kCompactRegion] && (k = survivors[i] >> 16, true);
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
          keys[above_before + min(equal_before, ties)] = key.make(rk, item[j] & 0xffffu);
          ++above_before;
        } else if (rk == kth) {
          if (equal_before < ties) keys[above_before + equal_before] = key.make(rk, item[j] & 0xffffu);
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
