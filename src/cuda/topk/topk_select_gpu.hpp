// The GPU mesh device's steps of the distributed radix select (core/topk_select.hpp), on one
// participant's stream, over a shard in that GPU's memory; results in host memory on return.
#pragma once
#include "core/topk_select.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// counts: 2^scan.bits entries of host memory.
void cuda_topk_select_count(const CudaResources::PerDevice& device, const TopkSelectScan& scan, std::uint64_t* counts);
// take.out_values and take.out_positions: take.count entries of host memory.
void cuda_topk_select_take(const CudaResources::PerDevice& device, const TopkSelectTake& take);

}  // namespace radixmesh::detail
