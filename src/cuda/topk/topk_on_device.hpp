// The host-level top-k on one participant of a CUDA context (its GPU, stream and scratch pool):
// what cuda_topk_host runs once it found the device, and what the mesh's local top-k runs on each
// of its devices, logical ones included.
#pragma once
#include "core/topk_plan.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// Results in host memory when it returns (or in the device's memory: request.outputs_device),
// every output index plus request.index_base. pooled: the call's device memory comes from the
// participant's scratch pool (stream-ordered; no device-wide synchronization on release), else
// from cudaMalloc (nothing kept after the call).
void cuda_topk_on(const CudaResources::PerDevice& participant, const TopkPlan& plan, const TopkRequest& request,
                  bool pooled);

// indices[e] += by for count indices of index_bytes (4 or 8), queued on `stream`.
void shift_indices(void* indices, std::size_t count, std::size_t index_bytes, std::int64_t by, cudaStream_t stream);

}  // namespace radixmesh::detail
