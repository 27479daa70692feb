// radixmesh/device/multisplit/scatter_pass.cuh — pass 3 of a split: each block walks its chunk tile
// by tile and writes every key (and value) to its bucket's next free slot, stably.
//
// Per tile of 4096 keys (256 threads x 16 keys held in registers):
//  1. load: warp w owns tile slots [512 w, 512 (w + 1)), read as 16 windows of 32 consecutive keys
//     (window j is slot 512 w + 32 j + lane: coalesced 128-byte loads, all 16 issued before use).
//  2. rank (§5.4-5.5): per window, the lanes with this lane's id (IdBits ballots or one
//     __match_any_sync); the highest of them adds their number to the warp's counter of the id
//     with one shared atomic and passes the old value to the others by shuffle: a key's rank
//     among its warp's keys of its id is that value plus its peers on lower lanes. Windows go in
//     groups of 4: all 4 atomics are issued (predicated, no branch) before the first shuffle
//     waits for one, so their latencies overlap (groups of 8 spill at 64 registers); the
//     atomics of one warp are performed in issue order (as CUB's BlockRadixRankMatchEarlyCounts
//     relies on).
//  3. one block-wide bucket-major scan over the warps x m counters: the tile slot of warp w's first
//     key of each id, and each id's shift from tile slots to global ones (the chunk's running start
//     from the scanned H).
//  4. reorder (§4.7, §5.6): every key to its slot in shared memory (the tile sorted by id, stable),
//     its id beside it (one byte); write out in slot order, so a bucket's run of keys goes out as
//     contiguous, coalesced stores.
//  5. pairs: the tile's values stream into a shared staging buffer (16-byte cp.async, no
//     registers held) while the keys are ranked and written; then they take the keys' way through
//     the exchange buffer to the same places. The next tile's values start streaming as soon as
//     this tile's staging buffer is read.
// Barriers per tile: 3 (keys), 5 (pairs). Each warp zeroes its own counters right after it read
// them in step 4, so the next tile needs no extra barrier.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"
#include "radixmesh/device/multisplit/tile_copy.cuh"
#include "radixmesh/device/multisplit/warp_match.cuh"

namespace radixmesh::device::multisplit_detail {

// atomicAdd(address, value) on shared memory where `predicate` holds, returning the old value
// there (0 elsewhere), as one predicated instruction: no branch, so the atomics of several windows
// can be in flight before the first result is used.
__device__ __forceinline__ std::uint32_t shared_add_where(bool predicate, std::uint32_t* address, std::uint32_t value) {
  std::uint32_t old = 0;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p atom.shared.add.u32 %0, [%2], %3;\n\t}"
               : "+r"(old)
               : "r"(std::uint32_t(predicate)), "r"(unsigned(__cvta_generic_to_shared(address))), "r"(value));
  return old;
}

// Shared memory of the scatter pass without the functor's table: the exchange buffer (a tile of
// keys, then of values), the values' staging buffer, warps x m counters, running starts, shifts,
// warp sums, the slot ids.
template <class K, int ValueBytes> constexpr std::size_t scatter_shared_bytes(std::uint32_t m) {
  constexpr std::size_t slot_bytes = sizeof(K) > std::size_t(ValueBytes) ? sizeof(K) : std::size_t(ValueBytes);
  return align16(std::size_t(tile_keys<K>) * slot_bytes) + std::size_t(tile_keys<K>) * ValueBytes +
         (std::size_t(block_warps) * m + 2 * std::size_t(m) + block_warps) * 4 + std::size_t(tile_keys<K>);
}

// Blocks per SM the scatter pass is built for: 4 (<= 64 registers: 16 keys and 16 packed ranks per
// thread), 50 % of the SM's warps; shared memory (~30 KB at m = 256) allows more.
constexpr int scatter_min_blocks = 4;

