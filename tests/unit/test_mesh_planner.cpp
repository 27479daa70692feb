// The mesh's planning layer on synthetic link graphs: nominal capacities, max-flow values computed
// by hand (in the comments), hierarchical routes with their cache, and exchange plans whose every
// step is checked against the link capacities and whose bytes are checked to be scheduled once.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

#include "common/random_keys.hpp"
#include "core/mesh/exchange_plan.hpp"
#include "core/mesh/max_flow.hpp"
#include "core/mesh/routes.hpp"
#include "core/mesh/topologies.hpp"
#include "radixmesh/error.hpp"

namespace rxm = radixmesh;
using namespace radixmesh::mesh;

namespace {

constexpr std::uint64_t GB = 1'000'000'000ull;
constexpr std::uint64_t nvlink4_x18 = 450 * GB;            // 18 lanes x 25 GB/s
constexpr std::uint64_t pcie4_x16 = 16 * 1'969'230'769ull;  // 31.5 GB/s
constexpr std::uint64_t pcie5_x16 = 16 * 3'938'461'538ull;  // 63.0 GB/s

// Every invariant a plan must hold: shares add up to the matrix in whole units, every share runs in
// exactly one step with its whole bytes, routes are paths of the graph between the pair's GPUs,
// no step puts more rate on a link than its capacity, and no transfer outlasts its step.
void check_plan(const ExchangePlan& plan, const SendMatrix& bytes, const LinkGraph& graph,
                const PlanOptions& options = {}) {
  const int p = bytes.participants;
  ASSERT_EQ(plan.participants, p);
  ASSERT_EQ(plan.pairs.size(), std::size_t(p) * std::size_t(p));
  std::map<std::tuple<int, int, int>, int> runs;
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      const PairPlan& pair = plan.pair(i, j);
      EXPECT_EQ(pair.source, i);
      EXPECT_EQ(pair.destination, j);
      EXPECT_EQ(pair.bytes, bytes.at(i, j));
      std::uint64_t sum = 0;
      for (std::size_t s = 0; s < pair.shares.size(); ++s) {
        const RouteShare& share = pair.shares[s];
        sum += share.bytes;
        EXPECT_GT(share.bytes, 0u);
        EXPECT_EQ(share.bytes % options.unit_bytes, 0u);
        EXPECT_LE(share.chunk_bytes, options.chunk_bytes);
        EXPECT_EQ(share.chunks, (share.bytes + share.chunk_bytes - 1) / share.chunk_bytes);
        const Route& r = share.route;
        ASSERT_FALSE(r.vertices.empty());
        EXPECT_EQ(r.vertices.front(), graph.gpu_of(i));
        EXPECT_EQ(r.vertices.back(), graph.gpu_of(j));
        ASSERT_EQ(r.edges.size() + 1, r.vertices.size());
        for (std::size_t k = 0; k < r.edges.size(); ++k) {
          EXPECT_EQ(graph.edges()[r.edges[k]].from, r.vertices[k]);
          EXPECT_EQ(graph.edges()[r.edges[k]].to, r.vertices[k + 1]);
        }
        EXPECT_EQ(r.kind == RouteKind::local, i == j);
        runs[{i, j, int(s)}] = 0;
      }
      EXPECT_EQ(sum, bytes.at(i, j)) << i << " -> " << j;
    }
  double total = 0;
  for (const Step& step : plan.steps) {
    std::vector<double> rate(graph.edges().size(), 0.0);
    EXPECT_GE(step.seconds, step.link_seconds);
    for (const Transfer& t : step.transfers) {
      const auto key = std::make_tuple(t.source, t.destination, t.share);
      ASSERT_TRUE(runs.count(key)) << t.source << " -> " << t.destination << " share " << t.share;
      ++runs[key];
      const RouteShare& share = plan.pair(t.source, t.destination).shares[std::size_t(t.share)];
      EXPECT_EQ(t.bytes, share.bytes);
      if (share.route.edges.empty()) continue;
      ASSERT_GT(t.bytes_per_s, 0.0);
      EXPECT_LE(double(t.bytes) / t.bytes_per_s, step.link_seconds * (1 + 1e-9));
      for (int e : share.route.edges) rate[std::size_t(e)] += t.bytes_per_s;
    }
    for (std::size_t e = 0; e < rate.size(); ++e)
      EXPECT_LE(rate[e], double(graph.edges()[e].bytes_per_s) * (1 + 1e-9)) << "edge " << e;
    total += step.seconds;
  }
  for (const auto& [key, count] : runs) EXPECT_EQ(count, 1) << std::get<0>(key) << " -> " << std::get<1>(key);
  EXPECT_NEAR(plan.modelled_seconds, total, 1e-12 + total * 1e-12);
  EXPECT_GE(plan.modelled_seconds, plan.floor_seconds * (1 - 1e-9));
}

