// radixmesh/device/multisplit/plan.cuh — one pass of a split on the host side: how the input is cut
// into chunks (one block each, one column of H), the temporary storage a pass needs, and the
// launches of one pass (count, scan H, scatter).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>
#include <cub/device/device_scan.cuh>

#include "radixmesh/device/multisplit/bucket_functors.cuh"
#include "radixmesh/device/multisplit/common.cuh"
#include "radixmesh/device/multisplit/counter_scatter_pass.cuh"
#include "radixmesh/device/multisplit/counting_pass.cuh"
#include "radixmesh/device/multisplit/scatter_pass.cuh"
#include "radixmesh/device/multisplit/warp_scatter_pass.cuh"

namespace radixmesh::device::multisplit_detail {

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

// Entries of H that the temp storage holds room for: one column per warp part at m <= 32, so
// that every scatter pass fits, whichever the tuning picks at launch.
inline std::size_t h_capacity(std::uint32_t m, std::uint32_t num_chunks) {
  return std::size_t(m) * num_chunks * (m <= max_warp_scatter_buckets ? block_warps : 1);
}

// Temp storage of one pass: H, its scan, CUB's scan scratch.
template <class K> std::size_t one_pass_temp_bytes(std::size_t n, std::uint32_t m, int sm_count, std::size_t& cub_bytes) {
  const auto plan = plan_chunks<K>(n, m, sm_count);
  const std::size_t entries = h_capacity(m, plan.num_chunks);
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

// Lets `kernel` take more than 48 KB of dynamic shared memory on the current device: raises its
// limit to the device's opt-in maximum once per kernel and device (a driver call on every launch
// before), remembered in a process-wide set.
inline cudaError_t allow_large_shared(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> raised;
  const std::lock_guard<std::mutex> lock(mutex);
  if (raised.count({kernel, device}) != 0) return cudaSuccess;
  status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_shared_bytes()));
  if (status == cudaSuccess) raised.insert({kernel, device});
  return status;
}

