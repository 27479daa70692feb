// The exchange planner: which bytes go from which participant to which, by which routes of the
// link graph, in which order, and how long that takes in a simple link model. Plans are values,
// printable as text and JSON (plan_text, plan_json) for --explain and --json.
//
// The schedule model:
// - Steps are rounds of a shifted all-to-all: round r carries every pair (i, (i + r) mod P), so each
//   participant sends to one peer and receives from one peer per round. The step of shift 0 is each
//   participant's bytes to itself (local copies). Rounds without bytes are left out.
// - Within a step all transfers run at once. The step's link time T is the largest, over links, of
//   (bytes the step sends across the link) / (link capacity); each transfer runs at bytes / T, so
//   the summed rate on every link stays within its capacity and every transfer ends at T.
// - A route through k managed vertices (relay GPUs, staging CPUs) stores and forwards chunk by
//   chunk: its last chunk arrives k * chunk / (the route's max-flow rate) after the link time. A
//   step's time is T plus the largest such fill.
// - Local copies cross no link: their rate is not modelled (0) and they add no time.
// - Routes per pair come from max-flow (routes.hpp). A pair's bytes are split over its routes in
//   proportion to the routes' rates, at most one route per chunk of bytes, so small pairs stay on
//   their first route. Routes that add capacity to a pair alone borrow links the other pairs of
//   the round need, so a round starts with every pair on its first route and, slowest pair first,
//   moves a pair onto all its routes where that shortens the modelled round; every pair on all its
//   routes is tried as well, and the fastest of these is kept.
// - The plan's modelled time is the sum of its steps' times; its floor is the largest, over links,
//   of all bytes the plan sends across the link over its capacity.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/link_graph.hpp"
#include "core/mesh/routes.hpp"

namespace radixmesh::mesh {

// Bytes from participant i to participant j, row-major P x P.
struct SendMatrix {
  int participants = 0;
  std::vector<std::uint64_t> bytes;

  SendMatrix() = default;
  explicit SendMatrix(int p) : participants(p), bytes(std::size_t(p) * std::size_t(p), 0) {}
  std::uint64_t& at(int from, int to) { return bytes[std::size_t(from) * std::size_t(participants) + std::size_t(to)]; }
  std::uint64_t at(int from, int to) const {
    return bytes[std::size_t(from) * std::size_t(participants) + std::size_t(to)];
  }
};

struct PlanOptions {
  // The executor moves whole chunks; MGI §2.2 measured 16 MB batches saturating an NVLink3 pair of
  // A100s with cudaMemcpyPeer, where 1 MB batches reached 41 %.
  std::uint64_t chunk_bytes = 16ull << 20;
  // Every share of a pair's bytes is a multiple of this (the element size), so no element is split
  // across routes; every entry of the matrix must be a multiple of it.
  std::uint64_t unit_bytes = 1;
  bool allow_relays = true;
  // Consider splitting a pair over several routes (MGI's multi-path); off keeps every pair on its
  // first route.
  bool allow_multipath = true;
};

// One route's part of a pair's bytes, moved as `chunks` chunks of `chunk_bytes` (the last one
// possibly shorter).
struct RouteShare {
  Route route;
  std::uint64_t bytes = 0;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t chunks = 0;
};

struct PairPlan {
  int source = 0;
  int destination = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_flow = 0;      // bytes/s, the pair alone on the graph; 0 for local pairs and
                                   // pairs without bytes (their routes are not computed)
  std::vector<RouteShare> shares;  // empty when bytes is 0
};

// One share of one pair, run within a step.
struct Transfer {
  int source = 0;
  int destination = 0;
  int share = 0;             // index into the pair's shares
  std::uint64_t bytes = 0;   // the whole share
  double bytes_per_s = 0;    // modelled rate; 0 for local copies
};

struct Step {
  std::vector<Transfer> transfers;
  double link_seconds = 0;   // T: the busiest link's bytes over its capacity
  double seconds = 0;        // T plus the largest store-and-forward fill
};

struct ExchangePlan {
  int participants = 0;
  std::vector<PairPlan> pairs;  // row-major P x P
  std::vector<Step> steps;
  double modelled_seconds = 0;
  double floor_seconds = 0;
  std::size_t max_flow_runs = 0;  // max-flow computations the plan needed (cached per pair/segment)

  const PairPlan& pair(int from, int to) const {
    return pairs[std::size_t(from) * std::size_t(participants) + std::size_t(to)];
  }
};

// Plans the exchange of `bytes` over `graph`. Throws rxm::Error(invalid_argument) when the matrix
// does not match the graph's participants, an entry is not a multiple of unit_bytes, or a pair
// with bytes has no route.
ExchangePlan plan_exchange(const SendMatrix& bytes, const LinkGraph& graph, const PlanOptions& options = {});

// --explain: a summary line, one block per pair with bytes (routes, shares, chunks) and one block
// per step; vertices by name.
std::string plan_text(const ExchangePlan& plan, const LinkGraph& graph);
// The same as one JSON object; vertices by index into the link graph.
std::string plan_json(const ExchangePlan& plan);

}  // namespace radixmesh::mesh
