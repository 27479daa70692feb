// The row-warp path's plan and launch (topk_row_warp.cuh): many rows with a small k, one warp per
// row, for 16- and 32-bit keys.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

struct RowWarpPlan {
  int slots = 1;       // queue keys per lane: the queue holds 32 x slots >= k
  int index_bits = 1;  // StreamKey's position bits
};

// The plan when the problem takes the row-warp variant (TopkTuning::row_warp), else none.
std::optional<RowWarpPlan> row_warp_plan(const device::TopkProblem& problem, int device);
void launch_row_warp(const RowWarpPlan& plan, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
