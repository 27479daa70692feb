// The sources a row-stream block reads in tiles: a segment of a row of values (ValueTiles: 16-byte
// vectors, filtered by native comparisons before any rank is computed) or a row's segment keys
// (KeyTiles, for the merge of segments). Design and measurements: docs/design/topk.md.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/topk/topk_stream_common.cuh"

namespace radixmesh::detail::topk_gpu {

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
  // (short segments, by_warp_pays) the rounds are not. (32-bit values keep the lane's own loop:
  // ranked by the warp, their guess kernel took 112 registers against 75.)
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

}  // namespace radixmesh::detail::topk_gpu
