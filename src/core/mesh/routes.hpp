// Routes between participants, found by max-flow on the link graph hierarchically, as MGI §4.3
// does it: a pair on one host is solved on that host's subgraph; a pair across hosts is solved as
// source -> network on the source host's subgraph and network -> destination on the destination's,
// and the two flows are joined. Every flow is computed once per (from, to) vertex pair and cached,
// so a plan over P participants runs one flow per pair on a host and two halves (to and from
// the network) per participant across hosts.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/mesh/link_graph.hpp"
#include "core/mesh/max_flow.hpp"

namespace radixmesh::mesh {

// local: a participant's bytes to itself (no link). direct: only switches, NICs and the network
// between the two GPUs. relayed: through another GPU's memory (store and forward). staged: through
// a CPU's memory (no GPU-only path exists, e.g. no peer access, or a NIC without GPUDirect).
enum class RouteKind { local, direct, relayed, staged };
std::string to_string(RouteKind kind);

struct Route {
  RouteKind kind = RouteKind::direct;
  std::vector<int> vertices;  // link-graph vertices, source GPU first, destination GPU last
  std::vector<int> edges;     // the directed edges between them
  std::vector<int> via;       // the managed vertices in between (relay GPUs, staging CPUs)
  std::uint64_t rate = 0;     // bytes/s this route carries in the pair's max-flow
};

struct PairRoutes {
  std::uint64_t max_flow = 0;  // bytes/s, the pair alone on the graph
  // Fewest relays/stages first, then highest rate, then fewest hops.
  std::vector<Route> routes;
};

struct RouteOptions {
  // Let a route pass through another GPU. Without relays, a pair whose GPUs share no direct
  // path is staged through a CPU, or has no route.
  bool allow_relays = true;
};

// Hierarchical max-flow routes with a cache of flows per (from, to) vertex pair. Routes avoid
// CPUs (host memory) wherever a GPU-only path carries anything, because staging costs a copy into
// and out of host memory; they use CPUs only for a segment with no GPU-only path at all.
class RouteFinder {
 public:
  RouteFinder(const LinkGraph& graph, RouteOptions options);
  // The routes from participant `from` to participant `to` (cached). from == to gives one local
  // route. A pair with no path has max_flow 0 and no routes.
  const PairRoutes& routes(int from, int to);
  // How many max-flow computations ran so far (each cached segment counts once).
  std::size_t max_flow_runs() const { return runs_; }

 private:
  const Flow& segment(int from, int to, int host);
  PairRoutes join(const Flow& first, const Flow& second) const;
  Route make_route(std::vector<int> vertices, std::vector<int> edges, std::uint64_t rate) const;

  const LinkGraph& graph_;
  RouteOptions options_;
  std::map<std::pair<int, int>, Flow> segments_;
  std::map<std::pair<int, int>, PairRoutes> pairs_;
  std::size_t runs_ = 0;
};

// Max-flow value (bytes/s) per ordered pair of participants, row-major P x P; 0 on the diagonal.
std::vector<std::uint64_t> bandwidth_matrix(const LinkGraph& graph, RouteOptions options = {});
// The matrix as a table in GB/s, rows = from, columns = to.
std::string bandwidth_matrix_text(const std::vector<std::uint64_t>& matrix, int participants);

}  // namespace radixmesh::mesh
