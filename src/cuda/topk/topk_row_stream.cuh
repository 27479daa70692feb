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
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_common.cuh"
#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kStreamThreads = 256;
constexpr int kStreamSlots = 16;                              // values per thread per tile
constexpr int kStreamTile = kStreamThreads * kStreamSlots;    // 4096
constexpr std::uint32_t kRowStreamMaxK = 1024;
constexpr int kStreamHeadTail = 32;                           // unaligned head and tail (< 2 x 8 values)

// The compaction's destination, after the buffer: room for k and the ties a compaction on the way
// may keep (StreamBuffer::keep_best's limit, k + k / 4).
constexpr std::uint32_t stream_keep_entries(std::uint32_t k_pad) { return k_pad + k_pad / 4; }

// The composite key of a W-bit rank and a position below 2^IB: rank in the top W bits, then the
// complemented position in the next IB (no constant bits between them, so a radix select over
// the key never spends a pass on them), zeros below. Larger is better, no two values share a
// key, a later position loses a tie, and no key is 0 (positions stay below 2^IB - 1). Word is
// 64 bits, or 32 where W + IB fit (the row-warp queue of 16-bit values in rows below 2^16); the
// 32-bit key shifted to the top of 64 bits is the 64-bit key of the same value (widen).
template <int W, class Word = unsigned long long> struct StreamKey {
  static constexpr int bits = 8 * int(sizeof(Word));
  static_assert(W < bits);
  static constexpr int rank_shift = bits - W;
  int pos_shift;
  Word pos_mask;
  __device__ explicit StreamKey(int index_bits)
      : pos_shift(bits - W - index_bits), pos_mask(Word((1ull << index_bits) - 1)) {}
  template <class U> __device__ Word make(U rank, std::uint64_t pos) const {
    return (static_cast<Word>(rank) << rank_shift) | ((pos_mask - static_cast<Word>(pos)) << pos_shift);
  }
  __device__ static std::uint64_t rank(Word key) { return key >> rank_shift; }
  __device__ std::uint64_t position(Word key) const { return pos_mask - ((key >> pos_shift) & pos_mask); }
  // Larger for an earlier position: the unsorted output's order.
  __device__ Word by_position(Word key) const { return (key >> pos_shift) & pos_mask; }
  __device__ static unsigned long long widen(Word key) { return static_cast<unsigned long long>(key) << (64 - bits); }
};

// topk_rank without a branch per value (topk.hpp's TopkRankTransform), on raw bits.
template <class T> struct StreamRank : TopkRankTransform<T> {
  using U = key_bits_t<T>;
  using TopkRankTransform<T>::TopkRankTransform;
  __device__ U operator()(U raw) const { return this->rank_of_bits(raw); }
};

// Calls f(T{}) with the key type (16- and 32-bit types only).
template <class F> inline void with_stream_type(KeyType type, F&& f) {
  switch (type) {
    case KeyType::f32: f(float{}); break;
    case KeyType::i32: f(std::int32_t{}); break;
    case KeyType::u32: f(std::uint32_t{}); break;
    case KeyType::f16: f(half_t{}); break;
    case KeyType::bf16: f(bfloat16_t{}); break;
    case KeyType::i16: f(std::int16_t{}); break;
    default: f(std::uint16_t{}); break;
  }
}

// Everything the row-stream kernels read, by value.
template <class T> struct StreamParams {
  const key_bits_t<T>* values;
  RowsView rows;
  std::size_t row0;                 // the launch chunk's first row (blockIdx.y counts from it)
  std::uint32_t k, k_pad;           // k_pad: a power of two >= k (the sort's size)
  std::uint32_t capacity;           // buffer entries (>= kStreamTile + compact_above + kStreamHeadTail)
  std::uint32_t compact_above;      // compact after a tile that leaves more than this
  std::uint32_t segments;           // blocks per row (1: the block writes the output)
  std::uint64_t segment_length;     // values per segment (a multiple of 16)
  int index_bits;                   // positions are below 2^index_bits - 1 (StreamKey)
  TopkOptions options;
  unsigned long long* segment_keys; // rows x segments x segment_slots (segments > 1)
  std::uint32_t segment_slots;      // a segment's keys: compact_above (argmax: 1)
  key_bits_t<T>* out_values;
  void* out_indices;
  const void* input_indices;
  bool index64;
};

