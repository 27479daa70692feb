// radixmesh/device/multisplit.cuh — device-level multisplit for users who compose their own code.
//
//   std::size_t temp_bytes = 0;
//   radixmesh::device::multisplit(nullptr, temp_bytes, keys_in, keys_out, n, bucket_fn, m, offsets, stream);
//   ... allocate temp_bytes ...
//   radixmesh::device::multisplit(temp, temp_bytes, keys_in, keys_out, n, bucket_fn, m, offsets, stream);
//
// CUB's contract: stream-ordered, no allocation, no synchronization; the first call (temp ==
// nullptr) only writes temp_bytes. bucket_fn is any functor with a __device__
// `std::uint32_t operator()(K) const`, passed by value to the kernels. Stable. 1 <= m <= 65536,
// n < 2^32, keys of 1/2/4/8 bytes, values of 4 or 8 bytes (moved as raw bits). bucket_offsets
// (device, m + 1 entries, or nullptr) gets each bucket's start and n. Inputs and outputs must not
// overlap. Ids >= m go to bucket m - 1; when bad_index (device, 1 word) is given, the smallest
// index of such a key is written there (~0 when none): the checked mode.
//
// Design (paper §4.6 skeleton; Hopper-sized): three launches per pass.
//  1. upsweep: one block per chunk of tiles reads the keys once with 16-byte loads and counts ids
//     (m <= 32: the paper's Alg. 2, five ballots per 32 keys and lane b counting bucket b in a
//     register; m > 32: one shared-memory atomic per key into per-warp histogram copies),
//     writing one column of the bucket-major count matrix H (m x chunks).
//  2. exclusive scan of H (CUB DeviceScan): each chunk's start in every bucket.
//  3. downsweep: each block walks its chunk tile by tile (4096 keys of 4 bytes), the next tile
//     streaming into a second shared-memory buffer (16-byte cp.async) while this one is worked
//     on; every warp ranks its keys window by window (§5.4: one ballot per id bit gives each lane
//     its peers; all lanes of an id bump the warp's shared counter with the same value, §5.5);
//     a block-wide bucket-major scan of the warp counters gives every key its slot in the tile
//     sorted by id; keys (and values) are reordered in shared memory (§4.7, §5.6) and written
//     out in tile order, so runs of one bucket land as contiguous, coalesced stores.
//     Variants: the kernel is a template on the id class, 5 bits (m <= 32) or 8 bits (m <= 256),
//     so the ballots unroll with no run-time test.
// Reading keys twice plus writing them once is the 12 B/key floor the paper counts; the chunk
// size keeps H (written once, scanned, read once) to about 1/32 of the key traffic. A single pass
// with decoupled look-back would move the same 12 B/key (it too needs every bucket's total before
// it writes, so a histogram pass), see src/cuda/multisplit/NOTES.md.
// m <= 256 is one pass. 256 < m <= 4096: two stable passes over 6-bit digits of the id (low,
// then high: LSD) through a scratch copy, plus the counting pass over the full id for the
// offsets (and the checked mode). m > 4096 (to 65536): two passes over 8-bit digits, offsets
// from a histogram with warp-aggregated global atomics. Splitter functors (has_lookup_table)
// are searched in shared memory: each block copies the boundaries there first (up to 32 KB).
// Measured on an H200, 2^28 u32 keys, uniform (bench_multisplit; CUB or RB-sort in the same run;
// floor 0.77 ms keys, 1.28 ms pairs at 4.19 TB/s), at 34e23fd:
//   radix m = 2 keys 1.24 ms (CUB 1.42), m = 32 1.46 (CUB 1.47), m = 256 2.08 (CUB 1.51),
//   pairs m = 256 3.89 (CUB 2.29), delta m = 256 2.48 (RB-sort 3.06), m = 4096 keys 3.09
//   (CUB 2.71; session 1: 10.3 in one pass), pairs 4.48 (CUB 4.19). Counting pass 0.27 ms at
//   m = 256, 0.55 at m <= 32, 0.39 at m = 4096. The m = 256 scatter pass (1.8 ms) is latency-bound
//   on its per-window shared-memory counter updates (ncu: issue 42 %, bank conflicts on half the
//   shared wavefronts); see src/cuda/multisplit/NOTES.md for the budget, variants and evidence.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cub/device/device_scan.cuh>

#include "radixmesh/buckets.hpp"

