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

ShuffleLayout layout_for(int participant, int size, std::span<const int> owner, const BucketOrder& order,
                         std::span<const std::uint64_t> counts, std::span<const std::size_t> split_offsets) {
  const std::size_t n = std::size_t(size), m = owner.size(), p = std::size_t(participant);
  auto count = [&](std::size_t source, std::size_t pos) { return counts[source * m + pos]; };
  const std::size_t mine_begin = order.owner_begin[p], mine_end = order.owner_begin[p + 1];
  ShuffleLayout l;
  for (std::size_t d = 0; d < n; ++d) {
    l.send_displs.push_back(split_offsets[order.owner_begin[d]]);
    l.send_counts.push_back(split_offsets[order.owner_begin[d + 1]] - split_offsets[order.owner_begin[d]]);
  }
  std::vector<std::uint64_t> cursor(n);  // where the next chunk of each source starts in the receive buffer
  for (std::size_t s = 0; s < n; ++s) {
    std::uint64_t from_s = 0;
    for (std::size_t pos = mine_begin; pos < mine_end; ++pos) from_s += count(s, pos);
    l.recv_displs.push_back(l.received);
    l.recv_counts.push_back(from_s);
    cursor[s] = l.received;
    l.received += from_s;
  }
  // Buckets in ascending id; the ones of this device, in positions ascending too (same owner).
  l.bucket_offsets.assign(m + 1, 0);
  std::uint64_t at = 0;
  for (std::size_t b = 0; b < m; ++b) {
    l.bucket_offsets[b] = at;
    if (std::size_t(owner[b]) != p) continue;
    const std::size_t pos = order.remap[b];
    for (std::size_t s = 0; s < n; ++s) {
      const std::uint64_t c = count(s, pos);
      if (c == 0) continue;
      l.regroup.push_back({cursor[s], at, c});
      cursor[s] += c;
      at += c;
    }
  }
  l.bucket_offsets[m] = at;
  return l;
}

}  // namespace radixmesh::mesh
