// The row-stream path of the GPU top-k: batched rows of up to kRowStreamMaxRow values and k <=
// kRowStreamMaxK (LLM logits, vector-search distances), one read of every value, the k best kept
// in shared memory, sorted there, written once. Design and measurements: docs/design/topk.md.
//
// A block streams one segment of one row in tiles of kStreamTile values (16-byte loads, the next
// tile's loads issued before the current one is filtered). A vector is first compared natively
// with the running threshold's value (may_reach); only vectors that may reach it compute exact
// ranks and 64-bit keys (StreamKey: rank, then complemented position; larger is better, no two are
// equal, a later position loses a tie). Keys above the threshold go to a shared buffer; past
// `compact_above` the buffer is compacted to exactly the k best and the threshold becomes the k-th
// (or a lower bound of it: never a winner dropped). The first tile seeds the threshold, by
// default with a guess: each warp's m-th best of its threads' maxima, the smallest over the warps,
// m such that about 1.5 k of the segment's values should beat it (estimate_lanes), checked once
// the segment is streamed (fewer than k keys above it: the block streams the segment again
// unseeded). Without the guess, k <= 128 takes m = ceil(k / 8), a bound (at least k distinct
// values reach it; a random row then sends about k ln(n / k) keys to the buffer), and larger k
// start unseeded.
//
// One segment per row: the block sorts what it kept (best first, or the k best by position) and
// writes the row. Several (few rows): each block writes everything it kept to temp, and a merge
// launch streams those keys through the same machinery. k = 1 (greedy decoding) keeps one key per
// thread and reduces: an argmax that returns the lowest index among equal maxima.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/topk/topk_stream_buffer.cuh"
#include "cuda/topk/topk_stream_common.cuh"
#include "cuda/topk/topk_stream_tiles.cuh"

namespace radixmesh::detail::topk_gpu {

// The m-th largest of the warp's keys, one a lane (distinct, or 0 for none): m lanes hold a key at
// or above it. 0 where fewer than m lanes hold a key. Every lane calls it and gets the same answer.
__device__ inline unsigned long long warp_mth_best(unsigned long long key, unsigned m) {
  unsigned long long mth = 0;
  for (unsigned i = 0; i < m; ++i) {
    unsigned long long top = key;
    for (int d = 16; d > 0; d /= 2) {
      const unsigned long long other = __shfl_xor_sync(0xffffffffu, top, d);
      top = other > top ? other : top;
    }
    mth = top;
    if (key == top) key = 0;  // keys are distinct: one lane gives its key up
  }
  return mth;
}

// The guessed seed's m: the warp's m-th best of its lanes' maxima of kStreamSlots values, so that
// about 1.5 k of the segment's `values` beat it. A value beats the threshold with probability
// q = 1.5 k / values, a lane's best of 16 with 1 - (1 - q)^16; the least over the warps lowers it
// further. Simulated on normal rows (bench/phases/seed_guess_sim.py; 128256 values, k = 1024: m = 6,
// 1.35-4.9 k keys above it, median 2.5 k, none below k in 200 rows; k = 256: m = 2, rounded up
// from 1.5, none below k where m = 1, `seed_guess_sim.py 200 --nearest`, left 2.5 % of rows below).
__device__ inline unsigned estimate_lanes(unsigned k, std::uint64_t values) {
  const float q = 1.5f * float(k) / float(values);
  const float reach = 1.f - __powf(1.f - q, float(kStreamSlots));
  return min(32u, max(1u, __float2uint_ru(32.f * reach)));  // rounded up: fewer rows stream again
}

// Whether the guessed pass over a segment of `values` ranks its 16-bit vectors by the whole warp
// (ValueTiles::offer): where at most about a quarter of the vectors pass the guess (~2.5 k keys
// above it, 8 values a vector), not the ~half of shorter segments (call GQ, one H100:
// 4096 x 128256 bf16 k = 1024 1.013 -> 0.779 ms, 1 segment a row; 64 x 128256, 8 segments of
// 16032 values, 0.057 -> 0.062 ms, so such segments keep the lane's loop).
__host__ __device__ constexpr bool by_warp_pays(unsigned k, std::uint64_t values) {
  return values >= 64ull * k;
}

// Whether a segment of `values` takes the guessed seed: long enough that the guess is of a small
// fraction and the first tile is full.
__host__ __device__ inline bool guesses_seed(unsigned k, std::uint64_t values) {
  return values >= 8ull * k && values >= 2ull * kStreamTile;
}

// The best key of the block (every thread calls it; 0 when the block saw nothing).
__device__ inline unsigned long long block_max(unsigned long long best, StreamShared& sh) {
  for (int d = 16; d > 0; d /= 2) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, best, d);
    best = other > best ? other : best;
  }
  if ((threadIdx.x & 31) == 0) sh.warp_best[threadIdx.x >> 5] = best;
  __syncthreads();
  unsigned long long m = 0;
  for (int w = 0; w < kStreamThreads / 32; ++w) m = sh.warp_best[w] > m ? sh.warp_best[w] : m;
  __syncthreads();
  return m;
}

