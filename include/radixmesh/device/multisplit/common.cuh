// radixmesh/device/multisplit/common.cuh — what every kernel of the device multisplit shares: the
// block shape, the tile sizes, the per-pass parameters (Pass: how a key becomes an id), the
// resolution of the tuning knobs (radixmesh::MultisplitTuning). Its warp and block scans are
// radixmesh/device/block_scan.cuh's, shared with the top-k kernels.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "radixmesh/device/block_scan.cuh"
#include "radixmesh/multisplit_tuning.hpp"

namespace radixmesh::device::multisplit_detail {

using block_scan::block_exclusive_scan;
using block_scan::lanes_below;
using block_scan::warp_inclusive_scan;

constexpr int block_threads = 256;
constexpr int block_warps = block_threads / 32;
constexpr int max_id_bits = 8;
constexpr std::uint32_t max_one_pass_buckets = 1u << max_id_bits;  // see multisplit.cuh's header comment
static_assert(max_one_pass_buckets <= block_threads, "the scatter pass scans one bucket per thread");

// Keys per thread and per tile (a chunk of the plan is a whole number of tiles).
template <class K> constexpr int items_per_thread = sizeof(K) == 8 ? 8 : 16;
template <class K> constexpr int tile_keys = block_threads * items_per_thread<K>;

template <int Bytes> struct raw_of;
template <> struct raw_of<1> { using type = std::uint8_t; };
template <> struct raw_of<2> { using type = std::uint16_t; };
template <> struct raw_of<4> { using type = std::uint32_t; };
template <> struct raw_of<8> { using type = std::uint64_t; };
template <int ValueBytes> struct value_slot { using type = typename raw_of<ValueBytes>::type; };
template <> struct value_slot<0> { using type = std::uint32_t; };  // unused

__host__ __device__ constexpr std::size_t align16(std::size_t x) { return (x + 15) & ~std::size_t(15); }

// Everything one pass needs. The id of a key is (min(f(key), m_full - 1) >> id_shift) & id_mask,
// in [0, m): the whole id for one pass, one digit of it for each of the two passes of a large m.
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
  std::uint32_t* counts;  // H, bucket-major: counts[b * columns() + column], see columns_per_chunk
  unsigned long long* bad_index;
  bool vector_loads;  // inputs 16-byte aligned: 16-byte loads and cp.async copies
  bool match_any;     // rank with __match_any_sync instead of ballots
  std::uint32_t table_bytes = 0;  // the functor's lookup table, copied to shared memory (0: not)
  // Columns of H per chunk: 1 (the block-tile scatter pass: column = chunk), or block_warps (the
  // warp-owned scatter pass: warp w of a chunk owns its w-th contiguous eighth, column = chunk *
  // block_warps + w, and the counting pass counts per warp to match).
  std::uint32_t columns_per_chunk = 1;
  // The checked mode's guard on the scatter passes: when set and the counting pass found an id
  // >= m (*stop_if_bad is no longer ~0), every block returns before writing anything, so the
  // outputs stay untouched and the caller learns of the bad key from one read after the split.
  const unsigned long long* stop_if_bad = nullptr;

  __host__ __device__ std::uint32_t columns() const { return num_chunks * columns_per_chunk; }
  __device__ __forceinline__ bool stopped() const { return stop_if_bad != nullptr && *stop_if_bad != ~0ull; }

  // Tile t (of Tile keys) of chunk `chunk`: its first key, and how many keys it holds (0 past the
  // chunk or the input). The block scatter passes walk their chunk with these.
  template <int Tile> __device__ __forceinline__ std::size_t tile_begin(std::uint32_t chunk, std::uint32_t t) const {
    return (std::size_t(chunk) * tiles_per_chunk + t) * Tile;
  }
  template <int Tile> __device__ __forceinline__ std::uint32_t tile_valid(std::uint32_t chunk, std::uint32_t t) const {
    const std::size_t base = tile_begin<Tile>(chunk, t);
    if (t >= tiles_per_chunk || base >= n) return 0;
    return n - base < std::size_t(Tile) ? std::uint32_t(n - base) : std::uint32_t(Tile);
  }

  // The id of a one-pass split (id_shift 0, the full mask, m == m_full), as the warp-owned and
  // thread-counter scatter passes compute it: the clamp to m - 1 only, without id_of's run-time
  // shift and mask; the checked mode's report is the counting pass's.
  __device__ __forceinline__ std::uint32_t one_pass_id_of(const F& fn, K key) const {
    const std::uint32_t raw = fn(key);
    return raw < m - 1 ? raw : m - 1;
  }

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

// The knobs of radixmesh::MultisplitTuning (radixmesh/multisplit_tuning.hpp), under short names.
using RankMethod = MultisplitRankMethod;
using ScatterKernel = MultisplitScatterKernel;

__host__ __device__ inline bool ranks_with_match_any(RankMethod method, std::uint32_t m) {
  return method == RankMethod::match_any || (method == RankMethod::automatic && m <= 4);
}

constexpr std::uint32_t max_warp_scatter_buckets = 32;     // lane b holds bucket b's cursor
constexpr std::uint32_t max_counter_scatter_buckets = 32;  // two 16-bit counters per word, 16 words

// The scatter pass that `kernel` (MultisplitTuning::scatter_kernel) runs for m buckets and values of value_bytes.
inline ScatterKernel chosen_scatter_kernel(ScatterKernel kernel, std::uint32_t m, int value_bytes) {
  if (m > max_warp_scatter_buckets || m > max_counter_scatter_buckets) return ScatterKernel::block_tiles;
  if (kernel != ScatterKernel::automatic) return kernel;
  if (value_bytes != 0) return ScatterKernel::block_tiles;
  return m <= 2 ? ScatterKernel::warp_owned : ScatterKernel::thread_counters;
}
inline bool scatters_by_warps(ScatterKernel kernel, std::uint32_t m, int value_bytes) {
  return chosen_scatter_kernel(kernel, m, value_bytes) == ScatterKernel::warp_owned;
}
inline bool scatters_by_thread_counters(ScatterKernel kernel, std::uint32_t m, int value_bytes) {
  return chosen_scatter_kernel(kernel, m, value_bytes) == ScatterKernel::thread_counters;
}

}  // namespace radixmesh::device::multisplit_detail