SendMatrix uniform(int p, std::uint64_t b, bool diagonal = false) {
  SendMatrix m(p);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) m.at(i, j) = (i != j || diagonal) ? b : 0;
  return m;
}

SendMatrix random_matrix(int p, std::mt19937_64& rng, std::uint64_t unit) {
  SendMatrix m(p);
  std::uniform_int_distribution<int> kind(0, 3);
  for (auto& b : m.bytes) {
    const int k = kind(rng);
    b = k == 0 ? 0 : k == 1 ? unit * (rng() % 7) : unit * (rng() % (std::uint64_t(64) << 20));
  }
  return m;
}

bool has_edge(const LinkGraph& g, int a, int b) { return g.edge_between(a, b) >= 0; }

// --- link graph -----------------------------------------------------------------------------

TEST(MeshLinks, NominalCapacities) {
  EXPECT_EQ(nvlink_bytes_per_s(4, 18), 450 * GB);
  EXPECT_EQ(nvlink_bytes_per_s(2, 1), 25 * GB);
  EXPECT_EQ(nvlink_bytes_per_s(5, 18), 900 * GB);
  EXPECT_EQ(nvlink_bytes_per_s(1, 4), 80 * GB);
  EXPECT_EQ(pcie_bytes_per_s(4, 16), pcie4_x16);
  EXPECT_EQ(pcie_bytes_per_s(5, 16), pcie5_x16);
  EXPECT_EQ(pcie_bytes_per_s(3, 8), 8 * 984'615'384ull);
  EXPECT_EQ(nominal_bytes_per_s(Link{LinkKind::pcie, 1, 1}), 250'000'000ull);
  EXPECT_THROW(nominal_bytes_per_s(Link{LinkKind::network, 0, 0}), rxm::Error);
  EXPECT_THROW(nvlink_bytes_per_s(7, 1), rxm::Error);
  EXPECT_THROW(pcie_bytes_per_s(4, 3), rxm::Error);
  EXPECT_EQ(describe(Link{LinkKind::nvlink, 4, 18}), "NVLink4 x18");
  EXPECT_EQ(describe(Link{LinkKind::pcie, 5, 16}), "PCIe5 x16");
}

TEST(MeshLinks, GraphValidation) {
  LinkGraph g;
  const int a = g.add_vertex(VertexKind::gpu, "a", 0, 0);
  EXPECT_THROW(g.add_vertex(VertexKind::gpu, "b", 0, 0), rxm::Error);  // participant taken
  EXPECT_THROW(g.add_vertex(VertexKind::gpu, "b", 0), rxm::Error);     // GPU without participant
  EXPECT_THROW(g.add_vertex(VertexKind::cpu, "c", 0, 3), rxm::Error);  // non-GPU participant
  EXPECT_THROW(g.add_vertex(VertexKind::network, "n", 0), rxm::Error); // network on a host
  const int b = g.add_vertex(VertexKind::gpu, "b", 0, 2);
  EXPECT_THROW(g.validate(), rxm::Error);  // participant 1 missing
  EXPECT_THROW(g.add_link(a, a, Link{LinkKind::nvlink, 4, 1}), rxm::Error);
  EXPECT_THROW(g.add_link(a, 9, Link{LinkKind::nvlink, 4, 1}), rxm::Error);
  EXPECT_THROW(g.add_link(a, b, Link{LinkKind::network, 0, 0}, 0), rxm::Error);
  // Parallel links merge into one edge per direction with the summed capacity and lanes.
  g.add_link(a, b, Link{LinkKind::nvlink, 4, 2});
  g.add_link(a, b, Link{LinkKind::nvlink, 4, 4});
  ASSERT_EQ(g.edges().size(), 2u);
  EXPECT_EQ(g.edges()[std::size_t(g.edge_between(a, b))].bytes_per_s, 150 * GB);
  EXPECT_EQ(g.edges()[std::size_t(g.edge_between(b, a))].link.lanes, 6);
  EXPECT_THROW(g.add_link(a, b, Link{LinkKind::pcie, 4, 16}), rxm::Error);  // a second kind

  LinkGraph hosts;
  hosts.add_vertex(VertexKind::gpu, "x", 0, 0);
  hosts.add_vertex(VertexKind::gpu, "y", 1, 1);
  EXPECT_THROW(hosts.validate(), rxm::Error);  // two hosts, no network
  EXPECT_THROW(LinkGraph{}.validate(), rxm::Error);
}

