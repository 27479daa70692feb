#include "mesh/sort_passes.hpp"

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

PassPlans plan_pass(std::span<const SpanningRange> ranges, int size, int m, bool last_digit,
                    std::span<const std::uint64_t> gathered,
                    const std::vector<std::vector<std::vector<std::size_t>>>& own,
                    const std::vector<std::uint64_t>& targets, const PartitionOptions& options) {
  const std::size_t P = std::size_t(size), M = std::size_t(m), R = ranges.size();
  require(gathered.size() == P * R * M && own.size() == R,
          "mesh sort: " + std::to_string(gathered.size()) + " gathered counts for " + std::to_string(size) +
              " devices x " + std::to_string(R) + " ranges x " + std::to_string(m) + " buckets",
          "a bug in radixmesh: report it");
  PassPlans out;
  for (std::size_t r = 0; r < R; ++r) {
    PartitionInput in;
    in.devices = size;
    in.buckets = m;
    in.histograms.resize(P * M);
    for (std::size_t s = 0; s < P; ++s)
      for (std::size_t k = 0; k < M; ++k) in.histograms[s * M + k] = gathered[s * R * M + r * M + k];
    in.targets = targets;
    in.first_position = ranges[r].begin;
    in.last_digit = last_digit;
    PartitionPlan plan = plan_partition(in, options);
    for (std::size_t g : plan.spanning) {
      const BucketGroup& group = plan.groups[g];
      const std::size_t k = std::size_t(group.first_bucket);
      SpanningRange next;
      next.begin = group.begin;
      for (std::size_t i = 0; i < ranges[r].lo.size(); ++i) {
        next.lo.push_back(ranges[r].lo[i] + own[r][i][k]);
        next.hi.push_back(ranges[r].lo[i] + own[r][i][k + 1]);
      }
      out.next.push_back(std::move(next));
    }
    out.plans.push_back(std::move(plan));
  }
  return out;
}

}  // namespace radixmesh::mesh
