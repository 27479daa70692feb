// The GPU top-k's plan: the path's parameters and the layout of the caller's temporary storage.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

// Rows shorter than this never take the delegate path. Rows sweeps on an H200 (bench_topk
// --rows-sweep, k = 50, 2^27 values; docs/design/topk.md): raw one-block rows 2.05 / 1.77 / 1.68 ms
// at 2^12 / 2^13 / 2^14, delegates 2.43-2.98 / 1.39-1.65 / 0.93-1.04 ms: the delegates win from
// 2^13.
constexpr std::uint64_t kMinDelegateRow = std::uint64_t(1) << 13;
// The per-row kernels take the row from blockIdx.y: a launch covers at most this many rows.
constexpr std::size_t kMaxChunkRows = 65535;
// The one-block select's automatic choice (k <= 2048), from a rows sweep on an H200
// (bench_topk --only rows --rows-sweep at 14fd175, k = 50, 2^27 values; docs/design/topk.md): raw
// rows take it up to kBlockSelectMaxRow (one block 2.19 / 2.11 ms at 2^13 / 2^14 against
// multi-block 2.54 / 2.41; from 2^15 multi-block wins, 2.36 vs 2.93), rows with
// delegates from kBlockSelectMinDelegateRow (multi-block 1.113 / 0.744 ms at 2^13 / 2^14 against
// 1.185 / 0.757; one block from 2^15: 0.495 vs 0.514, 0.402 vs 0.430 at 2^16).
constexpr std::uint64_t kBlockSelectMaxRow = std::uint64_t(1) << 14;
constexpr std::uint64_t kBlockSelectMinDelegateRow = std::uint64_t(1) << 15;

// Rows with at most this many delegates run their delegate select in one block per row
// (block_delegate_select); more, in multi-block passes. H200, bench_topk --ab (docs/design/topk.md):
// one block wins at 2^10 delegates per row (4096x32768 k=50: 0.516 vs 0.555 ms) and loses at 2^15
// (16x2^22 k=512: 0.293 vs 0.210; 64x2^22: 0.794 vs 0.719); 2^12 lies between, unmeasured.
constexpr std::uint64_t kBlockDelegateSelectMax = std::uint64_t(1) << 12;

// The sample-select path's automatic choice (TopkTuning::sample_select = -1): single rows of at
// least kSampleSelectMinRow values with k >= kSampleSelectMinK (every width), and 32-bit keys in
// rows of at least kSampleSelectMinRow32 with k >= kSampleSelectMinK32. Measured (H200, binaries
// of 021b82b, f32 n = 2^28, bench_topk
// --ab-sample, sample path with the tile-compaction read vs delegates): k = 16 0.376 vs 0.325,
// 1024 0.378 vs 0.368, 4096 0.384 vs 0.421, 65536 0.415 vs 0.649, 2^20 0.539 vs 1.324 ms;
// U[128.6,128.7] k = 1024 0.383 vs 0.375; f16 / bf16 k = 1024 0.390 / 0.417 vs 0.224 / 0.227 (so
// 16-bit keys keep the 2^20 rule). Rows shorter than 2^27 and 64-bit keys were not timed.
constexpr std::uint64_t kSampleSelectMinK = std::uint64_t(1) << 20;
constexpr std::uint64_t kSampleSelectMinRow = std::uint64_t(1) << 20;
constexpr std::uint64_t kSampleSelectMinK32 = 4096;
constexpr std::uint64_t kSampleSelectMinRow32 = std::uint64_t(1) << 27;

struct GpuPlan {
  std::size_t key_bytes = 4, rows = 1, k = 1, max_len = 0, chunk_rows = 1;
  int W = 32, IB = 0, alpha = 0, beta = 1, digit_bits = 11;
  bool block_select = false;
  bool block_delegate_select = false;
  bool five_blocks = false;  // the delegate pass at 5 blocks per SM (TopkTuning::delegate_pass_five_blocks)
  unsigned grid_x = 1;
  std::uint64_t cand_cap = 0;
  // Sample select (topk_sample_select.cuh): the sample's size, the bound's sample rank and
  // tolerance, the stable filters' tiles (of the whole row) and persistent grid, the select grid.
  bool sample = false;
  std::uint64_t sample_count = 0, sample_r = 0, sample_slack = 0, filter_tiles = 0;
  unsigned filter_grid = 1, sample_select_grid = 1;
  std::size_t off_sample = 0, off_status = 0, off_tickets = 0;
  // The full read by tile compaction (topk_compact_read.cuh): its tiles, its one-wave grid, the
  // per-tile records and the staging list (cand_cap places).
  std::uint64_t compact_tiles = 0;
  unsigned compact_grid = 1;
  std::size_t off_tile_count = 0, off_tile_offset = 0, off_tile_place = 0, off_stage_rank = 0, off_stage_idx = 0;
  std::size_t off_state = 0, off_dstate = 0, off_hist = 0, hist_bytes = 0, off_counters = 0, off_delegates = 0, off_delegate_off = 0, off_row_max = 0, off_row_min = 0, off_sstate = 0,
              off_cand_rank = 0, off_cand_idx = 0, off_cand_count = 0, off_qual_list = 0, off_qual_count = 0, off_win_count = 0, off_win_rank = 0,
              off_win_idx = 0, off_alt_rank = 0, off_alt_idx = 0, off_segments = 0, off_cub = 0, cub_bytes = 0;
  std::size_t temp_bytes = 0;
};

GpuPlan plan_gpu(const device::TopkProblem& problem, int device);

template <class U> void launch(const GpuPlan& plan, void* temp, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