TEST(MeshLinks, PrintableForms) {
  const LinkGraph g = nvswitch_box(NvswitchBox{2, 4, 18});
  const std::string text = links_text(g);
  EXPECT_NE(text.find("h0.nvswitch"), std::string::npos);
  EXPECT_NE(text.find("NVLink4 x18"), std::string::npos);
  EXPECT_NE(text.find("450.0 GB/s"), std::string::npos);
  const std::string json = links_json(g);
  EXPECT_EQ(json.rfind("{\"vertices\":[{\"id\":0,\"kind\":\"nvswitch\"", 0), 0u) << json;
  EXPECT_NE(json.find("\"bytes_per_s\":450000000000"), std::string::npos);
  const std::string matrix = bandwidth_matrix_text(bandwidth_matrix(g), 2);
  EXPECT_NE(matrix.find("450.0"), std::string::npos) << matrix;
}

// --- max-flow ----------------------------------------------------------------------------------

TEST(MeshMaxFlow, DiamondByHand) {
  // s -> a (10), s -> b (5), a -> b (15), a -> t (4), b -> t (12); one direction each.
  // Cut {s} = 15; cut {s,a,b} = 4 + 12 = 16; so max-flow = 15:
  // s>a>t 4, s>b>t 5, s>a>b>t 6.
  LinkGraph g;
  const int s = g.add_vertex(VertexKind::gpu, "s", 0, 0);
  const int a = g.add_vertex(VertexKind::pcie_switch, "a", 0);
  const int b = g.add_vertex(VertexKind::pcie_switch, "b", 0);
  const int t = g.add_vertex(VertexKind::gpu, "t", 0, 1);
  const Link l{LinkKind::host_memory, 0, 0};
  g.add_edge(s, a, l, 10);
  g.add_edge(s, b, l, 5);
  g.add_edge(a, b, l, 15);
  g.add_edge(a, t, l, 4);
  g.add_edge(b, t, l, 12);
  const Flow f = max_flow(g, s, t, [](int) { return true; });
  EXPECT_EQ(f.value, 15u);
  std::uint64_t sum = 0;
  for (const FlowPath& p : f.paths) sum += p.rate;
  EXPECT_EQ(sum, 15u);
  ASSERT_EQ(f.paths.size(), 3u);
  EXPECT_EQ(f.paths[0].vertices.size(), 3u);  // the two-hop paths come first
  EXPECT_EQ(f.paths[2].vertices, (std::vector<int>{s, a, b, t}));
  EXPECT_EQ(f.paths[2].rate, 6u);
  // Without vertex b only s>a>t remains: 4.
  EXPECT_EQ(max_flow(g, s, t, [&](int v) { return v != b; }).value, 4u);
  // Nothing flows backwards.
  EXPECT_EQ(max_flow(g, t, s, [](int) { return true; }).value, 0u);
  EXPECT_THROW(max_flow(g, s, s, [](int) { return true; }), rxm::Error);
}

// --- NVSwitch box --------------------------------------------------------------------------------

