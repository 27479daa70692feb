// The row-smem path's plan and launch (topk_row_smem.cuh): batched rows that fit in one block's
// shared memory, 16- and 32-bit keys, 2 <= k <= 1024.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

// The 16-bit kernel's blocks an SM (32000 bf16 values a block: 3 blocks of 75 KiB fit an SM), and so
// the rows its automatic rule takes in one wave: at most this many times the SMs.
constexpr int kSmemBlocksPerSm = 3;

struct RowSmemPlan {
  unsigned k_pad = 2;
  unsigned keys = 2;             // 8-byte entries ahead of the row: the winners, or the histograms
  int index_bits = 1;          // StreamKey's position bits
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
};

// The plan when the problem takes the row-smem path (TopkTuning::row_smem), else none.
std::optional<RowSmemPlan> row_smem_plan(const device::TopkProblem& problem, int device);
void launch_row_smem(const RowSmemPlan& plan, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
