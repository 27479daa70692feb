// The row-compact path of the GPU top-k: which problems take it, and its launch (the kernel is in
// topk_row_compact.cuh).
#include "cuda/topk/topk_row_compact.hpp"

#include <algorithm>
#include <bit>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_compact.cuh"
#include "cuda/topk/topk_row_smem.hpp"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxGridRows = 2147483647;  // grid.x
// The automatic rule, from calls ID and IE (one H100 each, bench_topk_llm ... --dtype bf16
// --no-torch --calls 10 --reps 5 against the path it took from in the same run;
// bench/results/gpu-check/h100-id-compact-sweep.log, h100-ie-long-sweep.log, h100-ie-band-sweep.log),
// ms, row-compact / the other path:
//  * k > 512 from 64 rows of up to 131072 values: ahead at k = 1024 at every count of 64 to 4096
//    rows of 32000, 65536 and 128256 values (4096 x 32000 0.258 / 0.466 (row-smem), 4096 x 65536
//    0.389 / 1.071, 4096 x 128256 0.669 / 0.785 (the row-stream blocks), 64 x 32000 0.022 / 0.028);
//    at 256000 values even at 4096 rows (1.130 / 1.128) and behind below.
//  * k >= 512 from 256 rows of up to 65536 values: ahead or even at 256 to 4096 rows (4096 x 32000
//    0.238 / 0.344, 512 x 32000 0.040 / 0.054, 2048 x 65536 0.204 / 0.199), behind at 64 and 128
//    rows of 32000 (0.021-0.022 / 0.020 against row-smem) and at 128256 values (4096 rows 0.626 /
//    0.527).
//  * k >= 50 from SMs + 1 to 3 SMs rows of up to 65536 values, where row-smem takes them with two
//    or three blocks an SM: 256 rows ahead at every k (32000 values: k = 50 0.021 / 0.027, k = 129
//    0.023 / 0.032; 65536: 0.034 / 0.061); 128 rows (row-smem's block an SM) behind at 32000 (k =
//    50 0.019 / 0.016), 512 rows (the row-stream blocks) behind at k < 512 (65536 values, k = 50
//    0.052 / 0.044).
// The kernel now on main is call IE's (four sample vectors held in every launch): 4096 x 32000
// k = 1024 took 0.279 ms in IE's grid against ID's 0.258, the same lead over row-smem's 0.463.
// Rows of 8192 values and fewer keep row-smem's copy, whose bound needs no samples. 4096 rows at
// k < 512 keep the row-stream blocks (4096 x 65536 k = 129 0.325 / 0.303; 2048 x 32000 k = 129
// 0.131 / 0.114).
constexpr std::size_t kRowCompactLargeK = 512, kRowCompactMinRows = 64, kRowCompactK512MinRows = 256;
// The band's rows: more than one and at most kSmemBlocksPerSm per SM, where row-smem's rule would
// take them in its one wave with two or three blocks an SM.
constexpr std::size_t kRowCompactBandK = 50;
constexpr std::uint64_t kRowCompactMinRow = 8192, kRowCompactMaxRow = 65536, kRowCompactLargeKMaxRow = 131072;

}  // namespace

std::optional<RowCompactPlan> row_compact_plan(const device::TopkProblem& pr, int device) {
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
  if (!row_family_automatic(t) || t.row_smem >= 0 || t.row_warp >= 0 || !floating(pr.type) || longest < kRowCompactMinRow)
    return std::nullopt;
  const std::size_t sms = std::size_t(multiprocessors(device));
  const bool large_k = pr.k > kRowCompactLargeK && pr.rows >= kRowCompactMinRows && longest <= kRowCompactLargeKMaxRow;
  const bool k512 = pr.k >= kRowCompactLargeK && pr.rows >= kRowCompactK512MinRows && longest <= kRowCompactMaxRow;
  const bool band = pr.k >= kRowCompactBandK && pr.rows > sms && pr.rows <= std::size_t(kSmemBlocksPerSm) * sms && longest <= kRowCompactMaxRow;
  if (large_k || k512 || band) return g;
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