// The fields every row-stream launch takes from the problem as they are (the plan sets the rest).
template <class T> StreamParams<T> stream_params_of(const device::TopkProblem& pr) {
  using U = key_bits_t<T>;
  StreamParams<T> p{};
  p.values = static_cast<const U*>(pr.values);
  const std::uint64_t stride = pr.row_stride ? pr.row_stride : pr.row_length;
  p.rows = {pr.row_offsets, pr.row_offsets ? 0 : pr.row_length, pr.row_offsets ? 0 : stride};
  p.k = unsigned(pr.k);
  p.options = pr.options;
  p.out_values = static_cast<U*>(pr.out_values);
  p.out_indices = pr.out_indices;
  p.input_indices = pr.input_indices;
  p.index64 = pr.index_bytes == 8;
  return p;
}

// Calls f(params, device) with the problem's StreamParams of its key type and the current device:
// how every launch of the row-stream family starts.
template <class F> void with_stream_params(const device::TopkProblem& pr, F&& f) {
  with_stream_type(pr.type, [&](auto tag) {
    int device = 0;
    RXM_CUDA_CHECK(cudaGetDevice(&device));
    f(stream_params_of<decltype(tag)>(pr), device);
  });
}

// Shared state of one block (the buffer itself is dynamic shared memory).
struct StreamShared {
  unsigned hist[256];
  unsigned count, kept, digit, above, bucket;
  unsigned long long all, any, seed;
  unsigned long long warp_best[kStreamThreads / 32];
};

