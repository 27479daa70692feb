#include "core/mesh/partition_plan.hpp"

#include <algorithm>
#include <numeric>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

void validate(const PartitionInput& in, const PartitionOptions& options) {
  require(in.devices >= 1 && in.buckets >= 1,
          "a partition over " + std::to_string(in.devices) + " devices and " + std::to_string(in.buckets) + " buckets",
          "pass at least one device and one bucket");
  require(in.histograms.size() == std::size_t(in.devices) * std::size_t(in.buckets),
          "the histograms hold " + std::to_string(in.histograms.size()) + " counts, not devices x buckets = " +
              std::to_string(std::size_t(in.devices) * std::size_t(in.buckets)),
          "pass one histogram of `buckets` counts per device, device-major");
  require(in.targets.size() == std::size_t(in.devices),
          "there are " + std::to_string(in.targets.size()) + " targets for " + std::to_string(in.devices) + " devices",
          "pass one target count per destination device");
  require(options.epsilon >= 0 && options.fusion_fraction >= 0, "epsilon and fusion_fraction must not be negative",
          "pass 0 to turn padding or fusion off");
  const std::uint64_t keys = std::accumulate(in.histograms.begin(), in.histograms.end(), std::uint64_t(0));
  const std::uint64_t room = std::accumulate(in.targets.begin(), in.targets.end(), std::uint64_t(0));
  require(in.first_position <= room && keys <= room - in.first_position,
          "the histograms hold " + std::to_string(keys) + " keys from position " + std::to_string(in.first_position) +
              " but the targets add up to " + std::to_string(room),
          "make the targets add up to the global key count (keep_counts or balanced_counts)");
}

// Moves a boundary that falls strictly inside bucket [s, e) to the bucket's start (destination j
// takes the extra keys at its front) or end (destination j - 1 takes them at its back), whichever
// is shorter and within ε/2 of the taker's target; leaves it where it is otherwise.
std::uint64_t padded_cut(std::uint64_t cut, std::uint64_t s, std::uint64_t e, std::uint64_t before_target,
                         std::uint64_t after_target, double epsilon) {
  const std::uint64_t left = cut - s;
  const std::uint64_t right = e - cut;
  const bool left_ok = double(left) <= epsilon / 2 * double(after_target);
  const bool right_ok = double(right) <= epsilon / 2 * double(before_target);
  if (right_ok && (!left_ok || right <= left)) return e;
  if (left_ok) return s;
  return cut;
}

}  // namespace

std::string to_string(BucketFate fate) {
  switch (fate) {
    case BucketFate::whole: return "whole";
    case BucketFate::spanning: return "spanning";
    case BucketFate::split_by_position: return "split_by_position";
  }
  return "?";
}

bool PartitionPlan::needs_exchange() const {
  for (int i = 0; i < devices; ++i)
    for (int j = 0; j < devices; ++j)
      if (i != j && send[std::size_t(i) * std::size_t(devices) + std::size_t(j)] > 0) return true;
  return false;
}

std::vector<std::uint64_t> keep_counts(const std::vector<std::uint64_t>& histograms, int devices, int buckets) {
  require(devices >= 1 && buckets >= 1 && histograms.size() == std::size_t(devices) * std::size_t(buckets),
          "histograms of " + std::to_string(histograms.size()) + " counts for " + std::to_string(devices) +
              " devices x " + std::to_string(buckets) + " buckets",
          "pass one histogram of `buckets` counts per device");
  std::vector<std::uint64_t> counts(std::size_t(devices), 0);
  for (std::size_t d = 0; d < counts.size(); ++d)
    for (std::size_t k = 0; k < std::size_t(buckets); ++k) counts[d] += histograms[d * std::size_t(buckets) + k];
  return counts;
}

std::vector<std::uint64_t> balanced_counts(std::uint64_t keys, int devices) {
  require(devices >= 1, "balanced counts for " + std::to_string(devices) + " devices", "pass at least one device");
  std::vector<std::uint64_t> counts(std::size_t(devices), keys / std::uint64_t(devices));
  for (std::uint64_t d = 0; d < keys % std::uint64_t(devices); ++d) ++counts[d];
  return counts;
}

