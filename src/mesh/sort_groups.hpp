// The mesh sort's last step in groups, pure host arithmetic: where a device's received keys go so
// that runs of consecutive buckets can be sorted and leave the device one after another.
//
// After the exchange a device holds its keys source-major: one piece per source, each piece in
// the order of the first partition pass's buckets (later passes reorder keys only within a bucket,
// and the sort's order is the buckets' order: descending reverses them). So the keys of bucket b
// on the device are, from every source, a contiguous run of that source's piece, and a run of
// consecutive buckets gathered source-major holds every key it needs for a stable sort: equal
// keys share a bucket, and come in source order, each source's in its own order.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "mesh/device_backend.hpp"

namespace radixmesh::mesh {

// A run of consecutive buckets: its keys' place in the device's result ([begin, begin + count),
// in elements), the copies that gather them there from the received array (Chunk::to counts
// from 0 of the whole result, not of the group), and whether they all share one bucket (so that
// only the bits below the pass's digit are left to sort).
struct SortGroup {
  std::uint64_t begin = 0, count = 0;
  bool one_bucket = false;
  std::vector<Chunk> chunks;
};

// Device `participant`'s groups. histograms: `size` rows of m counts, row s = source s's keys per
// bucket of the first pass (its whole shard); moved[s * size + d]: keys source s sent to d, each
// source's pieces in destination order of its bucket-ordered buffer. Runs of buckets of at most
// `goal` keys; a larger bucket is a group alone. Buckets with no keys here are in no group.
// Throws if the counts do not agree (a source sends more than it holds).
std::vector<SortGroup> plan_sort_groups(std::span<const std::uint64_t> histograms, int m,
                                        std::span<const std::uint64_t> moved, int size, int participant,
                                        std::uint64_t goal);

}  // namespace radixmesh::mesh
