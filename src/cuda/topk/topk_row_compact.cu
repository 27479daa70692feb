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
// The automatic rule: where call IC measured it ahead (one H100, bench_topk_llm --rows
// 4096,1024,256,64,32 --vocab 32000,65536 --k 129,256,512,1024 --dtype bf16 --no-torch, against
// the path it took from in the same run; bench/results/gpu-check/h100-ic-compact-sweep.log):
// 4096 x 32000 k = 1024 0.364 against row-smem's 0.466 ms, k = 512 0.306 against the row-stream
// blocks' 0.343. Behind everywhere else it ran: k = 129-256 at 4096 x 32000 (0.33 against 0.23),
// 1024 rows and fewer (1024 x 32000 k = 1024 0.147 against 0.130; 256 rows 0.068 against 0.042),
// and rows of 65536 (4096 rows 0.71-0.74 against 0.30-0.38, twice its time at 32000). Its times
// were bimodal (256 x 32000: 0.031 ms at k = 512, 0.064 at k = 256), as a row taking the exact
// fallback, whose select reads the row a value at a time, would make them (not timed by phase).
// Rows between 1024 and 4096, and between 32768 and 65536 values, were not measured and keep the
// other paths.
constexpr std::size_t kRowCompactMinK = 512, kRowCompactMinRows = 4096;
constexpr std::uint64_t kRowCompactMinRow = 8192, kRowCompactMaxRow = 32768;

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
  if (row_family_automatic(t) && t.row_smem < 0 && t.row_warp < 0 && floating(pr.type) && pr.k >= kRowCompactMinK &&
      pr.rows >= kRowCompactMinRows && longest >= kRowCompactMinRow && longest <= kRowCompactMaxRow)
    return g;
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
