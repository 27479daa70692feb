// radixmesh/device/multisplit/counter_scatter_pass.cuh — pass 3 of a split for m <= 32 (session 5):
// the block-tile pass's tiles, chunks and H, but each key ranked by a shared counter that only
// its own thread touches (the counting pass's fix of session 3, applied to the scatter pass).
//
// This is the classic "basic" block radix rank (the rank of CUB's pre-onesweep downsweep, written
// here from its description): no ballots, no peers, no per-window chain through a warp counter.
// Per tile (4096 keys of <= 4 bytes, 2048 of 8):
//  1. The tile streams into shared memory by 16-byte cp.async (the next tile into a second
//     buffer while this one is worked on), its 16-byte chunks XOR-swizzled (swizzled_chunk) so
//     that step 2's 16-byte reads are free of bank conflicts.
//  2. Thread t takes the tile's slots [items * t, items * (t + 1)) (blocked: consecutive slots,
//     which is what makes the rank stable) with 16-byte loads.
//  3. Counters: 16-bit, two ids per 32-bit word; word j of thread t holds ids j (low half) and
//     j + Words (high half), stored [word][thread] (each thread's word j in the thread's own
//     bank). Per key one shared atomic with return on the thread's own word (same-thread atomics
//     to one address stay in program order): the old half is the key's rank among the thread's
//     keys of its id.
//  4. A raking exclusive scan over the words in (word, thread) order (each thread sums `lanes`
//     consecutive words: an odd stride, so no bank conflicts), then (low-half block total) << 16
//     added to every word, so the high ids start after the low ones. A tile's counts are <= 4096,
//     so the halves never carry into each other. Word (j, t) is now the tile slot of thread t's
//     first key of id j (low half) and of id j + Words (high half).
//  5. Each key goes to (its half of its word) + its rank in the tile's buffer (free: the keys are
//     in registers); threads b < m compute bucket b's start in the tile and the shift from tile
//     slots to global ones.
//  6. Write-out in slot order (slot = j * 256 + t: coalesced runs of one bucket), the bucket of a
//     slot from the functor again (cheap_to_recompute) or a byte stored at placement.
//  7. Each thread zeroes its own counters for the next tile.
// Pairs: values are read blocked with the keys and placed at the keys' slots.
// Measured (H200, 2^28 u32 uniform, total with the counting pass, session 5 run 1): keys radix
// m = 32 0.987 ms (block-tile pass 1.173, CUB 1.471), delta m = 32 1.600 (1.801): the default for
// keys-only 3 <= m <= 32 (common.cuh). ncu (m = 32, 2^26 keys): 52.5 instructions per window of 32
// keys at 60 % issue, no spills, ~0.72 ms of scatter at 2^28 against the 0.64 the 0.90 ms target
// needs. The limit is the shared-memory pipe, not issue (round 3's warp states: short-scoreboard and
// MIO-throttle stalls lead, l1tex at 72-74 % of peak, ~14.7 shared wavefronts per window), so
// removing ALU work does not pay: a round-2 version (counter reads before the placement stores,
// full-tile loop copies, 16-byte raking over swizzled counters, one-barrier scan, keys re-read after
// the scan; 2122e2c48009) measured 1.008 ms, and a round-3 one (counters addressed by the raw
// digit's bits, old counter word added to the scanned one, no clamp; cf0985a64693) cut the
// instructions to 46.4 per window but measured 1.008 ms too (0.989 for this kernel in the same
// run). Both were reverted to this one (NOTES.md, session 5).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"
#include "radixmesh/device/multisplit/tile_copy.cuh"

