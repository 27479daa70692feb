// Placeholder: std::stable_sort on encoded keys until the parallel LSD radix sort lands.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/backends.hpp"

namespace radixmesh::detail {
void cpu_sort(const SortPlan& plan, void* keys, void* values, unsigned) {
  visit_key_type(plan.type, [&](auto tag) {
    using K = decltype(tag);
    K* k = static_cast<K*>(keys);
    std::vector<std::size_t> idx(plan.n);
    std::iota(idx.begin(), idx.end(), 0);
    key_less<K> less{plan.order};
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return less(k[a], k[b]); });
    std::vector<K> sorted(plan.n);
    for (std::size_t i = 0; i < plan.n; ++i) sorted[i] = k[idx[i]];
    std::copy(sorted.begin(), sorted.end(), k);
    if (values) {
      std::vector<unsigned char> v(plan.n * plan.value_bytes);
      auto* src = static_cast<unsigned char*>(values);
      for (std::size_t i = 0; i < plan.n; ++i) std::memcpy(&v[i * plan.value_bytes], src + idx[i] * plan.value_bytes, plan.value_bytes);
      std::memcpy(values, v.data(), v.size());
    }
  });
}
}  // namespace radixmesh::detail
