// The mesh top-k's radix-select path (topk_select.cpp), called by topk_shards.cpp after its
// agreement step has checked the call and found every shard's global offset.
#pragma once
#include <cstdint>
#include <span>

#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::mesh {

struct SelectCall {
  const detail::ShardTopkRequest& request;  // one array (rows == 1), checked
  std::span<const std::uint64_t> offset;    // mesh device d's first global index; size() + 1 entries
};

// Writes the top-k into request.out_values / out_indices on every process (collective).
void topk_by_radix_select(const Context& ctx, comm::Communicator& comm, DeviceBackend& backend, LocalErrors& errors,
                          const SelectCall& call);

}  // namespace radixmesh::mesh
