// radixmesh/device/multisplit/counter_scatter_pass.cuh — pass 3 of a split for m <= 32:
// the block-tile pass's tiles, chunks and H, but each key ranked by a shared counter that only
// its own thread touches (as the counting pass counts at m <= 32, applied to the scatter pass).
//
// This is the classic "basic" block radix rank (the rank of CUB's pre-onesweep downsweep, written
// here from its description): no ballots, no peers, no per-window chain through a warp counter.
// Per tile (4096 keys of <= 4 bytes, 2048 of 8):
//  1. The tile streams into shared memory by 16-byte cp.async (the next tile into a second
//     buffer while this one is worked on), its 16-byte chunks XOR-swizzled (swizzled_chunk) so
//     that step 2's 16-byte reads are free of bank conflicts.
//  2. Thread t takes the tile's slots [items * t, items * (t + 1)) (blocked: consecutive slots,
//     which is what makes the rank stable) with 16-byte loads.
//  3. Counters (m <= 32): 8-bit, four ids per 32-bit word; word j of thread t counts
//     ids j, j + 8, j + 16, j + 24 (bytes 0-3), stored [word][thread] (each thread's word j in the
//     thread's own bank). Per key one shared atomic with return on the thread's own word
//     (same-thread atomics to one address stay in program order): the old byte is the key's rank
//     among the thread's keys of its id. (m <= 2: one word of two 16-bit halves, ids 0 and 1.)
//  4. A raking exclusive scan over the words in (word, thread) order (each thread sums 9
//     consecutive words, 8 rows and a zero pad row: an odd stride, so no bank conflicts, and keeps
//     them in registers), the bytes spread into four 16-bit lanes for a 64-bit block scan; lane b
//     then starts after the totals of lanes < b. The results go over the same shared words as 16
//     rows of 16-bit tile slots: row j holds the slot of thread t's first key of id j (low half) and
//     of id j + 16 (high half), the layout the placement and the bucket starts read.
//  5. Each key goes to (its half of its slot word) + its rank in the tile's buffer (free: the keys
//     are in registers); threads b < m compute bucket b's start in the tile and the shift from tile
//     slots to global ones.
//  6. Write-out in slot order (slot = j * 256 + t: coalesced runs of one bucket), the bucket of a
//     slot from the functor again (cheap_to_recompute) or a byte stored at placement, its shift by a
//     shuffle from the lane that holds it.
//  7. The count words are zeroed for the next tile.
// Pairs: values are read blocked with the keys and placed at the keys' slots.
// Measured (H200, 2^28 u32 uniform, total with the counting pass, bench_multisplit --m 2,32,64,256,4096
// at 6812eb98de4b): keys radix m = 32 0.991 ms (block-tile pass 1.178, CUB 1.475), delta m = 32
// 1.585 (1.819): the default for keys-only 3 <= m <= 32 (common.cuh). ncu (m = 32, 2^26 keys):
// 186.7 us, 55.5 instructions per window of 32 keys, 13.45 shared wavefronts per window; the pass
// is balanced between ALU (63 %), the shared pipe (68 %), L2 (74 %) and its barriers, so cutting
// one of them alone does not pay: versions with fewer ALU instructions (46.4 per window: counters
// addressed by the raw digit's bits; cf0985a64693) or 16-bit counters (14.7 wavefronts per window)
// measured within 1-2 % of this one. Figures and leads: docs/design/multisplit.md.
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

