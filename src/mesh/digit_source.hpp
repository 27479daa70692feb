// A partition digit for the host's bucket-function interface (CPU mesh devices): the key's radix
// digit (buckets::radix_digit, of the order-preserving encoding) for a key type known only at run
// time. The mesh sorts pass it beside the same digit as plain data (BucketSpec) for GPU devices.
#pragma once
#include <cstddef>
#include <cstdint>

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

}  // namespace radixmesh::detail
