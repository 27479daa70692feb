// The mesh sort's merge strategy (MeshSortStrategy::merge, docs/design/mesh-sort.md): every device
// sorts its own shard where it lies, the exact cuts of every device's share are found in the
// sorted shards, and every device merges its pieces two at a time, reading the other devices'
// memory. One local sort of every key and a merge of log2(devices) rounds, where the partition
// strategy pays a split of every key, its refinement and the exchange before the same local sort.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/backends.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "mesh/phase_clock.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::mesh {

// The most devices the strategy takes: the GPU's search of the cuts runs a warp per sorted run.
constexpr int max_merge_devices = 32;

// One local device's part: its input shard (n keys, and values), and where its share of the sorted
// keys goes (target of them: the input itself when sorting in place, or its output shard).
struct MergeShard {
  std::byte *keys = nullptr, *values = nullptr;
  std::uint64_t n = 0;
  std::byte *result_keys = nullptr, *result_values = nullptr;
  std::uint64_t target = 0;
};

// Whether sort_shards takes the merge strategy: asked for, or automatic on logical devices of one
// GPU with shards where the devices sort them (host shards on GPU devices take the partition,
// which overlaps their download with the local sorts); every mesh device in this process and
// reaching the others' memory, at most max_merge_devices of them.
bool merge_strategy_applies(const Context& ctx, MeshSortStrategy asked, DeviceBackend& backend, int locals, int size,
                            bool upload);

// Sorts the shards of every mesh device (all of them local: first = 0), in place when `in_place`
// (each result is its input), else into the results with the inputs left as they were. Times the
// steps into `report` (local sort, splitters: the cuts' search, exchange: the first round, which
// reads the other devices' sorted shards, merge: the rounds after it) when it is not null.
void sort_by_merge(DeviceBackend& backend, LocalErrors& errors, const detail::SortPlan& plan,
                   std::span<const MergeShard> shards, bool in_place, PhaseClock<SortPhases>& clock,
                   SortPhases* report);

}  // namespace radixmesh::mesh