// Warp 0 of a block: the digit of a 256-bin histogram that holds the need-th best key, counted
// from the top (need <= the histogram's total), with the keys in the digits above it and in it,
// into sh.digit, sh.above and sh.bucket.
__device__ inline void find_digit(const unsigned* hist, unsigned need, StreamShared& sh) {
  const int lane = threadIdx.x;
  unsigned sum = 0;
  for (int j = 0; j < 8; ++j) sum += hist[255 - 8 * lane - j];
  unsigned inclusive = sum;
  for (int d = 1; d < 32; d *= 2) {
    const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  unsigned before = inclusive - sum;
  if (before < need && need <= inclusive)
    for (int j = 0; j < 8; ++j) {
      const unsigned b = 255 - 8 * lane - j, c = hist[b];
      if (before + c >= need) {
        sh.digit = b, sh.above = before, sh.bucket = c;
        break;
      }
      before += c;
    }
}

// Compactions of at most this many keys sort them (bitonic: ~45 barrier-separated steps at 1024)
// instead of radix-selecting (up to 8 passes of 4 barriers and contended shared atomics each).
constexpr unsigned kSortedKeepMax = 1024;

// ---- the block's buffer: exact compaction to the k best, sort, output.
struct StreamBuffer {
  unsigned long long* keys;  // capacity entries
  unsigned long long* keep;  // stream_keep_entries(k_pad) entries: the compaction's destination
  StreamShared& sh;

  // The bits in which keys[0, count) are not all equal (AND and OR over the block, into sh.all and
  // sh.any). Every thread calls it; it ends with a barrier.
  __device__ unsigned long long differing_bits(unsigned count) {
    unsigned long long all = ~0ull, any = 0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) all &= keys[i], any |= keys[i];
    for (int d = 16; d > 0; d /= 2) {
      all &= __shfl_xor_sync(0xffffffffu, all, d);
      any |= __shfl_xor_sync(0xffffffffu, any, d);
    }
    if (threadIdx.x == 0) sh.all = ~0ull, sh.any = 0;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) atomicAnd(&sh.all, all), atomicOr(&sh.any, any);
    __syncthreads();
    return sh.all ^ sh.any;
  }

  // Keeps the `k` largest of keys[0, count) (count > k) in keys[0, kept) (in order when sorted,
  // else in no order), sets sh.count = kept and returns the new threshold (a later key is taken
  // iff it is greater): the k-th key after a sort, or after a radix select the prefix every kept
  // key shares or exceeds, minus one. The radix select may stop once the bits at and above
  // `loose_below` are resolved and the keys sharing or exceeding that prefix number at most
  // `limit` (<= the `keep` area): then kept = that number, the k best and keys equal to the k-th
  // in those bits (ties of the k-th rank, for loose_below = the rank's lowest bit; their position
  // bits would take up to three more passes). Otherwise kept = k exactly (loose_below = 0).
  // Every thread calls it.
  __device__ unsigned long long keep_best(unsigned count, unsigned k, int loose_below = 0, unsigned limit = 0) {
    if (count <= kSortedKeepMax) {  // a bitonic sort is cheaper than radix passes here
      unsigned size = 1;
      while (size < count) size *= 2;
      sort(count, size, [](unsigned long long key) { return key; });
      if (threadIdx.x == 0) sh.count = k;
      const unsigned long long kth = keys[k - 1];
      __syncthreads();
      return kth;  // exact: a later key is taken iff it beats the k-th
    }
    // The leading bits every key shares are resolved without a pass.
    const unsigned long long differ = differing_bits(count);
    // Bits at and above `high` are resolved to `prefix`.
    int high = differ ? 64 - __clzll((long long)differ) : 0;
    unsigned long long prefix = high == 64 ? 0ull : sh.any >> high;
    unsigned need = k, bucket = 0;
    while (high > 0) {
      const int shift = high > 8 ? high - 8 : 0, width = high - shift;
      for (int b = threadIdx.x; b < 256; b += blockDim.x) sh.hist[b] = 0;
      __syncthreads();
      for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
        const unsigned long long key = keys[i];
        if (high == 64 || (key >> high) == prefix)
          atomicAdd(&sh.hist[unsigned(key >> shift) & ((1u << width) - 1)], 1u);
      }
      __syncthreads();
      if (threadIdx.x < 32) find_digit(sh.hist, need, sh);
      __syncthreads();
      const unsigned digit = sh.digit, above = sh.above;
      bucket = sh.bucket;
      need -= above;
      prefix = (high == 64 ? 0ull : prefix << width) | digit;
      high = shift;
      if (bucket == need || (high <= loose_below && k - need + bucket <= limit)) break;
      __syncthreads();  // sh.digit and the histogram are rewritten by the next pass
    }
    // Exactly k keys share or exceed the prefix (keys are distinct), or at most `limit`.
    const unsigned kept = k - need + bucket;
    if (threadIdx.x == 0) sh.kept = 0;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
      const unsigned long long key = keys[i];
      if (high == 64 ? true : (key >> high) >= prefix) {
        const unsigned at = atomicAdd(&sh.kept, 1u);
        if (at < kept) keep[at] = key;  // the guard is for safety
      }
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < kept; i += blockDim.x) keys[i] = keep[i];
    if (threadIdx.x == 0) sh.count = kept;
    const unsigned long long floor = high == 64 ? 0ull : prefix << high;
    __syncthreads();
    return floor ? floor - 1 : 0;
  }

  // Keys [0, count) sorted descending by `order(key)` over `size` places (a power of two; places
  // past count hold 0, which sorts last). Bitonic. Up to one key per thread, the steps whose pairs
  // lie 32 or more places apart go through shared memory with a barrier each and the rest of each
  // merge stage runs in registers, a warp per 32 keys exchanging by shuffles, with one barrier for
  // all of them (128 keys: 6 barriers instead of 28). Larger sorts keep a barrier per step: there
  // each thread would compute both sides of several pairs, and on a full GPU (4096 rows, k = 1024)
  // the extra instructions cost more than the barriers save (call AK: 929 against 753 us at
  // 4096 x 32000 bf16, while 1 x 128256 bf16 k = 50 went from 21 to 17 us).
  template <class Order> __device__ void sort(unsigned count, unsigned size, Order order) {
    for (unsigned i = count + threadIdx.x; i < size; i += blockDim.x) keys[i] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const unsigned shuffled_below = size <= blockDim.x ? 32 : 1;  // strides below this use shuffles
    for (unsigned block = 2; block <= size; block *= 2) {
      unsigned stride = block / 2;
      for (; stride >= shuffled_below; stride /= 2) {
        for (unsigned t = threadIdx.x; t < size / 2; t += blockDim.x) {
          const unsigned a = 2 * t - (t & (stride - 1)), b = a + stride;
          const unsigned long long x = keys[a], y = keys[b];
          const bool descending = (a & block) == 0;
          if (descending ? order(x) < order(y) : order(x) > order(y)) keys[a] = y, keys[b] = x;
        }
        __syncthreads();
      }
      // Strides below 32: every pair lies inside one aligned group of 32 places. Lanes past
      // `size` (size < 32) only lend their shuffles and write nothing back.
      if (stride == 0) continue;  // every step went through shared memory
      for (unsigned g = warp; g * 32 < size; g += warps) {
        const unsigned at = g * 32 + lane;
        unsigned long long x = at < size ? keys[at] : 0ull;
        const bool descending = (at & block) == 0;
        for (unsigned s = stride; s > 0; s /= 2) {
          const unsigned long long y = __shfl_xor_sync(0xffffffffu, x, s);
          const bool first = (lane & s) == 0;  // the pair's lower place: takes the better key when descending
          const bool y_before = order(y) > order(x);
          if (first == descending ? y_before : order(y) < order(x)) x = y;
        }
        if (at < size) keys[at] = x;
      }
      __syncthreads();
    }
  }
};