TEST(MeshPlanner, NvswitchBoxEveryRouteDirect) {
  // Every GPU has one 450 GB/s edge up to the switch and one down, so every pair's max-flow is
  // 450 GB/s over the single path gpu > nvswitch > gpu.
  const LinkGraph g = nvswitch_box(NvswitchBox{});
  for (std::uint64_t bw : bandwidth_matrix(g)) EXPECT_TRUE(bw == 0 || bw == nvlink4_x18);
  const std::uint64_t b = 256ull << 20;
  const SendMatrix m = uniform(8, b, true);
  const ExchangePlan plan = plan_exchange(m, g);
  check_plan(plan, m, g);
  for (const PairPlan& pair : plan.pairs) {
    ASSERT_EQ(pair.shares.size(), 1u);
    EXPECT_EQ(pair.shares[0].route.kind, pair.source == pair.destination ? RouteKind::local : RouteKind::direct);
    if (pair.source != pair.destination) {
      EXPECT_EQ(pair.max_flow, nvlink4_x18);
      EXPECT_EQ(pair.shares[0].route.vertices.size(), 3u);
      EXPECT_EQ(pair.shares[0].chunks, 16u);  // 256 MiB in 16 MiB chunks
    }
  }
  // The shift-0 step (local copies, no time) and 7 shifted steps; in each round every GPU sends b up
  // its 450 GB/s link and receives b down its link: b / 450e9 per round.
  ASSERT_EQ(plan.steps.size(), 8u);
  EXPECT_EQ(plan.steps[0].seconds, 0.0);
  EXPECT_NEAR(plan.modelled_seconds, 7.0 * double(b) / 450e9, 1e-12);
  EXPECT_NEAR(plan.floor_seconds, 7.0 * double(b) / 450e9, 1e-12);
  // 56 pairs on one host: one max-flow each.
  EXPECT_EQ(plan.max_flow_runs, 56u);
}

TEST(MeshPlanner, HotDestinationOnNvswitch) {
  // Everyone sends b to participant 0: seven rounds of one pair each, each b / 450 GB/s, which is
  // also the floor set by GPU 0's one incoming link (7 b / 450 GB/s).
  const LinkGraph g = nvswitch_box(NvswitchBox{});
  const std::uint64_t b = 100ull << 20;
  SendMatrix m(8);
  for (int i = 1; i < 8; ++i) m.at(i, 0) = b;
  const ExchangePlan plan = plan_exchange(m, g);
  check_plan(plan, m, g);
  EXPECT_EQ(plan.steps.size(), 7u);
  EXPECT_NEAR(plan.modelled_seconds, 7.0 * double(b) / 450e9, 1e-12);
  EXPECT_NEAR(plan.floor_seconds, plan.modelled_seconds, 1e-12);
}

TEST(MeshPlanner, ZerosAndEmptyRows) {
  const LinkGraph g = nvswitch_box(NvswitchBox{4, 4, 18});
  const SendMatrix zeros(4);
  const ExchangePlan empty = plan_exchange(zeros, g);
  check_plan(empty, zeros, g);
  EXPECT_TRUE(empty.steps.empty());
  EXPECT_EQ(empty.modelled_seconds, 0.0);
  EXPECT_EQ(empty.max_flow_runs, 0u);

  SendMatrix diagonal(4);
  for (int i = 0; i < 4; ++i) diagonal.at(i, i) = 1000;
  const ExchangePlan local = plan_exchange(diagonal, g);
  check_plan(local, diagonal, g);
  ASSERT_EQ(local.steps.size(), 1u);
  EXPECT_EQ(local.modelled_seconds, 0.0);

  SendMatrix rows = uniform(4, 4096);
  for (int j = 0; j < 4; ++j) rows.at(2, j) = 0;  // participant 2 sends nothing
  for (int i = 0; i < 4; ++i) rows.at(i, 3) = 0;  // participant 3 receives nothing
  const ExchangePlan plan = plan_exchange(rows, g);
  check_plan(plan, rows, g);
  EXPECT_TRUE(plan.pair(2, 0).shares.empty());
  EXPECT_EQ(plan.pair(2, 0).max_flow, 0u);  // not computed for a pair without bytes
}

// --- DGX-1 hybrid cube-mesh ---------------------------------------------------------------------

