#include "mesh/shuffle_plan.hpp"

#include <algorithm>
#include <numeric>

namespace radixmesh::mesh {

BucketOrder order_buckets(std::span<const int> owner, int size) {
  const std::size_t m = owner.size();
  std::vector<std::uint32_t> by_position(m);
  std::iota(by_position.begin(), by_position.end(), 0u);
  std::stable_sort(by_position.begin(), by_position.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return owner[a] < owner[b]; });
  BucketOrder order;
  order.remap.resize(m);
  for (std::size_t pos = 0; pos < m; ++pos) order.remap[by_position[pos]] = std::uint32_t(pos);
  order.owner_begin.assign(std::size_t(size) + 1, 0);
  for (int o : owner) ++order.owner_begin[std::size_t(o) + 1];
  std::partial_sum(order.owner_begin.begin(), order.owner_begin.end(), order.owner_begin.begin());
  return order;
}

ExchangeLayout layout_for(int participant, int size, const BucketOrder& order, std::span<const std::uint64_t> counts,
                         std::span<const std::size_t> split_offsets) {
  const std::size_t n = std::size_t(size), p = std::size_t(participant);
  const std::size_t m = order.remap.size();
  const std::size_t mine_begin = order.owner_begin[p], mine_end = order.owner_begin[p + 1];
  ExchangeLayout l;
  for (std::size_t d = 0; d < n; ++d) {
    l.send_displs.push_back(split_offsets[order.owner_begin[d]]);
    l.send_counts.push_back(split_offsets[order.owner_begin[d + 1]] - split_offsets[order.owner_begin[d]]);
  }
  for (std::size_t s = 0; s < n; ++s) {
    std::uint64_t from_s = 0;
    for (std::size_t pos = mine_begin; pos < mine_end; ++pos) from_s += counts[s * m + pos];
    l.recv_displs.push_back(l.received);
    l.recv_counts.push_back(from_s);
    l.received += from_s;
  }
  return l;
}

ShuffleRegroup regroup_for(int participant, int size, std::span<const int> owner, const BucketOrder& order,
                           std::span<const std::vector<std::uint64_t>> tile_counts,
                           std::span<const ExchangeLayout> layouts) {
  const std::size_t n = std::size_t(size), m = owner.size(), tiles = tile_counts.size();
  ShuffleRegroup r;
  r.chunks.resize(tiles);
  // cursor[t][s]: where source s's next chunk starts in tile t's receive buffer.
  std::vector<std::vector<std::uint64_t>> cursor(tiles);
  for (std::size_t t = 0; t < tiles; ++t) cursor[t] = layouts[t].recv_displs;
  r.bucket_offsets.assign(m + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t b = 0; b < m; ++b) {
    r.bucket_offsets[b] = at;
    if (owner[b] != participant) continue;
    const std::size_t pos = order.remap[b];
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t t = 0; t < tiles; ++t) {
        const std::uint64_t c = tile_counts[t][s * m + pos];
        if (c == 0) continue;
        r.chunks[t].push_back({cursor[t][s], at, c});
        cursor[t][s] += c;
        at += c;
      }
  }
  r.bucket_offsets[m] = at;
  r.received = at;
  return r;
}

}  // namespace radixmesh::mesh
