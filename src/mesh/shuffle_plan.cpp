#include "mesh/shuffle_plan.hpp"

namespace radixmesh::mesh {

OwnerBuckets owner_buckets(std::span<const int> owner, int size) {
  OwnerBuckets b;
  b.owned.assign(std::size_t(size), 0);
  for (int o : owner) {
    b.owner.push_back(std::uint32_t(o));
    b.place.push_back(b.owned[std::size_t(o)]++);
  }
  return b;
}

std::vector<ExchangeLayout> tile_layouts(int participant, int size, std::span<const std::uint64_t> counts,
                                         std::span<const std::size_t> tile_begin) {
  const std::size_t P = std::size_t(size), p = std::size_t(participant), T = tile_begin.size() - 1;
  auto count = [&](std::size_t s, std::size_t t, std::size_t d) { return counts[(s * T + t) * P + d]; };
  std::vector<ExchangeLayout> tiles(T);
  for (std::size_t t = 0; t < T; ++t) {
    std::uint64_t sent = tile_begin[t];
    for (std::size_t d = 0; d < P; ++d) {
      tiles[t].send_displs.push_back(sent);
      tiles[t].send_counts.push_back(count(p, t, d));
      sent += count(p, t, d);
    }
  }
  std::uint64_t at = 0;  // source-major, then by tile
  for (std::size_t s = 0; s < P; ++s)
    for (std::size_t t = 0; t < T; ++t) {
      tiles[t].recv_displs.push_back(at);
      tiles[t].recv_counts.push_back(count(s, t, p));
      tiles[t].received += count(s, t, p);
      at += count(s, t, p);
    }
  return tiles;
}

std::vector<std::uint64_t> result_offsets(int participant, const OwnerBuckets& buckets,
                                          std::span<const std::size_t> split_offsets) {
  const std::size_t m = buckets.owner.size();
  std::vector<std::uint64_t> offsets(m + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t b = 0; b < m; ++b) {
    offsets[b] = at;
    if (buckets.owner[b] != std::uint32_t(participant)) continue;
    const std::size_t place = buckets.place[b];
    at += split_offsets[place + 1] - split_offsets[place];
  }
  offsets[m] = at;
  return offsets;
}

}  // namespace radixmesh::mesh
