#include "core/mesh/max_flow.hpp"

#include <algorithm>
#include <deque>
#include <limits>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

// Residual arcs: arc 2e is edge e forward (residual capacity - flow), arc 2e+1 its reverse
// (residual = flow on e, so pushing along it cancels flow).
struct Residual {
  const LinkGraph& graph;
  std::vector<std::int64_t> flow;   // per edge
  std::vector<std::vector<int>> arcs_from;  // per vertex: arcs leaving it

  std::int64_t residual(int arc) const {
    const int e = arc / 2;
    return arc % 2 == 0 ? std::int64_t(graph.edges()[e].bytes_per_s) - flow[e] : flow[e];
  }
  int head(int arc) const {
    const Edge& e = graph.edges()[arc / 2];
    return arc % 2 == 0 ? e.to : e.from;
  }
  int tail(int arc) const {
    const Edge& e = graph.edges()[arc / 2];
    return arc % 2 == 0 ? e.from : e.to;
  }
};

// Breadth-first search from `source` over arcs for which `open(arc)` holds; returns, per vertex,
// the arc that reached it (-1 if unreached). Arcs are tried in edge order, so results are
// deterministic.
template <class Open>
std::vector<int> bfs(const Residual& r, int source, int sink, Open open) {
  std::vector<int> via(r.graph.vertices().size(), -1);
  std::vector<char> seen(r.graph.vertices().size(), 0);
  std::deque<int> queue{source};
  seen[source] = 1;
  while (!queue.empty() && !seen[sink]) {
    const int v = queue.front();
    queue.pop_front();
    for (int arc : r.arcs_from[v]) {
      const int w = r.head(arc);
      if (seen[w] || !open(arc)) continue;
      seen[w] = 1;
      via[w] = arc;
      queue.push_back(w);
    }
  }
  return via;
}

std::vector<int> arcs_to(const Residual& r, const std::vector<int>& via, int source, int sink) {
  std::vector<int> path;
  for (int v = sink; v != source; v = r.tail(via[v])) path.push_back(via[v]);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

Flow max_flow(const LinkGraph& graph, int source, int sink, const VertexFilter& allowed) {
  const int n = int(graph.vertices().size());
  require(source >= 0 && source < n && sink >= 0 && sink < n, "max-flow endpoints are not vertices of the graph",
          "pass vertex indices of the link graph");
  require(source != sink, "max-flow from a vertex to itself", "pass two different vertices");
  auto admit = [&](int v) { return v == source || v == sink || allowed(v); };

  Residual r{graph, std::vector<std::int64_t>(graph.edges().size(), 0),
             std::vector<std::vector<int>>(std::size_t(n))};
  for (std::size_t e = 0; e < graph.edges().size(); ++e) {
    const Edge& edge = graph.edges()[e];
    if (!admit(edge.from) || !admit(edge.to)) continue;
    r.arcs_from[edge.from].push_back(int(2 * e));
    r.arcs_from[edge.to].push_back(int(2 * e + 1));
  }

  // Edmonds-Karp: augment along shortest residual paths until none is left.
  for (;;) {
    const std::vector<int> via = bfs(r, source, sink, [&](int arc) { return r.residual(arc) > 0; });
    if (via[sink] < 0) break;
    const std::vector<int> arcs = arcs_to(r, via, source, sink);
    std::int64_t push = std::numeric_limits<std::int64_t>::max();
    for (int arc : arcs) push = std::min(push, r.residual(arc));
    for (int arc : arcs) r.flow[arc / 2] += arc % 2 == 0 ? push : -push;
  }

  // Decompose: repeatedly take a shortest source-sink path over edges that still carry flow and
  // peel its bottleneck off. Flow left on cycles carries nothing from source to sink and is dropped.
  Flow result;
  for (;;) {
    const std::vector<int> via = bfs(r, source, sink, [&](int arc) { return arc % 2 == 0 && r.flow[arc / 2] > 0; });
    if (via[sink] < 0) break;
    const std::vector<int> arcs = arcs_to(r, via, source, sink);
    std::int64_t rate = std::numeric_limits<std::int64_t>::max();
    for (int arc : arcs) rate = std::min(rate, r.flow[arc / 2]);
    FlowPath path;
    path.vertices.push_back(source);
    for (int arc : arcs) {
      r.flow[arc / 2] -= rate;
      path.edges.push_back(arc / 2);
      path.vertices.push_back(graph.edges()[arc / 2].to);
    }
    path.rate = std::uint64_t(rate);
    result.value += path.rate;
    result.paths.push_back(std::move(path));
  }
  return result;
}

}  // namespace radixmesh::mesh
