// The shuffle's bookkeeping, pure host arithmetic: the owner-major order of buckets, and from the
// gathered per-(source, position) counts each device's send and receive layout and the chunks
// that regroup what it received into bucket-major order.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "mesh/device_backend.hpp"
#include "mesh/exchange_layout.hpp"

namespace radixmesh::mesh {

// Buckets ordered by (owner, id): position remap[b] of bucket b; the buckets of device d are
// positions [owner_begin[d], owner_begin[d + 1]).
struct BucketOrder {
  std::vector<std::uint32_t> remap;       // m entries
  std::vector<std::uint32_t> owner_begin;  // size + 1 entries
};
BucketOrder order_buckets(std::span<const int> owner, int size);

// One device's part of the exchange of one tile: what it sends from its split tile (displacements
// from the tile's start) and what it receives, source-major. counts: size rows of m words, row s = source s's keys per position (of this tile). split_offsets:
// this device's own m + 1 offsets by position (its local multisplit of the tile).
ExchangeLayout layout_for(int participant, int size, const BucketOrder& order, std::span<const std::uint64_t> counts,
                         std::span<const std::size_t> split_offsets);

// Where the received tiles go in the result: bucket-major in ascending id, and within a bucket by
// source, then tile (so by source, then input order: stable).
struct ShuffleRegroup {
  std::uint64_t received = 0;
  std::vector<std::uint64_t> bucket_offsets;  // m + 1
  std::vector<std::vector<Chunk>> chunks;     // per tile: its receive buffer -> the result
};
// tile_counts[t]: the tile's gathered counts (as for layout_for); layouts[t]: this device's layout of it.
ShuffleRegroup regroup_for(int participant, int size, std::span<const int> owner, const BucketOrder& order,
                           std::span<const std::vector<std::uint64_t>> tile_counts,
                           std::span<const ExchangeLayout> layouts);

}  // namespace radixmesh::mesh