// ---- the sources a block streams: a segment of a row of values, or a row's segment keys.

// Which values of a 16-byte vector may rank at or above `bound`'s (its raw bits) in the direction
// asked: bit e for value e, from native comparisons, two 16-bit values per instruction, with NaN
// always let through and ties (+0 / -0 included) too, so nothing that ranks high enough is ever
// filtered out; the exact rank decides afterwards. Integer keys: every value.
template <class T> __device__ __forceinline__ unsigned reach_mask(const uint4& v, key_bits_t<T> bound, bool largest) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  unsigned mask = 0;
  if constexpr (std::is_same_v<T, float>) {
    const float t = __uint_as_float(bound);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float x = __uint_as_float(w[i]);
      mask |= unsigned(largest ? !(x < t) : !(x > t)) << i;
    }
  } else if constexpr (std::is_same_v<T, bfloat16_t> || std::is_same_v<T, half_t>) {
    using Pair = std::conditional_t<std::is_same_v<T, bfloat16_t>, __nv_bfloat162, __half2>;
    const unsigned tt = unsigned(bound) * 0x10001u;
    Pair t;
    memcpy(&t, &tt, 4);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      Pair x;
      memcpy(&x, &w[i], 4);
      const unsigned beyond = largest ? __hlt2_mask(x, t) : __hgt2_mask(x, t);  // 0xffff a half strictly beyond
      mask |= (((~beyond) & 1u) | (((~beyond) >> 15) & 2u)) << (2 * i);
    }
  } else {
    mask = (1u << (16 / sizeof(key_bits_t<T>))) - 1;
  }
  return mask;
}

// Whether any value of a 16-byte vector may rank at or above `bound`'s (reach_mask's test). For
// 16-bit values, on the vector's best pair: three NaN-propagating max (or min) instructions and
// one comparison instead of four comparisons; integer keys: always.
template <class T> __device__ __forceinline__ bool may_reach(const uint4& v, key_bits_t<T> bound, bool largest) {
  if constexpr (std::is_same_v<T, bfloat16_t> || std::is_same_v<T, half_t>) {
    using Pair = std::conditional_t<std::is_same_v<T, bfloat16_t>, __nv_bfloat162, __half2>;
    const unsigned tt = unsigned(bound) * 0x10001u;
    Pair t, x[4];
    memcpy(&t, &tt, 4);
    memcpy(x, &v, 16);
    if (largest) {
      const Pair best = __hmax2_nan(__hmax2_nan(x[0], x[1]), __hmax2_nan(x[2], x[3]));
      return __hlt2_mask(best, t) != 0xffffffffu;  // not both halves strictly below
    }
    const Pair best = __hmin2_nan(__hmin2_nan(x[0], x[1]), __hmin2_nan(x[2], x[3]));
    return __hgt2_mask(best, t) != 0xffffffffu;
  } else if constexpr (std::is_same_v<T, float>) {
    const float t = __uint_as_float(bound);
    const float a = __uint_as_float(v.x), b = __uint_as_float(v.y), c = __uint_as_float(v.z), d = __uint_as_float(v.w);
    return largest ? !(a < t && b < t && c < t && d < t) : !(a > t && b > t && c > t && d > t);
  } else {
    return true;
  }
}

