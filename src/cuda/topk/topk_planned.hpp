// A device-level top-k problem's path and plan, made once: its temporary storage, its path's name
// and its launch all read the same plan (device::topk_temp_bytes and device::topk each make one;
// callers that allocate the storage themselves plan once for both).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/topk/topk_plan_gpu.hpp"
#include "cuda/topk/topk_row_cluster.hpp"
#include "cuda/topk/topk_row_compact.hpp"
#include "cuda/topk/topk_row_smem.hpp"
#include "cuda/topk/topk_row_stream.hpp"
#include "cuda/topk/topk_row_warp.hpp"
#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

struct PlannedTopk {
  enum class Path { row_compact, row_warp, row_smem, row_cluster, row_stream, select } path = Path::select;
  RowCompactPlan compact;
  RowWarpPlan warp;
  RowSmemPlan smem;
  RowClusterPlan cluster;
  RowStreamPlan stream;
  GpuPlan select;              // the delegate, raw and sample paths
  std::size_t temp_bytes = 1;  // at least 1: a valid allocation
};

// Checks the problem (a clear error for bad input) and plans it for `device`.
PlannedTopk plan_topk(const device::TopkProblem& problem, int device);
// Queued on `stream`; `temp` holds at least temp_bytes bytes.
void launch_planned(const PlannedTopk& plan, void* temp, std::size_t temp_bytes, const device::TopkProblem& problem,
                    cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