// One pass: ids (min(f(key), m_full - 1) >> id_shift) & id_mask in [0, m), m <= 256; keys_out ==
// nullptr counts only (offsets and the checked mode). The counting pass records the first index
// of an id >= m_full in bad_index (when given); the scatter pass writes nothing when
// *stop_if_bad (when given) holds such an index by then. tuning: the kernels to run
// (radixmesh/multisplit_tuning.hpp); the temp storage does not depend on it.
template <class K, int ValueBytes, class F>
cudaError_t run_one_pass(void* temp, const K* keys_in, K* keys_out, const void* values_in, void* values_out,
                         std::uint32_t n, F bucket_fn, std::uint32_t m_full, int id_shift, std::uint32_t id_mask,
                         std::uint32_t m, std::uint32_t* offsets, unsigned long long* bad_index,
                         const unsigned long long* stop_if_bad, int sm_count, cudaStream_t stream,
                         const MultisplitTuning& tuning) {
  const auto plan = plan_chunks<K>(n, m, sm_count);
  const std::size_t capacity = h_capacity(m, plan.num_chunks);
  // The scatter pass: warp-owned parts (m <= 32, when selected), block tiles ranked by per-thread
  // counters (m <= 32, when selected) or block tiles ranked by ballots.
  const bool one_pass = keys_out != nullptr && id_shift == 0 && id_mask == 0xFFFFFFFFu && m == m_full;
  const bool by_warps = one_pass && scatters_by_warps(tuning.scatter_kernel, m, ValueBytes);
  const bool by_counters = one_pass && !by_warps && scatters_by_thread_counters(tuning.scatter_kernel, m, ValueBytes);
  const int counter_words = counter_words_for(m);
  std::size_t cub_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<std::uint32_t*>(nullptr),
                                static_cast<std::uint32_t*>(nullptr), int(capacity > 0 ? capacity : 1));
  auto* counts = static_cast<std::uint32_t*>(temp);
  auto* scanned = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(temp) + align256(capacity * 4 + 4));
  void* cub_temp = static_cast<unsigned char*>(temp) + 2 * align256(capacity * 4 + 4);

  Pass<K, F> pass{keys_in, keys_out, values_in, values_out, n, bucket_fn, m_full, id_shift, id_mask, m,
                  plan.tiles_per_chunk, plan.num_chunks, counts, bad_index, false, false};
  pass.columns_per_chunk = by_warps ? std::uint32_t(block_warps) : 1u;
  const std::size_t entries = std::size_t(m) * pass.columns();  // the H this pass fills (<= capacity)
  pass.match_any = ranks_with_match_any(tuning.rank_method, m);
  pass.table_bytes = lookup_table_bytes(bucket_fn);
  pass.vector_loads = reinterpret_cast<std::uintptr_t>(keys_in) % 16 == 0 &&
                      (ValueBytes == 0 || reinterpret_cast<std::uintptr_t>(values_in) % 16 == 0);
  cudaError_t status = cudaSuccess;
  if (n > 0) {
    // Tile buffers of the scatter pass: two (the next tile streams in while this one is worked
    // on), one when two do not fit or the tuning says so.
    int stages = tuning.scatter_stages != 0 ? tuning.scatter_stages : default_scatter_stages;
    if (stages == 2 && (downsweep_shared_bytes<K, ValueBytes>(m, 2) + align16(pass.table_bytes) > max_shared_bytes() ||
                        plan.tiles_per_chunk < 2))
      stages = 1;
    const std::size_t scatter_base =
        by_warps      ? warp_scatter_shared_bytes<K, ValueBytes, F>()
        : by_counters ? (counter_words == 1 ? counter_scatter_shared_bytes<K, ValueBytes, F, 1>()
                                            : counter_scatter_shared_bytes<K, ValueBytes, F, 16>())
                      : downsweep_shared_bytes<K, ValueBytes>(m, stages);
    // The table goes to shared memory when the scatter pass still fits with it.
    if (keys_out != nullptr && scatter_base + align16(pass.table_bytes) > max_shared_bytes()) pass.table_bytes = 0;
    const std::size_t upsweep_shared = align16(pass.table_bytes) + upsweep_counter_bytes(m);
    if ((status = allow_large_shared(reinterpret_cast<const void*>(upsweep_kernel<K, F>), upsweep_shared)) !=
        cudaSuccess)
      return status;
    upsweep_kernel<K, F><<<plan.num_chunks, block_threads, upsweep_shared, stream>>>(pass);
    if ((status = cudaGetLastError()) != cudaSuccess) return status;
    pass.bad_index = nullptr;  // counted once, above; the scatter pass only looks at the verdict
    pass.stop_if_bad = stop_if_bad;
    status = cub::DeviceScan::ExclusiveSum(cub_temp, cub_bytes, counts, scanned, int(entries), stream);
    if (status != cudaSuccess) return status;
    if (by_warps) {
      // The id class: one ballot per window for m <= 2, five up to 32.
      auto* kernel = m <= 2 ? warp_scatter_kernel<K, ValueBytes, F, 1> : warp_scatter_kernel<K, ValueBytes, F, 5>;
      std::size_t shared = scatter_base + align16(pass.table_bytes);
      if constexpr (sizeof(K) + ValueBytes == 4) {  // the 8-window tuning (4-byte keys only)
        if (tuning.warp_scatter_windows == 8) {
          kernel = m <= 2 ? warp_scatter_kernel<K, ValueBytes, F, 1, 8> : warp_scatter_kernel<K, ValueBytes, F, 5, 8>;
          shared = warp_scatter_shared_bytes<K, ValueBytes, F, 8>() + align16(pass.table_bytes);
        }
      }
      if ((status = allow_large_shared(reinterpret_cast<const void*>(kernel), shared)) != cudaSuccess) return status;
      kernel<<<plan.num_chunks, block_threads, shared, stream>>>(pass, scanned);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    } else if (by_counters) {
      auto* kernel = counter_words == 1 ? counter_scatter_kernel<K, ValueBytes, F, 1>
                                        : counter_scatter_kernel<K, ValueBytes, F, 16>;
      const std::size_t shared = scatter_base + align16(pass.table_bytes);
      if ((status = allow_large_shared(reinterpret_cast<const void*>(kernel), shared)) != cudaSuccess) return status;
      kernel<<<plan.num_chunks, block_threads, shared, stream>>>(pass, scanned);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    } else if (keys_out != nullptr) {
      const std::size_t shared = scatter_base + align16(pass.table_bytes);
      // The id class (ballots per window): 5 bits for m <= 32, 8 for m <= 256.
      const bool small_ids = bit_width(m - 1) <= 5;
      auto* kernel = small_ids ? downsweep_kernel<K, ValueBytes, F, 5> : downsweep_kernel<K, ValueBytes, F, max_id_bits>;
      if ((status = allow_large_shared(reinterpret_cast<const void*>(kernel), shared)) != cudaSuccess) return status;
      kernel<<<plan.num_chunks, block_threads, shared, stream>>>(pass, scanned, stages);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
    }
  }
  if (offsets != nullptr) {
    offsets_from_counts_kernel<><<<(m + 256) / 256, 256, 0, stream>>>(scanned, n > 0 ? pass.columns() : 0, m, n,
                                                                    offsets);
    status = cudaGetLastError();
  }
  return status;
}

}  // namespace radixmesh::device::multisplit_detail