// The first threshold from tile 0 (in `first`): every warp's m-th best of its threads' maxima over
// the tile, the smallest of those less one (the m-th keys themselves are taken), which leaves at
// least warps x m distinct values at or above it. Shuffles only: no sort, two barriers. Every
// thread calls it.
template <class Tiles>
__device__ unsigned long long seed_from_first_tile(const Tiles& src, const typename Tiles::Regs& first, unsigned m,
                                                   StreamShared& sh) {
  typename Tiles::Best best;
  src.fold_best(first, 0, best);
  const unsigned long long mth = warp_mth_best(src.key_of(best), m);
  if (threadIdx.x == 0) sh.seed = ~0ull;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) atomicMin(&sh.seed, mth);
  __syncthreads();
  return sh.seed ? sh.seed - 1 : 0;
}

// Streams `src` through the block's buffer. Afterwards keys[0, count) hold, in no order, at most
// compact_above keys among which are the min(k, seen) best; count is returned. Guess: the seed
// is a guess where guesses_seed says so, and a wrong guess streams `src` again (a kernel of its
// own: the second pass and the warp-ranked vectors cost registers, 53 -> 59 for 16-bit keys and
// 64 -> 75 for 32-bit). Every thread calls it.
template <bool Argmax, bool Guess, class Tiles>
__device__ unsigned stream_best(const Tiles& src, StreamBuffer& buf, std::uint32_t k, std::uint32_t compact_above) {
  const std::uint64_t tiles = src.tiles();
  typename Tiles::Regs cur, next;
  if (tiles) src.load(cur, 0);
  if constexpr (Argmax) {
    typename Tiles::Best best;
    for (std::uint64_t t = 0; t < tiles; ++t) {
      if (t + 1 < tiles) src.load(next, t + 1);
      src.fold_best(cur, t, best);
      cur = next;
    }
    // The head and tail values by key (a tail value's position is above every tile's).
    unsigned long long mine = src.key_of(best);
    if (threadIdx.x < src.loose()) {
      const unsigned long long loose = src.loose_key(threadIdx.x);
      mine = loose > mine ? loose : mine;
    }
    const unsigned long long m = block_max(mine, buf.sh);
    if (threadIdx.x == 0) buf.keys[0] = m;
    __syncthreads();
    return m ? 1u : 0u;
  } else {
    // Appends are rare once the threshold is near the k-th value: one shared atomic each (calls
    // CO / CP: a warp scan and one atomic a warp, or one a coalesced group, cost registers and
    // time at k = 50). A thread whose append lands past `compact_above` says so at the tile's one
    // barrier.
    bool over = false;
    auto put = [&](unsigned long long key) {
      const unsigned at = atomicAdd(&buf.sh.count, 1u);
      buf.keys[at] = key;
      over |= at >= compact_above;
    };
    unsigned long long threshold = 0;  // a key is taken iff it is greater
    // The seed, so that the first tile is filtered too (seed_from_first_tile): m = ceil(k / warps)
    // makes it a bound (k <= 128); a guess takes estimate_lanes.
    const bool guessed = Guess && guesses_seed(k, src.size());
    if (tiles && (guessed || k <= kStreamThreads / 2)) {
      constexpr unsigned kWarps = kStreamThreads / 32;
      const unsigned m = guessed ? estimate_lanes(k, src.size()) : (k + kWarps - 1) / kWarps;
      threshold = seed_from_first_tile(src, cur, m, buf.sh);
    }
    // One pass over the segment with `from` as the first threshold, `cur` holding tile 0.
    auto pass = [&](unsigned long long from, bool by_warp) {
      threshold = from;
      if (threadIdx.x == 0) buf.sh.count = 0;
      __syncthreads();
      if (threadIdx.x < src.loose())
        if (const unsigned long long key = src.loose_key(threadIdx.x); key > threshold) put(key);
      for (std::uint64_t t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) src.load(next, t + 1);
        src.template offer<Guess>(cur, t, threshold, by_warp, put);
        // One barrier per tile; the count is read only when a compaction follows (before its own
        // barriers), so no thread's next appends can race with a read of it.
        if (__syncthreads_or(over)) {
          // Ties of the k-th rank may stay (up to k / 4 of them): their positions would take up to
          // three more passes, and the next compaction or the output resolves them.
          threshold = buf.keep_best(buf.sh.count, k, 64 - Tiles::W, k + k / 4);
          over = false;
        }
        cur = next;
      }
      __syncthreads();
      const unsigned count = buf.sh.count;
      __syncthreads();
      return count;  // at most compact_above: the tile that passed it compacted
    };
    const unsigned count = pass(threshold, guessed && by_warp_pays(k, src.size()));
    if constexpr (Guess) {
      // A guess that k keys beat holds every winner: a compaction keeps at least k, and no key
      // above the guess was left out. Fewer: the segment again, every value offered (by the lane:
      // from threshold 0, most vectors pass).
      if (guessed && count < k) {
        src.load(cur, 0);
        return pass(0, false);
      }
    }
    return count;
  }
}

