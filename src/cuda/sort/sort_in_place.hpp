// The device-resident sort's bodies, queued on one device's stream: what rxm::sort(ctx, device_span)
// runs (then waits), and what the mesh runs as each device's local sorts (without waiting, so the
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

// Sorts plan.n keys (and values) from `in` into `out`, stable, queued on resources.stream: `in` is
// the sort's other half (clobbered), so a sort of an odd number of passes (24 bits: 3) ends in
// `out` without a copy back. Only the engine's temp comes from the scratch pool (a few MB at most).
void sort_into_queued(const CudaResources::PerDevice& resources, const SortPlan& plan, void* in_keys, void* in_values,
                      void* out_keys, void* out_values);

}  // namespace radixmesh::detail