// Values [first, last) of a row: unaligned head and tail values one per thread, the rest in tiles
// of 16-byte vectors.
template <class T> struct ValueTiles {
  using U = key_bits_t<T>;
  static constexpr int E = 16 / int(sizeof(U));  // values per vector
  static constexpr int V = kStreamSlots / E;     // vectors per thread per tile
  static constexpr int W = 8 * int(sizeof(U));
  struct Regs {
    uint4 v[V];
  };
  const U* row;
  std::uint64_t first, aligned, vectors, tail_first, last;  // positions within the row
  StreamRank<T> rank;
  StreamKey<W> key;
  bool largest;

  __device__ ValueTiles(const U* row_values, std::uint64_t f, std::uint64_t l, const TopkOptions& o, int index_bits)
      : row(row_values), first(f), last(l), rank(o), key(index_bits), largest(o.largest) {
    const auto address = reinterpret_cast<std::uintptr_t>(row + first);
    std::uint64_t head = ((16 - address % 16) % 16) / sizeof(U);
    if (head > last - first) head = last - first;
    aligned = first + head;
    vectors = (last - aligned) / E;
    tail_first = aligned + vectors * E;
  }
  __device__ std::uint64_t tiles() const { return (vectors + V * kStreamThreads - 1) / (V * kStreamThreads); }
  __device__ std::uint64_t size() const { return last - first; }
  // The head and tail values, at most kStreamHeadTail - 2: thread i takes the i-th.
  __device__ unsigned loose() const { return unsigned(aligned - first + last - tail_first); }
  __device__ unsigned long long loose_key(unsigned i) const {
    const unsigned head = unsigned(aligned - first);
    const std::uint64_t pos = i < head ? first + i : tail_first + (i - head);
    return key.make(rank(row[pos]), pos);
  }
  __device__ void load(Regs& r, std::uint64_t tile) const {
    const uint4* base = reinterpret_cast<const uint4*>(row + aligned);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const std::uint64_t vi = (tile * V + j) * kStreamThreads + threadIdx.x;
      if (vi < vectors) r.v[j] = __ldcs(base + vi);  // streamed once: evict first
    }
  }
  // put(key) for every value of the tile this thread loaded whose key is above `threshold`. A
  // vector whose values all rank below the threshold's rank costs a few native comparisons.
  // by_warp (16-bit floating-point values, compiled where MayByWarp): the vectors that may reach
  // it are ranked by the whole warp, 4 a round (lane l takes value l % 8 of the round's (l / 8)-th
  // such vector), instead of each lane ranking its own 8 values while the rest of the warp waits.
  // Where ~12 % of the vectors pass (a guessed seed at k = 1024 over 128256 values) nearly every
  // step of every warp has one, and the rounds are fewer than a lane's 8 values; where ~half pass
  // (short segments, by_warp_pays) the rounds are not. (32-bit values: 109 registers against 75,
  // so they keep the lane's own loop.)
  template <bool MayByWarp = false, class Put>
  __device__ void offer(const Regs& r, std::uint64_t tile, unsigned long long threshold, bool by_warp, Put&& put) const {
    const U min_rank = U(threshold >> StreamKey<W>::rank_shift);
    const U bound = rank.raw_of(min_rank);
    constexpr bool k16 = std::is_same_v<T, bfloat16_t> || std::is_same_v<T, half_t>;
    if constexpr (MayByWarp && k16) {
      if (by_warp) {
        static_assert(E == 8, "4 vectors of 8 values a round");
        const unsigned lane = threadIdx.x & 31, slot = lane / E, e = lane % E;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const std::uint64_t warp_vi = (tile * V + j) * kStreamThreads + (threadIdx.x - lane);  // lane 0's vector
          const bool may = warp_vi + lane < vectors && may_reach<T>(r.v[j], bound, largest);
          for (unsigned pending = __ballot_sync(0xffffffffu, may); pending;) {
            // The round's 4 lowest pending vectors: slot s takes the lowest bit left after clearing s.
            const unsigned p1 = pending & (pending - 1), p2 = p1 & (p1 - 1), p3 = p2 & (p2 - 1);
            const unsigned mine = slot == 0 ? pending : slot == 1 ? p1 : slot == 2 ? p2 : p3;
            const unsigned src = mine ? unsigned(__ffs(int(mine)) - 1) : 0u;
            const unsigned w0 = __shfl_sync(0xffffffffu, r.v[j].x, src), w1 = __shfl_sync(0xffffffffu, r.v[j].y, src);
            const unsigned w2 = __shfl_sync(0xffffffffu, r.v[j].z, src), w3 = __shfl_sync(0xffffffffu, r.v[j].w, src);
            if (mine) {
              const unsigned wi = e / 2;  // the 32-bit word that holds my value
              const unsigned word = wi & 2 ? (wi & 1 ? w3 : w2) : (wi & 1 ? w1 : w0);
              const U rk = rank(U(word >> (16 * (e & 1))));
              if (rk >= min_rank) {
                const unsigned long long k = key.make(rk, aligned + (warp_vi + src) * E + e);
                if (k > threshold) put(k);
              }
            }
            pending = p3 & (p3 - 1);
          }
        }
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const std::uint64_t vi = (tile * V + j) * kStreamThreads + threadIdx.x;
      if (vi >= vectors || !may_reach<T>(r.v[j], bound, largest)) continue;
      U lanes[E];
      memcpy(lanes, &r.v[j], 16);
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const U rk = rank(lanes[e]);
        if (rk >= min_rank) {
          const unsigned long long k = key.make(rk, aligned + vi * E + e);
          if (k > threshold) put(k);
        }
      }
    }
  }
  // The argmax's state: the best rank + 1 so far (0: none), its position, and its raw bits for
  // the vector filter. Ranks alone are compared: a thread's positions ascend, so a strictly larger
  // rank keeps the lowest position among equal values.
  struct Best {
    using Wide = std::conditional_t<(W < 32), unsigned, std::uint64_t>;
    Wide top = 0;
    std::uint64_t pos = 0;
    U bound = 0;
  };
  __device__ void fold_best(const Regs& r, std::uint64_t tile, Best& b) const {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const std::uint64_t vi = (tile * V + j) * kStreamThreads + threadIdx.x;
      if (vi >= vectors || (b.top && !may_reach<T>(r.v[j], b.bound, largest))) continue;
      U lanes[E];
      memcpy(lanes, &r.v[j], 16);
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const typename Best::Wide v = typename Best::Wide(rank(lanes[e])) + 1;
        if (v > b.top) b.top = v, b.pos = aligned + vi * E + e, b.bound = lanes[e];
      }
    }
  }
  __device__ unsigned long long key_of(const Best& b) const { return b.top ? key.make(U(b.top - 1), b.pos) : 0ull; }
};