// Place q of row r's output: the value and index of `key` (a StreamKey; 0: none, written as value
// bits 0 and index -1).
template <class T>
__device__ void write_place(const StreamParams<T>& p, std::size_t r, std::uint64_t begin, unsigned q,
                            unsigned long long key) {
  using U = key_bits_t<T>;
  const StreamKey<8 * sizeof(U)> key_of(p.index_bits);
  const std::uint64_t at = std::uint64_t(r) * p.k + q;
  std::int64_t index = -1;
  U value = 0;
  if (key) {
    const std::uint64_t position = key_of.position(key);
    value = StreamRank<T>(p.options).raw_of(U(key_of.rank(key)));
    if (!p.input_indices) index = std::int64_t(position);
    else if (p.index64) index = static_cast<const std::int64_t*>(p.input_indices)[begin + position];
    else index = static_cast<const std::int32_t*>(p.input_indices)[begin + position];
  }
  p.out_values[at] = value;
  if (p.index64) static_cast<std::int64_t*>(p.out_indices)[at] = index;
  else static_cast<std::int32_t*>(p.out_indices)[at] = std::int32_t(index);
}

// Sorts of more keys than this take the radix passes (block_radix_sort_descending, when the
// block's buffer holds their scratch): 8-bit passes over the bits the keys differ in (a rank and a
// position: 4-7 passes of 4 barriers) against 45 barrier-separated bitonic steps at 512 keys and
// 55 at 1024.
constexpr unsigned kStreamBitonicMax = 256;
// Buffer entries the radix sort needs: its keys, the other half, and the tables of 8 warps.
constexpr std::uint32_t kStreamRadixEntries =
    kRowStreamMaxK + std::uint32_t(block_radix_sort_scratch_bytes<kStreamThreads / 32>(kRowStreamMaxK) / 8);

// Runs of equal ranks (the bits from rank_bit up) in keys[0, count), sorted by rank alone: none
// (`none`, nothing written), each at most kTieRunMax keys long (`ordered`: every key written to
// `to`, each run in descending key order, that is by ascending position), or a longer one
// (`too_long`, nothing written). Every thread of the block calls it; it ends with a barrier.
constexpr unsigned kTieRunMax = 32;
enum class TieRuns { none, ordered, too_long };
__device__ inline TieRuns tie_runs_by_position(const unsigned long long* keys, unsigned long long* to, unsigned count,
                                               int rank_bit) {
  bool tie = false, long_run = false;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
    const unsigned long long rank = keys[i] >> rank_bit;
    tie = tie || (i > 0 && keys[i - 1] >> rank_bit == rank);
    long_run = long_run || (i >= kTieRunMax && keys[i - kTieRunMax] >> rank_bit == rank);
  }
  if (__syncthreads_or(long_run)) return TieRuns::too_long;
  if (!__syncthreads_or(tie)) return TieRuns::none;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
    const unsigned long long key = keys[i], rank = key >> rank_bit;
    unsigned first = i, end = i + 1;
    while (first > 0 && keys[first - 1] >> rank_bit == rank) --first;
    while (end < count && keys[end] >> rank_bit == rank) ++end;
    unsigned place = first;
    for (unsigned j = first; j < end; ++j) place += keys[j] > key ? 1u : 0u;
    to[place] = key;
  }
  __syncthreads();
  return TieRuns::ordered;
}