namespace radixmesh::device {

namespace multisplit_detail {

constexpr int block_threads = 256;
constexpr int block_warps = block_threads / 32;
constexpr int max_id_bits = 8;
constexpr std::uint32_t max_one_pass_buckets = 1u << max_id_bits;  // see the header comment

template <class K> constexpr int items_per_thread = sizeof(K) == 8 ? 8 : 16;
template <class K> constexpr int tile_keys = block_threads * items_per_thread<K>;

template <int Bytes> struct raw_of;
template <> struct raw_of<4> { using type = std::uint32_t; };
template <> struct raw_of<8> { using type = std::uint64_t; };

// Everything one pass needs. The id of a key is (min(f(key), m_full - 1) >> id_shift) & id_mask,
// in [0, m): the whole id for one pass, one byte of it for each of the two passes of a large m.
template <class K, class F> struct Pass {
  const K* keys_in;
  K* keys_out;
  const void* values_in;
  void* values_out;
  std::uint32_t n;
  F bucket_fn;
  std::uint32_t m_full;
  int id_shift;
  std::uint32_t id_mask;
  std::uint32_t m;
  std::uint32_t tiles_per_chunk;
  std::uint32_t num_chunks;
  std::uint32_t* counts;  // H, bucket-major: counts[b * num_chunks + chunk]
  unsigned long long* bad_index;
  bool vector_loads;  // inputs 16-byte aligned
  bool match_any;     // rank with __match_any_sync instead of ballots
  std::uint32_t table_bytes = 0;  // the functor's lookup table, copied to shared memory (0: not)

  // fn: bucket_fn, or its copy reading the lookup table in shared memory.
  __device__ __forceinline__ std::uint32_t id_of(const F& fn, K key, std::uint32_t index, bool valid) const {
    std::uint32_t raw = fn(key);
    if (raw >= m_full) {
      if (bad_index != nullptr && valid) atomicMin(bad_index, (unsigned long long)index);
      raw = m_full - 1;
    }
    return (raw >> id_shift) & id_mask;
  }
};

// Bucket functors with a lookup table (splitters: buckets::splitters, the host API's runtime
// functor) expose table(), table_bytes() and with_table(copy); the kernels copy the table to
// shared memory once per block and search it there (paper §7.3), when it fits.
template <class F>
concept has_lookup_table = requires(const F& f, const void* copy) {
  { f.table() } -> std::convertible_to<const void*>;
  { f.table_bytes() } -> std::convertible_to<std::size_t>;
  { f.with_table(copy) } -> std::convertible_to<F>;
};
constexpr std::size_t max_shared_table_bytes = 32 * 1024;  // 4095 splitters of 8 bytes

__host__ __device__ constexpr std::size_t align16(std::size_t x) { return (x + 15) & ~std::size_t(15); }

// Bytes of F's lookup table that the kernels would stage (0 for none, or too large: then the
// functor reads its table where it is).
template <class F> std::uint32_t lookup_table_bytes(const F& f) {
  if constexpr (has_lookup_table<F>) {
    const std::size_t bytes = f.table_bytes();
    return bytes <= max_shared_table_bytes ? std::uint32_t(bytes) : 0;
  } else {
    return 0;
  }
}

// Copies the functor's table to `shared` (the whole block; the caller syncs before use) and
// returns the functor reading that copy; F itself when nothing is staged.
template <class F> __device__ __forceinline__ F with_shared_table(const F& f, std::uint32_t bytes, void* shared) {
  if constexpr (has_lookup_table<F>) {
    if (bytes != 0) {
      const void* table = f.table();
      if (reinterpret_cast<std::uintptr_t>(table) % 4 == 0 && bytes % 4 == 0) {
        const auto* src = static_cast<const std::uint32_t*>(table);
        auto* dst = static_cast<std::uint32_t*>(shared);
        for (std::uint32_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) dst[i] = src[i];
      } else {
        const auto* src = static_cast<const unsigned char*>(table);
        auto* dst = static_cast<unsigned char*>(shared);
        for (std::uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
      }
      return f.with_table(shared);
    }
  }
  return f;
}

// The ballot of "bit `bit_mask` of id is set", inverted on lanes where it is not set: ANDed over
// the id's bits this leaves the lanes with the same id (§5.4). Five PTX instructions, the AND
// at the call site included (as in CUB's MatchAny).
__device__ __forceinline__ std::uint32_t same_bit_lanes(std::uint32_t id, std::uint32_t bit_mask) {
  std::uint32_t mask;
  asm("{\n\t.reg .pred p;\n\tand.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
      "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t@!p not.b32 %0, %0;\n\t}"
      : "=r"(mask)
      : "r"(id), "r"(bit_mask));
  return mask;
}

// Lanes whose id equals this lane's: IdBits ballots, unrolled with no branch (the id class is a
// template argument: ids below 2^IdBits have zeros above their bit width, whose ballots are
// empty and AND in as all-ones), or one __match_any_sync (the `match_any` tuning switch, a
// warp-uniform branch; which is faster is measured by bench_multisplit).
template <int IdBits> __device__ __forceinline__ std::uint32_t warp_peers(std::uint32_t id, bool match_any) {
  if (match_any) return __match_any_sync(0xFFFFFFFFu, id);
  std::uint32_t peers = 0xFFFFFFFFu;
#pragma unroll
  for (int bit = 0; bit < IdBits; ++bit) peers &= same_bit_lanes(id, 1u << bit);
  return peers;
}

// Internal tuning switches read at launch (bench_multisplit flips them to compare variants):
// rank with __match_any_sync instead of ballots; tile buffers of the scatter pass (0: the
// default per key/value width, 1 or 2 to force).
inline bool use_match_any = false;
inline int scatter_stages = 0;

__device__ __forceinline__ std::uint32_t lanes_below() {
  std::uint32_t mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

// Exclusive scan over the block's 256 threads; `total` gets the sum. Two barriers.
__device__ __forceinline__ std::uint32_t block_exclusive_scan(std::uint32_t x, std::uint32_t* warp_sums,
                                                              std::uint32_t& total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t inclusive = x;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const std::uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= d) inclusive += y;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  std::uint32_t before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < block_warps; ++w) {
    const std::uint32_t s = warp_sums[w];
    before += w < warp ? s : 0;
    total += s;
  }
  __syncthreads();
  return before + inclusive - x;
}

// Copies `valid` elements of a tile to shared memory: 16-byte loads when the tile is full and the
// input aligned (all loads issued before the stores), else one element per thread at a time.
template <int Bytes, int TileElems>
__device__ __forceinline__ void load_tile(const void* in, std::size_t base, std::uint32_t valid, bool vector_loads,
                                          void* shared) {
  static_assert(TileElems * Bytes % (16 * block_threads) == 0);
  if (vector_loads && valid == TileElems) {
    constexpr int vectors = TileElems * Bytes / 16 / block_threads;
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
    uint4 r[vectors];
#pragma unroll
    for (int i = 0; i < vectors; ++i) r[i] = src[i * block_threads + threadIdx.x];
    uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
    for (int i = 0; i < vectors; ++i) dst[i * block_threads + threadIdx.x] = r[i];
  } else {
    using T = typename raw_of<Bytes < 4 ? 4 : Bytes>::type;
    if constexpr (Bytes >= 4) {
      const T* src = static_cast<const T*>(in) + base;
      T* dst = static_cast<T*>(shared);
      for (std::uint32_t i = threadIdx.x; i < valid; i += block_threads) dst[i] = src[i];
    } else {
      const unsigned char* src = static_cast<const unsigned char*>(in) + base * Bytes;
      unsigned char* dst = static_cast<unsigned char*>(shared);
      for (std::uint32_t i = threadIdx.x; i < valid * Bytes; i += block_threads) dst[i] = src[i];
    }
  }
}

// Histogram copies of the counting pass for m > 32: warps share a copy round-robin, so
// same-bucket atomics of different warps rarely meet; at most 48 KB of shared memory.
__host__ __device__ inline std::uint32_t upsweep_copies(std::uint32_t m) {
  if (m <= 32) return 1;
  const std::uint32_t copies = 12288u / m;
  return copies < 1 ? 1 : (copies > block_warps ? block_warps : copies);
}

// 1. Counts per chunk: H[b * num_chunks + chunk]. Two tiles per step (8 independent 16-byte loads
// per thread in flight). m <= 32: Alg. 2 of the paper, lane b of each warp owns bucket b and adds
// popc(AND of the id-bit ballots) per window, in a register: no atomics, skew-proof. m > 32: one
// shared-memory atomic per key into the warp's histogram copy (ballots per key cost more).
template <class K, class F>
__global__ void __launch_bounds__(block_threads) upsweep_kernel(Pass<K, F> p) {
  extern __shared__ uint4 upsweep_shared[];  // the functor's table, then copies * m words
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, upsweep_shared);
  std::uint32_t* const bucket_count =
      reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(upsweep_shared) + align16(p.table_bytes));
  constexpr int items = 2 * items_per_thread<K>;
  constexpr int step = 2 * tile_keys<K>;
  constexpr int keys_per_vector = 16 / sizeof(K);
  const std::uint32_t copies = upsweep_copies(p.m);
  const bool small_m = p.m <= 32;
  for (std::uint32_t b = threadIdx.x; b < copies * p.m; b += block_threads) bucket_count[b] = 0;
  __syncthreads();
  const std::uint32_t chunk = blockIdx.x;
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t* my_copy = bucket_count + (warp % copies) * p.m;
  std::uint32_t lane_bucket_count = 0;
  // Alg. 2's selectors: all ones where bit i of the lane (its bucket) is clear, so that
  // vote ^ lane_select[i] keeps the lanes agreeing with bit i of this lane's bucket. Always five
  // ballots, unrolled: an id bit above the width of m - 1 is 0 on every lane, so its ballot leaves
  // buckets < m untouched and zeroes lanes >= m (session 1 tested id_bits per ballot at run time:
  // 0.61 ms for this pass at m <= 32 against 0.28 ms at m = 256).
  std::uint32_t lane_select[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) lane_select[i] = ((lane >> i) & 1u) - 1u;
  const std::size_t chunk_begin = std::size_t(chunk) * p.tiles_per_chunk * tile_keys<K>;
  std::size_t chunk_end = chunk_begin + std::size_t(p.tiles_per_chunk) * tile_keys<K>;
  if (chunk_end > p.n) chunk_end = p.n;
  auto count_key = [&](K key, std::uint32_t index, bool valid_key, bool all_valid) {
    const std::uint32_t id = p.id_of(fn, key, index, valid_key);
    if (small_m) {
      std::uint32_t match = all_valid ? 0xFFFFFFFFu : __ballot_sync(0xFFFFFFFFu, valid_key);
#pragma unroll
      for (int i = 0; i < 5; ++i) match &= __ballot_sync(0xFFFFFFFFu, (id >> i) & 1u) ^ lane_select[i];
      lane_bucket_count += __popc(match);
    } else if (valid_key) {
      atomicAdd(&my_copy[id], 1u);
    }
  };
  for (std::size_t base = chunk_begin; base < chunk_end; base += step) {
    const std::uint32_t valid = chunk_end - base < std::size_t(step) ? std::uint32_t(chunk_end - base) : std::uint32_t(step);
    if (p.vector_loads && valid == step) {
      constexpr int vectors = items / keys_per_vector;
      const uint4* src = reinterpret_cast<const uint4*>(p.keys_in + base);
      uint4 r[vectors];
#pragma unroll
      for (int i = 0; i < vectors; ++i) r[i] = src[i * block_threads + threadIdx.x];
#pragma unroll
      for (int i = 0; i < vectors; ++i) {
        K keys[keys_per_vector];
        memcpy(keys, &r[i], sizeof keys);
        const std::uint32_t first = std::uint32_t(base) + (i * block_threads + threadIdx.x) * keys_per_vector;
#pragma unroll
        for (int e = 0; e < keys_per_vector; ++e) count_key(keys[e], first + e, true, true);
      }
    } else {
      for (int j = 0; j < items; ++j) {  // uniform trip count: every lane reaches the ballots
        const std::uint32_t index = std::uint32_t(base) + j * block_threads + threadIdx.x;
        const bool valid_key = index < chunk_end;
        count_key(p.keys_in[valid_key ? index : base], index, valid_key, false);
      }
    }
  }
  if (small_m && lane < p.m) atomicAdd(&bucket_count[lane], lane_bucket_count);
  __syncthreads();
  for (std::uint32_t b = threadIdx.x; b < p.m; b += block_threads) {
    std::uint32_t total = 0;
    for (std::uint32_t c = 0; c < copies; ++c) total += bucket_count[c * p.m + b];
    p.counts[std::size_t(b) * p.num_chunks + chunk] = total;
  }
}

