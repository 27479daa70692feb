// The row-warp variant of the row-stream family: one warp per row, for many rows with a small k
// (2 <= k <= kRowWarpMaxK: LLM sampling batches at k = 50). Design and measurements:
// docs/design/topk.md, "The row-warp variant".
//
// A warp streams its row in steps of kWarpVectors 16-byte vectors a lane, through a ring of
// kWarpStages steps in shared memory filled by cp.async (no registers held by loads in flight:
// the next two steps land while one is filtered), and keeps the 32 L best keys so far
// (StreamKey: rank, then complemented position; larger is better, no two equal; 32-bit words for
// 16-bit values in rows below 2^16, halving every shuffle and compare of the merges) in registers,
// sorted descending over the whole warp: the queue, element i * 32 + lane in lane `lane`'s slot i.
// A value is a candidate iff its key beats the threshold: the queue's k-th, or the seed taken
// from the first step until the queue holds k keys (every key is above 0). A vector's values are
// first compared natively with the threshold's value (reach_mask), and only those that may reach
// it are ranked; a lane appends its candidates to the warp's buffer in shared memory on its own (a
// shared atomic each); after a vector that had any, every 32 waiting are sorted
// ascending by shuffles and merged into the queue: the queue's last slot takes the larger of
// itself and the candidate facing it, which leaves a bitonic sequence (the queue's first 32 L - 32
// keys, descending, are each at least every key of its last slot; the candidates that win take
// the end, ascending), and one bitonic merge sorts it again. A random row sends about
// k ln(n / k) candidates (a few hundred); their merges and the row's start are what a warp spends
// beyond its read (docs/design/topk.md).
//
// There is no block barrier: rows are independent, and a warp past the last row returns at once.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/topk/topk_row_stream.cuh"
#include "radixmesh/device/multisplit/tile_copy.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kWarpRowThreads = 256;                    // 8 rows a block
constexpr int kWarpRowWarps = kWarpRowThreads / 32;
constexpr std::uint32_t kRowWarpMaxK = 128;             // a queue of 4 keys a lane
constexpr int kWarpVectors = 2;                         // 16-byte vectors a lane takes a step
constexpr unsigned kWarpStages = 3;                     // steps in the warp's ring: two in flight
constexpr int kWarpRowBlocksPerSm = 4;                  // 32 warps an SM: 4224 rows at once on an H200
constexpr int kWarpBufferKeys = 32 + 32 * 8;            // < 32 left over, and one vector's worth of every lane

// The warp's queue of 32 L keys (see above). Every lane of the warp calls every member.
template <int L, class Word> struct WarpQueue {
  static_assert(L == 1 || L == 2 || L == 4);
  Word q[L] = {};

  // The queue sorted again after slot L - 1 took the better of itself and the ascending
  // candidates: a bitonic merge, descending. Strides of 32 and more pair slots of one lane.
  __device__ void merge_bitonic() {
    const unsigned lane = threadIdx.x & 31;
    // Slot strides spelled out (L <= 4): a loop over them leaves the queue in local memory.
    auto exchange = [&](Word& a, Word& b) {
      const Word x = a, y = b;
      a = x > y ? x : y, b = x > y ? y : x;
    };
    if constexpr (L == 4) exchange(q[0], q[2]), exchange(q[1], q[3]), exchange(q[0], q[1]), exchange(q[2], q[3]);
    if constexpr (L == 2) exchange(q[0], q[1]);
#pragma unroll
    for (int s = 16; s > 0; s /= 2)
#pragma unroll
      for (int i = 0; i < L; ++i) {
        const Word y = __shfl_xor_sync(0xffffffffu, q[i], s);
        const bool lower = (lane & s) == 0;  // keeps the larger
        q[i] = lower ? (y > q[i] ? y : q[i]) : (y < q[i] ? y : q[i]);
      }
  }

  // 32 keys, one a lane, sorted ascending over the lanes (bitonic, by shuffles).
  __device__ static Word sort_ascending(Word x) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (int size = 2; size <= 32; size *= 2)
#pragma unroll
      for (int s = size / 2; s > 0; s /= 2) {
        const Word y = __shfl_xor_sync(0xffffffffu, x, s);
        const bool lower = (lane & s) == 0, ascending = (lane & size) == 0;
        x = lower == ascending ? (y < x ? y : x) : (y > x ? y : x);
      }
    return x;
  }

  // Merges 32 candidates, one a lane (0: none).
  __device__ void merge(Word x) {
    x = sort_ascending(x);
    q[L - 1] = x > q[L - 1] ? x : q[L - 1];
    merge_bitonic();
  }

  // Element j of the queue, on every lane.
  __device__ Word at(unsigned j) const {
    const unsigned slot = j / 32;
    Word v = q[0];
    if constexpr (L >= 2) v = slot == 1 ? q[1] : v;
    if constexpr (L == 4) v = slot == 2 ? q[2] : slot == 3 ? q[3] : v;
    return __shfl_sync(0xffffffffu, v, int(j % 32));
  }
};