namespace radixmesh::device::multisplit_detail {

// Counter words per thread for m ids: 1 (m <= 2) or 16 (m <= 32); two ids per word.
__host__ __device__ constexpr int counter_words_for(std::uint32_t m) { return m <= 2 ? 1 : 16; }
// Words each thread rakes in the scan: Words, plus one zero pad word where Words is even, so that
// the raking stride is odd (thread r reads words r * lanes + k: 32 distinct banks per warp).
template <int Words> constexpr int counter_lanes = Words % 2 == 0 ? Words + 1 : Words;

// Thread t's blocked elements [Items * t, Items * (t + 1)) of a swizzled tile.
template <class T, int Items> __device__ __forceinline__ void load_blocked(const T* shared, T (&out)[Items]) {
  constexpr int chunks = Items * int(sizeof(T)) / 16;
  static_assert(chunks * 16 == Items * int(sizeof(T)));
  uint4 raw[chunks];
  const uint4* src = reinterpret_cast<const uint4*>(shared);
#pragma unroll
  for (int i = 0; i < chunks; ++i) raw[i] = src[swizzled_chunk<chunks>(chunks * threadIdx.x + i)];
  std::memcpy(out, raw, sizeof out);
}

template <class F> constexpr bool counter_scatter_stores_ids = !cheap_to_recompute<F>;

// Shared memory of the pass without the functor's table: two tile buffers of keys (and values),
// the counters, bucket shifts, the scan's warp sums, and the id bytes where the functor is not
// cheap to recompute.
template <class K, int ValueBytes, class F, int Words>
constexpr std::size_t counter_scatter_shared_bytes() {
  return 2 * std::size_t(tile_keys<K>) * (sizeof(K) + ValueBytes) +
         (std::size_t(counter_lanes<Words>) * block_threads + 2 * Words + block_warps) * 4 +
         (counter_scatter_stores_ids<F> ? std::size_t(tile_keys<K>) : 0);
}

// Blocks per SM the pass is built for: keys only 4 (<= 64 registers; ~50 KB of shared memory at
// m = 32), pairs 2 (values in registers too; two buffers of keys and values).
template <int ValueBytes> constexpr int counter_scatter_min_blocks = ValueBytes == 0 ? 4 : 2;

// scanned_counts: the exclusive scan of H with one column per chunk (p.columns_per_chunk == 1).
// Words: counter_words_for(p.m). One-pass splits only (p.id_shift == 0, p.id_mask all ones,
// p.m == p.m_full): the id is min(f(key), m - 1), two integer instructions fewer per key in the
// rank and again in the write-out than Pass::id_of's shift and mask.
template <class K, int ValueBytes, class F, int Words>
__global__ void __launch_bounds__(block_threads, counter_scatter_min_blocks<ValueBytes>)
    counter_scatter_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts) {
  static_assert(Words == 1 || Words == 16, "ids j and j + Words share word j: m <= 2 Words");
  using V = typename value_slot<ValueBytes>::type;
  constexpr int items = items_per_thread<K>;
  constexpr int tile = tile_keys<K>;
  constexpr int lanes = counter_lanes<Words>;
  constexpr int half_shift = Words == 1 ? 0 : 4;  // id >> half_shift: which half of the word
  constexpr bool store_ids = counter_scatter_stores_ids<F>;
  extern __shared__ uint4 shared_raw[];
  // Layout: the functor's table, two key buffers, two value buffers (16-byte aligned sizes),
  // counters [lane][thread], shifts, warp sums, id bytes.
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, shared_raw);
  auto id_of = [&](K key) { return p.one_pass_id_of(fn, key); };
  unsigned char* cursor = reinterpret_cast<unsigned char*>(shared_raw) + align16(p.table_bytes);
  K* const key_buffers = reinterpret_cast<K*>(cursor);
  cursor += 2 * tile * sizeof(K);
  V* const value_buffers = reinterpret_cast<V*>(cursor);
  cursor += 2 * tile * ValueBytes;
  std::uint32_t* const counters = reinterpret_cast<std::uint32_t*>(cursor);  // [lane * 256 + thread]
  std::uint32_t* const slot_shift = counters + lanes * block_threads;        // global slot - tile slot, per id
  std::uint32_t* const warp_sums = slot_shift + 2 * Words;
  std::uint8_t* const slot_id = reinterpret_cast<std::uint8_t*>(warp_sums + block_warps);
  std::uint32_t* const my_counters = counters + threadIdx.x;  // word j at my_counters[j * 256]

  const std::uint32_t chunk = blockIdx.x;
  // Thread b < m: bucket b's next global slot in this chunk.
  std::uint32_t running = threadIdx.x < p.m ? scanned_counts[std::size_t(threadIdx.x) * p.num_chunks + chunk] : 0;
  auto tile_valid = [&](std::uint32_t t) { return p.template tile_valid<tile>(chunk, t); };
  auto start_copy = [&](std::uint32_t t, int buffer) {
    start_stage_copy<ValueBytes, tile, true>(p.keys_in, p.values_in, p.template tile_begin<tile>(chunk, t), tile_valid(t),
                                             p.vector_loads, key_buffers + buffer * tile, value_buffers + buffer * tile);
  };
  auto zero_my_counters = [&] {
#pragma unroll
    for (int k = 0; k < lanes; ++k) my_counters[k * block_threads] = 0;
  };
  zero_my_counters();
  if (tile_valid(0) > 0) start_copy(0, 0);
  for (std::uint32_t t = 0; t < p.tiles_per_chunk; ++t) {
    const std::uint32_t valid = tile_valid(t);
    if (valid == 0) break;
    const int buffer = int(t & 1);
    K* const stage = key_buffers + buffer * tile;
    V* const value_stage = value_buffers + buffer * tile;
    copy_async_wait_all();
    // Tile t visible to all; the previous tile's write-out (reads of the other buffer, of
    // slot_shift and the id bytes) and counter zeroing done.
    __syncthreads();
    if (tile_valid(t + 1) > 0) start_copy(t + 1, buffer ^ 1);

    // Steps 2-3: blocked keys, one atomic each on the thread's own counter word.
    K keys[items];
    V values[items];
    load_blocked<K, items>(stage, keys);
    if constexpr (ValueBytes != 0) load_blocked<V, items>(value_stage, values);
    std::uint32_t id_and_rank[items];  // id | rank among the thread's keys of the id << 8
    auto rank = [&](auto full_tile) {
#pragma unroll
      for (int j = 0; j < items; ++j) {
        const std::uint32_t id = id_of(keys[j]);
        const std::uint32_t shift = (id >> half_shift) << 4;
        std::uint32_t old = 0;
        if (decltype(full_tile)::value || threadIdx.x * items + j < valid)
          old = atomicAdd(&my_counters[(id & (Words - 1)) * block_threads], 1u << shift);
        id_and_rank[j] = id | (((old >> shift) & 0xFFFFu) << 8);
      }
    };
    if (valid == tile) rank(std::true_type{});
    else rank(std::false_type{});
    __syncthreads();  // counters complete; every thread's keys (and values) read from the buffer

    // Step 4: raking exclusive scan of the packed words in (word, thread) order.
    // The segment is read twice rather than held in registers across the block scan (held, the
    // keys-only kernel spilled at 64 registers).
    std::uint32_t* const segment = counters + threadIdx.x * lanes;
    std::uint32_t sum = 0;
#pragma unroll
    for (int k = 0; k < lanes; ++k) sum += segment[k];
    std::uint32_t total;
    std::uint32_t prefix = block_exclusive_scan(sum, warp_sums, total);
    const std::uint32_t low_total = total & 0xFFFFu;
    prefix += low_total << 16;  // the high ids start after all low ones
#pragma unroll
    for (int k = 0; k < lanes; ++k) {
      const std::uint32_t count = segment[k];
      segment[k] = prefix;
      prefix += count;
    }
    __syncthreads();

    // Step 5: bucket b's tile start and the shift from tile slots to global ones (threads b < m);
    // every key to its slot in the tile sorted by id.
    if (threadIdx.x < p.m) {
      auto start_of = [&](std::uint32_t b) -> std::uint32_t {
        if (b >= 2 * Words) return low_total + (total >> 16);
        const std::uint32_t word = counters[(b & (Words - 1)) * block_threads];
        return b < Words ? (word & 0xFFFFu) : (word >> 16);
      };
      const std::uint32_t start = start_of(threadIdx.x);
      slot_shift[threadIdx.x] = running - start;
      running += start_of(threadIdx.x + 1) - start;
    }
#pragma unroll
    for (int j = 0; j < items; ++j) {
      if (valid == tile || threadIdx.x * items + j < valid) {
        const std::uint32_t id = id_and_rank[j] & 0xFFu;
        const std::uint32_t word = my_counters[(id & (Words - 1)) * block_threads];
        const std::uint32_t to = ((word >> ((id >> half_shift) << 4)) & 0xFFFFu) + (id_and_rank[j] >> 8);
        stage[to] = keys[j];
        if constexpr (ValueBytes != 0) value_stage[to] = values[j];
        if constexpr (store_ids) slot_id[to] = std::uint8_t(id);
      }
    }
    __syncthreads();  // the tile sorted by id; slot_shift; every counter read
    zero_my_counters();  // step 7 (ordered before the next tile's atomics by its first barrier)

    // Step 6: write out in slot order.
    K* const keys_out = p.keys_out + threadIdx.x;  // + shift of the slot's id + j * 256
    V* const values_out = ValueBytes != 0 ? static_cast<V*>(p.values_out) + threadIdx.x : nullptr;
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint32_t slot = j * block_threads + threadIdx.x;
      if (valid == tile || slot < valid) {
        const K key = stage[slot];
        std::uint32_t id;
        if constexpr (store_ids) id = slot_id[slot];
        else id = id_of(key);
        const std::size_t to = std::size_t(slot_shift[id]) + j * block_threads;
        keys_out[to] = key;
        if constexpr (ValueBytes != 0) values_out[to] = value_stage[slot];
      }
    }
  }
}

}  // namespace radixmesh::device::multisplit_detail
