// The row-cluster path's plan and launch (topk_row_cluster.cuh): few rows with a large k, one
// thread-block cluster per row, for 16- and 32-bit keys.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

struct RowClusterPlan {
  unsigned blocks = 1;               // the cluster's size: blocks per row
  std::uint64_t slice = 0;           // values per block
  unsigned k_pad = 1, list = 2;      // the sort's size; each list's keys (a multiple of 2)
  int index_bits = 1;                // StreamKey's position bits
  std::size_t shared_bytes = 0;      // dynamic shared memory per block
  bool gather = false;               // the lists may be gathered into one block (row_cluster)
};

// The cluster plan of a problem that takes the row-stream family, where it takes the cluster
// variant (TopkTuning::row_cluster; the device must launch clusters); nothing where it does not.
std::optional<RowClusterPlan> row_cluster_plan(const device::TopkProblem& problem, int device);
void launch_row_cluster(const RowClusterPlan& plan, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
