#include "core/mesh/routes.hpp"

#include <algorithm>
#include <cstdio>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

std::string to_string(RouteKind kind) {
  switch (kind) {
    case RouteKind::local: return "local";
    case RouteKind::direct: return "direct";
    case RouteKind::relayed: return "relayed";
    case RouteKind::staged: return "staged";
  }
  return "?";
}

RouteFinder::RouteFinder(const LinkGraph& graph, RouteOptions options) : graph_(graph), options_(options) {
  graph_.validate();
}

Route RouteFinder::make_route(std::vector<int> vertices, std::vector<int> edges, std::uint64_t rate) const {
  Route route;
  route.kind = RouteKind::direct;
  for (std::size_t i = 1; i + 1 < vertices.size(); ++i) {
    const VertexKind kind = graph_.vertices()[vertices[i]].kind;
    if (kind == VertexKind::cpu) route.kind = RouteKind::staged;
    if (kind == VertexKind::gpu && route.kind == RouteKind::direct) route.kind = RouteKind::relayed;
    if (kind == VertexKind::cpu || kind == VertexKind::gpu) route.via.push_back(vertices[i]);
  }
  route.vertices = std::move(vertices);
  route.edges = std::move(edges);
  route.rate = rate;
  return route;
}

// One segment's flow on `host`'s subgraph (plus the network vertex when it is an end): GPU-only
// first, through CPUs only when no GPU-only path carries anything.
const Flow& RouteFinder::segment(int from, int to, int host) {
  const auto key = std::make_pair(from, to);
  if (auto hit = segments_.find(key); hit != segments_.end()) return hit->second;
  auto on_host = [&](int v, bool cpus) {
    const Vertex& x = graph_.vertices()[v];
    if (x.host != host) return false;
    if (x.kind == VertexKind::cpu) return cpus;
    return x.kind != VertexKind::gpu || options_.allow_relays;
  };
  Flow flow = max_flow(graph_, from, to, [&](int v) { return on_host(v, false); });
  ++runs_;
  if (flow.value == 0) {
    flow = max_flow(graph_, from, to, [&](int v) { return on_host(v, true); });
    ++runs_;
  }
  return segments_.emplace(key, std::move(flow)).first->second;
}

// Joins a flow into the network with a flow out of it: the network is modelled as non-blocking,
// so the joined value is the smaller of the two, and paths are paired greedily in order, each
// joined path carrying what both halves have left.
PairRoutes RouteFinder::join(const Flow& first, const Flow& second) const {
  PairRoutes joined;
  std::size_t a = 0, b = 0;
  std::uint64_t left_a = first.paths.empty() ? 0 : first.paths[0].rate;
  std::uint64_t left_b = second.paths.empty() ? 0 : second.paths[0].rate;
  while (a < first.paths.size() && b < second.paths.size()) {
    const std::uint64_t rate = std::min(left_a, left_b);
    const FlowPath& p = first.paths[a];
    const FlowPath& q = second.paths[b];
    std::vector<int> vertices = p.vertices;
    vertices.insert(vertices.end(), q.vertices.begin() + 1, q.vertices.end());
    std::vector<int> edges = p.edges;
    edges.insert(edges.end(), q.edges.begin(), q.edges.end());
    joined.routes.push_back(make_route(std::move(vertices), std::move(edges), rate));
    joined.max_flow += rate;
    left_a -= rate;
    left_b -= rate;
    if (left_a == 0 && ++a < first.paths.size()) left_a = first.paths[a].rate;
    if (left_b == 0 && ++b < second.paths.size()) left_b = second.paths[b].rate;
  }
  return joined;
}

const PairRoutes& RouteFinder::routes(int from, int to) {
  const auto key = std::make_pair(from, to);
  if (auto hit = pairs_.find(key); hit != pairs_.end()) return hit->second;
  const int source = graph_.gpu_of(from);
  const int sink = graph_.gpu_of(to);
  PairRoutes result;
  if (from == to) {
    Route local;
    local.kind = RouteKind::local;
    local.vertices = {source};
    result.routes.push_back(std::move(local));
  } else {
    const int source_host = graph_.vertices()[source].host;
    const int sink_host = graph_.vertices()[sink].host;
    if (source_host == sink_host) {
      for (const FlowPath& p : segment(source, sink, source_host).paths)
        result.routes.push_back(make_route(p.vertices, p.edges, p.rate));
      result.max_flow = segment(source, sink, source_host).value;
    } else {
      const int network = graph_.network_vertex();
      result = join(segment(source, network, source_host), segment(network, sink, sink_host));
    }
    std::stable_sort(result.routes.begin(), result.routes.end(), [](const Route& x, const Route& y) {
      if (x.via.size() != y.via.size()) return x.via.size() < y.via.size();
      if (x.rate != y.rate) return x.rate > y.rate;
      return x.edges.size() < y.edges.size();
    });
  }
  return pairs_.emplace(key, std::move(result)).first->second;
}

std::vector<std::uint64_t> bandwidth_matrix(const LinkGraph& graph, RouteOptions options) {
  RouteFinder finder(graph, options);
  const int p = graph.participant_count();
  std::vector<std::uint64_t> matrix(std::size_t(p) * std::size_t(p), 0);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j)
      if (i != j) matrix[std::size_t(i) * std::size_t(p) + std::size_t(j)] = finder.routes(i, j).max_flow;
  return matrix;
}

std::string bandwidth_matrix_text(const std::vector<std::uint64_t>& matrix, int participants) {
  require(matrix.size() == std::size_t(participants) * std::size_t(participants),
          "a bandwidth matrix of " + std::to_string(matrix.size()) + " entries for " + std::to_string(participants) +
              " participants",
          "pass a P x P matrix");
  std::string out = "max-flow GB/s (row = from, column = to)\n      ";
  char cell[32];
  for (int j = 0; j < participants; ++j) {
    std::snprintf(cell, sizeof cell, "%8d", j);
    out += cell;
  }
  out += "\n";
  for (int i = 0; i < participants; ++i) {
    std::snprintf(cell, sizeof cell, "%6d", i);
    out += cell;
    for (int j = 0; j < participants; ++j) {
      if (i == j)
        std::snprintf(cell, sizeof cell, "%8s", "-");
      else
        std::snprintf(cell, sizeof cell, "%8.1f", double(matrix[std::size_t(i) * std::size_t(participants) + std::size_t(j)]) / 1e9);
      out += cell;
    }
    out += "\n";
  }
  return out;
}

}  // namespace radixmesh::mesh
