// The smallest and largest sort key of a device-resident shard (the mesh sort's sorted-input
// shortcut): the order-preserving encoding's bits [begin_bit, end_bit), flipped for descending.
#pragma once
#include <cstdint>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// range[0] = the smallest, range[1] = the largest of plan.n keys on device.device (after the
// stream's earlier work); returns once they are known. n = 0 gives range[0] > range[1].
void device_key_range(const CudaResources::PerDevice& device, const SortPlan& plan, const void* keys,
                      std::uint64_t range[2]);

}  // namespace radixmesh::detail
