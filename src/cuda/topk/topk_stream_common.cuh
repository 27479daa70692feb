// What every kernel of the row-stream family (row-stream blocks and their merge, row-cluster,
// row-smem, row-warp) shares: the block and tile sizes, the composite keys (StreamKey) and ranks
// (StreamRank) they select on, their launch parameters (StreamParams), a block's shared state and
// the digit search over a 256-bin histogram. Design and measurements: docs/design/topk.md.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/runtime/cuda_check.hpp"
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
// The most dynamic shared memory a row-stream block takes (k = 1024): a tile above the compaction
// mark of 2 k, the head and tail, and the compaction's destination.
constexpr std::size_t kMaxStreamShared =
    (std::size_t(kStreamTile) + 2 * kRowStreamMaxK + kStreamHeadTail + stream_keep_entries(kRowStreamMaxK)) *
    sizeof(unsigned long long);

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
  // The ranks of two 16-bit values packed in a word (low half: the first), as rank_of_bits gives
  // them one at a time: the order-preserving encoding, then flip and shift, each half modulo 2^16.
  __device__ unsigned pair(unsigned raw2) const
    requires(sizeof(U) == 2)
  {
    unsigned e;
    if constexpr (key_traits<T>::is_float) {
      constexpr unsigned nan_count = (1u << key_traits<T>::mantissa_bits) - 1;  // float_encoding's
      e = __vsub2(raw2 ^ (0x80008000u | (((raw2 >> 15) & 0x00010001u) * 0x7fffu)), nan_count * 0x10001u);
    } else {
      e = raw2 ^ (unsigned(key_traits<T>::flip) * 0x10001u);
    }
    return __vadd2(e ^ (unsigned(this->flip) * 0x10001u), unsigned(this->shift) * 0x10001u);
  }
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

// The bits in which the block's keys are not all equal, from each thread's AND (`all`) and OR
// (`any`) of its own keys (into sh.all and sh.any). Every thread calls it; it ends with a barrier.
__device__ inline unsigned long long block_differing_bits(unsigned long long all, unsigned long long any,
                                                          StreamShared& sh) {
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

// One pass of a block's radix select: the 8-bit digit below bit `high` (not below `low`) of the
// need-th best key among those counted(i, key) names (i < count) that share `prefix` above `high`
// (every key while high = 64). Moves high down to the digit's lowest bit, appends the digit to
// prefix, takes the keys of the digits above it off need, and returns the keys in the digit's
// bucket. Every thread calls it; a barrier must separate it from the next pass, which rewrites
// sh.hist and the decision.
template <class Index, class Counted>
__device__ unsigned radix_select_pass(StreamShared& sh, Index count, Counted counted, int low, int& high,
                                      unsigned long long& prefix, unsigned& need) {
  const int shift = high - 8 > low ? high - 8 : low, width = high - shift;
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) sh.hist[b] = 0;
  __syncthreads();
  for (Index i = threadIdx.x; i < count; i += blockDim.x) {
    unsigned long long key;
    if (counted(i, key) && (high == 64 || (key >> high) == prefix))
      atomicAdd(&sh.hist[unsigned(key >> shift) & ((1u << width) - 1)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < 32) find_digit(sh.hist, need, sh);
  __syncthreads();
  const unsigned digit = sh.digit, above = sh.above, bucket = sh.bucket;
  need -= above;
  prefix = (high == 64 ? 0ull : prefix << width) | digit;
  high = shift;
  return bucket;
}

}  // namespace radixmesh::detail::topk_gpu
