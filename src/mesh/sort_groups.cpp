#include "mesh/sort_groups.hpp"

#include <algorithm>
#include <string>

#include "mesh/bucket_runs.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

std::vector<SortGroup> plan_sort_groups(std::span<const std::uint64_t> histograms, int m,
                                        std::span<const std::uint64_t> moved, int size, int participant,
                                        std::uint64_t goal) {
  const std::size_t P = std::size_t(size), M = std::size_t(m), d = std::size_t(participant);
  require(size > 0 && m > 0 && participant >= 0 && participant < size && histograms.size() == P * M &&
              moved.size() == P * P,
          "sort: groups planned for participant " + std::to_string(participant) + " of " + std::to_string(size) +
              " with " + std::to_string(histograms.size()) + " bucket counts and " + std::to_string(moved.size()) +
              " moved counts",
          "report this as a bug in radixmesh");
  // here[s * M + b]: source s's keys of bucket b on this device; at[s]: where s's piece begins in
  // the received array.
  std::vector<std::uint64_t> here(P * M, 0), at(P, 0), total(M, 0);
  std::uint64_t received = 0;
  for (std::size_t s = 0; s < P; ++s) {
    std::uint64_t lo = 0, held = 0;
    for (std::size_t e = 0; e < d; ++e) lo += moved[s * P + e];
    for (std::size_t b = 0; b < M; ++b) held += histograms[s * M + b];
    const std::uint64_t hi = lo + moved[s * P + d];
    std::uint64_t sent = 0;
    for (std::size_t e = 0; e < P; ++e) sent += moved[s * P + e];
    require(sent == held, "sort: source " + std::to_string(s) + " sends " + std::to_string(sent) + " keys but holds " +
                              std::to_string(held),
            "report this as a bug in radixmesh");
    std::uint64_t bucket_lo = 0;
    for (std::size_t b = 0; b < M; ++b) {
      const std::uint64_t bucket_hi = bucket_lo + histograms[s * M + b];
      const std::uint64_t from = std::max(bucket_lo, lo), to = std::min(bucket_hi, hi);
      here[s * M + b] = to > from ? to - from : 0;
      total[b] += here[s * M + b];
      bucket_lo = bucket_hi;
    }
    at[s] = received;
    received += moved[s * P + d];
  }

  // Runs of buckets, greedily up to `goal` keys; each source's keys of a run are contiguous in its
  // piece, so a group gathers one chunk per source.
  std::vector<std::uint64_t> bucket_begin(M + 1, 0);
  for (std::size_t b = 0; b < M; ++b) bucket_begin[b + 1] = bucket_begin[b] + total[b];
  std::vector<SortGroup> groups;
  std::vector<std::uint64_t> taken(P, 0);  // per source: its piece's keys in earlier runs
  std::uint64_t placed = 0;
  for (const BucketRun& run : bucket_runs(bucket_begin, goal)) {
    const std::size_t p = run.first, q = run.last;
    const std::uint64_t count = bucket_begin[q] - bucket_begin[p];
    SortGroup g;
    g.begin = placed;
    g.count = count;
    g.one_bucket = std::count_if(total.begin() + std::ptrdiff_t(p), total.begin() + std::ptrdiff_t(q),
                                 [](std::uint64_t t) { return t > 0; }) == 1;
    std::uint64_t to = placed;
    for (std::size_t s = 0; s < P; ++s) {
      std::uint64_t c = 0;
      for (std::size_t b = p; b < q; ++b) c += here[s * M + b];
      if (c) g.chunks.push_back({at[s] + taken[s], to, c});
      taken[s] += c;
      to += c;
    }
    placed += count;
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace radixmesh::mesh