TEST(MeshPlanner, Dgx1MaxFlowByHand) {
  const LinkGraph g = dgx1_hybrid_cube_mesh();
  // Every GPU has 6 lanes (150 GB/s) out and in, and every pair reaches 150 GB/s. By hand:
  // 0 -> 5 (no NVLink between them): 0>1>5, 0>4>5, 0>4>6>5, 0>2>6>5, 0>3>7>5, 0>3>1>5, one lane
  //   (25 GB/s) each; edges used at most to their lanes (1>5 and 6>5 carry two paths on 2 lanes).
  // 0 -> 1 (one lane): 0>1, 0>2>1, 0>3>1, 0>3>2>1, 0>4>5>1, 0>4>6>5>1, one lane each.
  // 0 -> 3 (two lanes): 0>3 (2 lanes), 0>1>3, 0>2>3, 0>4>7>3, 0>4>6>2>3, one lane each.
  const std::vector<std::uint64_t> bw = bandwidth_matrix(g);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(bw[std::size_t(i * 8 + j)], i == j ? 0 : 150 * GB) << i << " -> " << j;

  RouteFinder finder(g, RouteOptions{});
  // A non-adjacent pair relays every byte through a neighbour of the source.
  for (const Route& r : finder.routes(0, 5).routes) {
    EXPECT_EQ(r.kind, RouteKind::relayed);
    EXPECT_TRUE(has_edge(g, 0, r.vertices[1]));
    EXPECT_FALSE(r.via.empty());
  }
  // An adjacent pair's first route is its direct link, then the relays.
  const PairRoutes& one_lane = finder.routes(0, 1);
  EXPECT_EQ(one_lane.routes[0].kind, RouteKind::direct);
  EXPECT_EQ(one_lane.routes[0].rate, 25 * GB);
  const PairRoutes& two_lanes = finder.routes(0, 3);
  EXPECT_EQ(two_lanes.routes[0].kind, RouteKind::direct);
  EXPECT_EQ(two_lanes.routes[0].rate, 50 * GB);
  // Without relays a non-adjacent pair has no route at all (the model has no PCIe or CPUs).
  RouteFinder direct_only(g, RouteOptions{false});
  EXPECT_EQ(direct_only.routes(0, 5).max_flow, 0u);
  EXPECT_EQ(direct_only.routes(0, 3).max_flow, 50 * GB);
  SendMatrix m(8);
  m.at(0, 5) = 1;
  PlanOptions no_relays;
  no_relays.allow_relays = false;
  EXPECT_THROW(plan_exchange(m, g, no_relays), rxm::Error);
}

TEST(MeshPlanner, Dgx1SinglePairUsesEveryLane) {
  // 0 -> 5 alone: split over its routes in proportion to their rates, the link time is
  // b / 150 GB/s (GPU 0's six lanes all busy); the store-and-forward fill adds at most
  // (relays <= 3) x 1 MiB / (route rate >= 25 GB/s).
  const LinkGraph g = dgx1_hybrid_cube_mesh();
  const std::uint64_t b = 6ull << 30;
  SendMatrix m(8);
  m.at(0, 5) = b;
  PlanOptions options;
  options.chunk_bytes = 1ull << 20;
  const ExchangePlan plan = plan_exchange(m, g, options);
  check_plan(plan, m, g, options);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_GE(plan.pair(0, 5).shares.size(), 6u);
  for (const RouteShare& s : plan.pair(0, 5).shares) EXPECT_EQ(s.route.kind, RouteKind::relayed);
  EXPECT_NEAR(plan.steps[0].link_seconds, double(b) / 150e9, 1e-9);
  EXPECT_LE(plan.steps[0].seconds, double(b) / 150e9 + 3.0 * double(1 << 20) / 25e9 + 1e-9);
  // Kept on one route (no multi-path): one lane, b / 25 GB/s.
  options.allow_multipath = false;
  const ExchangePlan single = plan_exchange(m, g, options);
  check_plan(single, m, g, options);
  ASSERT_EQ(single.pair(0, 5).shares.size(), 1u);
  EXPECT_NEAR(single.steps[0].link_seconds, double(b) / 25e9, 1e-9);
}

TEST(MeshPlanner, Dgx1AllToAllNonAdjacentPairsRelay) {
  const LinkGraph g = dgx1_hybrid_cube_mesh();
  const SendMatrix m = uniform(8, 64ull << 20);
  const ExchangePlan plan = plan_exchange(m, g);
  check_plan(plan, m, g);
  for (const PairPlan& pair : plan.pairs) {
    if (pair.bytes == 0) continue;
    const bool adjacent = has_edge(g, g.gpu_of(pair.source), g.gpu_of(pair.destination));
    if (adjacent) continue;
    for (const RouteShare& s : pair.shares) EXPECT_EQ(s.route.kind, RouteKind::relayed);
  }
  // No round is slower than each pair alone on its slowest single route (one lane).
  for (const Step& step : plan.steps) EXPECT_LE(step.link_seconds, 3.0 * double(64ull << 20) / 25e9);
  EXPECT_NE(plan_text(plan, g).find("relayed"), std::string::npos);
}

// --- PCIe tree ------------------------------------------------------------------------------------