template <int ValueBytes> struct value_slot { using type = typename raw_of<ValueBytes>::type; };
template <> struct value_slot<0> { using type = std::uint32_t; };  // unused

// Shared memory of the scatter pass with `stages` tile buffers (2: the next tile streams in while
// this one is ranked and written), without the functor's table.
template <class K, int ValueBytes> constexpr std::size_t downsweep_shared_bytes(std::uint32_t m, int stages) {
  return std::size_t(tile_keys<K>) * (stages * (sizeof(K) + ValueBytes) + 2) +
         (std::size_t(block_warps) * m + 2 * std::size_t(m) + block_warps) * 4;
}

__device__ __forceinline__ void copy_async_16(void* shared, const void* global) {
  const unsigned address = unsigned(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Starts copying a tile into shared memory: asynchronous 16-byte copies (cp.async, no registers
// held) when full and aligned, else plain loads (the last tile of the input, or unaligned inputs).
template <int Bytes, int TileElems>
__device__ __forceinline__ void start_tile_copy(const void* in, std::size_t base, std::uint32_t valid, bool vector_loads,
                                                void* shared) {
  if (vector_loads && valid == TileElems) {
    constexpr int vectors = TileElems * Bytes / 16 / block_threads;
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
    uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
    for (int i = 0; i < vectors; ++i) copy_async_16(dst + i * block_threads + threadIdx.x, src + i * block_threads + threadIdx.x);
  } else {
    load_tile<Bytes, TileElems>(in, base, valid, false, shared);
  }
}

// Blocks per SM the scatter pass is built for: keys only 4 (<= 64 registers, two tile buffers,
// ~51 KB of shared memory for m = 256); pairs 2 (keys and values of a thread sit in registers
// while the tile is ranked; two tile buffers of keys and values). Pairs with one tile buffer (three
// blocks per SM) measured slower on the H200: 4.30 against 3.88 ms at m = 256, 2^28 pairs.
template <int ValueBytes> constexpr int downsweep_min_blocks = ValueBytes == 0 ? 4 : 2;
constexpr int default_scatter_stages = 2;

// 3. Stable scatter of each chunk; scanned_counts = exclusive scan of H. IdBits: the id class
// (5: m <= 32, 8: m <= 256), which fixes the ballots per window of 32 keys. Per tile: rank
// (ballots and per-warp counters, §5.4-5.5), scan the counters bucket-major, reorder the tile
// in shared memory by id (§4.7, §5.6), write it out in tile order.
template <class K, int ValueBytes, class F, int IdBits>
__global__ void __launch_bounds__(block_threads, downsweep_min_blocks<ValueBytes>)
    downsweep_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts, int stages) {
  using V = typename value_slot<ValueBytes>::type;
  constexpr int items = items_per_thread<K>;
  constexpr int tile = tile_keys<K>;
  extern __shared__ uint4 shared_raw[];
  // Layout: the functor's table, key buffers, value buffers (16-byte aligned sizes), then 32-bit
  // words, then 16-bit ids.
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, shared_raw);
  unsigned char* cursor = reinterpret_cast<unsigned char*>(shared_raw) + align16(p.table_bytes);
  K* const key_buffers = reinterpret_cast<K*>(cursor);  // buffer b at key_buffers + b * tile
  cursor += stages * tile * sizeof(K);
  V* const value_buffers = reinterpret_cast<V*>(cursor);
  cursor += stages * tile * ValueBytes;
  std::uint32_t* warp_count = reinterpret_cast<std::uint32_t*>(cursor);  // [warp * m + id]
  std::uint32_t* running = warp_count + block_warps * p.m;  // chunk's next global slot per id
  std::uint32_t* slot_shift = running + p.m;                // global slot - tile slot, per id
  std::uint32_t* warp_sums = slot_shift + p.m;
  std::uint16_t* slot_id = reinterpret_cast<std::uint16_t*>(warp_sums + block_warps);

  const std::uint32_t chunk = blockIdx.x;
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t* const my_count = warp_count + warp * p.m;
  for (std::uint32_t b = threadIdx.x; b < p.m; b += block_threads)
    running[b] = scanned_counts[std::size_t(b) * p.num_chunks + chunk];
  const std::size_t chunk_begin = std::size_t(chunk) * p.tiles_per_chunk * tile;
  auto tile_valid = [&](std::uint32_t t) -> std::uint32_t {
    const std::size_t base = chunk_begin + std::size_t(t) * tile;
    if (t >= p.tiles_per_chunk || base >= p.n) return 0;
    return p.n - base < std::size_t(tile) ? std::uint32_t(p.n - base) : std::uint32_t(tile);
  };
  auto start_copy = [&](std::uint32_t t, int buffer) {
    const std::size_t base = chunk_begin + std::size_t(t) * tile;
    const std::uint32_t valid = tile_valid(t);
    start_tile_copy<sizeof(K), tile>(p.keys_in, base, valid, p.vector_loads, key_buffers + buffer * tile);
    if constexpr (ValueBytes != 0)
      start_tile_copy<ValueBytes, tile>(p.values_in, base, valid, p.vector_loads, value_buffers + buffer * tile);
    copy_async_commit();
  };
  auto zero_counters = [&] {
    for (std::uint32_t i = threadIdx.x; i < block_warps * p.m; i += block_threads) warp_count[i] = 0;
  };
  if (tile_valid(0) > 0) start_copy(0, 0);
  for (std::uint32_t t = 0; t < p.tiles_per_chunk; ++t) {
    const std::uint32_t valid = tile_valid(t);
    if (valid == 0) break;
    const int buffer = stages == 2 ? int(t & 1) : 0;
    K* stage = key_buffers + buffer * tile;
    V* value_stage = value_buffers + buffer * tile;
    zero_counters();
    copy_async_wait_all();
    __syncthreads();
    if (stages == 2 && tile_valid(t + 1) > 0) start_copy(t + 1, buffer ^ 1);

    K keys[items];
    V values[items];
    std::uint32_t id_and_rank[items];  // id | rank among the warp's keys of its id << 16

    // Rank: warp w owns tile slots [w * 32 * items, (w + 1) * 32 * items), read in slot order as
    // `items` windows of 32; a key's rank among its warp's keys of the same id is the count
    // before its window (the warp counter) plus its peers on lower lanes. Windows go in pairs:
    // loads, ids and ballots of two windows are independent and interleave; only the counter
    // updates are ordered. Full tiles (all but the input's last) take a copy of the loop without
    // the validity ballots.
    auto rank_windows = [&](auto full_tile) {
      constexpr int group = 2;
#pragma unroll
      for (int first = 0; first < items; first += group) {
        std::uint32_t ids[group], peers[group];
        bool valid_key[group];
#pragma unroll
        for (int g = 0; g < group; ++g) {
          const int j = first + g;
          const std::uint32_t slot = warp * 32 * items + j * 32 + lane;
          keys[j] = stage[slot];  // past `valid` this is stale data of the buffer, ranked but never written
          if constexpr (ValueBytes != 0) values[j] = value_stage[slot];
          ids[g] = p.id_of(fn, keys[j], 0, false);
          peers[g] = warp_peers<IdBits>(ids[g], p.match_any);
          valid_key[g] = true;
          if constexpr (!decltype(full_tile)::value) {
            valid_key[g] = slot < valid;
            peers[g] &= __ballot_sync(0xFFFFFFFFu, valid_key[g]);
          }
        }
#pragma unroll
        for (int g = 0; g < group; ++g) {
          // Every lane of an id reads the warp's counter and stores the same new value (no
          // leader, no shuffle). The first __syncwarp orders all lanes' reads before any lane's
          // store (racecheck flags the read/write pair without it), the second this window's
          // stores before the next window's reads.
          const std::uint32_t before = my_count[ids[g]];
          __syncwarp();
          if (valid_key[g]) my_count[ids[g]] = before + __popc(peers[g]);
          id_and_rank[first + g] = ids[g] + ((before + __popc(peers[g] & lanes_below())) << 16);
          __syncwarp();
        }
      }
    };
    if (valid == tile) rank_windows(std::true_type{});
    else rank_windows(std::false_type{});
    __syncthreads();

    // Bucket-major scan of the warp counters: warp_count[w * m + b] becomes the tile slot of warp
    // w's first key of id b; slot_shift[b] maps tile slots of id b to global ones.
    std::uint32_t carry = 0;
    for (std::uint32_t first = 0; first < p.m; first += block_threads) {
      const std::uint32_t b = first + threadIdx.x;
      std::uint32_t total = 0;
      if (b < p.m) {
#pragma unroll
        for (int w = 0; w < block_warps; ++w) {
          const std::uint32_t c = warp_count[w * p.m + b];
          warp_count[w * p.m + b] = total;
          total += c;
        }
      }
      std::uint32_t round_total;
      const std::uint32_t start = carry + block_exclusive_scan(total, warp_sums, round_total);
      carry += round_total;
      if (b < p.m) {
#pragma unroll
        for (int w = 0; w < block_warps; ++w) warp_count[w * p.m + b] += start;
        slot_shift[b] = running[b] - start;
        running[b] += total;
      }
    }
    __syncthreads();

    // Reorder in shared memory (§4.7): the tile sorted by id, stable.
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint32_t slot = warp * 32 * items + j * 32 + lane;
      if (slot < valid) {
        const std::uint32_t id = id_and_rank[j] & 0xFFFFu;
        const std::uint32_t to = my_count[id] + (id_and_rank[j] >> 16);
        stage[to] = keys[j];
        if constexpr (ValueBytes != 0) value_stage[to] = values[j];
        slot_id[to] = std::uint16_t(id);
      }
    }
    __syncthreads();

    // Write in tile order: consecutive threads hold consecutive slots of one id most of the time.
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint32_t slot = j * block_threads + threadIdx.x;
      if (slot < valid) {
        const std::uint32_t to = slot_shift[slot_id[slot]] + slot;
        p.keys_out[to] = stage[slot];
        if constexpr (ValueBytes != 0) static_cast<V*>(p.values_out)[to] = value_stage[slot];
      }
    }
    __syncthreads();
    if (stages == 1 && tile_valid(t + 1) > 0) start_copy(t + 1, 0);
  }
}

