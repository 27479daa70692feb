// The row-compact path's plan and launch (topk_row_compact.cuh): batched rows of 16-bit keys of at
// most 262144 values, a block per row that streams the row once and keeps only what reaches a
// sampled bound.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

struct RowCompactPlan {
  int index_bits = 1;  // StreamKey's position bits
};

// The plan when the problem takes the row-compact path (TopkTuning::row_compact), else none.
std::optional<RowCompactPlan> row_compact_plan(const device::TopkProblem& problem, int device);
void launch_row_compact(const RowCompactPlan& plan, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
