// The mesh sort's bookkeeping, pure host arithmetic: the partition plans of one pass over the
// ranges of keys that still span devices, the ranges the next pass refines, and each device's
// exchange layout from the keys every device sends every other.
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

// A group of keys whose destinations are decided (a whole bucket, fused whole buckets, or equal
// keys split by position): it takes the global output positions [begin, end), participant s's
// keys of it the part after those of participants 0..s-1 (stable). Its keys share every bit from
// sort_end_bit up, so sorting it takes only [begin_bit, sort_end_bit).
struct ResolvedGroup {
  std::uint64_t begin = 0, end = 0;
  int sort_end_bit = 0;
  std::vector<std::uint64_t> per_source;  // every participant's count in the group
  std::vector<std::uint64_t> local_at;    // per local device: where its keys of it start in its split buffer
};

struct PassPlans {
  std::vector<PartitionPlan> plans;     // one per range of the pass
  std::vector<SpanningRange> next;      // the buckets that still span devices, for the next pass
  std::vector<ResolvedGroup> resolved;  // the groups this pass decided, in global order
};

// gathered: `size` rows, row s = participant s's histograms of every range on this pass's digit
// [shift, shift + bits) (range r at [r * m, (r + 1) * m), m = 2^bits). own[r][i]: local device i's
// m + 1 split offsets of range r (relative to its lo). last_digit: no digit follows (spanning
// buckets hold equal keys).
PassPlans plan_pass(std::span<const SpanningRange> ranges, int size, int shift, int bits, bool last_digit,
                    std::span<const std::uint64_t> gathered,
                    const std::vector<std::vector<std::vector<std::size_t>>>& own,
                    const std::vector<std::uint64_t>& targets, const PartitionOptions& options);

// What participant `source` sends `dest`, group by group in global order (the order of its split
// buffer): group index, the piece's global position, its offset within the source's keys of the
// group, and its length. cuts: size + 1 global positions (destination d takes [cuts[d], cuts[d + 1])).
struct GroupPiece {
  std::size_t group = 0;
  std::uint64_t position = 0, source_offset = 0, count = 0;
};
std::vector<GroupPiece> pieces_between(std::span<const ResolvedGroup> groups, std::span<const std::uint64_t> cuts,
                                       int source, int dest);

// The local sorts of destination `dest`: each group's part of [cuts[dest], cuts[dest + 1]), as a
// range of the destination's array and the bits to sort (none for single keys and equal keys).
struct SortSegment {
  std::uint64_t at = 0, count = 0;
  int end_bit = 0;
};
std::vector<SortSegment> sort_segments(std::span<const ResolvedGroup> groups, std::span<const std::uint64_t> cuts,
                                       int dest, int begin_bit);

// Participant p's side of the exchange, from moved (size x size: keys s sends d). A device's split
// buffer holds its keys in destination order (destinations rise with bucket order), so what goes
// to d is one contiguous piece; received pieces land source-major.
struct SortLayout {
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;
  std::uint64_t received = 0;
};
SortLayout sort_layout(std::span<const std::uint64_t> moved, int size, int participant);

}  // namespace radixmesh::mesh
