// Sorting host-resident input that does not fit the devices: in rounds, through every local mesh
// device of this process (one GPU, several, or CPU mesh devices in tests). design: docs/design/mesh-sort.md.
#pragma once
#include <cstddef>

#include "core/backends.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

// Whether `plan` (host-resident) goes out of core on ctx's local mesh devices: it does not fit
// the in-memory sort's buffers within each device's budget (SortOptions::device_memory_limit, or
// what the device has free, shared between logical devices of one GPU). Single-process contexts
// only (an MPI context keeps the in-memory sort).
bool takes_out_of_core(Context& ctx, const SortPlan& plan, const SortOptions& options);

// The sort itself (the caller checked the arguments): keys (and values) sorted in place, stable,
// using one extra host array of the same size, refused up front when the host cannot hold it.
void sort_out_of_core(Context& ctx, const SortPlan& plan, void* keys, void* values, const SortOptions& options);

}  // namespace radixmesh::detail
