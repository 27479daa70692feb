// The shuffle's bookkeeping, pure host arithmetic: which device each bucket goes to and its place
// among that device's buckets, each device's send and receive layout of every tile, and the
// result's bucket offsets.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "mesh/exchange_layout.hpp"

namespace radixmesh::mesh {

// The two remaps of the shuffle's two splits: the sender's, bucket -> owner, and the receiver's,
// bucket -> its place among its owner's buckets in ascending id (so the receiver's split lays the
// buckets out in id order).
struct OwnerBuckets {
  std::vector<std::uint32_t> owner;  // m entries
  std::vector<std::uint32_t> place;  // m entries
  std::vector<std::uint32_t> owned;  // per device: how many buckets it owns
};
OwnerBuckets owner_buckets(std::span<const int> owner, int size);

// Participant p's side of the exchange of every tile. counts[(s * tiles + t) * size + d]: the keys
// tile t of source s sends to device d; tile_begin: where p's tiles start in its shard (tiles + 1
// entries). Each tile's pieces lie in destination order at its start in p's split shard; every
// receiver lays what it gets out source-major, then by tile, so that its buffer holds the keys in
// (source, input order) and a stable split of it is the stable result.
std::vector<ExchangeLayout> tile_layouts(int participant, int size, std::span<const std::uint64_t> counts,
                                         std::span<const std::size_t> tile_begin);

// The result's m + 1 bucket offsets on participant p from its split's offsets over its own
// buckets (owned[p] + 1 entries, in place order); buckets of other owners are empty.
std::vector<std::uint64_t> result_offsets(int participant, const OwnerBuckets& buckets,
                                          std::span<const std::size_t> split_offsets);

}  // namespace radixmesh::mesh
