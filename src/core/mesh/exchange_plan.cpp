#include "core/mesh/exchange_plan.hpp"

#include <algorithm>
#include <limits>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

void validate(const SendMatrix& bytes, const LinkGraph& graph, const PlanOptions& options) {
  graph.validate();
  const int p = graph.participant_count();
  require(bytes.participants == p && bytes.bytes.size() == std::size_t(p) * std::size_t(p),
          "the send matrix is for " + std::to_string(bytes.participants) + " participants (" +
              std::to_string(bytes.bytes.size()) + " entries) but the link graph has " + std::to_string(p),
          "pass a P x P matrix, P = the link graph's participant count");
  require(options.unit_bytes >= 1, "unit_bytes is 0", "pass the element size in bytes (>= 1)");
  require(options.chunk_bytes >= options.unit_bytes,
          "chunk_bytes " + std::to_string(options.chunk_bytes) + " is smaller than unit_bytes " +
              std::to_string(options.unit_bytes),
          "pass a chunk of at least one element");
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j)
      require(bytes.at(i, j) % options.unit_bytes == 0,
              "bytes from " + std::to_string(i) + " to " + std::to_string(j) + " (" + std::to_string(bytes.at(i, j)) +
                  ") are not a multiple of unit_bytes " + std::to_string(options.unit_bytes),
              "send whole elements");
}

// Splits a pair's bytes over its first routes (at most max_routes, at most one per chunk) in
// proportion to their rates, in whole units; the cumulative rounding keeps the sum exact.
std::vector<RouteShare> split(std::uint64_t bytes, const PairRoutes& routes, std::size_t max_routes,
                              const PlanOptions& options) {
  const std::uint64_t units = bytes / options.unit_bytes;
  const std::uint64_t chunk_units = options.chunk_bytes / options.unit_bytes;
  const std::uint64_t chunks = (units + chunk_units - 1) / chunk_units;
  const std::size_t n = std::min({routes.routes.size(), max_routes, std::size_t(std::max<std::uint64_t>(1, chunks))});
  long double total = 0;
  for (std::size_t k = 0; k < n; ++k) total += (long double)routes.routes[k].rate;
  std::vector<RouteShare> shares;
  std::uint64_t done = 0;
  long double cumulative = 0;
  for (std::size_t k = 0; k < n; ++k) {
    cumulative += (long double)routes.routes[k].rate;
    const std::uint64_t end = k + 1 == n ? units : std::uint64_t((long double)units * cumulative / total);
    if (end <= done) continue;
    RouteShare share;
    share.route = routes.routes[k];
    share.bytes = (end - done) * options.unit_bytes;
    share.chunk_bytes = std::min(chunk_units * options.unit_bytes, share.bytes);
    share.chunks = (share.bytes + share.chunk_bytes - 1) / share.chunk_bytes;
    shares.push_back(std::move(share));
    done = end;
  }
  return shares;
}

// The step model of exchange_plan.hpp: link time, each transfer's rate, and store-and-forward fill.
void time_step(Step& step, const std::vector<const RouteShare*>& shares, const LinkGraph& graph,
               std::vector<double>& load) {
  std::fill(load.begin(), load.end(), 0.0);
  for (const RouteShare* s : shares)
    for (int e : s->route.edges) load[std::size_t(e)] += double(s->bytes);
  double link_seconds = 0;
  for (std::size_t e = 0; e < load.size(); ++e)
    link_seconds = std::max(link_seconds, load[e] / double(graph.edges()[e].bytes_per_s));
  double fill = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const RouteShare& s = *shares[k];
    if (s.route.edges.empty()) continue;
    step.transfers[k].bytes_per_s = double(s.bytes) / link_seconds;
    fill = std::max(fill, double(s.route.via.size()) * double(s.chunk_bytes) / double(s.route.rate));
  }
  step.link_seconds = link_seconds;
  step.seconds = link_seconds + fill;
}

struct RoundPlan {
  std::vector<std::vector<RouteShare>> shares;  // per pair of the round
  Step step;
};

