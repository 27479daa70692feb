// radixmesh/device/multisplit/warp_scatter_pass.cuh — pass 3 of a split for m <= 32:
// every warp owns a contiguous part of its block's chunk and writes it out alone, with its 32
// global cursors in registers (lane b: bucket b) and no block barrier after the start.
//
// Paper §5 (warp-level multisplit) adapted to Hopper. A warp walks its part in sub-tiles of
// `windows` x 32 keys, each streamed into the warp's own shared buffer by 16-byte cp.async two
// sub-tiles ahead (three buffers). Per window of 32 keys (read from the buffer in input order):
// the id class's ballots (1 for m <= 2, 5 for m <= 32) give each lane its peers (rank in the
// window = popc(peers & lanes below)) and give lane b the window's count of bucket b (AND of
// ballot / ~ballot by b's bits, popc): the counts stay in registers, so there is no shared
// counter and no chain through memory from window to window; a shuffle reads the count of the
// key's bucket in the sub-tile's earlier windows. Per sub-tile: a warp scan of lane b's totals
// gives each bucket's start in the sub-tile; the keys (and values) are placed in bucket order
// into the buffer they came from (§4.7: runs of one bucket on consecutive addresses), and written
// out lane-strided to cursor[bucket] + (slot - start[bucket]), so each bucket's run of the
// sub-tile is one coalesced stretch; the cursors advance by the totals. The bucket of a slot in
// the write-out is the key's id computed again (functors that say this is cheap) or a byte
// stored beside the key at placement.
// The counting pass counts per warp part to match (Pass::columns_per_chunk = block_warps: one
// column of H per warp).
// Measured (H200, 2^28 u32, total with the counting pass, bench_multisplit --m 2,32,17): faster
// than the block-tile pass for keys at m = 2 (radix 0.851 against 0.947 ms, delta 1.361 against
// 1.580), so the default there; slower at m = 32 keys (1.98 against 1.17: latency-bound per warp,
// 35 % issue, runs of ~16 keys per bucket per sub-tile) and for every pairs case
// (docs/design/multisplit.md).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"
#include "radixmesh/device/multisplit/tile_copy.cuh"
#include "radixmesh/export.hpp"

