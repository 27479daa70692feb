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
// The automatic rule's range. One H100, bench_topk_probe (call IA, the kernel before its fallback):
// 4096 x 32000 bf16 k = 1024 0.234 against row-smem's 0.466 ms, k = 256 0.198 against the
// row-stream blocks' 0.228, 64 rows k = 1024 0.020 against row-cluster's 0.028; k = 50 0.175
// against row-warp's 0.114. Fewer rows split each row over several blocks (row-cluster, the
// row-stream segments); short rows fit row-smem's copy, whose bound needs no samples.
constexpr std::size_t kRowCompactMinK = 129, kRowCompactMinRows = 64;
constexpr std::uint64_t kRowCompactMinRow = 8192;

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
      pr.rows >= kRowCompactMinRows && longest >= kRowCompactMinRow)
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