// Sorts the block's keys[0, count) descending on bits [low_bit, high_bit) by the radix passes and
// returns where they ended (keys or the buffer's other half): the 32-bit keys' sort. With
// rank_bit (by rank; 0: by position), as 32-bit ranks rarely tie, the rank bits alone are sorted
// first (the position's 15 to 18 bits at LLM vocabularies take two or three of the passes); runs
// of equal ranks then take their order by position (tie_runs_by_position), and only a run longer
// than kTieRunMax sends the keys through the passes again on every bit. The 16-bit keys keep the
// plain sort (their many ties would mostly take both sorts).
__device__ __forceinline__ const unsigned long long* sort_output(StreamBuffer& buf, unsigned count, int low_bit,
                                                             int high_bit, int rank_bit) {
  int from_bit = rank_bit > low_bit && rank_bit < high_bit ? rank_bit : low_bit;
  for (;;) {
    const unsigned long long* ordered = block_radix_sort_descending<kStreamThreads / 32, kRowStreamMaxK / kStreamThreads>(
        buf.keys, buf.keys + kRowStreamMaxK, kRowStreamMaxK, count, from_bit, high_bit, buf.sh.hist);
    if (from_bit == low_bit) return ordered;
    unsigned long long* spare = ordered == buf.keys ? buf.keys + kRowStreamMaxK : buf.keys;
    const TieRuns ties = tie_runs_by_position(ordered, spare, count, rank_bit);
    if (ties == TieRuns::none) return ordered;
    if (ties == TieRuns::ordered) return spare;
    if (ordered != buf.keys)
      for (unsigned i = threadIdx.x; i < count; i += blockDim.x) buf.keys[i] = ordered[i];
    __syncthreads();
    from_bit = low_bit;
  }
}

// The block's keys[0, count) sorted best first (by_rank) or by ascending position, by the radix
// passes above kStreamBitonicMax keys when the buffer holds their scratch, else by buf.sort; returns
// where they ended (buf.keys or its other half). Every thread calls it; it ends with a barrier.
template <class T>
__device__ const unsigned long long* sort_kept(const StreamParams<T>& p, StreamBuffer& buf, unsigned count,
                                               bool by_rank) {
  using U = key_bits_t<T>;
  const StreamKey<8 * sizeof(U)> key_of(p.index_bits);
  unsigned size = p.k_pad;
  while (size < count) size *= 2;
  if (size > kStreamBitonicMax && p.capacity >= kStreamRadixEntries) {
    // By rank: every bit below the rank's top down to the position's lowest; by position: the
    // complemented position's bits alone. Of those, only the span of bits in which the keys
    // differ (the best keys share their sign and most of their exponent: a pass fewer).
    int low_bit = key_of.pos_shift, high_bit = by_rank ? 64 : key_of.pos_shift + p.index_bits;
    const unsigned long long span = (high_bit == 64 ? ~0ull : (1ull << high_bit) - 1) & ~((1ull << low_bit) - 1);
    const unsigned long long differ = buf.differing_bits(count) & span;
    high_bit = differ ? 64 - __clzll((long long)differ) : low_bit;
    low_bit = differ ? __ffsll((long long)differ) - 1 : low_bit;
    if constexpr (sizeof(U) == 4)
      return sort_output(buf, count, low_bit, high_bit, by_rank ? key_of.rank_shift : 0);
    else
      return block_radix_sort_descending<kStreamThreads / 32, kRowStreamMaxK / kStreamThreads>(
          buf.keys, buf.keys + kRowStreamMaxK, kRowStreamMaxK, count, low_bit, high_bit, buf.sh.hist);
  }
  buf.sort(count, size, [&](unsigned long long key) { return by_rank ? key : key_of.by_position(key); });
  return buf.keys;
}

