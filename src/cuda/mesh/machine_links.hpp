// The link graph of a CUDA context's devices, for the exchange planner and `radixmesh info
// --links` (machine_links.cpp says how it is built and measured).
#pragma once
#include <string>

#include "core/mesh/link_graph.hpp"
#include "radixmesh/context.hpp"

namespace radixmesh::detail {

struct MachineLinks {
  mesh::LinkGraph graph;
  std::string source;  // nominal, measured now, or the cache file it came from
  std::string notes;   // what could not be read (NVML missing, ...)
};

// measure: time the links now and cache the rates; otherwise a cache from an earlier measurement
// where there is one, else nominal figures from the link types.
MachineLinks machine_links(const Context& ctx, bool measure);

}  // namespace radixmesh::detail
