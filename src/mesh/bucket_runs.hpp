// Runs of consecutive buckets for the sorts that gather buckets into groups and sort each group
// alone (the mesh sort's last step, the out-of-core levels): pure host arithmetic, one greedy rule.
#pragma once
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace radixmesh::mesh {

// Buckets [first, last). `alone`: one bucket of more than the caller's `alone_above` elements,
// never joined to others (the caller splits it further or moves it unsorted).
struct BucketRun {
  std::uint32_t first = 0, last = 0;
  bool alone = false;
};

// The runs of buckets whose elements begin at begin[0..m] (m + 1 ascending offsets): greedily, each
// run takes the next buckets while it holds at most `goal` elements (a first bucket of more than
// goal is a run by itself); a bucket of more than `alone_above` (>= goal) is a run marked alone.
// Runs that hold no element are left out. Every bucket with elements is in exactly one run, in
// ascending order.
inline std::vector<BucketRun> bucket_runs(std::span<const std::uint64_t> begin, std::uint64_t goal,
                                          std::uint64_t alone_above = std::numeric_limits<std::uint64_t>::max()) {
  std::vector<BucketRun> runs;
  const std::uint32_t m = begin.empty() ? 0 : std::uint32_t(begin.size() - 1);
  for (std::uint32_t p = 0; p < m;) {
    if (begin[p + 1] - begin[p] > alone_above) {
      runs.push_back({p, p + 1, true});
      ++p;
      continue;
    }
    std::uint32_t q = p + 1;
    while (q < m && begin[q + 1] - begin[p] <= goal && begin[q + 1] - begin[q] <= alone_above) ++q;
    if (begin[q] > begin[p]) runs.push_back({p, q, false});
    p = q;
  }
  return runs;
}

}  // namespace radixmesh::mesh
