// radixmesh/device/topk.cuh — the device-level top-k: stream-ordered, caller-provided temporary
// storage, no allocation and no synchronization (CUB's contract). For users who keep their data
// on the GPU and compose their own kernels; rxm::topk (topk.hpp) is built on it.
//
//   rxm::device::TopkProblem p{.type = rxm::KeyType::f32, .values = d_scores, .total = n, .rows = 1,
//                              .row_length = n, .max_row_length = n, .k = 1024,
//                              .out_values = d_vals, .out_indices = d_idx};
//   size_t bytes = rxm::device::topk_temp_bytes(p, device);   // 1. ask
//   rxm::DeviceBuffer temp(device, bytes);
//   rxm::device::topk(temp.data(), bytes, p, stream);          // 2. run (stream-ordered)
//
// Semantics are those of topk.hpp (NaN policy, ties by lowest index, padding of short rows).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "radixmesh/export.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::device {

// Where the radix select starts (tuning: benchmarks, tests). Every choice gives the same, exact
// result (topk.hpp's semantics); only the number and cost of the passes differ.
enum class TopkStart {
  // Rows with delegates start at the bits that the k-th delegate and the row maximum share (free:
  // both come from the delegate pass); rows without start at the top bit.
  automatic,
  // Every row starts at the top bit (no start adaptation: the baseline of the comparison).
  none,
  // As automatic, and rows without delegates too: one extra read of such a row finds its minimum
  // and maximum, and the bits they share are resolved before the first pass.
  range_adaptive,
  // RadiK's adaptive scaling (RadiK §4.3; f32 and f64 only): the select first runs on the scaled
  // key fl(x - x_r), x_r = the first element of the select's source (NaN/inf -> 0, as RadiK's
  // sampleScaler), then finishes inside the scaled tie group on the original keys. Exact, because
  // x -> fl(x - c) is monotone: see src/cuda/topk/topk_scaling.cuh, "RadiK's scaling, made exact".
  radik_scaling,
};

