// The CPU mesh device's steps of the distributed radix select (core/topk_select.hpp).
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/topk_select.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

// Counts [lo, hi) of the shard into counts (2^bits entries, zeroed by the caller).
void count_part(const TopkSelectScan& s, std::size_t lo, std::size_t hi, std::uint64_t* counts) {
  const std::uint64_t digit_mask = (std::uint64_t(1) << s.bits) - 1;
  visit_key_type(s.type, [&](auto tag) {
    using T = decltype(tag);
    const T* v = static_cast<const T*>(s.values);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t rank = topk_rank(v[i], s.options);
      if ((rank & s.mask) == s.prefix) ++counts[(rank >> s.shift) & digit_mask];
    }
  });
}

}  // namespace

void cpu_topk_select_count(const TopkSelectScan& s, std::uint64_t* counts, unsigned threads) {
  const std::size_t radix = std::size_t(1) << s.bits;
  // A thread per 2^20 keys at most: fewer keys do not pay for the thread.
  const std::size_t parts = std::clamp<std::size_t>(s.n >> 20, 1, std::max(1u, threads));
  std::vector<std::uint64_t> partial(parts * radix, 0);
  {
    std::vector<std::jthread> pool;
    for (std::size_t p = 1; p < parts; ++p)
      pool.emplace_back([&, p] { count_part(s, s.n * p / parts, s.n * (p + 1) / parts, partial.data() + p * radix); });
    count_part(s, 0, s.n / parts, partial.data());
  }
  for (std::size_t d = 0; d < radix; ++d) {
    counts[d] = 0;
    for (std::size_t p = 0; p < parts; ++p) counts[d] += partial[p * radix + d];
  }
}

void cpu_topk_select_take(const TopkSelectTake& t) {
  visit_key_type(t.type, [&](auto tag) {
    using T = decltype(tag);
    const T* v = static_cast<const T*>(t.values);
    T* out = static_cast<T*>(t.out_values);
    std::size_t written = 0, equal_left = t.equal;
    for (std::size_t i = 0; i < t.n && written < t.count; ++i) {
      const std::uint64_t rank = topk_rank(v[i], t.options);
      const bool take = rank > t.threshold || (rank == t.threshold && equal_left > 0);
      if (!take) continue;
      if (rank == t.threshold) --equal_left;
      out[written] = v[i];
      t.out_positions[written] = std::int64_t(i);
      ++written;
    }
    require(written == t.count,
            "topk: a mesh device found " + std::to_string(written) + " winners where its counts said " +
                std::to_string(t.count),
            "report this as a bug");
  });
}

}  // namespace radixmesh::detail