// A row's segment keys (segments x segment_slots, 0 in the places a segment left empty).
template <int Width> struct KeyTiles {
  static constexpr int W = Width;
  struct Regs {
    unsigned long long v[kStreamSlots];
  };
  const unsigned long long* keys;
  std::uint64_t count;
  __device__ std::uint64_t tiles() const { return (count + kStreamTile - 1) / kStreamTile; }
  __device__ std::uint64_t size() const { return count; }
  __device__ unsigned loose() const { return 0; }
  __device__ unsigned long long loose_key(unsigned) const { return 0; }
  __device__ void load(Regs& r, std::uint64_t tile) const {
#pragma unroll
    for (int j = 0; j < kStreamSlots; ++j) {
      const std::uint64_t i = tile * kStreamTile + std::uint64_t(j) * kStreamThreads + threadIdx.x;
      r.v[j] = i < count ? keys[i] : 0ull;
    }
  }
  template <bool MayByWarp = false, class Put>
  __device__ void offer(const Regs& r, std::uint64_t, unsigned long long threshold, bool, Put&& put) const {
#pragma unroll
    for (int j = 0; j < kStreamSlots; ++j)
      if (r.v[j] > threshold) put(r.v[j]);
  }
  struct Best {
    unsigned long long key = 0;
  };
  __device__ void fold_best(const Regs& r, std::uint64_t, Best& b) const {
#pragma unroll
    for (int j = 0; j < kStreamSlots; ++j) b.key = r.v[j] > b.key ? r.v[j] : b.key;
  }
  __device__ unsigned long long key_of(const Best& b) const { return b.key; }
};

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
// 1.35-4.9 k keys above it, median 2.5 k, none below k in 200 rows; k = 256: m = 1, 2.5 % below k).
__device__ inline unsigned estimate_lanes(unsigned k, std::uint64_t values) {
  const float q = 1.5f * float(k) / float(values);
  const float reach = 1.f - __powf(1.f - q, float(kStreamSlots));
  return min(32u, max(1u, __float2uint_ru(32.f * reach)));  // rounded up: fewer rows stream again
}