TEST(MeshPlanner, PcieTreeSharedUplink) {
  // cpu - root - {sw0: gpu0, gpu1; sw1: gpu2, gpu3}, all PCIe4 x16 (31.5 GB/s per direction).
  const LinkGraph g = pcie_tree(PcieTree{});
  RouteFinder finder(g, RouteOptions{});
  // 0 -> 1: gpu0 > sw0 > gpu1, 31.5 GB/s. 0 -> 2: gpu0 > sw0 > root > sw1 > gpu2, 31.5 GB/s; both
  // peer-to-peer (no CPU on the way).
  EXPECT_EQ(finder.routes(0, 1).max_flow, pcie4_x16);
  ASSERT_EQ(finder.routes(0, 1).routes.size(), 1u);
  EXPECT_EQ(finder.routes(0, 1).routes[0].vertices.size(), 3u);
  EXPECT_EQ(finder.routes(0, 2).max_flow, pcie4_x16);
  EXPECT_EQ(finder.routes(0, 2).routes[0].kind, RouteKind::direct);
  EXPECT_EQ(finder.routes(0, 2).routes[0].vertices.size(), 5u);

  // 0 -> 2 and 1 -> 3 share sw0's uplink (one round, shift 2): 2b over 31.5 GB/s.
  const std::uint64_t b = 512ull << 20;
  SendMatrix across(4);
  across.at(0, 2) = b;
  across.at(1, 3) = b;
  const ExchangePlan shared = plan_exchange(across, g);
  check_plan(shared, across, g);
  EXPECT_NEAR(shared.modelled_seconds, 2.0 * double(b) / double(pcie4_x16), 1e-12);
  // 0 -> 1 and 2 -> 3 stay below their own switches: b over 31.5 GB/s.
  SendMatrix below(4);
  below.at(0, 1) = b;
  below.at(2, 3) = b;
  const ExchangePlan apart = plan_exchange(below, g);
  check_plan(apart, below, g);
  EXPECT_NEAR(apart.modelled_seconds, double(b) / double(pcie4_x16), 1e-12);
}

TEST(MeshPlanner, PcieWithoutPeerAccessStagesThroughHost) {
  // Without peer access each switch forwards only between its GPUs and the CPU, so 0 -> 1 is
  // gpu0 > sw0.up > cpu0 > sw0.down > gpu1: staged, 31.5 GB/s.
  PcieTree spec;
  spec.peer_to_peer = false;
  const LinkGraph g = pcie_tree(spec);
  const SendMatrix m = uniform(4, 1ull << 20);
  const ExchangePlan plan = plan_exchange(m, g);
  check_plan(plan, m, g);
  for (const PairPlan& pair : plan.pairs) {
    if (pair.bytes == 0) continue;
    EXPECT_EQ(pair.max_flow, pcie4_x16);
    for (const RouteShare& s : pair.shares) {
      EXPECT_EQ(s.route.kind, RouteKind::staged);
      ASSERT_EQ(s.route.via.size(), 1u);
      EXPECT_EQ(g.vertex(s.route.via[0]).kind, VertexKind::cpu);
    }
  }
  EXPECT_NE(plan_text(plan, g).find("staged  h0.gpu0 > h0.sw0.up > h0.cpu0 > h0.sw0.down > h0.gpu1"), std::string::npos)
      << plan_text(plan, g);
}

// --- two hosts --------------------------------------------------------------------------------------

TEST(MeshPlanner, TwoHostsJoinedByNics) {
  // Two hosts of 2 GPUs (NVLink4 x18 to an NVSwitch), NIC j on GPU j by PCIe5 x16 (63 GB/s),
  // each NIC 50 GB/s into the network. 0 -> 2 (host 0 to host 1):
  //   0 -> network: gpu0 > nic0 > net 50; gpu0 > nvswitch > gpu1 > nic1 > net 50: 100 GB/s;
  //   network -> 2: net > nic0 > gpu2 50; net > nic1 > gpu3 > nvswitch > gpu2 50: 100 GB/s;
  //   joined: 100 GB/s, one route NIC-direct, one relayed through gpu1 and gpu3.
  MultiHost spec;
  spec.box = NvswitchBox{2, 4, 18};
  spec.nics_per_host = 2;
  const LinkGraph g = multi_host(spec);
  RouteFinder finder(g, RouteOptions{});
  const PairRoutes& across = finder.routes(0, 2);
  EXPECT_EQ(across.max_flow, 100 * GB);
  ASSERT_EQ(across.routes.size(), 2u);
  EXPECT_EQ(across.routes[0].kind, RouteKind::direct);
  EXPECT_EQ(across.routes[0].rate, 50 * GB);
  EXPECT_EQ(across.routes[1].kind, RouteKind::relayed);
  EXPECT_EQ(across.routes[1].via.size(), 2u);
  EXPECT_EQ(across.routes[0].vertices[2], g.network_vertex());
  // Within a host: the NVSwitch only (CPU paths are not used while a GPU path exists).
  EXPECT_EQ(finder.routes(0, 1).max_flow, nvlink4_x18);
  EXPECT_EQ(finder.routes(0, 1).routes.size(), 1u);

  // The cache: 4 within-host pairs plus one flow to and one from the network per participant.
  const SendMatrix m = uniform(4, 200ull << 20);
  const ExchangePlan plan = plan_exchange(m, g);
  check_plan(plan, m, g);
  EXPECT_EQ(plan.max_flow_runs, 12u);
  // Shift 2 (steps[1]; shift 0 has no bytes) is 0->2, 1->3, 2->0, 3->1: 200 MiB each way on each
  // of the four NIC ports (on its first route every pair uses its own GPU's NIC; split over both
  // routes, each port would still carry two halves), so 200 MiB / 50 GB/s.
  EXPECT_NEAR(plan.steps[1].link_seconds, double(200ull << 20) / 50e9, 1e-12);
}

