// Maximum flow between two vertices of the link graph (Edmonds-Karp: shortest augmenting paths
// found by breadth-first search), with the flow decomposed into paths that carry it.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/mesh/link_graph.hpp"

namespace radixmesh::mesh {

// One path of a flow: vertices from source to sink, the directed edges between them, and the
// rate (bytes/s) the flow sends along it.
struct FlowPath {
  std::vector<int> vertices;
  std::vector<int> edges;
  std::uint64_t rate = 0;
};

struct Flow {
  std::uint64_t value = 0;       // the sum of the paths' rates
  std::vector<FlowPath> paths;   // shortest first (in hops), as the search found them
};

// Which vertices a flow may pass through; the source and the sink are always allowed.
using VertexFilter = std::function<bool(int vertex)>;

// The maximum flow from `source` to `sink` over the edges whose both ends pass `allowed`, decomposed
// into paths. Each edge's capacity bounds the sum of the rates of the paths that use it. Cost
// O(V E^2) for the flow; the graphs here are one host's subgraph (tens of vertices).
Flow max_flow(const LinkGraph& graph, int source, int sink, const VertexFilter& allowed);

}  // namespace radixmesh::mesh
