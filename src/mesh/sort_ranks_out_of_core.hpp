// The out-of-core sort across the ranks of an MPI context (src/mesh/sort_ranks_out_of_core.cpp):
// each rank's host shard sorted on its own devices, cut at exact splitters, exchanged once by a
// host all_to_all_v, and merged. sort_shards calls it, after the ranks' agreement, when a rank
// asks for it (rank_out_of_core_wish).
#pragma once
#include <cstdint>
#include <vector>

#include "core/backends.hpp"
#include "mesh/local_errors.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

// In place: a.in holds this rank's one host shard (keys, values), plan its local count and the
// agreed bits and order, counts every rank's count. Collective over comm.
void sort_ranks_out_of_core(Context& ctx, comm::Communicator& comm, mesh::LocalErrors& errors,
                            const ShardSortArgs& a, const SortPlan& plan, const std::vector<std::uint64_t>& counts,
                            const SortOptions& options);

}  // namespace radixmesh::detail