// The block's k best keys, sorted (best first, or by ascending position), written as the row's
// output; places past a short row's values get value bits 0 and index -1. Argmax: k = 1 and at
// most one key, written as it is (the sorts' code cost the 16-bit argmax kernel 47 registers
// against 37 without; ptxas -v).
template <class T, bool Argmax = false>
__device__ void write_row(const StreamParams<T>& p, StreamBuffer& buf, std::size_t r, std::uint64_t begin,
                          unsigned count) {
  if constexpr (Argmax) {
    if (threadIdx.x == 0) write_place(p, r, begin, 0, count ? buf.keys[0] : 0ull);
    return;
  }
  const bool by_rank = p.options.sorted;
  // Best first: up to kRowStreamMaxK kept keys are sorted whole and the first k written; otherwise
  // the k best are kept first (docs/design/topk.md: why unsorted output does not take the sort).
  if (count > p.k && !(by_rank && count <= kRowStreamMaxK)) count = (buf.keep_best(count, p.k), p.k);
  const unsigned long long* ordered = sort_kept(p, buf, count, by_rank);
  for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, q < count ? ordered[q] : 0ull);
}

// One block per (segment, row of the launch chunk): the segment's k best, written as the row's
// output (one segment) or as its segment keys (several). Guess: the seed is guessed (stream_best).
// The 32-bit guess kernels are held to 3 blocks an SM (at most 85 registers): left to itself, ptxas
// gave them 64 registers and 24-40 bytes of spills once the output's sort took its rank bits first
// (held: 72-80 registers, no spills). Minimum 0: the others as ptxas chooses.
template <class T, bool Argmax, bool Guess = false>
__global__ void __launch_bounds__(kStreamThreads, sizeof(T) == 4 && Guess ? 3 : 0) row_stream(StreamParams<T> p) {
  using U = key_bits_t<T>;
  extern __shared__ unsigned long long stream_keys[];
  __shared__ StreamShared sh;
  StreamBuffer buf{stream_keys, stream_keys + p.capacity, sh};
  const std::size_t r = p.row0 + blockIdx.y;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const std::uint64_t first = std::min<std::uint64_t>(length, blockIdx.x * p.segment_length);
  const std::uint64_t last = std::min<std::uint64_t>(length, first + p.segment_length);
  const ValueTiles<T> src(p.values + begin, first, last, p.options, p.index_bits);
  const unsigned count = stream_best<Argmax, Guess>(src, buf, p.k, p.compact_above);
  if (p.segments == 1) {
    write_row<T, Argmax>(p, buf, r, begin, count);
    return;
  }
  // Everything kept (no compaction here: the merge selects), 0 in the places left.
  unsigned long long* out = p.segment_keys + (std::uint64_t(r) * p.segments + blockIdx.x) * p.segment_slots;
  for (unsigned q = threadIdx.x; q < p.segment_slots; q += blockDim.x) out[q] = q < count ? buf.keys[q] : 0ull;
}

// One block per row of the launch chunk: the k best of the row's segment keys, written. Guess: the
// seed is guessed (stream_best; the segments' lists are long enough only for k > ~500).
template <class T, bool Argmax, bool Guess = false>
__global__ void __launch_bounds__(kStreamThreads) row_stream_merge(StreamParams<T> p) {
  using U = key_bits_t<T>;
  constexpr int W = 8 * sizeof(U);
  extern __shared__ unsigned long long stream_keys[];
  __shared__ StreamShared sh;
  StreamBuffer buf{stream_keys, stream_keys + p.capacity, sh};
  const std::size_t r = p.row0 + blockIdx.y;
  const std::uint64_t per_row = std::uint64_t(p.segments) * p.segment_slots;
  const KeyTiles<W> src{p.segment_keys + std::uint64_t(r) * per_row, per_row};
  const unsigned count = stream_best<Argmax, Guess>(src, buf, p.k, p.compact_above);
  write_row<T, Argmax>(p, buf, r, p.rows.begin(r), count);
}

}  // namespace radixmesh::detail::topk_gpu