template <class K, int ValueBytes, class F, int IdBits>
__global__ void __launch_bounds__(block_threads, scatter_min_blocks)
    scatter_kernel(Pass<K, F> p, const std::uint32_t* scanned_counts) {
  static_assert(IdBits <= 8, "ids of one pass fit in the one-byte slot id");
  using V = typename value_slot<ValueBytes>::type;
  constexpr int items = items_per_thread<K>;
  constexpr int tile = tile_keys<K>;
  constexpr int warp_keys = 32 * items;
  constexpr std::size_t slot_bytes = sizeof(K) > std::size_t(ValueBytes) ? sizeof(K) : std::size_t(ValueBytes);
  extern __shared__ uint4 shared_raw[];
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, shared_raw);
  unsigned char* cursor = reinterpret_cast<unsigned char*>(shared_raw) + align16(p.table_bytes);
  K* const key_exchange = reinterpret_cast<K*>(cursor);
  V* const value_exchange = reinterpret_cast<V*>(cursor);
  cursor += align16(std::size_t(tile) * slot_bytes);
  V* const value_stage = reinterpret_cast<V*>(cursor);
  cursor += std::size_t(tile) * ValueBytes;
  std::uint32_t* const warp_count = reinterpret_cast<std::uint32_t*>(cursor);  // [warp * m + id]
  std::uint32_t* const running = warp_count + block_warps * p.m;  // the chunk's next global slot per id
  std::uint32_t* const slot_shift = running + p.m;                // global slot - tile slot, per id
  std::uint32_t* const warp_sums = slot_shift + p.m;
  std::uint8_t* const slot_id = reinterpret_cast<std::uint8_t*>(warp_sums + block_warps);

  const std::uint32_t chunk = blockIdx.x;
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t* const my_count = warp_count + warp * p.m;
  if (threadIdx.x < p.m) running[threadIdx.x] = scanned_counts[std::size_t(threadIdx.x) * p.num_chunks + chunk];
  for (std::uint32_t i = threadIdx.x; i < block_warps * p.m; i += block_threads) warp_count[i] = 0;
  __syncthreads();
  const std::size_t chunk_begin = std::size_t(chunk) * p.tiles_per_chunk * tile;
  std::size_t chunk_end = chunk_begin + std::size_t(p.tiles_per_chunk) * tile;
  if (chunk_end > p.n) chunk_end = p.n;

  [[maybe_unused]] auto start_values_copy = [&](std::size_t base) {
    if constexpr (ValueBytes != 0) {
      const std::uint32_t valid = chunk_end - base < std::size_t(tile) ? std::uint32_t(chunk_end - base) : tile;
      start_tile_copy<ValueBytes, tile>(p.values_in, base, valid, p.vector_loads, value_stage);
      copy_async_commit();
    }
  };
  if constexpr (ValueBytes != 0)
    if (chunk_begin < chunk_end) start_values_copy(chunk_begin);

  auto scatter_tile = [&](std::size_t base, std::uint32_t valid, auto full_tile) {
    constexpr bool full = decltype(full_tile)::value;
    const std::uint32_t warp_first = warp * warp_keys;
    K keys[items];
    // id | (rank among the warp's keys of the id) << 8 (while ranking: lower peers << 8 | leader
    // << 24); after the reorder, the key's tile slot.
    std::uint32_t ranked[items];
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint32_t slot = warp_first + j * 32 + lane;
      if (full || slot < valid) keys[j] = p.keys_in[base + slot];
      else keys[j] = K{};
    }
    constexpr int group = 4;