// Times a round whose pair k uses shares[k].
void time_round(RoundPlan& round, const std::vector<std::pair<int, int>>& pairs, const LinkGraph& graph,
                std::vector<double>& load) {
  std::vector<const RouteShare*> scheduled;
  round.step = Step{};
  for (std::size_t k = 0; k < pairs.size(); ++k)
    for (std::size_t s = 0; s < round.shares[k].size(); ++s) {
      round.step.transfers.push_back(Transfer{pairs[k].first, pairs[k].second, int(s), round.shares[k][s].bytes, 0.0});
      scheduled.push_back(&round.shares[k][s]);
    }
  time_step(round.step, scheduled, graph, load);
}

// Starts with every pair on its first route, then, slowest pair first, moves a pair onto all its
// routes wherever that shortens the round; finally compares with every pair on all its routes.
RoundPlan plan_round(const std::vector<std::pair<int, int>>& pairs, const SendMatrix& bytes, RouteFinder& finder,
                     bool multipath, const LinkGraph& graph, const PlanOptions& options, std::vector<double>& load) {
  RoundPlan round;
  std::vector<std::vector<RouteShare>> spread;
  for (const auto& [from, to] : pairs) {
    const PairRoutes& routes = finder.routes(from, to);
    round.shares.push_back(split(bytes.at(from, to), routes, 1, options));
    spread.push_back(split(bytes.at(from, to), routes, std::numeric_limits<std::size_t>::max(), options));
  }
  time_round(round, pairs, graph, load);
  if (!multipath) return round;
  std::vector<std::size_t> order(pairs.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto alone = [&](std::size_t k) {
    const RouteShare& s = round.shares[k][0];
    return s.route.rate == 0 ? 0.0 : double(s.bytes) / double(s.route.rate);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return alone(a) > alone(b); });
  for (std::size_t k : order) {
    if (spread[k].size() < 2) continue;
    RoundPlan trial = round;
    trial.shares[k] = spread[k];
    time_round(trial, pairs, graph, load);
    if (trial.step.seconds < round.step.seconds) round = std::move(trial);
  }
  RoundPlan everywhere{spread, Step{}};
  time_round(everywhere, pairs, graph, load);
  if (everywhere.step.seconds < round.step.seconds) round = std::move(everywhere);
  return round;
}

}  // namespace

ExchangePlan plan_exchange(const SendMatrix& bytes, const LinkGraph& graph, const PlanOptions& options) {
  validate(bytes, graph, options);
  const int p = graph.participant_count();
  RouteFinder finder(graph, RouteOptions{options.allow_relays});
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j)
      require(bytes.at(i, j) == 0 || !finder.routes(i, j).routes.empty(),
              "participant " + std::to_string(i) + " has no route to participant " + std::to_string(j) +
                  " in the link graph, but " + std::to_string(bytes.at(i, j)) + " bytes go there",
              "check the graph's links (radixmesh info --links), or send those bytes elsewhere");

  ExchangePlan plan;
  plan.participants = p;
  plan.pairs.resize(std::size_t(p) * std::size_t(p));
  std::vector<double> load(graph.edges().size(), 0.0);
  std::vector<double> total_load(graph.edges().size(), 0.0);
  for (int r = 0; r < p; ++r) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < p; ++i)
      if (bytes.at(i, (i + r) % p) > 0) pairs.emplace_back(i, (i + r) % p);
    if (pairs.empty()) continue;
    RoundPlan round = plan_round(pairs, bytes, finder, r > 0 && options.allow_multipath, graph, options, load);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const auto [from, to] = pairs[k];
      PairPlan& pair = plan.pairs[std::size_t(from) * std::size_t(p) + std::size_t(to)];
      pair.bytes = bytes.at(from, to);
      pair.max_flow = finder.routes(from, to).max_flow;
      pair.shares = std::move(round.shares[k]);
      for (const RouteShare& s : pair.shares)
        for (int e : s.route.edges) total_load[std::size_t(e)] += double(s.bytes);
    }
    plan.modelled_seconds += round.step.seconds;
    plan.steps.push_back(std::move(round.step));
  }
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      PairPlan& pair = plan.pairs[std::size_t(i) * std::size_t(p) + std::size_t(j)];
      pair.source = i;
      pair.destination = j;
    }
  for (std::size_t e = 0; e < total_load.size(); ++e)
    plan.floor_seconds = std::max(plan.floor_seconds, total_load[e] / double(graph.edges()[e].bytes_per_s));
  plan.max_flow_runs = finder.max_flow_runs();
  return plan;
}

}  // namespace radixmesh::mesh
