// The mesh sort's bookkeeping, pure host arithmetic: the partition plans of one pass over the
// ranges of keys that still span devices, and the ranges the next pass refines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/mesh/partition_plan.hpp"

namespace radixmesh::mesh {

// Keys of one bucket (or, for the first pass, every key) whose destinations a pass decides: on
// each local device they lie in [lo, hi) of its split buffer (its keys of the bucket are
// contiguous there, in input order), and globally they take the output positions from `begin`.
struct SpanningRange {
  std::uint64_t begin = 0;
  std::vector<std::uint64_t> lo, hi;  // per local device
};

struct PassPlans {
  std::vector<PartitionPlan> plans;  // one per range of the pass
  std::vector<SpanningRange> next;   // the buckets that still span devices, for the next pass
};

// gathered: `size` rows, row s = participant s's histograms of every range on this pass's digit
// (range r at [r * m, (r + 1) * m)). own[r][i]: local device i's m + 1 split offsets of range r
// (relative to its lo). last_digit: no digit follows (spanning buckets hold equal keys).
PassPlans plan_pass(std::span<const SpanningRange> ranges, int size, int m, bool last_digit,
                    std::span<const std::uint64_t> gathered,
                    const std::vector<std::vector<std::vector<std::size_t>>>& own,
                    const std::vector<std::uint64_t>& targets, const PartitionOptions& options);

}  // namespace radixmesh::mesh