namespace radixmesh::device::multisplit_detail {

// Windows of 32 keys per sub-tile: 16 for 4 bytes of key and value per element (keys and ids of
// a sub-tile sit in registers: 32 of the 64 registers that four blocks of 256 per SM allow), 8
// for 5-8 bytes, 4 above.
template <class K, int ValueBytes>
constexpr int warp_windows = sizeof(K) + ValueBytes <= 4 ? 16 : (sizeof(K) + ValueBytes <= 8 ? 8 : 4);
// MultisplitTuning::warp_scatter_windows = 8 runs 4-byte keys-only splits with 8 windows per
// sub-tile instead of 16 (16 fewer registers held across the sub-tile, more room to overlap
// windows; a scan and a wait per 256 keys instead of per 512).
constexpr int warp_scatter_stages = 3;  // this sub-tile, and two streaming in

// The bucket of a slot in the write-out: the functor again when cheap_to_recompute<F>
// (bucket_functors.cuh), else a byte stored beside the key at placement.
template <class F> constexpr bool warp_scatter_stores_ids = !cheap_to_recompute<F>;

// Shared memory of one warp: three key (and value) buffers of a sub-tile, the id bytes.
template <class K, int ValueBytes, class F, int Windows = warp_windows<K, ValueBytes>>
__host__ __device__ constexpr std::size_t warp_scatter_warp_bytes() {
  constexpr std::size_t sub_keys = std::size_t(Windows) * 32;
  return align16(warp_scatter_stages * sub_keys * (sizeof(K) + ValueBytes) + (warp_scatter_stores_ids<F> ? sub_keys : 0));
}
template <class K, int ValueBytes, class F, int Windows = warp_windows<K, ValueBytes>>
constexpr std::size_t warp_scatter_shared_bytes() {
  return block_warps * warp_scatter_warp_bytes<K, ValueBytes, F, Windows>();
}

// scanned_counts: the exclusive scan of H with one column per warp part (p.columns_per_chunk ==
// block_warps). IdBits: 1 (m <= 2) or 5 (m <= 32), the ballots per window. One-pass splits only
// (p.id_shift == 0, p.id_mask all ones): the id is min(f(key), m - 1).
//
// A straightforward version of this kernel ran 84 instructions per window at 42 % issue (ncu, m =
// 32, 2^26 keys), the SM's busiest pipe at 60 %: the integer ALU pipe, which issues a warp
// instruction every other cycle on Hopper, held most of them (bit tests, ballot selects, ANDs, the
// id twice with the pass's shift and mask, the packing). Hence: the peers of a key are the lane-bucket mask of the lane
// its id names (one shuffle instead of a select and an AND per bit), the id has no pass
// shift/mask, id and rank are packed so that the packed word is the shuffle's lane index (the
// shuffle reads its low 5 bits), and the output address is one wide multiply-add per store.
template <class K, int ValueBytes, class F, int IdBits, int Windows = warp_windows<K, ValueBytes>>
__global__ void __launch_bounds__(block_threads, 4)
    warp_scatter_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts) {
  if (p.stopped()) return;  // checked mode, a bad id: write nothing (the whole block returns)
  static_assert(IdBits >= 1 && IdBits <= 5, "lane b holds bucket b: at most 32 buckets");
  using V = typename value_slot<ValueBytes>::type;
  constexpr int windows = Windows;
  constexpr std::uint32_t sub_keys = windows * 32;
  constexpr bool store_ids = warp_scatter_stores_ids<F>;
  extern __shared__ uint4 shared_raw[];
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, shared_raw);
  __syncthreads();  // the table; the warps are independent from here on
  auto id_of = [&](K key) { return p.one_pass_id_of(fn, key); };
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned char* const mine = reinterpret_cast<unsigned char*>(shared_raw) + align16(p.table_bytes) +
                              warp * warp_scatter_warp_bytes<K, ValueBytes, F, Windows>();
  K* const key_buffers = reinterpret_cast<K*>(mine);  // buffer s at key_buffers + s * sub_keys
  V* const value_buffers = reinterpret_cast<V*>(mine + warp_scatter_stages * sub_keys * sizeof(K));
  std::uint8_t* const slot_id = mine + warp_scatter_stages * sub_keys * (sizeof(K) + ValueBytes);

  const std::size_t part_keys = std::size_t(p.tiles_per_chunk) * tile_keys<K> / block_warps;
  const std::size_t begin = std::size_t(blockIdx.x) * p.tiles_per_chunk * tile_keys<K> + warp * part_keys;
  if (begin >= p.n) return;
  const std::size_t end = begin + part_keys < p.n ? begin + part_keys : std::size_t(p.n);
  const std::uint32_t sub_tiles = std::uint32_t((end - begin + sub_keys - 1) / sub_keys);
  // Lane b: the next global slot of bucket b.
  std::uint32_t cursor =
      lane < p.m ? scanned_counts[std::size_t(lane) * p.columns() + blockIdx.x * block_warps + warp] : 0;
  // Lane b's bits as masks: bucket_bit[k] = all ones when bit k of b is set.
  std::uint32_t bucket_bit[IdBits];
