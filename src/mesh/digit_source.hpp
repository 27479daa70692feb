// A partition digit for the host's bucket-function interface (CPU mesh devices): the key's radix
// digit (buckets::radix_digit, of the order-preserving encoding) for a key type known only at run
// time. The mesh sorts pass it beside the same digit as plain data (BucketSpec) for GPU devices.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mesh/device_backend.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::detail {

struct DigitSource {
  KeyType type;
  buckets::radix_digit digit;
  static void ids(const void* self, const void* keys, std::size_t begin, std::size_t count, std::uint32_t* out) {
    const auto& s = *static_cast<const DigitSource*>(self);
    visit_key_type(s.type, [&](auto tag) {
      using K = decltype(tag);
      const K* k = static_cast<const K*>(keys) + begin;
      for (std::size_t i = 0; i < count; ++i) out[i] = s.digit(k[i]);
    });
  }
};

// The bucket of each digit value in the sort's order: the digit itself ascending, reversed
// descending (the remap of the mesh sorts' splits).
inline std::vector<std::uint32_t> digit_order(std::uint32_t m, Order order) {
  std::vector<std::uint32_t> remap(m);
  for (std::uint32_t d = 0; d < m; ++d) remap[d] = order == Order::descending ? m - 1 - d : d;
  return remap;
}

// A split by `source`'s digit into m buckets in the order of `remap` (unchecked: every digit is a
// bucket); the caller sets the arrays, n and the offsets.
inline mesh::LocalSplit digit_split(const DigitSource& source, const std::vector<std::uint32_t>& remap) {
  mesh::LocalSplit split;
  split.args.type = source.type;
  split.args.m = std::uint32_t(remap.size());
  split.args.checked = false;
  split.source = {&source, &DigitSource::ids};
  split.spec.kind = BucketSpec::Kind::radix_digit;
  split.spec.shift = source.digit.shift;
  split.spec.bits = source.digit.bits;
  split.remap = remap.data();
  return split;
}

}  // namespace radixmesh::detail