// The counters, [row][thread] (row r of thread t at word r * 256 + t), seen two ways:
//  - Words = 1 (m <= 2): one row; the halves of thread t's word count ids 0 and 1, then the raking
//    scan overwrites them with the tile slots of thread t's first key of each id.
//  - Words = 16 (m <= 32): the *count view*, 8 rows of 8-bit counters (byte b of row j counts id
//    j + 8 b; a thread has <= 16 keys) and a zero pad row, so that the raking stride (9 words) is
//    odd; and over the same words the *slot view*, 16 rows of 16-bit tile slots (row j: id j in the
//    low half, id j + 16 in the high half), which the raking scan writes once every count is read.
//    Counting in bytes halves the words the scan reads and the zeroing writes (9 + 9 per thread per
//    tile instead of 17 + 17, and the 9 raked words stay in registers across the block scan instead
//    of being read twice): 34 words per thread per tile instead of 68, about 2.1 fewer shared-memory
//    wavefronts per window of 32 keys (the shared-memory pipe is one of its limits:
//    docs/design/multisplit.md).
template <int Words> constexpr int count_rows = Words == 1 ? 1 : 9;  // words each thread rakes
template <int Words> constexpr int slot_rows = Words == 1 ? 1 : 16;
static_assert(count_rows<16> * block_threads <= slot_rows<16> * block_threads);

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
// the counters, bucket shifts, the scan's warp sums (64-bit), and the id bytes where the functor is
// not cheap to recompute.
template <class K, int ValueBytes, class F, int Words>
constexpr std::size_t counter_scatter_shared_bytes() {
  return 2 * std::size_t(tile_keys<K>) * (sizeof(K) + ValueBytes) +
         (std::size_t(slot_rows<Words>) * block_threads + 2 * Words + 2 * block_warps) * 4 +
         (counter_scatter_stores_ids<F> ? std::size_t(tile_keys<K>) : 0);
}

// Blocks per SM the pass is built for: keys only 4 (<= 64 registers; ~48 KB of shared memory at
// m = 32), pairs 2 (values in registers too; two buffers of keys and values).
template <int ValueBytes> constexpr int counter_scatter_min_blocks = ValueBytes == 0 ? 4 : 2;