// The top-k's tuning knobs, declared once: tests and benchmarks set fields of a TopkTuning and pass
// it in TopkProblem::tuning; the plan (src/cuda/topk/topk_device.cu) reads them. Every setting
// gives the same, exact result (topk.hpp's semantics); only the path and its cost differ. The
// defaults are the automatic choices measured on an H200 (docs/design/topk.md): a default
// TopkTuning is what rxm::topk runs.
struct TopkTuning {
  // log2 of the delegate subrange (Dr. Top-k's alpha); -1 chooses it from the row length and k,
  // 0 turns the delegate filter off (radix select alone).
  int delegate_log2 = -1;
  // The one-block-per-row select (k <= 2048): -1 chooses it (rows with delegates of at least 2^15
  // values, raw rows of at most 2^14: the H200 rows sweep), 0 never, 1 whenever k <= 2048.
  int block_select = -1;
  // The delegate select (after the delegate pass) in one block per row: -1 chooses it (rows of at
  // most kBlockDelegateSelectMax delegates, topk_plan_gpu.hpp), 0 never (multi-block passes),
  // 1 always. Used with one delegate per subrange only.
  int delegate_block_select = -1;
  // 16-byte loads in the delegate pass where a row is 16-byte aligned (true), or scalar loads
  // everywhere (false: the A/B comparison).
  bool delegate_vector_loads = true;
  // The delegate select's multi-block passes after the first on the delegate pass's grid (true),
  // or on about one block per 4096 delegates (false: the A/B).
  bool delegate_select_full_grid = true;
  // The delegate pass held to 48 registers so that 5 blocks per SM fit instead of 4 (it spills a
  // little, in fold branches the measured types do not take). -1 chooses it (16- and 32-bit keys:
  // faster in every case the H200 timed, f32 and f16/bf16 at k = 16..2^20, bench_topk --ab; 64-bit
  // keys untimed, so unbounded), 0 never, 1 always.
  int delegate_pass_five_blocks = -1;
  // The sample-select path for single rows (src/cuda/topk/topk_sample_select.cuh): a strided
  // sample bounds the k-th rank, one read compacts the elements above the bound in index order,
  // the select and a stable filter finish without a sort. -1 chooses it (one row of at least
  // kSampleSelectMinRow values with k >= kSampleSelectMinK, or of 32-bit keys with
  // kSampleSelectMinRow32 / kSampleSelectMinK32, topk_plan_gpu.hpp), 0 never, 1 for every single
  // row (rows == 1, no row_offsets, start automatic or none; other problems ignore it). Exact in
  // every case: a row that defeats the sample falls back on the device to the radix select over
  // the whole row.
  int sample_select = -1;
  // Where the select starts (see TopkStart).
  TopkStart start = TopkStart::automatic;
  // Delegates per subrange (Dr. Top-k's beta): 1, 2 or 4; beta > 1 is used where the subrange has
  // at least 32 elements (alpha >= 5), else 1.
  int delegate_beta = 1;
  // The row-stream path (src/cuda/topk/topk_row_stream.cuh): each row read once by blocks that
  // keep its k best in shared memory and sort them there; k = 1 is an argmax. For 16- and 32-bit
  // keys, k <= 1024 and rows shorter than 2^31. -1 chooses it for rows of at most 2^18 values
  // (LLM vocabularies) when every other knob here is automatic, 0 never, 1 wherever it applies.
  int row_stream = -1;
  // The row-stream path's shape (0: automatic; benchmarks sweep them): the fewest values a
  // segment (one block) of a row takes, and the buffer fill that triggers a compaction to the k
  // best (at least 2 k, at most 2048).
  int row_stream_segment = 0;
  int row_stream_compact = 0;
  // The row-stream blocks' first threshold, from the first tile (4096 values) of a segment of at
  // least max(8 k, 8192) values: a guess at the value that about 1.5 k of the segment beat, checked at the
  // end (a block left with fewer than k keys above it streams its segment again from nothing, so
  // the result is exact whatever the data). Without it, k <= 128 takes a bound that at least k
  // values reach and k > 128 starts with every value of the first tile. -1 or 1: the guess for
  // every k >= 2 (faster at k = 50 and 1024 alike); 0 never.
  int row_stream_estimate = -1;
  // The row-stream family's variant for few rows with a large k (src/cuda/topk/topk_row_cluster.cuh):
  // one thread-block cluster per row selects over the row held in shared memory, radix passes of
  // 8 bits, instead of blocks that each keep k. k >= 2, on devices that launch clusters (sm_90).
  // -1 chooses it for k > 128 and at most 16 rows, 0 never, 1 wherever the row-stream path runs.
  // row_stream_segment, when set, is a block's slice of the row here (at most 16 blocks a row).
  int row_cluster = -1;
  // The row-cluster variant's finish: once every block of a row's cluster has listed the keys that
  // reach the bound, the lists are gathered into one block, which selects, sorts and writes the
  // row alone, where they fit there (the cluster's radix passes and merge otherwise, decided on
  // the device). -1 chooses it for at most 16 rows whose blocks take slices of 48000+ values
  // (9 to 16 rows of 256000: 4-block clusters), 0 never, 1 always.
  int row_cluster_gather = -1;
  // The row-stream family's variant for rows that fit in one block's shared memory
  // (src/cuda/topk/topk_row_smem.cuh): a block per row holds the row's ranks, bounds the k-th from
  // below by its threads' best values, and radix-selects over the few values above the bound.
  // 2 <= k <= 1024, 16- and 32-bit keys. -1 chooses it from 32 rows in one wave of blocks, and for
  // 16-bit keys with k > 768 beyond, 0 never, 1 wherever the row fits.
  int row_smem = -1;
  // The row-stream family's variant for many rows of 16-bit keys with a large k
  // (src/cuda/topk/topk_row_compact.cuh): a block per row bounds the k-th rank from 2048 sampled
  // values per 65536, streams the row once keeping only the values that reach the bound (in position order,
  // in registers and shared memory of ~25 KB a block), and selects and sorts among those; a row
  // whose sample misleads takes an exact pass in the same block. Rows of at most 262144 values,
  // k <= 1024. -1 chooses it for floating-point keys in rows of 8192 values or more: at k > 512
  // from 64 rows of up to 131072 values; in rows of up to 65536, at k >= 512 from 256 rows and at
  // k >= 50 from SMs + 1 to 3 SMs rows (when the family's other knobs are automatic); 0 never, 1
  // wherever it applies.
  int row_compact = -1;
  // The row-stream family's variant for many rows with a small k (src/cuda/topk/topk_row_warp.cuh):
  // one warp per row keeps the best 32-128 keys in registers, sorted, and merges the few values that
  // beat the k-th. 2 <= k <= 128, 16- and 32-bit keys. -1 chooses it for floating-point keys in rows
  // of at most 256 KiB from 4 rows per multiprocessor, of at most 512 KiB from 8 (when the family's
  // other knobs are automatic), 0 never, 1 wherever the row-stream path runs.
  int row_warp = -1;
};