// Offsets of a one-pass split: the first chunk's start in every bucket, and n. (A template only so
// that every translation unit including this header may define it.)
template <int Unused = 0>
__global__ void offsets_from_counts_kernel(const std::uint32_t* scanned_counts, std::uint32_t num_chunks,
                                           std::uint32_t m, std::uint32_t n, std::uint32_t* offsets) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < m) offsets[b] = num_chunks == 0 ? 0 : scanned_counts[std::size_t(b) * num_chunks];
  if (b == m) offsets[m] = n;
}

// Histogram of full ids for m > 4096 (warp-aggregated global atomics: skew-safe).
template <class K, class F>
__global__ void __launch_bounds__(block_threads) large_histogram_kernel(const K* keys, std::uint32_t n, F bucket_fn,
                                                                        std::uint32_t m, std::uint32_t* histogram) {
  for (std::size_t base = std::size_t(blockIdx.x) * block_threads; base < n;
       base += std::size_t(gridDim.x) * block_threads) {
    const std::size_t i = base + threadIdx.x;
    const bool valid = i < n;
    const std::uint32_t raw = valid ? bucket_fn(keys[i]) : 0;
    const std::uint32_t id = raw < m ? raw : m - 1;
    const std::uint32_t active = __ballot_sync(0xFFFFFFFFu, valid);
    const std::uint32_t peers = __match_any_sync(0xFFFFFFFFu, id) & active;
    if (valid && threadIdx.x % 32 == 31u - __clz(peers)) atomicAdd(&histogram[id], std::uint32_t(__popc(peers)));
  }
}