TEST(MeshPlanner, TwoHostsWithoutGpuDirectStageThroughHost) {
  // NICs on the CPU: no GPU-only path leaves a host, so both halves go through cpu0:
  //   0 -> network: gpu0 > cpu0 (63) and gpu0 > nvswitch > gpu1 > cpu0 (63), then cpu0 > nic0/nic1
  //   (63 each) > net (50 each): 100 GB/s; likewise into GPU 2: 100 GB/s.
  MultiHost spec;
  spec.box = NvswitchBox{2, 4, 18};
  spec.nics_per_host = 2;
  spec.gpu_direct = false;
  const LinkGraph g = multi_host(spec);
  RouteFinder finder(g, RouteOptions{});
  const PairRoutes& across = finder.routes(0, 2);
  EXPECT_EQ(across.max_flow, 100 * GB);
  for (const Route& r : across.routes) EXPECT_EQ(r.kind, RouteKind::staged);
  const SendMatrix m = uniform(4, 3ull << 20);
  check_plan(plan_exchange(m, g), m, g);
}

// --- bad input and random matrices ----------------------------------------------------------------

TEST(MeshPlanner, RefusesBadInput) {
  const LinkGraph g = nvswitch_box(NvswitchBox{4, 4, 18});
  EXPECT_THROW(plan_exchange(SendMatrix(3), g), rxm::Error);
  SendMatrix odd(4);
  odd.at(0, 1) = 6;
  PlanOptions by8;
  by8.unit_bytes = 8;
  EXPECT_THROW(plan_exchange(odd, g, by8), rxm::Error);
  PlanOptions tiny_chunk;
  tiny_chunk.unit_bytes = 8;
  tiny_chunk.chunk_bytes = 4;
  EXPECT_THROW(plan_exchange(SendMatrix(4), g, tiny_chunk), rxm::Error);
  try {
    plan_exchange(SendMatrix(5), g);
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("fix:"), std::string::npos);
  }
}

TEST(MeshPlanner, RandomMatricesOnEveryTopology) {
  std::mt19937_64 rng(rxm::testing::test_seed());
  MultiHost three;
  three.hosts = 3;
  three.box = NvswitchBox{4, 4, 18};
  three.nics_per_host = 2;
  PcieTree flat;
  flat.peer_to_peer = false;
  const LinkGraph graphs[] = {nvswitch_box(NvswitchBox{}), dgx1_hybrid_cube_mesh(), pcie_tree(PcieTree{}),
                              pcie_tree(flat), multi_host(three)};
  for (const LinkGraph& g : graphs)
    for (std::uint64_t unit : {1ull, 4ull, 8ull}) {
      PlanOptions options;
      options.unit_bytes = unit;
      options.chunk_bytes = unit * (1 + rng() % (8ull << 20));
      const SendMatrix m = random_matrix(g.participant_count(), rng, unit);
      const ExchangePlan plan = plan_exchange(m, g, options);
      SCOPED_TRACE("seed " + std::to_string(rxm::testing::test_seed()));
      check_plan(plan, m, g, options);
      EXPECT_EQ(plan_json(plan).rfind("{\"participants\":", 0), 0u);
    }
}

}  // namespace
