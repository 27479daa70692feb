// radixmesh/device/multisplit/counting_pass.cuh — pass 1 of a split: every chunk's count of every
// id (the bucket-major matrix H, m x chunks, that a scan turns into each chunk's starts), plus
// the offsets of a one-pass split and the global histogram of the m > 4096 path.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"

namespace radixmesh::device::multisplit_detail {

// How the counting pass counts, by m:
//  - m <= 32: one counter per thread and id in shared memory (counter[id * 256 + thread]); a key
//    costs one shared atomic on a word no other thread touches, in the thread's own bank: no
//    same-address serialization (the hazard of skewed ids at small m) and no bank conflicts.
//    32 KB per block at m = 32.
//  - m > 32: one shared atomic per key into per-warp histogram copies (warps share a copy
//    round-robin, at most 48 KB), where same-id keys of one window are rare unless skewed.
// Measured (H200, 2^28 u32 keys, the counting pass alone): m = 2 and 32 take 0.25 ms with the
// per-thread counters, against 0.53-0.55 ms with the paper's Alg. 2 (five ballots per window,
// lane b counting bucket b in a register; ~25 instructions per window against ~4: it was
// issue-bound); m = 256 takes 0.27 ms (ncu: DRAM 87-92 % in both). bench_multisplit's
// "counting pass only" diagnostic times it.
constexpr std::uint32_t max_thread_counter_buckets = 32;

__host__ __device__ inline std::uint32_t upsweep_copies(std::uint32_t m) {
  if (m <= max_thread_counter_buckets) return block_threads;
  const std::uint32_t copies = 12288u / m;
  return copies < 1 ? 1 : (copies > block_warps ? block_warps : copies);
}

// Shared memory of the counting pass besides the functor's table.
inline std::size_t upsweep_counter_bytes(std::uint32_t m) { return std::size_t(upsweep_copies(m)) * m * 4; }

// Counts per chunk: H[b * num_chunks + chunk], or per warp part of a chunk for the warp-owned
// scatter pass (Pass::columns_per_chunk). Two tiles per step (8 independent 16-byte loads per
// thread in flight when the keys are aligned).
template <class K, class F>
__global__ void __launch_bounds__(block_threads) upsweep_kernel(Pass<K, F> p) {
  extern __shared__ uint4 upsweep_shared[];  // the functor's table, then the counters
  const F fn = with_shared_table(p.bucket_fn, p.table_bytes, upsweep_shared);
  std::uint32_t* const bucket_count =
      reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(upsweep_shared) + align16(p.table_bytes));
  constexpr int items = 2 * items_per_thread<K>;
  constexpr int step = 2 * tile_keys<K>;
  constexpr int keys_per_vector = 16 / sizeof(K);
  const std::uint32_t copies = upsweep_copies(p.m);
  for (std::uint32_t b = threadIdx.x; b < copies * p.m; b += block_threads) bucket_count[b] = 0;
  __syncthreads();
  const std::uint32_t chunk = blockIdx.x;
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::size_t chunk_begin = std::size_t(chunk) * p.tiles_per_chunk * tile_keys<K>;
  std::size_t chunk_end = chunk_begin + std::size_t(p.tiles_per_chunk) * tile_keys<K>;
  if (chunk_end > p.n) chunk_end = p.n;

