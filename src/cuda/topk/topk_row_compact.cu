// The row-compact path of the GPU top-k: which problems take it, and its launch (the kernel is in
// topk_row_compact.cuh).
#include "cuda/topk/topk_row_compact.hpp"

#include <algorithm>
#include <bit>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_compact.cuh"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxGridRows = 2147483647;  // grid.x
// The automatic rule, from call ID (one H100, bench_topk_llm --rows 4096,1024,256,64,32 --vocab
// 32000,65536 --k 129,256,512,1024 --dtype bf16 --no-torch --calls 10 --reps 5, against the path
// it took from in the same run; bench/results/gpu-check/h100-id-compact-sweep.log):
//  * k >= 512 from 64 rows: ahead at every row count but one, by the most at k = 1024 (4096 x 32000
//    0.258 against row-smem's 0.466 ms, 4096 x 65536 0.389 against 1.071, 1024 x 32000 0.077
//    against 0.130, 256 x 32000 0.026 against 0.042); k = 512: 4096 x 32000 0.238 against the
//    row-stream blocks' 0.344, 1024 x 32000 0.071 against 0.098; the exception, 64 x 32000 k = 512,
//    0.021 against row-smem's 0.020.
//  * k >= 50 from 128 to 512 rows: 256 rows ahead at every k it ran (32000 values: 0.023 against
//    row-smem's 0.032 at k = 129, 0.021 against 0.027 at k = 50 in the grid; 65536: 0.034 against
//    0.061); 64 rows even (0.017-0.021 against 0.016-0.020 at 32000), 1024 rows behind the
//    row-stream blocks at k = 129-256 (0.067-0.068 against 0.062-0.067 at 32000, 0.096 against
//    0.087 at 65536). The band's ends between those counts are inferred, not measured.
// Below 64 rows, clusters or several blocks a row split the row (row-cluster, the row-stream
// segments); 4096 rows at k < 512 keep the row-stream blocks (65536 values: 0.303 against 0.325
// at k = 129; at 32000 k = 129 it was 0.218 against 0.233, too narrow a lead for a band).
constexpr std::size_t kRowCompactLargeK = 512, kRowCompactMinRows = 64;
constexpr std::size_t kRowCompactBandK = 50, kRowCompactBandRows[2] = {128, 512};
// Rows past 65536 values (which take one to three more sample vectors a thread) were not measured.
constexpr std::uint64_t kRowCompactMinRow = 8192, kRowCompactMaxRow = 65536;

}  // namespace

std::optional<RowCompactPlan> row_compact_plan(const device::TopkProblem& pr, int /*device*/) {
  const int choice = pr.tuning.row_compact;
  if (choice == 0 || size_of(pr.type) != 2 || pr.k > kCompactKeys) return std::nullopt;
  const std::uint64_t longest = longest_row(pr);
  if (longest > kCompactMaxRow) return std::nullopt;
  RowCompactPlan g;
  g.index_bits = int(std::bit_width(longest));
  if (choice == 1) return g;
  // Automatic: floating-point keys (the measured ones) while the family's other knobs are
  // automatic too (a test or benchmark that sets one asks for that variant).
  const device::TopkTuning& t = pr.tuning;
  if (!row_family_automatic(t) || t.row_smem >= 0 || t.row_warp >= 0 || !floating(pr.type) || longest < kRowCompactMinRow ||
      longest > kRowCompactMaxRow)
    return std::nullopt;
  const bool large_k = pr.k >= kRowCompactLargeK && pr.rows >= kRowCompactMinRows;
  const bool band = pr.k >= kRowCompactBandK && pr.rows >= kRowCompactBandRows[0] && pr.rows <= kRowCompactBandRows[1];
  if (large_k || band) return g;
  return std::nullopt;
}

void launch_row_compact(const RowCompactPlan& g, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int) {
    if constexpr (sizeof(key_bits_t<T>) == 2) {
      p.index_bits = g.index_bits;
      for (std::size_t r0 = 0; r0 < pr.rows; r0 += kMaxGridRows) {
        p.row0 = r0;
        const unsigned chunk = unsigned(std::min(kMaxGridRows, pr.rows - r0));
        row_compact<T><<<chunk, kCompactThreads, kCompactSharedBytes, stream>>>(p);
        RXM_CUDA_CHECK(cudaGetLastError());
      }
      if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  });
}

}  // namespace radixmesh::detail::topk_gpu