struct ChunkPlan {
  std::uint32_t tiles_per_chunk = 1, num_chunks = 0;
};

inline std::size_t align256(std::size_t x) { return (x + 255) & ~std::size_t(255); }

template <class K> ChunkPlan plan_chunks(std::size_t n, std::uint32_t m, int sm_count) {
  ChunkPlan plan;
  const std::size_t tiles = (n + tile_keys<K> - 1) / tile_keys<K>;
  // At least 8 tiles per block while that leaves >= 8 blocks per SM: the scatter pass streams
  // the next tile in while it works on this one, which needs several tiles per block.
  while (plan.tiles_per_chunk < 8 && tiles / (2 * plan.tiles_per_chunk) >= std::size_t(8) * sm_count)
    plan.tiles_per_chunk *= 2;
  // Grow chunks while H is above 1/32 of the keys and there stay >= 4 chunks per SM.
  while (std::size_t(m) * ((tiles + plan.tiles_per_chunk - 1) / plan.tiles_per_chunk) * 32 > n &&
         (tiles + 2 * plan.tiles_per_chunk - 1) / (2 * plan.tiles_per_chunk) >= std::size_t(4) * sm_count &&
         plan.tiles_per_chunk < 256)
    plan.tiles_per_chunk *= 2;
  plan.num_chunks = std::uint32_t((tiles + plan.tiles_per_chunk - 1) / plan.tiles_per_chunk);
  return plan;
}