  // The chunk's keys, each given to count(key, index, valid); one copy of the loop per counting
  // method (the method is uniform, so each loop is straight-line code).
  auto for_each_key = [&](auto&& count) {
    for (std::size_t base = chunk_begin; base < chunk_end; base += step) {
      const std::uint32_t valid =
          chunk_end - base < std::size_t(step) ? std::uint32_t(chunk_end - base) : std::uint32_t(step);
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
          for (int e = 0; e < keys_per_vector; ++e) count(keys[e], first + e, true);
        }
      } else {
        for (int j = 0; j < items; ++j) {
          const std::uint32_t index = std::uint32_t(base) + j * block_threads + threadIdx.x;
          const bool valid_key = index < chunk_end;
          count(p.keys_in[valid_key ? index : base], index, valid_key);
        }
      }
    }
  };
  // Warp w walks the w-th contiguous eighth of the chunk alone (the warp-owned scatter pass's
  // part): 8 and then 1 16-byte loads per lane per step, plain loads for the rest.
  auto for_each_key_of_warp = [&](auto&& count) {
    const std::size_t part_keys = std::size_t(p.tiles_per_chunk) * tile_keys<K> / block_warps;
    std::size_t i = chunk_begin + warp * part_keys;
    const std::size_t end = i + part_keys < chunk_end ? i + part_keys : chunk_end;
    auto vectors_per_lane = [&](auto vectors) {
      constexpr int count_vectors = decltype(vectors)::value;
      constexpr std::size_t step = std::size_t(count_vectors) * 32 * keys_per_vector;
      for (; i + step <= end; i += step) {
        const uint4* src = reinterpret_cast<const uint4*>(p.keys_in + i);
        uint4 r[count_vectors];
#pragma unroll
        for (int v = 0; v < count_vectors; ++v) r[v] = src[v * 32 + lane];
#pragma unroll
        for (int v = 0; v < count_vectors; ++v) {
          K keys[keys_per_vector];
          memcpy(keys, &r[v], sizeof keys);
          const std::uint32_t first = std::uint32_t(i) + (v * 32 + lane) * keys_per_vector;
#pragma unroll
          for (int e = 0; e < keys_per_vector; ++e) count(keys[e], first + e, true);
        }
      }
    };
    if (p.vector_loads) {
      vectors_per_lane(std::integral_constant<int, 8>{});
      vectors_per_lane(std::integral_constant<int, 1>{});
    }
    for (; i < end; i += 32) {
      const std::size_t index = i + lane;
      const bool valid_key = index < end;
      count(p.keys_in[valid_key ? index : i], std::uint32_t(index), valid_key);
    }
  };
  if (p.m <= max_thread_counter_buckets) {
    std::uint32_t* const mine = bucket_count + threadIdx.x;
    auto count = [&](K key, std::uint32_t index, bool valid_key) {
      const std::uint32_t id = p.id_of(fn, key, index, valid_key);
      if (valid_key) atomicAdd(&mine[id * block_threads], 1u);
    };
    if (p.columns_per_chunk == block_warps) for_each_key_of_warp(count);
    else for_each_key(count);
  } else {
    std::uint32_t* const my_copy = bucket_count + (warp % copies) * p.m;
    for_each_key([&](K key, std::uint32_t index, bool valid_key) {
      const std::uint32_t id = p.id_of(fn, key, index, valid_key);
      if (valid_key) atomicAdd(&my_copy[id], 1u);
    });
  }
  __syncthreads();
  if (p.m <= max_thread_counter_buckets && p.columns_per_chunk == block_warps) {
    // Column per warp: lane b sums bucket b over the warp's 32 threads, starting at its own lane
    // so that the 32 lanes read 32 different banks.
    if (lane < p.m) {
      std::uint32_t total = 0;
#pragma unroll
      for (int k = 0; k < 32; ++k) total += bucket_count[lane * block_threads + warp * 32 + ((lane + k) & 31u)];
      p.counts[std::size_t(lane) * p.columns() + chunk * block_warps + warp] = total;
    }
  } else if (p.m <= max_thread_counter_buckets) {
    // Warp w sums buckets w, w + 8, ...: 256 counters each, 8 per lane, then a warp reduction.
    for (std::uint32_t b = warp; b < p.m; b += block_warps) {
      std::uint32_t total = 0;
#pragma unroll
      for (int k = 0; k < block_threads / 32; ++k) total += bucket_count[b * block_threads + k * 32 + lane];
#pragma unroll
      for (int d = 16; d >= 1; d /= 2) total += __shfl_xor_sync(0xFFFFFFFFu, total, d);
      if (lane == 0) p.counts[std::size_t(b) * p.num_chunks + chunk] = total;
    }
  } else {
    for (std::uint32_t b = threadIdx.x; b < p.m; b += block_threads) {
      std::uint32_t total = 0;
      for (std::uint32_t c = 0; c < copies; ++c) total += bucket_count[c * p.m + b];
      p.counts[std::size_t(b) * p.num_chunks + chunk] = total;
    }
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

}  // namespace radixmesh::device::multisplit_detail