PartitionPlan plan_partition(const PartitionInput& in, const PartitionOptions& options) {
  validate(in, options);
  const std::size_t p = std::size_t(in.devices);
  const std::size_t b = std::size_t(in.buckets);
  auto count = [&](std::size_t d, std::size_t k) { return in.histograms[d * b + k]; };

  std::vector<std::uint64_t> start(b + 1, in.first_position);  // bucket k: [start[k], start[k+1])
  for (std::size_t k = 0; k < b; ++k) {
    std::uint64_t c = 0;
    for (std::size_t d = 0; d < p; ++d) c += count(d, k);
    start[k + 1] = start[k] + c;
  }

  PartitionPlan plan;
  plan.devices = in.devices;
  plan.buckets = in.buckets;
  plan.cuts.assign(p + 1, 0);
  for (std::size_t d = 0; d < p; ++d) plan.cuts[d + 1] = plan.cuts[d] + in.targets[d];

  // ε-padding: a bucket that holds exactly one boundary strictly inside may absorb it.
  std::size_t j = 1;
  for (std::size_t k = 0; k < b && j < p; ++k) {
    const std::uint64_t s = start[k], e = start[k + 1];
    while (j < p && plan.cuts[j] <= s) ++j;
    std::size_t inside = 0;
    while (j + inside < p && plan.cuts[j + inside] < e) ++inside;
    if (inside == 1) plan.cuts[j] = padded_cut(plan.cuts[j], s, e, in.targets[j - 1], in.targets[j], options.epsilon);
  }

  // Destinations per bucket, then fusion of small whole neighbours going to the same device.
  const double fuse_below = options.fusion_fraction * double(plan.cuts[p]) / double(p);
  for (std::size_t k = 0; k < b; ++k) {
    const std::uint64_t s = start[k], e = start[k + 1];
    if (s == e) continue;
    BucketGroup group{int(k), int(k), s, e, BucketFate::whole, {}};
    for (std::size_t d = 0; d < p; ++d)
      if (plan.cuts[d] < plan.cuts[d + 1] && plan.cuts[d] < e && plan.cuts[d + 1] > s) group.destinations.push_back(int(d));
    if (group.destinations.size() > 1) group.fate = in.last_digit ? BucketFate::split_by_position : BucketFate::spanning;
    if (!plan.groups.empty()) {
      BucketGroup& last = plan.groups.back();
      if (group.fate == BucketFate::whole && last.fate == BucketFate::whole &&
          last.destinations == group.destinations && double(last.end - last.begin + (e - s)) < fuse_below) {
        last.last_bucket = int(k);
        last.end = e;
        continue;
      }
    }
    plan.groups.push_back(std::move(group));
  }

  // Send counts of the resolved groups: device i's keys of a group occupy the group's positions
  // after those of devices 0..i-1; each destination takes its cut range of them.
  plan.send.assign(p * p, 0);
  plan.received.assign(p, 0);
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const BucketGroup& group = plan.groups[g];
    if (group.fate == BucketFate::spanning) {
      plan.spanning.push_back(g);
      continue;
    }
    std::uint64_t position = group.begin;
    for (std::size_t i = 0; i < p; ++i) {
      std::uint64_t keys = 0;
      for (int k = group.first_bucket; k <= group.last_bucket; ++k) keys += count(i, std::size_t(k));
      for (int d : group.destinations) {
        const std::uint64_t lo = std::max(position, plan.cuts[std::size_t(d)]);
        const std::uint64_t hi = std::min(position + keys, plan.cuts[std::size_t(d) + 1]);
        if (hi <= lo) continue;
        plan.send[i * p + std::size_t(d)] += hi - lo;
        plan.received[std::size_t(d)] += hi - lo;
      }
      position += keys;
    }
  }
  return plan;
}

bool sorted_across_devices(const std::vector<DeviceKeyRange>& ranges, const std::vector<std::uint64_t>& targets) {
  require(ranges.size() == targets.size(),
          std::to_string(ranges.size()) + " key ranges for " + std::to_string(targets.size()) + " targets",
          "pass one key range and one target per device");
  bool seen = false;
  std::uint64_t previous_max = 0;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    if (ranges[d].count != targets[d]) return false;
    if (ranges[d].count == 0) continue;
    if (seen && ranges[d].min < previous_max) return false;
    seen = true;
    previous_max = ranges[d].max;
  }
  return true;
}

}  // namespace radixmesh::mesh
