// The device-resident sort's body, queued on one device's stream: what rxm::sort(ctx, device_span)
// runs (then waits), and what the mesh runs as each device's local sort (without waiting, so the
// devices sort at the same time).
#pragma once
#include "core/backends.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// Sorts plan.n keys (and values) in place, stable, on resources.device, queued on resources.stream
// after its earlier work. Temporary memory (one more array of keys and of values, the engine's
// temp) comes from the device's scratch pool, stream-ordered, and is checked against the free
// memory first (Error out_of_memory naming the bytes). Returns without waiting.
void sort_in_place_queued(const CudaResources::PerDevice& resources, const SortPlan& plan, void* keys, void* values,
                          const SortOptions& options);

}  // namespace radixmesh::detail