inline int bit_width(std::uint32_t x) {
  int bits = 0;
  while (x != 0) { ++bits; x >>= 1; }
  return bits;
}

// Temp storage of one pass: H, its scan, CUB's scan scratch.
template <class K> std::size_t one_pass_temp_bytes(std::size_t n, std::uint32_t m, int sm_count, std::size_t& cub_bytes) {
  const auto plan = plan_chunks<K>(n, m, sm_count);
  const std::size_t entries = std::size_t(m) * plan.num_chunks;
  cub_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<std::uint32_t*>(nullptr),
                                static_cast<std::uint32_t*>(nullptr), int(entries > 0 ? entries : 1));
  return 2 * align256(entries * 4 + 4) + align256(cub_bytes);
}

inline std::size_t max_shared_bytes() {
  int device = 0, bytes = 48 * 1024;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  return std::size_t(bytes);
}

inline int current_sm_count() {
  int device = 0, sms = 132;
  if (cudaGetDevice(&device) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

template <class K, int ValueBytes, class F>
cudaError_t run_one_pass(void* temp, const K* keys_in, K* keys_out, const void* values_in, void* values_out,
                         std::uint32_t n, F bucket_fn, std::uint32_t m_full, int id_shift, std::uint32_t id_mask,
                         std::uint32_t m, std::uint32_t* offsets, unsigned long long* bad_index, int sm_count,
                         cudaStream_t stream) {
  const auto plan = plan_chunks<K>(n, m, sm_count);
  const std::size_t entries = std::size_t(m) * plan.num_chunks;
  std::size_t cub_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<std::uint32_t*>(nullptr),
                                static_cast<std::uint32_t*>(nullptr), int(entries > 0 ? entries : 1));
  auto* counts = static_cast<std::uint32_t*>(temp);
  auto* scanned = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(temp) + align256(entries * 4 + 4));
  void* cub_temp = static_cast<unsigned char*>(temp) + 2 * align256(entries * 4 + 4);

  Pass<K, F> pass{keys_in, keys_out, values_in, values_out, n, bucket_fn, m_full, id_shift, id_mask, m,
                  plan.tiles_per_chunk, plan.num_chunks, counts, bad_index, false, false};
  // m <= 4: one __match_any_sync beats the id class's five ballots (H200, m = 2, 2^28 keys:
  // 1.24 against 1.41 ms); from m = 32 on the ballots win (1.45 against 2.17 ms).
  pass.match_any = use_match_any || m <= 4;
  pass.table_bytes = lookup_table_bytes(bucket_fn);
  pass.vector_loads = reinterpret_cast<std::uintptr_t>(keys_in) % 16 == 0 &&
                      (ValueBytes == 0 || reinterpret_cast<std::uintptr_t>(values_in) % 16 == 0);
  cudaError_t status = cudaSuccess;
  if (n > 0) {
    // The table goes to shared memory when the scatter pass still fits with it (one tile buffer).
    if (keys_out != nullptr &&
        downsweep_shared_bytes<K, ValueBytes>(m, 1) + align16(pass.table_bytes) > max_shared_bytes())
      pass.table_bytes = 0;
    const std::size_t upsweep_shared = align16(pass.table_bytes) + upsweep_copies(m) * m * 4;
    if (upsweep_shared > 48 * 1024 &&
        (status = cudaFuncSetAttribute(upsweep_kernel<K, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(upsweep_shared))) != cudaSuccess)
      return status;
    upsweep_kernel<K, F><<<plan.num_chunks, block_threads, upsweep_shared, stream>>>(pass);
    if ((status = cudaGetLastError()) != cudaSuccess) return status;
    status = cub::DeviceScan::ExclusiveSum(cub_temp, cub_bytes, counts, scanned, int(entries), stream);
    if (status != cudaSuccess) return status;
    if (keys_out != nullptr) {
      // Tile buffers: two (the next tile streams in while this one is worked on), one when two do
      // not fit or the tuning switch says so.
      int stages = scatter_stages != 0 ? scatter_stages : default_scatter_stages;
      const std::size_t table = align16(pass.table_bytes);
      if (stages == 2 &&
          (downsweep_shared_bytes<K, ValueBytes>(m, 2) + table > max_shared_bytes() || plan.tiles_per_chunk < 2))
        stages = 1;
      const std::size_t shared = downsweep_shared_bytes<K, ValueBytes>(m, stages) + table;
      // The id class: ballots per window of 32 keys.
      const int id_bits = bit_width(m - 1);
      auto kernel = id_bits <= 5 ? downsweep_kernel<K, ValueBytes, F, 5> : downsweep_kernel<K, ValueBytes, F, max_id_bits>;
      if (shared > 48 * 1024 &&
          (status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared))) !=
              cudaSuccess)
        return status;
      kernel<<<plan.num_chunks, block_threads, shared, stream>>>(pass, scanned, stages);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    }
  }
  if (offsets != nullptr) {
    offsets_from_counts_kernel<><<<(m + 256) / 256, 256, 0, stream>>>(scanned, n > 0 ? plan.num_chunks : 0, m, n,
                                                                    offsets);
    status = cudaGetLastError();
  }
  return status;
}