struct TopkProblem {
  KeyType type = KeyType::f32;
  const void* values = nullptr;             // device memory, `total` elements
  std::size_t total = 0;
  std::size_t rows = 1;
  std::size_t row_length = 0;               // rows of equal length, when row_offsets is null
  // Values from one row's start to the next's (equal-length rows): 0 means row_length; larger
  // skips padding after each row (logits padded to a multiple of 64 or 128). The values then hold
  // at least (rows - 1) * row_stride + row_length elements (`total`).
  std::size_t row_stride = 0;
  const std::uint64_t* row_offsets = nullptr;  // device memory, rows + 1 non-decreasing entries <= total
  std::size_t max_row_length = 0;           // the longest row (an upper bound is fine); sizes the work
  std::size_t k = 0;
  TopkOptions options;
  std::size_t index_bytes = 8;              // 4 (int32) or 8 (int64) output indices
  const void* input_indices = nullptr;      // device memory, `total` entries of index_bytes, or null
  void* out_values = nullptr;               // device memory, rows * k values
  void* out_indices = nullptr;              // device memory, rows * k indices
  // How it runs (benchmarks, tests set it; the defaults are the automatic choices).
  TopkTuning tuning;
  // Debugging: synchronize and check after every launch (naming the stage that failed), and check
  // that every row selected exactly min(k, length) winners. Never set by default (the entry then
  // synchronizes); rxm::topk sets it from the environment variable RXM_TOPK_DEBUG=1.
  bool debug_checks = false;
};

// Bytes of temporary storage topk needs for this problem on `device`.
RXM_API std::size_t topk_temp_bytes(const TopkProblem& problem, int device);

// The path this problem takes on `device` (benchmarks record it): "row-warp", "row-smem",
// "row-cluster" or "row-stream" (the row-stream family: batched rows of at most 2^18 values with
// k <= 1024), "sample-select", "delegates" or "raw" (radix select over the rows).
RXM_API const char* topk_path_name(const TopkProblem& problem, int device);

// The top-k of every row of `problem`. Runs on `stream`; `temp` holds at least
// topk_temp_bytes(problem) bytes of device memory. Arguments are checked (rxm::Error);
// device-resident offsets are trusted as documented. No allocation and no synchronization (unless
// debug_checks). The row-stream family (batched rows of at most 2^18 values, k <= 1024: LLM logits;
// topk_path_name says "row-warp", "row-smem", "row-cluster" or "row-stream") can be captured in a
// CUDA graph and replayed with new values in the same buffers (tests/gpu/test_gpu_topk_llm.cu).
// Several rows outside it order their winners with CUB's segmented sort, which cannot be captured
// (cudaErrorStreamCaptureUnsupported).
RXM_API void topk(void* temp, std::size_t temp_bytes, const TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::device
