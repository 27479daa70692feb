// The shuffle's bookkeeping, pure host arithmetic: the owner-major order of buckets, and from the
// gathered per-(source, position) counts each device's send and receive layout and the chunks
// that regroup what it received into bucket-major order.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "mesh/device_backend.hpp"

namespace radixmesh::mesh {

// Buckets ordered by (owner, id): position remap[b] of bucket b; the buckets of device d are
// positions [owner_begin[d], owner_begin[d + 1]).
struct BucketOrder {
  std::vector<std::uint32_t> remap;       // m entries
  std::vector<std::uint32_t> owner_begin;  // size + 1 entries
};
BucketOrder order_buckets(std::span<const int> owner, int size);

// One device's part of the exchange and the regroup after it.
struct ShuffleLayout {
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;  // size entries each
  std::uint64_t received = 0;
  std::vector<std::uint64_t> bucket_offsets;  // m + 1: where each bucket lands in the result
  std::vector<Chunk> regroup;                 // received (source-major) -> result (bucket-major)
};
// counts: size rows of m words, row s = source s's keys per position. split_offsets: this
// device's own m + 1 offsets by position (its local multisplit).
ShuffleLayout layout_for(int participant, int size, std::span<const int> owner, const BucketOrder& order,
                         std::span<const std::uint64_t> counts, std::span<const std::size_t> split_offsets);

}  // namespace radixmesh::mesh
