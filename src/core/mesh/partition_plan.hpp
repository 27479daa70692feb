// RMG's partition plan: given every device's histogram of one digit (all-gathered), which device
// each bucket goes to. Buckets wholly inside one destination's share go there; a bucket that
// crosses a destination boundary is "spanning" and is refined by a further pass on the next digit
// (that pass's plan takes the spanning bucket's sub-histograms), unless its keys are all equal
// (the last digit), when it is split by position.
//
// Order: the result must equal a stable single-device sort of the global input, whose order is
// device order, then position within the device. Destination d takes the global output
// positions [cuts[d], cuts[d+1]); a bucket occupies the positions of its keys in that order, so a
// bucket split across destinations is split by global position (device 0's keys of the bucket
// first).
//
// ε-padding: a boundary that falls inside a bucket may move to the bucket's start or end instead
// of splitting it, by at most ε/2 of the target of the destination that takes the extra keys, so a
// destination takes at most (1 + ε) times its target. With ε > 0 the destinations' counts are no
// longer exactly their targets; a caller that needs exact counts passes ε = 0 (or shifts the
// boundary keys between neighbours after the local sorts, where they are the extreme keys).
//
// Fusion: adjacent whole buckets that go to the same destination are fused into one group while
// the group stays under fusion_fraction of the mean target, so the local sorts run on fewer,
// larger pieces (a fused group is sorted on the digit's bits as well as the remaining ones).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace radixmesh::mesh {

struct PartitionInput {
  int devices = 0;
  int buckets = 0;                          // 2^b for a b-bit digit
  std::vector<std::uint64_t> histograms;    // devices x buckets: keys of device d in bucket k
  std::vector<std::uint64_t> targets;       // per destination: keys it takes overall (sum = n)
  // Global output position of the histograms' first key: 0 for the first pass; a spanning
  // bucket's `begin` for the pass that refines it. first_position + (keys in histograms) must not
  // exceed the sum of the targets.
  std::uint64_t first_position = 0;
  bool last_digit = false;                  // no digit follows: a spanning bucket holds equal keys
};

struct PartitionOptions {
  // RMG pads each end of a device's chunk by 0.5 % of the chunk, which let uniform keys finish in
  // one pass (papers/NOTES-rmg-sort.md §1); ε here counts both ends.
  double epsilon = 0.01;
  double fusion_fraction = 0.01; // RMG §1: buckets under 1 % of the chunk were fused
};

enum class BucketFate { whole, spanning, split_by_position };
std::string to_string(BucketFate fate);

struct BucketGroup {
  int first_bucket = 0;           // digit values first..last (several after fusion)
  int last_bucket = 0;
  std::uint64_t begin = 0;        // global output positions [begin, end)
  std::uint64_t end = 0;
  BucketFate fate = BucketFate::whole;
  std::vector<int> destinations;  // whole: one device; spanning / split: the devices it crosses, in order
};

struct PartitionPlan {
  int devices = 0;
  int buckets = 0;
  std::vector<BucketGroup> groups;        // the non-empty buckets in digit order
  std::vector<std::size_t> spanning;      // indices into groups: buckets for the next pass
  // devices + 1 global positions, after ε-padding: destination d takes [cuts[d], cuts[d+1]). Only
  // the cuts inside this plan's range [first_position, ...) are its own; the others are the targets'.
  std::vector<std::uint64_t> cuts;
  std::vector<std::uint64_t> send;        // devices x devices: keys i sends to j (resolved groups)
  std::vector<std::uint64_t> received;    // per destination: keys it receives (resolved groups)

  // Any resolved key changes device (false: the exchange can be skipped).
  bool needs_exchange() const;
};

// Each device keeps its own count (the histograms' row sums), or n spread evenly (the first
// n mod P devices take one more).
std::vector<std::uint64_t> keep_counts(const std::vector<std::uint64_t>& histograms, int devices, int buckets);
std::vector<std::uint64_t> balanced_counts(std::uint64_t keys, int devices);

// Throws rxm::Error(invalid_argument) on sizes that disagree, a negative ε or fusion fraction, or
// histograms holding more keys than the targets leave room for after first_position.
PartitionPlan plan_partition(const PartitionInput& input, const PartitionOptions& options = {});

// The sorted-input shortcut: each device's smallest and largest key (in radix order) and count.
struct DeviceKeyRange {
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  std::uint64_t count = 0;
};
// True when every device's keys already lie in ascending ranges in device order (each non-empty
// device's max <= the next non-empty device's min) and every device holds exactly its target:
// the input is sorted across devices and nothing moves.
bool sorted_across_devices(const std::vector<DeviceKeyRange>& ranges, const std::vector<std::uint64_t>& targets);

// --explain and --json forms.
std::string partition_text(const PartitionPlan& plan);
std::string partition_json(const PartitionPlan& plan);

}  // namespace radixmesh::mesh
