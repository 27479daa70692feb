// Sorted runs on GPUs, for the mesh sort's merge strategy: the exact cuts of several runs at given
// places of their stable merge, and the stable merge of two runs. Both read runs in any GPU's
// memory the calling device reaches (its own, a logical device's of the same GPU, a peer's).
#pragma once
#include <cstdint>
#include <span>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::detail {

// The most runs one search takes (a warp per run in a block).
constexpr std::size_t max_device_runs = 32;

// cuts[p * runs.size() + r] = the elements of run r that come before place p of the runs' stable
// merge by plan's sort key (ties go to the earlier run); on device.device after its stream's
// earlier work; returns once they are known.
void device_cuts_of_runs(const CudaResources::PerDevice& device, const SortPlan& plan, std::span<const SortedRun> runs,
                         std::span<const std::uint64_t> places, std::uint64_t* cuts);

// The stable merge of a, then b (ties: a first), into keys_out and values_out, queued on
// device.stream. The output must not overlap the runs.
void device_merge_two(const CudaResources::PerDevice& device, const SortPlan& plan, const SortedRun& a,
                      const SortedRun& b, void* keys_out, void* values_out);

}  // namespace radixmesh::detail
