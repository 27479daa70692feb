#include "mesh/sort_passes.hpp"

#include <algorithm>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

PassPlans plan_pass(std::span<const SpanningRange> ranges, int size, int shift, int bits, bool last_digit,
                    std::span<const std::uint64_t> gathered,
                    const std::vector<std::vector<std::vector<std::size_t>>>& own,
                    const std::vector<std::uint64_t>& targets, const PartitionOptions& options) {
  const int m = 1 << bits;
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
    for (const BucketGroup& group : plan.groups) {
      if (group.fate == BucketFate::spanning) continue;
      ResolvedGroup g;
      g.begin = group.begin;
      g.end = group.end;
      // A single bucket fixes this digit too; fused buckets differ in it.
      g.sort_end_bit = group.fate == BucketFate::split_by_position ? shift
                       : group.first_bucket == group.last_bucket  ? shift
                                                                  : shift + bits;
      g.per_source.assign(P, 0);
      for (std::size_t s2 = 0; s2 < P; ++s2)
        for (int k = group.first_bucket; k <= group.last_bucket; ++k) g.per_source[s2] += in.histograms[s2 * M + std::size_t(k)];
      for (std::size_t i = 0; i < ranges[r].lo.size(); ++i)
        g.local_at.push_back(ranges[r].lo[i] + own[r][i][std::size_t(group.first_bucket)]);
      out.resolved.push_back(std::move(g));
    }
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

std::vector<GroupPiece> pieces_between(std::span<const ResolvedGroup> groups, std::span<const std::uint64_t> cuts,
                                       int source, int dest) {
  std::vector<GroupPiece> out;
  const std::uint64_t lo = cuts[std::size_t(dest)], hi = cuts[std::size_t(dest) + 1];
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ResolvedGroup& group = groups[g];
    if (group.end <= lo || group.begin >= hi) continue;
    std::uint64_t start = group.begin;  // the source's keys of the group, in global positions
    for (int s = 0; s < source; ++s) start += group.per_source[std::size_t(s)];
    const std::uint64_t stop = start + group.per_source[std::size_t(source)];
    const std::uint64_t from = std::max(start, lo), to = std::min(stop, hi);
    if (from < to) out.push_back({g, from, from - start, to - from});
  }
  return out;
}

std::vector<SortSegment> sort_segments(std::span<const ResolvedGroup> groups, std::span<const std::uint64_t> cuts,
                                       int dest, int begin_bit) {
  std::vector<SortSegment> out;
  const std::uint64_t lo = cuts[std::size_t(dest)], hi = cuts[std::size_t(dest) + 1];
  for (const ResolvedGroup& group : groups) {
    const std::uint64_t from = std::max(group.begin, lo), to = std::min(group.end, hi);
    if (from + 1 < to && group.sort_end_bit > begin_bit) out.push_back({from - lo, to - from, group.sort_end_bit});
  }
  return out;
}

SortLayout sort_layout(std::span<const std::uint64_t> moved, int size, int participant) {
  const std::size_t P = std::size_t(size), p = std::size_t(participant);
  SortLayout l;
  l.send_counts.assign(P, 0);
  l.send_displs.assign(P, 0);
  l.recv_counts.assign(P, 0);
  l.recv_displs.assign(P, 0);
  std::uint64_t sent = 0;
  for (std::size_t d = 0; d < P; ++d) {
    l.send_displs[d] = sent;
    l.send_counts[d] = moved[p * P + d];
    sent += l.send_counts[d];
    l.recv_displs[d] = l.received;
    l.recv_counts[d] = moved[d * P + p];
    l.received += l.recv_counts[d];
  }
  return l;
}

}  // namespace radixmesh::mesh