// Value e of a 16-byte vector of E values (e below E, not known at compile time), without an
// array in local memory.
template <class U> __device__ __forceinline__ U vector_value(const uint4& v, unsigned e) {
  constexpr unsigned E = 16 / sizeof(U);
  const unsigned word_index = E == 4 ? e : e / 2;
  const unsigned word = word_index & 2 ? (word_index & 1 ? v.w : v.z) : (word_index & 1 ? v.y : v.x);
  return E == 4 ? U(word) : U(word >> (16 * (e & 1)));
}

// One warp per row of the launch chunk: the row's k best, written (best first, or by position).
// Word: the queue's keys (unsigned long long, or unsigned where the rank and position fit).
template <class T, int L, class Word>
__global__ void __launch_bounds__(kWarpRowThreads, kWarpRowBlocksPerSm) row_warp(StreamParams<T> p, std::size_t rows) {
  using U = key_bits_t<T>;
  constexpr int E = 16 / int(sizeof(U));  // values per vector
  constexpr int W = 8 * int(sizeof(U));
  __shared__ Word buffers[kWarpRowWarps][kWarpBufferKeys];
  __shared__ unsigned counts[kWarpRowWarps];
  __shared__ uint4 rings[kWarpRowWarps][kWarpStages][kWarpVectors][32];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::size_t r = p.row0 + std::size_t(blockIdx.x) * kWarpRowWarps + warp;
  if (r >= rows) return;
  Word* buffer = buffers[warp];
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const U* row = p.values + begin;
  const StreamRank<T> rank(p.options);
  using Key = StreamKey<W, Word>;
  const Key key(p.index_bits);
  const bool largest = p.options.largest;

  // Unaligned head and tail values (fewer than 2 E), then the aligned vectors.
  std::uint64_t head = ((16 - reinterpret_cast<std::uintptr_t>(row) % 16) % 16) / sizeof(U);
  if (head > length) head = length;
  const unsigned vectors = unsigned((length - head) / E);  // the family's rows are below 2^31 values
  const std::uint64_t tail_first = head + std::uint64_t(vectors) * E;
  const unsigned loose = unsigned(head + length - tail_first);

  WarpQueue<L, Word> queue;
  Word threshold = 0;  // a key is a candidate iff it is greater: the queue's k-th
  U min_rank = 0, bound = rank.raw_of(0);
  // A lane appends its candidates on its own (one shared atomic each: rare once the threshold
  // nears the k-th); the warp merges whenever 32 or more wait.
  unsigned& count = counts[warp];
  if (lane == 0) count = 0;
  __syncwarp();
  auto offer = [&](U raw, std::uint64_t pos) {
    const U rk = rank(raw);
    if (rk < min_rank) return;
    const Word k = key.make(rk, pos);
    if (k > threshold) buffer[atomicAdd(&count, 1u)] = k;
  };
  auto drain = [&](bool all) {
    __syncwarp();
    unsigned n = count;
    if (n < 32 && !(all && n > 0)) return;
    while (n >= 32 || (all && n > 0)) {
      const unsigned from = n >= 32 ? n - 32 : 0;
      const Word x = from + lane < n ? buffer[from + lane] : Word(0);
      queue.merge(x);
      n = from;
    }
    const Word kth = queue.at(p.k - 1);
    threshold = kth > threshold ? kth : threshold;  // the seed may be higher until k keys came
    min_rank = U(threshold >> Key::rank_shift);
    bound = rank.raw_of(min_rank);
    __syncwarp();
    if (lane == 0) count = n;
    __syncwarp();
  };

  if (lane < loose) {
    const std::uint64_t pos = lane < head ? lane : tail_first + (lane - head);
    offer(row[pos], pos);
  }
  drain(false);

  namespace copy = ::radixmesh::device::multisplit_detail;
  const uint4* base = reinterpret_cast<const uint4*>(row + head);
  constexpr unsigned kStep = 32 * kWarpVectors;  // vectors a warp step takes
  const unsigned steps = unsigned((vectors + kStep - 1) / kStep);
  auto (&ring)[kWarpStages][kWarpVectors][32] = rings[warp];
  // Step s's copies into ring slot s % kWarpStages, one group (empty past the last step: every
  // step then waits for the same count). A lane reads back only what it copied: no warp barrier.
  auto start = [&](unsigned step, unsigned slot) {
    if (step < steps)
#pragma unroll
      for (int j = 0; j < kWarpVectors; ++j) {
        const unsigned vi = step * kStep + unsigned(j) * 32 + lane;
        if (vi < vectors) copy::copy_async_16(&ring[slot][j][lane], base + vi);
      }
    copy::copy_async_commit();
  };
#pragma unroll
  for (int s = 0; s + 1 < kWarpStages; ++s) start(unsigned(s), unsigned(s));
  // The seed, so that the first step is filtered too: every lane's m-th best key of the first step
  // (m = ceil(k / 32) <= L), and the c-th largest of those over the warp (c = ceil(k / m)): c
  // lanes hold m keys each at or above it, so at least k distinct keys do, and every winner is
  // at least it. The first step's values come again through the filter.
  if (steps) {
    copy::copy_async_wait<kWarpStages - 2>();  // step 0's group
    Word best[L] = {};                         // this lane's L best, descending
#pragma unroll
    for (int j = 0; j < kWarpVectors; ++j) {
      const unsigned vi = unsigned(j) * 32 + lane;
      if (vi >= vectors) continue;
      const uint4 v = ring[0][j][lane];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        Word x = key.make(rank(vector_value<U>(v, unsigned(e))), head + std::uint64_t(vi) * E + e);
#pragma unroll
        for (int i = 0; i < L; ++i) {
          const Word b = best[i];
          best[i] = x > b ? x : b, x = x > b ? b : x;
        }
      }
    }
    const unsigned m = (p.k + 31) / 32, c = (p.k + m - 1) / m;
    Word mth = best[0];
    if constexpr (L >= 2) mth = m == 2 ? best[1] : mth;
    if constexpr (L == 4) mth = m == 3 ? best[2] : m == 4 ? best[3] : mth;
    const Word seed = __shfl_sync(0xffffffffu, WarpQueue<L, Word>::sort_ascending(mth), int(32 - c));
    if (seed > threshold + 1) {
      threshold = seed - 1;
      min_rank = U(threshold >> Key::rank_shift);
      bound = rank.raw_of(min_rank);
    }
  }
  unsigned slot = 0;  // step % kWarpStages
  for (unsigned step = 0; step < steps; ++step, slot = slot + 1 == kWarpStages ? 0 : slot + 1) {
    start(step + kWarpStages - 1, slot == 0 ? kWarpStages - 1 : slot - 1);
    copy::copy_async_wait<kWarpStages - 1>();
#pragma unroll
    for (int j = 0; j < kWarpVectors; ++j) {
      const unsigned vi = step * kStep + unsigned(j) * 32 + lane;
      const uint4 v = vi < vectors ? ring[slot][j][lane] : uint4{};
      // 16-bit values: the vector's best pair first (may_reach), the mask only where it may reach
      // (call EH: 4096 x 128256 bf16 k = 50 336 -> 306 us); 32-bit: the mask at once (four
      // comparisons either way; call EH: 4096 x 32000 f32 168 -> 182 with the test first).
      const unsigned reach =
          vi < vectors && (sizeof(U) == 4 || may_reach<T>(v, bound, largest)) ? reach_mask<T>(v, bound, largest) : 0u;
      if (!__any_sync(0xffffffffu, reach != 0)) continue;
      for (unsigned m = reach; m; m &= m - 1) {
        const unsigned e = unsigned(__ffs(int(m))) - 1;
        offer(vector_value<U>(v, e), head + std::uint64_t(vi) * E + e);
      }
      drain(false);
    }
  }
  copy::copy_async_wait<0>();  // the empty groups past the last step
  drain(true);

  // Best first: the queue's order. By position: its first k sorted again in the buffer, now free.
  if (p.options.sorted) {
#pragma unroll
    for (int i = 0; i < L; ++i) {
      const unsigned place = unsigned(i) * 32 + lane;
      if (place < p.k) write_place(p, r, begin, place, Key::widen(queue.q[i]));
    }
    return;
  }
  constexpr unsigned size = 32 * L;
#pragma unroll
  for (int i = 0; i < L; ++i) {
    const unsigned place = unsigned(i) * 32 + lane;
    buffer[place] = place < p.k ? queue.q[i] : Word(0);  // 0: none, last
  }
  __syncwarp();
  for (unsigned block = 2; block <= size; block *= 2)
    for (unsigned stride = block / 2; stride > 0; stride /= 2) {
      for (unsigned t = lane; t < size / 2; t += 32) {
        const unsigned a = 2 * t - (t & (stride - 1)), b = a + stride;
        const Word x = buffer[a], y = buffer[b];
        const std::uint64_t ox = key.by_position(x), oy = key.by_position(y);  // larger: earlier
        if ((a & block) == 0 ? ox < oy : ox > oy) buffer[a] = y, buffer[b] = x;  // descending blocks first
      }
      __syncwarp();
    }
  for (unsigned place = lane; place < p.k; place += 32) write_place(p, r, begin, place, Key::widen(buffer[place]));
}

}  // namespace radixmesh::detail::topk_gpu