// The largest m whose full histogram the counting pass keeps in shared memory (per-warp copies,
// at most 48 KB): the offsets of a two-pass split up to it come from one such counting pass.
constexpr std::uint32_t max_counted_buckets = 4096;

// m <= 256: one pass. Larger m: two stable passes over the id's digits (LSD, low digit first)
// through a scratch copy, 6 + 6 bits up to m = 4096 and 8 + 8 bits above; the offsets (and the
// checked mode's bad index) come from a counting pass over the full id, or, above 4096 buckets,
// from a histogram with warp-aggregated global atomics.
template <class K, int ValueBytes, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const void* values_in,
                       void* values_out, std::size_t n, F bucket_fn, std::uint32_t m, std::uint32_t* bucket_offsets,
                       cudaStream_t stream, unsigned long long* bad_index) {
  static_assert(sizeof(K) == 1 || sizeof(K) == 2 || sizeof(K) == 4 || sizeof(K) == 8, "keys of 1, 2, 4 or 8 bytes");
  static_assert(ValueBytes == 0 || ValueBytes == 4 || ValueBytes == 8, "values of 4 or 8 bytes");
  // n stays below 2^32 - 2^16 so that slot arithmetic past the last tile cannot wrap.
  if (m == 0 || m > buckets::max_buckets || n > (std::size_t(1) << 32) - (std::size_t(1) << 16))
    return cudaErrorInvalidValue;
  const int sm_count = current_sm_count();
  const std::uint32_t n32 = std::uint32_t(n);
  const bool two_pass = m > max_one_pass_buckets;
  const bool counted = two_pass && m <= max_counted_buckets;  // offsets from the counting pass
  const int low_bits = m <= max_counted_buckets ? 6 : 8;
  const std::uint32_t low_buckets = 1u << low_bits;
  const std::uint32_t high_buckets = (m + low_buckets - 1) >> low_bits;
  std::size_t cub_bytes = 0;
  std::size_t pass_bytes = one_pass_temp_bytes<K>(n, m, sm_count, cub_bytes);
  if (two_pass) {
    pass_bytes = std::max(one_pass_temp_bytes<K>(n, low_buckets, sm_count, cub_bytes),
                          one_pass_temp_bytes<K>(n, high_buckets, sm_count, cub_bytes));
    if (counted) pass_bytes = std::max(pass_bytes, one_pass_temp_bytes<K>(n, m, sm_count, cub_bytes));
  }
  std::size_t histogram_cub_bytes = 0;
  if (two_pass && !counted)
    cub::DeviceScan::ExclusiveSum(nullptr, histogram_cub_bytes, static_cast<std::uint32_t*>(nullptr),
                                  static_cast<std::uint32_t*>(nullptr), int(m + 1));
  const std::size_t scratch_keys = two_pass ? align256(n * sizeof(K)) : 0;
  const std::size_t scratch_values = two_pass ? align256(n * ValueBytes) : 0;
  const std::size_t histogram_bytes = two_pass && !counted ? align256((m + 1) * 4) + align256(histogram_cub_bytes) : 0;
  const std::size_t needed = align256(pass_bytes) + scratch_keys + scratch_values + histogram_bytes;
  if (temp == nullptr) {
    temp_bytes = needed;
    return cudaSuccess;
  }
  if (temp_bytes < needed) return cudaErrorInvalidValue;
  cudaError_t status = cudaSuccess;
  if (bad_index != nullptr && (status = cudaMemsetAsync(bad_index, 0xFF, sizeof *bad_index, stream)) != cudaSuccess)
    return status;
  if (!two_pass)
    return run_one_pass<K, ValueBytes>(temp, keys_in, keys_out, values_in, values_out, n32, bucket_fn, m, 0,
                                       0xFFFFFFFFu, m, bucket_offsets, bad_index, sm_count, stream);

  unsigned char* cursor = static_cast<unsigned char*>(temp) + align256(pass_bytes);
  K* scratch_k = reinterpret_cast<K*>(cursor);
  void* scratch_v = cursor + scratch_keys;
  if (counted && (bucket_offsets != nullptr || bad_index != nullptr)) {
    // The full id's counts (and the check), before the passes reuse the temp storage.
    status = run_one_pass<K, 0>(temp, keys_in, nullptr, nullptr, nullptr, n32, bucket_fn, m, 0, 0xFFFFFFFFu, m,
                                bucket_offsets, bad_index, sm_count, stream);
    if (status != cudaSuccess) return status;
  }
  unsigned long long* pass_check = counted ? nullptr : bad_index;  // checked once
  if (keys_out != nullptr) {
    status = run_one_pass<K, ValueBytes>(temp, keys_in, scratch_k, values_in, scratch_v, n32, bucket_fn, m, 0,
                                         low_buckets - 1, low_buckets, nullptr, pass_check, sm_count, stream);
    if (status != cudaSuccess) return status;
    status = run_one_pass<K, ValueBytes>(temp, scratch_k, keys_out, scratch_v, values_out, n32, bucket_fn, m, low_bits,
                                         0xFFFFFFFFu, high_buckets, nullptr, nullptr, sm_count, stream);
    if (status != cudaSuccess) return status;
  } else if (pass_check != nullptr) {  // histogram only: the check still needs one look at every key
    status = run_one_pass<K, ValueBytes>(temp, keys_in, nullptr, nullptr, nullptr, n32, bucket_fn, m, 0,
                                         low_buckets - 1, low_buckets, nullptr, pass_check, sm_count, stream);
    if (status != cudaSuccess) return status;
  }
  if (bucket_offsets != nullptr && !counted) {
    auto* histogram = reinterpret_cast<std::uint32_t*>(cursor + scratch_keys + scratch_values);
    void* histogram_cub = reinterpret_cast<unsigned char*>(histogram) + align256((m + 1) * 4);
    if ((status = cudaMemsetAsync(histogram, 0, (m + 1) * 4, stream)) != cudaSuccess) return status;
    if (n > 0) {
      const unsigned blocks = unsigned(std::min<std::size_t>((n + block_threads - 1) / block_threads, 16 * sm_count));
      large_histogram_kernel<<<blocks, block_threads, 0, stream>>>(keys_in, n32, bucket_fn, m, histogram);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    }
    status = cub::DeviceScan::ExclusiveSum(histogram_cub, histogram_cub_bytes, histogram, bucket_offsets, int(m + 1),
                                           stream);
  }
  return status;
}

}  // namespace multisplit_detail

