// radixmesh/device/multisplit/scatter_pass.cuh — pass 3 of a split: each block walks its chunk tile
// by tile and writes every key (and value) to its bucket's next free slot, stably.
//
// Per tile (4096 keys of 4 bytes): the tile streams into shared memory by 16-byte cp.async (the
// next one into a second buffer while this one is worked on); every warp ranks its windows of 32
// keys one after the other through its shared counters (ballots give each lane its peers, §5.4;
// every lane of an id reads the counter and stores the same new value, §5.5); a block-wide
// bucket-major scan of the warps x m counters gives each key its slot in the tile sorted by id;
// keys (and values) are reordered in shared memory (§4.7, §5.6) and written out in slot order.
//
// A variant without the per-window read/__syncwarp/write chain (16 keys per thread loaded straight
// into registers, all windows of a warp ranked with one predicated shared atomic per id and
// window, values staged by cp.async) measured slower in every case (H200, 2^28 u32,
// bench_multisplit: m = 256 2.17 against 2.08 ms keys, 4.74 against 3.90 pairs; m = 32 1.19
// against 1.17), at 87 instructions per window and 39 % issue against this kernel's 94 and 42 %
// (docs/design/multisplit.md).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"
#include "radixmesh/device/multisplit/tile_copy.cuh"
#include "radixmesh/device/multisplit/warp_match.cuh"
#include "radixmesh/export.hpp"

namespace radixmesh::device::multisplit_detail {

// Shared memory of the scatter pass with `stages` tile buffers (2: the next tile streams in while
// this one is ranked and written), without the functor's table.
template <class K, int ValueBytes> constexpr std::size_t downsweep_shared_bytes(std::uint32_t m, int stages) {
  return std::size_t(tile_keys<K>) * (stages * (sizeof(K) + ValueBytes) + 2) +
         (std::size_t(block_warps) * m + 2 * std::size_t(m) + block_warps) * 4;
}

// Blocks per SM the scatter pass is built for: keys only 4 (<= 64 registers, two tile buffers,
// ~51 KB of shared memory for m = 256); pairs 2 (keys and values of a thread sit in registers
// while the tile is ranked; two tile buffers of keys and values). Pairs with one tile buffer (three
// blocks per SM) measured slower on the H200: 4.30 against 3.88 ms at m = 256, 2^28 pairs.
template <int ValueBytes> constexpr int downsweep_min_blocks = ValueBytes == 0 ? 4 : 2;
constexpr int default_scatter_stages = 2;  // MultisplitTuning::scatter_stages = 0

// 3. Stable scatter of each chunk; scanned_counts = exclusive scan of H. IdBits: the id class
// (5: m <= 32, 8: m <= 256), which fixes the ballots per window of 32 keys. Per tile: rank
// (ballots and per-warp counters, §5.4-5.5), scan the counters bucket-major, reorder the tile
// in shared memory by id (§4.7, §5.6), write it out in tile order.
template <class K, int ValueBytes, class F, int IdBits>
__global__ void __launch_bounds__(block_threads, downsweep_min_blocks<ValueBytes>)
    downsweep_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts, int stages) {
  if (p.stopped()) return;  // checked mode, a bad id: write nothing (the whole block returns)
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
  auto tile_valid = [&](std::uint32_t t) { return p.template tile_valid<tile>(chunk, t); };
  auto start_copy = [&](std::uint32_t t, int buffer) {
    start_stage_copy<ValueBytes, tile, false>(p.keys_in, p.values_in, p.template tile_begin<tile>(chunk, t),
                                              tile_valid(t), p.vector_loads, key_buffers + buffer * tile,
                                              value_buffers + buffer * tile);
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

}  // namespace radixmesh::device::multisplit_detail