#pragma unroll
  for (int k = 0; k < IdBits; ++k) bucket_bit[k] = (lane >> k) & 1u ? 0xFFFFFFFFu : 0u;

  auto sub_valid = [&](std::uint32_t t) -> std::uint32_t {
    const std::size_t base = begin + std::size_t(t) * sub_keys;
    return base >= end ? 0u : (end - base < sub_keys ? std::uint32_t(end - base) : sub_keys);
  };
  auto start_copy = [&](std::uint32_t t) {
    const std::uint32_t valid = sub_valid(t);
    if (valid > 0) {
      const int s = int(t % warp_scatter_stages);
      const std::size_t base = begin + std::size_t(t) * sub_keys;
      start_warp_copy<sizeof(K), sub_keys>(p.keys_in, base, valid, p.vector_loads, key_buffers + s * sub_keys);
      if constexpr (ValueBytes != 0)
        start_warp_copy<ValueBytes, sub_keys>(p.values_in, base, valid, p.vector_loads, value_buffers + s * sub_keys);
    }
    copy_async_commit();  // empty groups past the end keep "all but the latest group" meaning sub-tile t
  };
  start_copy(0);
  start_copy(1);
  for (std::uint32_t t = 0; t < sub_tiles; ++t) {
    const int s = int(t % warp_scatter_stages);
    K* const stage = key_buffers + s * sub_keys;
    V* const value_stage = value_buffers + s * sub_keys;
    copy_async_wait_all_but_one();  // sub-tile t is in (t + 1 may still stream)
    // Every lane's copies visible to all; and every lane's reads of buffer (t + 2) % 3 (sub-tile
    // t - 1's write-out) done before the next copy overwrites it.
    __syncwarp();
    start_copy(t + 2);
    const std::uint32_t valid = sub_valid(t);

    K keys[windows];
    V values[windows];
    std::uint32_t id_and_rank[windows];  // id | rank among the sub-tile's keys of the id << 5
    std::uint32_t total = 0;             // lane b: keys of bucket b in the windows ranked so far
    auto rank_windows = [&](auto full_tile) {
#pragma unroll
      for (int j = 0; j < windows; ++j) {
        const std::uint32_t slot = j * 32 + lane;
        keys[j] = stage[slot];  // past `valid`: stale data, ranked out by the validity ballot
        if constexpr (ValueBytes != 0) values[j] = value_stage[slot];
        const std::uint32_t id = id_of(keys[j]);
        std::uint32_t in_window = 0xFFFFFFFFu;
        if constexpr (!decltype(full_tile)::value) in_window = __ballot_sync(0xFFFFFFFFu, slot < valid);
        std::uint32_t of_lane_bucket = in_window;  // window lanes whose id is this lane's index
        std::uint32_t peers = in_window;           // window lanes whose id is this key's
#pragma unroll
        for (int k = 0; k < IdBits; ++k) {
          const std::uint32_t set = __ballot_sync(0xFFFFFFFFu, (id >> k) & 1u);
          if constexpr (IdBits <= 2) peers &= (id >> k) & 1u ? set : ~set;
          of_lane_bucket &= ~(set ^ bucket_bit[k]);
        }
        if constexpr (IdBits > 2) peers = __shfl_sync(0xFFFFFFFFu, of_lane_bucket, int(id));
        const std::uint32_t before = __shfl_sync(0xFFFFFFFFu, total, int(id));
        id_and_rank[j] = id | ((before + __popc(peers & lanes_below())) << 5);
        total += __popc(of_lane_bucket);
      }
    };
    const bool full = valid == sub_keys;
    if (full) rank_windows(std::true_type{});
    else rank_windows(std::false_type{});

    // Lane b: the sub-tile slot of bucket b's first key (exclusive scan in bucket order).
    std::uint32_t inclusive = total;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const std::uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
      if (lane >= std::uint32_t(d)) inclusive += y;
    }
    const std::uint32_t start = inclusive - total;
    __syncwarp();  // every lane holds its keys before any lane overwrites the buffer

    // Place in bucket order (§4.7), stable: slot = start of the id + rank.
#pragma unroll
    for (int j = 0; j < windows; ++j) {
      // The shuffle reads the lane index's low 5 bits: the id.
      const std::uint32_t to = __shfl_sync(0xFFFFFFFFu, start, int(id_and_rank[j])) + (id_and_rank[j] >> 5);
      if (full || j * 32 + lane < valid) {
        stage[to] = keys[j];
        if constexpr (ValueBytes != 0) value_stage[to] = values[j];
        if constexpr (store_ids) slot_id[to] = std::uint8_t(id_and_rank[j] & 31u);
      }
    }
    __syncwarp();

    // Write out in slot order: lane-strided, each bucket's run a coalesced stretch.
    // Global slot - sub-tile slot of bucket `lane` (>= 0: the sub-tile's keys of lower buckets
    // are among the keys of lower buckets before the cursor).
    const std::uint32_t shift = cursor - start;
    K* const keys_out = p.keys_out + lane;  // + shift of the slot's bucket + j * 32
    V* const values_out = ValueBytes != 0 ? static_cast<V*>(p.values_out) + lane : nullptr;
#pragma unroll
    for (int j = 0; j < windows; ++j) {
      const std::uint32_t slot = j * 32 + lane;
      const K key = stage[slot];
      std::uint32_t id;
      if constexpr (store_ids) id = slot_id[slot];
      else id = id_of(key);  // stale slots past `valid` give some id too: the shuffle needs all lanes
      const std::size_t to = std::size_t(__shfl_sync(0xFFFFFFFFu, shift, int(id))) + j * 32;
      if (full || slot < valid) {
        keys_out[to] = key;
        if constexpr (ValueBytes != 0) values_out[to] = value_stage[slot];
      }
    }
    cursor += total;
  }
}

}  // namespace radixmesh::device::multisplit_detail