// Keys only.
template <class K, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n, F bucket_fn,
                       std::uint32_t m, std::uint32_t* bucket_offsets, cudaStream_t stream = 0,
                       unsigned long long* bad_index = nullptr) {
  return multisplit_detail::multisplit<K, 0>(temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, bucket_fn, m,
                                             bucket_offsets, stream, bad_index);
}

// Keys and values (V of 4 or 8 bytes).
template <class K, class V, class F>
cudaError_t multisplit(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                       V* values_out, std::size_t n, F bucket_fn, std::uint32_t m, std::uint32_t* bucket_offsets,
                       cudaStream_t stream = 0, unsigned long long* bad_index = nullptr) {
  return multisplit_detail::multisplit<K, int(sizeof(V))>(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                          n, bucket_fn, m, bucket_offsets, stream, bad_index);
}

// Histogram only (as bucket offsets: counts are offsets[b + 1] - offsets[b]).
template <class K, class F>
cudaError_t multisplit_offsets(void* temp, std::size_t& temp_bytes, const K* keys_in, std::size_t n, F bucket_fn,
                               std::uint32_t m, std::uint32_t* bucket_offsets, cudaStream_t stream = 0,
                               unsigned long long* bad_index = nullptr) {
  return multisplit_detail::multisplit<K, 0>(temp, temp_bytes, keys_in, nullptr, nullptr, nullptr, n, bucket_fn, m,
                                             bucket_offsets, stream, bad_index);
}

}  // namespace radixmesh::device