// scanned_counts: the exclusive scan of H with one column per chunk (p.columns_per_chunk == 1).
// Words: counter_words_for(p.m). One-pass splits only (p.id_shift == 0, p.id_mask all ones,
// p.m == p.m_full): the id is min(f(key), m - 1), two integer instructions fewer per key in the
// rank and again in the write-out than Pass::id_of's shift and mask.
template <class K, int ValueBytes, class F, int Words>
__global__ void __launch_bounds__(block_threads, counter_scatter_min_blocks<ValueBytes>)
    counter_scatter_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts) {
  if (p.stopped()) return;  // checked mode, a bad id: write nothing (the whole block returns)
  static_assert(Words == 1 || Words == 16, "ids j and j + Words share word j: m <= 2 Words");
  using V = typename value_slot<ValueBytes>::type;
  constexpr int items = items_per_thread<K>;
  constexpr int tile = tile_keys<K>;
  constexpr bool byte_counts = Words == 16;  // the two views of the counters (count_rows above)
  constexpr int rake = count_rows<Words>;
  constexpr int half_shift = Words == 1 ? 0 : 4;  // id >> half_shift: which half of the slot word
  constexpr bool store_ids = counter_scatter_stores_ids<F>;
  static_assert(rake * items < 256, "a raked segment's byte sums must not carry");
  extern __shared__ uint4 shared_raw[];
  // Layout: the functor's table, two key buffers, two value buffers (16-byte aligned sizes),
  // counters [row][thread], shifts, warp sums, id bytes.
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, shared_raw);
  auto id_of = [&](K key) { return p.one_pass_id_of(fn, key); };
  unsigned char* cursor = reinterpret_cast<unsigned char*>(shared_raw) + align16(p.table_bytes);
  K* const key_buffers = reinterpret_cast<K*>(cursor);
  cursor += 2 * tile * sizeof(K);
  V* const value_buffers = reinterpret_cast<V*>(cursor);
  cursor += 2 * tile * ValueBytes;
  std::uint32_t* const counters = reinterpret_cast<std::uint32_t*>(cursor);  // [row * 256 + thread]
  std::uint32_t* const slot_shift = counters + slot_rows<Words> * block_threads;  // global - tile slot, per id
  std::uint64_t* const warp_sums = reinterpret_cast<std::uint64_t*>(slot_shift + 2 * Words);
  std::uint8_t* const slot_id = reinterpret_cast<std::uint8_t*>(warp_sums + block_warps);
  std::uint32_t* const my_counters = counters + threadIdx.x;  // row r at my_counters[r * 256]

  const std::uint32_t chunk = blockIdx.x;
  // Thread b < m: bucket b's next global slot in this chunk.
  std::uint32_t running = threadIdx.x < p.m ? scanned_counts[std::size_t(threadIdx.x) * p.num_chunks + chunk] : 0;
  auto tile_valid = [&](std::uint32_t t) { return p.template tile_valid<tile>(chunk, t); };
  auto start_copy = [&](std::uint32_t t, int buffer) {
    start_stage_copy<ValueBytes, tile, true>(p.keys_in, p.values_in, p.template tile_begin<tile>(chunk, t), tile_valid(t),
                                             p.vector_loads, key_buffers + buffer * tile, value_buffers + buffer * tile);
  };
  // Zeroes the count view (any thread any word: the barriers between a tile's last read of the
  // slot view and the next tile's atomics order it), 16 bytes at a time.
  auto zero_counts = [&] {
    constexpr int vectors = rake * block_threads / 4;
    uint4* const words = reinterpret_cast<uint4*>(counters);
#pragma unroll
    for (int k = 0; k < (vectors + block_threads - 1) / block_threads; ++k) {
      const int v = k * block_threads + int(threadIdx.x);
      if (vectors % block_threads == 0 || v < vectors) words[v] = make_uint4(0, 0, 0, 0);
    }
  };
  zero_counts();
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

    // Steps 2-3: blocked keys, one atomic each on the thread's own counter word (count view).
    K keys[items];
    V values[items];
    load_blocked<K, items>(stage, keys);
    if constexpr (ValueBytes != 0) load_blocked<V, items>(value_stage, values);
    // Per key: the index of its id's 16-bit slot in the slot view, from the thread's own first
    // (bits 0-13), its rank among the thread's keys of the id (bits 16-23) and, where the ids are
    // stored, the id (bits 24-31): the placement then reads the slot with one 16-bit load.
    std::uint32_t slot_at[items];
    auto rank = [&](auto full_tile) {
#pragma unroll
      for (int j = 0; j < items; ++j) {
        const std::uint32_t id = id_of(keys[j]);
        // Words = 16: byte id >> 3 of row id & 7; Words = 1: half id of row 0.
        const std::uint32_t shift = byte_counts ? (id >> 3) << 3 : id << 4;
        const std::uint32_t row = byte_counts ? id & 7 : 0;
        std::uint32_t old = 0;
        if (decltype(full_tile)::value || threadIdx.x * items + j < valid)
          old = atomicAdd(&my_counters[row * block_threads], 1u << shift);
        const std::uint32_t slot_index = (id & (Words - 1)) * 2 * block_threads + (id >> half_shift);
        slot_at[j] = slot_index | ((old >> shift) & (byte_counts ? 0xFFu : 0xFFFFu)) << 16 | (store_ids ? id << 24 : 0);
      }
    };
    if (valid == tile) rank(std::true_type{});
    else rank(std::false_type{});
    __syncthreads();  // counters complete; every thread's keys (and values) read from the buffer

    // Step 4: raking exclusive scan in (row, thread) order; the slot view gets the results.
    std::uint32_t tile_total;
    if constexpr (byte_counts) {
      // Thread r rakes count words 9 r .. 9 r + 8 (row 8 is the pad) and keeps them in registers.
      // Byte b of a word counts id row + 8 b; the scan spreads the bytes over 16-bit lanes (a
      // segment's byte sums are <= 9 * items, a tile's lane totals <= 4096: no carries): lanes 0
      // and 2 (ids row and row + 16) in the low 32 bits, lanes 1 and 3 (row + 8, row + 24) in the
      // high ones, which is exactly the slot view's words of rows `row` and `row + 8`.
      const std::uint32_t* const segment = counters + threadIdx.x * rake;
      std::uint32_t counts[rake];
      std::uint32_t sum = 0;
#pragma unroll
      for (int k = 0; k < rake; ++k) sum += counts[k] = segment[k];
      const std::uint64_t spread = (sum & 0x00FF00FFu) | std::uint64_t((sum >> 8) & 0x00FF00FFu) << 32;
      std::uint64_t total;
      const std::uint64_t before = block_exclusive_scan<std::uint64_t, false>(spread, warp_sums, total);
      // Lane totals t0 (ids 0-7), t1 (8-15), t2 (16-23), t3 (24-31); lane b starts after lanes < b.
      const std::uint32_t t0 = std::uint32_t(total) & 0xFFFFu, t2 = std::uint32_t(total) >> 16;
      const std::uint32_t t1 = std::uint32_t(total >> 32) & 0xFFFFu, t3 = std::uint32_t(total >> 48);
      std::uint32_t low = std::uint32_t(before) + ((t0 + t1) << 16);
      std::uint32_t high = std::uint32_t(before >> 32) + (t0 | (t0 + t1 + t2) << 16);
      tile_total = t0 + t1 + t2 + t3;
      // Every count word was read before the scan's barrier: the slot view may overwrite them.
#pragma unroll
      for (int k = 0; k < rake; ++k) {
        const std::uint32_t at = threadIdx.x * rake + k;  // row at / 256 < 8, or the pad row
        if (at < 8 * block_threads) {
          counters[at] = low;
          counters[at + 8 * block_threads] = high;
        }
        low += counts[k] & 0x00FF00FFu;
        high += (counts[k] >> 8) & 0x00FF00FFu;
      }
    } else {
      std::uint32_t* const word = counters + threadIdx.x;
      const std::uint32_t count = *word;
      std::uint32_t total;
      const std::uint32_t prefix = block_exclusive_scan(count, reinterpret_cast<std::uint32_t*>(warp_sums), total);
      const std::uint32_t low_total = total & 0xFFFFu;
      tile_total = low_total + (total >> 16);
      *word = prefix + (low_total << 16);  // the high id starts after all low ones
    }
    __syncthreads();

    // Step 5: bucket b's tile start and the shift from tile slots to global ones (threads b < m);
    // every key to its slot in the tile sorted by id.
    if (threadIdx.x < p.m) {
      auto start_of = [&](std::uint32_t b) -> std::uint32_t {
        if (b >= 2 * Words) return tile_total;
        const std::uint32_t word = counters[(b & (Words - 1)) * block_threads];
        return b < Words ? (word & 0xFFFFu) : (word >> 16);
      };
      const std::uint32_t start = start_of(threadIdx.x);
      slot_shift[threadIdx.x] = running - start;
      running += start_of(threadIdx.x + 1) - start;
    }
    // Slot view as 16-bit halves (little-endian: word w's low half is half 2 w).
    const std::uint16_t* const my_slots = reinterpret_cast<const std::uint16_t*>(my_counters);
    auto place = [&](auto full_tile) {  // full tiles without the per-key bound
#pragma unroll
      for (int j = 0; j < items; ++j) {
        if (decltype(full_tile)::value || threadIdx.x * items + j < valid) {
          const std::uint32_t rank = store_ids ? (slot_at[j] >> 16) & 0xFFu : slot_at[j] >> 16;
          const std::uint32_t to = my_slots[slot_at[j] & 0xFFFFu] + rank;
          stage[to] = keys[j];
          if constexpr (ValueBytes != 0) value_stage[to] = values[j];
          if constexpr (store_ids) slot_id[to] = std::uint8_t(slot_at[j] >> 24);
        }
      }
    };
    if (valid == tile) place(std::true_type{});
    else place(std::false_type{});
    __syncthreads();  // the tile sorted by id; slot_shift; every counter read
    zero_counts();    // step 7 (ordered before the next tile's atomics by its first barrier)

    // Step 6: write out in slot order. Lane b holds bucket b's shift (2 Words <= 32 buckets) and
    // each key takes its bucket's from it by a shuffle: one shared read per thread and tile
    // instead of one per key.
    const std::uint32_t lane_shift = slot_shift[(threadIdx.x % 32) & (2 * Words - 1)];
    K* const keys_out = p.keys_out + threadIdx.x;  // + j * 256 + shift of the slot's id
    V* const values_out = ValueBytes != 0 ? static_cast<V*>(p.values_out) + threadIdx.x : nullptr;
    auto write_out = [&](auto full_tile) {  // full tiles without the per-slot bound
#pragma unroll
      for (int j = 0; j < items; ++j) {
        const std::uint32_t slot = j * block_threads + threadIdx.x;
        const bool in_tile = decltype(full_tile)::value || slot < valid;
        K key{};
        std::uint32_t id = 0;
        if (in_tile) {
          key = stage[slot];
          if constexpr (store_ids) id = slot_id[slot];
          else id = id_of(key);
        }
        const std::uint32_t shift = __shfl_sync(0xFFFFFFFFu, lane_shift, int(id));  // the whole warp
        if (in_tile) {
          // j * 256 is a constant offset of the store; the shift one 32-bit index.
          (keys_out + j * block_threads)[shift] = key;
          if constexpr (ValueBytes != 0) (values_out + j * block_threads)[shift] = value_stage[slot];
        }
      }
    };
    if (valid == tile) write_out(std::true_type{});
    else write_out(std::false_type{});
  }
}

}  // namespace radixmesh::device::multisplit_detail