// Whether the guessed pass over a segment of `values` ranks its 16-bit vectors by the whole warp
// (ValueTiles::offer): where about 1 vector in 5 or fewer passes the guess (call GQ, one H100:
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

// Streams `src` through the block's buffer. Afterwards keys[0, count) hold, in no order, at most
// compact_above keys among which are the min(k, seen) best; count is returned. Guess: the seed
// is a guess where guesses_seed says so, and a wrong guess streams `src` again (a kernel of its
// own: the second pass costs registers, 53 -> 57 for 16-bit keys and 64 -> 75 for 32-bit). Every
// thread calls it.
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
    // The seed, so that the first tile is filtered too: every warp's m-th best of its threads'
    // maxima over the first tile; the smallest of those leaves at least warps x m distinct values
    // at or above it. m = ceil(k / warps) makes it a bound (k <= 128); a guess takes
    // estimate_lanes. Shuffles only: no sort, one barrier.
    const bool guessed = Guess && guesses_seed(k, src.size());
    if (tiles && (guessed || k <= kStreamThreads / 2)) {
      constexpr unsigned kWarps = kStreamThreads / 32;
      typename Tiles::Best best;
      src.fold_best(cur, 0, best);
      const unsigned m = guessed ? estimate_lanes(k, src.size()) : (k + kWarps - 1) / kWarps;
      const unsigned long long mth = warp_mth_best(src.key_of(best), m);
      if (threadIdx.x == 0) buf.sh.seed = ~0ull;
      __syncthreads();
      if ((threadIdx.x & 31) == 0) atomicMin(&buf.sh.seed, mth);
      __syncthreads();
      threshold = buf.sh.seed ? buf.sh.seed - 1 : 0;  // the m-th keys themselves come again
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

// The block's k best keys, sorted (best first, or by ascending position), written as the row's
// output; places past a short row's values get value bits 0 and index -1.
template <class T>
__device__ void write_row(const StreamParams<T>& p, StreamBuffer& buf, std::size_t r, std::uint64_t begin,
                          unsigned count) {
  using U = key_bits_t<T>;
  const StreamKey<8 * sizeof(U)> key_of(p.index_bits);
  const bool by_rank = p.options.sorted;
  // Best first: up to kSortedKeepMax kept keys are sorted whole and the first k written.
  if (count > p.k && !(by_rank && count <= kSortedKeepMax)) count = (buf.keep_best(count, p.k), p.k);
  unsigned size = p.k_pad;
  while (size < count) size *= 2;
  const unsigned long long* ordered = buf.keys;
  if (size > kStreamBitonicMax && p.capacity >= kStreamRadixEntries) {
    // By rank: every bit below the rank's top down to the position's lowest; by position: the
    // complemented position's bits alone. Of those, only the span of bits in which the keys
    // differ (the best keys share their sign and most of their exponent: a pass fewer).
    int low_bit = key_of.pos_shift, high_bit = by_rank ? 64 : key_of.pos_shift + p.index_bits;
    const unsigned long long span = (high_bit == 64 ? ~0ull : (1ull << high_bit) - 1) & ~((1ull << low_bit) - 1);
    const unsigned long long differ = buf.differing_bits(count) & span;
    high_bit = differ ? 64 - __clzll((long long)differ) : low_bit;
    low_bit = differ ? __ffsll((long long)differ) - 1 : low_bit;
    ordered = block_radix_sort_descending<kStreamThreads / 32, kRowStreamMaxK / kStreamThreads>(
        buf.keys, buf.keys + kRowStreamMaxK, kRowStreamMaxK, count, low_bit, high_bit, buf.sh.hist);
  } else {
    buf.sort(count, size, [&](unsigned long long key) { return by_rank ? key : key_of.by_position(key); });
  }
  for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, q < count ? ordered[q] : 0ull);
}

// One block per (segment, row of the launch chunk): the segment's k best, written as the row's
// output (one segment) or as its segment keys (several). Guess: the seed is guessed (stream_best).
template <class T, bool Argmax, bool Guess = false>
__global__ void __launch_bounds__(kStreamThreads) row_stream(StreamParams<T> p) {
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
    write_row(p, buf, r, begin, count);
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
  write_row(p, buf, r, p.rows.begin(r), count);
}

}  // namespace radixmesh::detail::topk_gpu