#pragma unroll
    for (int first = 0; first < items; first += group) {
      std::uint32_t before[group];
#pragma unroll
      for (int g = 0; g < group; ++g) {
        const int j = first + g;
        const std::uint32_t id = p.id_of(fn, keys[j], 0, false);
        std::uint32_t peers = warp_peers<IdBits>(id, p.match_any);
        if constexpr (!full) peers &= __ballot_sync(0xFFFFFFFFu, warp_first + j * 32 + lane < valid);
        const int leader = 31 - __clz(peers);  // -1 on a lane past `valid` (no peers): never a leader
        before[g] = shared_add_where(int(lane) == leader, &my_count[id], std::uint32_t(__popc(peers)));
        ranked[j] = id | (std::uint32_t(__popc(peers & lanes_below())) << 8) | (std::uint32_t(leader & 31) << 24);
      }
#pragma unroll
      for (int g = 0; g < group; ++g) {
        const int j = first + g;
        const std::uint32_t leader = ranked[j] >> 24;
        const std::uint32_t base_rank = __shfl_sync(0xFFFFFFFFu, before[g], int(leader));
        ranked[j] = (ranked[j] & 0xFFFFFFu) + (base_rank << 8);
      }
    }
    __syncthreads();

    // Bucket-major scan of the counters (one id per thread): warp_count[w * m + b] becomes the
    // tile slot of warp w's first key of id b; slot_shift[b] maps tile slots of id b to global ones.
    {
      const std::uint32_t b = threadIdx.x;
      std::uint32_t count[block_warps];
      std::uint32_t total = 0;
#pragma unroll
      for (int w = 0; w < block_warps; ++w) {
        count[w] = b < p.m ? warp_count[w * p.m + b] : 0;
        total += count[w];
      }
      std::uint32_t tile_total;
      std::uint32_t start = block_exclusive_scan(total, warp_sums, tile_total);
      if (b < p.m) {
        slot_shift[b] = running[b] - start;
        running[b] += total;
#pragma unroll
        for (int w = 0; w < block_warps; ++w) {
          warp_count[w * p.m + b] = start;
          start += count[w];
        }
      }
    }
    __syncthreads();

    // Reorder in shared memory: the tile sorted by id, stable. The warp's counters are read here
    // for the last time in this tile: zero them for the next one (after every lane's read).
#pragma unroll
    for (int j = 0; j < items; ++j) {
      if (full || warp_first + j * 32 + lane < valid) {
        const std::uint32_t id = ranked[j] & 0xFFu;
        const std::uint32_t to = my_count[id] + (ranked[j] >> 8);
        key_exchange[to] = keys[j];
        slot_id[to] = std::uint8_t(id);
        ranked[j] = to;
      }
    }
    __syncwarp();
    for (std::uint32_t i = lane; i < p.m; i += 32) my_count[i] = 0;
    __syncwarp();
    __syncthreads();

    // Write in slot order: consecutive threads hold consecutive slots of one id most of the time.
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint32_t slot = j * block_threads + threadIdx.x;
      if (full || slot < valid) p.keys_out[slot_shift[slot_id[slot]] + slot] = key_exchange[slot];
    }
    if constexpr (ValueBytes != 0) {
      // The values take the keys' way: from the staging buffer (the keys' slots) to the exchange
      // buffer (the keys' tile slots, `ranked`), then out in slot order.
      copy_async_wait_all();
      __syncthreads();  // the staged values visible, every key read from the exchange buffer
#pragma unroll
      for (int j = 0; j < items; ++j) {
        const std::uint32_t slot = warp_first + j * 32 + lane;
        if (full || slot < valid) value_exchange[ranked[j]] = value_stage[slot];
      }
      __syncthreads();
      if (base + tile < chunk_end) start_values_copy(base + tile);  // the staging buffer is free again
      V* values_out = static_cast<V*>(p.values_out);
#pragma unroll
      for (int j = 0; j < items; ++j) {
        const std::uint32_t slot = j * block_threads + threadIdx.x;
        if (full || slot < valid) values_out[slot_shift[slot_id[slot]] + slot] = value_exchange[slot];
      }
    }
  };
  for (std::size_t base = chunk_begin; base < chunk_end; base += tile) {
    if (chunk_end - base >= std::size_t(tile)) scatter_tile(base, tile, std::true_type{});
    else scatter_tile(base, std::uint32_t(chunk_end - base), std::false_type{});
  }
}

}  // namespace radixmesh::device::multisplit_detail
