// Out of core across MPI ranks: host-resident shards whose in-memory mesh sort does not fit a
// rank's GPU (or OutOfCoreMode::always on any rank). Every rank
//  1. takes the one extra host array (every rank is refused together, before a key moves, when
//     one cannot) and sorts its own shard: out of core on its GPU (sort_out_of_core_with, which
//     uses that array), in memory on a CPU rank;
//  2. cuts its sorted shard at exact splitters: for each rank boundary, the sort key of the
//     element at that global place, found bit by bit with one all_reduce_sum of every rank's
//     count below the candidates per bit; ties at a boundary go to the lower rank first, so the
//     pieces keep the global stable order (rank, then position);
//  3. sends each rank its piece by one host all_to_all_v (MPI, also between GPU ranks) into the
//     extra array, source-major;
//  4. merges the received runs by host threads into its own array.
// Each rank keeps its count, and the bytes equal one device's stable sort of the shards
// concatenated in rank order. Any rank's failure stops every rank at the next collective.
#include "mesh/sort_ranks_out_of_core.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mesh/exchange_layout.hpp"
#include "mesh/extra_host_array.hpp"
#include "mesh/sorted_runs.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh::detail {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point& t) {
  const auto now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

// Every rank's cut of its sorted shard at every rank boundary (step 2): moved[s * size + d] is
// what rank s sends rank d.
template <class K>
std::vector<std::uint64_t> pieces_by_splitters(comm::Communicator& comm, mesh::LocalErrors& errors, const K* keys,
                                               std::uint64_t n, const mesh::SortKey<K>& sk,
                                               const std::vector<std::uint64_t>& counts) {
  const std::size_t P = counts.size(), m = P - 1;
  std::vector<std::uint64_t> places;  // where each rank boundary falls in the global order
  for (std::size_t r = 0, at = 0; r + 1 < P; ++r) places.push_back(at += counts[r]);
  auto summed = [&](const std::vector<std::uint64_t>& own) {
    std::vector<std::uint64_t> sums(own.size(), 0);
    const std::span<const std::uint64_t> mine[] = {own};
    errors.collective([&] { comm.all_reduce_sum(mine, sums); });
    return sums;
  };
  const std::vector<std::uint64_t> split_keys =
      mesh::keys_at_places(places, sk.bits(), [&](const std::vector<std::uint64_t>& candidates) {
        std::vector<std::uint64_t> own(candidates.size(), 0);
        for (std::size_t b = 0; b < m; ++b) own[b] = mesh::count_below(keys, n, candidates[b], sk);
        return summed(own);
      });
  // Every rank's elements below and at most each splitter, gathered: every rank then knows every cut.
  std::vector<std::uint64_t> own(2 * m), gathered(P * 2 * m);
  for (std::size_t b = 0; b < m; ++b) {
    own[b] = mesh::count_below(keys, n, split_keys[b], sk);
    own[m + b] = mesh::count_through(keys, n, split_keys[b], sk);
  }
  const std::span<const std::byte> mine[] = {std::as_bytes(std::span(own))};
  errors.collective([&] { comm.all_gather(mine, std::as_writable_bytes(std::span(gathered))); });
  std::vector<std::vector<std::uint64_t>> below(P), through(P);
  for (std::size_t r = 0; r < P; ++r) {
    below[r].assign(gathered.begin() + std::ptrdiff_t(r * 2 * m), gathered.begin() + std::ptrdiff_t(r * 2 * m + m));
    through[r].assign(gathered.begin() + std::ptrdiff_t(r * 2 * m + m), gathered.begin() + std::ptrdiff_t((r + 1) * 2 * m));
  }
  const auto cut = mesh::cuts_at_places(places, below, through);
  std::vector<std::uint64_t> moved(P * P, 0);
  for (std::size_t s = 0; s < P; ++s)
    for (std::size_t d = 0; d < P; ++d) {
      const std::uint64_t from = d == 0 ? 0 : cut[s][d - 1], to = d + 1 == P ? counts[s] : cut[s][d];
      moved[s * P + d] = to - from;
    }
  return moved;
}

}  // namespace

void sort_ranks_out_of_core(Context& ctx, comm::Communicator& comm, mesh::LocalErrors& errors,
                            const ShardSortArgs& a, const SortPlan& plan, const std::vector<std::uint64_t>& counts,
                            const SortOptions& options) {
  const int rank = comm.first_local(), size = comm.size();
  const std::size_t key_bytes = size_of(plan.type), value_bytes = plan.value_bytes;
  void* keys = a.in.keys[0];
  void* values = value_bytes ? a.in.values[0] : nullptr;
  SortPhases* report = options.phases;
  if (report) {
    report->out_of_core = true;
    report->counts = counts;
  }
  auto t = Clock::now();

  // 1. The second host array, then this rank's own sort.
  ExtraHostArray tmp;
  errors.run(rank, [&] {
    tmp = extra_host_array(plan, options, "sort: the out-of-core sort's second host array on rank " + std::to_string(rank),
                           ctx.cpu_threads());
  });
  errors.collective([&] { comm.barrier(); });  // a rank short of memory stops every rank before any key moves
  errors.run(rank, [&] {
    if (plan.n < 2) return;
    if (ctx.mesh_backend(rank) == Backend::cuda) {
      sort_out_of_core_with(ctx, plan, keys, values, tmp.keys, tmp.values, options);
    } else {
      cpu_sort(plan, keys, values, ctx.cpu_threads());
      if (report) report->local_sort_ms += ms_since(t);
    }
  });
  t = Clock::now();

  visit_key_type(plan.type, [&](auto tag) {
    using K = decltype(tag);
    const mesh::SortKey<K> sk{plan.order, plan.begin_bit, plan.end_bit};
    // 2. The splitters (the first collective: a failed sort on any rank stops every rank here).
    const std::vector<std::uint64_t> moved =
        pieces_by_splitters(comm, errors, static_cast<const K*>(keys), plan.n, sk, counts);
    if (report) {
      report->splitters_ms += ms_since(t);
      report->moved = moved;
    }
    // 3. The exchange into the second array.
    const mesh::ExchangeLayout l = mesh::layout_of_matrix(moved, size, rank);
    const comm::Location host{};
    const comm::AllToAllV key_side[] = {
        {host, keys, tmp.keys, plan.n, l.send_counts, l.send_displs, l.recv_counts, l.recv_displs}};
    errors.collective([&] { comm.all_to_all_v(key_side, key_bytes); });
    if (value_bytes) {
      const comm::AllToAllV value_side[] = {
          {host, values, tmp.values, plan.n, l.send_counts, l.send_displs, l.recv_counts, l.recv_displs}};
      errors.collective([&] { comm.all_to_all_v(value_side, value_bytes); });
    }
    if (report) report->exchange_ms += ms_since(t);
    // 4. The merge of the received runs (source order breaks ties) back into the caller's array.
    std::vector<mesh::Run<K>> runs;
    for (int s = 0; s < size; ++s) {
      const std::uint64_t from = l.recv_displs[std::size_t(s)];
      runs.push_back({reinterpret_cast<const K*>(tmp.keys) + from,
                      value_bytes ? tmp.values + from * value_bytes : nullptr, l.recv_counts[std::size_t(s)]});
    }
    errors.run(rank, [&] {
      mesh::merge_runs(runs, static_cast<K*>(keys), static_cast<std::byte*>(values), value_bytes, sk,
                       ctx.cpu_threads());
    });
    if (report) report->merge_ms += ms_since(t);
  });
  errors.collective([&] { comm.barrier(); });
}

}  // namespace radixmesh::detail
