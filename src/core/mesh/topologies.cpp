#include "core/mesh/topologies.hpp"

#include <string>
#include <vector>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

std::string gpu_name(int host, int gpu) { return "h" + std::to_string(host) + ".gpu" + std::to_string(gpu); }

// Adds one host's NVSwitch box to `graph`; returns the GPU vertices.
std::vector<int> add_nvswitch_box(LinkGraph& graph, const NvswitchBox& spec, int host, int first_participant) {
  require(spec.gpus >= 1, "an NVSwitch box of " + std::to_string(spec.gpus) + " GPUs", "pass at least one GPU");
  const int nvswitch = graph.add_vertex(VertexKind::nvswitch, "h" + std::to_string(host) + ".nvswitch", host);
  std::vector<int> gpus;
  for (int g = 0; g < spec.gpus; ++g) {
    gpus.push_back(graph.add_vertex(VertexKind::gpu, gpu_name(host, g), host, first_participant + g));
    graph.add_link(gpus.back(), nvswitch, Link{LinkKind::nvlink, spec.generation, spec.lanes});
  }
  return gpus;
}

}  // namespace

LinkGraph nvswitch_box(const NvswitchBox& spec) {
  LinkGraph graph;
  add_nvswitch_box(graph, spec, 0, 0);
  return graph;
}

LinkGraph dgx1_hybrid_cube_mesh() {
  struct Pair {
    int a, b, lanes;
  };
  static constexpr Pair pairs[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                                   {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                                   {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  LinkGraph graph;
  for (int g = 0; g < 8; ++g) graph.add_vertex(VertexKind::gpu, gpu_name(0, g), 0, g);
  for (const Pair& p : pairs) graph.add_link(p.a, p.b, Link{LinkKind::nvlink, 2, p.lanes});
  return graph;
}

LinkGraph pcie_tree(const PcieTree& spec) {
  require(spec.switches >= 1 && spec.gpus_per_switch >= 1,
          "a PCIe tree of " + std::to_string(spec.switches) + " switches with " + std::to_string(spec.gpus_per_switch) +
              " GPUs each",
          "pass at least one switch and one GPU per switch");
  const Link gpu_link{LinkKind::pcie, spec.generation, spec.gpu_width};
  const Link uplink{LinkKind::pcie, spec.generation, spec.uplink_width};
  LinkGraph graph;
  const int cpu = graph.add_vertex(VertexKind::cpu, "h0.cpu0", 0);
  int root = -1;
  if (spec.peer_to_peer) {
    root = graph.add_vertex(VertexKind::pcie_switch, "h0.root", 0);
    graph.add_link(root, cpu, Link{LinkKind::host_memory, 0, 0}, spec.host_memory_bytes_per_s);
  }
  int participant = 0;
  for (int s = 0; s < spec.switches; ++s) {
    const std::string sw = "h0.sw" + std::to_string(s);
    // Without peer-to-peer the switch is two one-way halves: up (GPUs -> CPU) and down (CPU -> GPUs).
    const int up = graph.add_vertex(VertexKind::pcie_switch, spec.peer_to_peer ? sw : sw + ".up", 0);
    const int down = spec.peer_to_peer ? up : graph.add_vertex(VertexKind::pcie_switch, sw + ".down", 0);
    if (spec.peer_to_peer) {
      graph.add_link(up, root, uplink);
    } else {
      graph.add_edge(up, cpu, uplink, nominal_bytes_per_s(uplink));
      graph.add_edge(cpu, down, uplink, nominal_bytes_per_s(uplink));
    }
    for (int g = 0; g < spec.gpus_per_switch; ++g) {
      const int gpu = graph.add_vertex(VertexKind::gpu, gpu_name(0, participant), 0, participant);
      ++participant;
      graph.add_edge(gpu, up, gpu_link, nominal_bytes_per_s(gpu_link));
      graph.add_edge(down, gpu, gpu_link, nominal_bytes_per_s(gpu_link));
    }
  }
  return graph;
}

LinkGraph multi_host(const MultiHost& spec) {
  require(spec.hosts >= 1 && spec.nics_per_host >= 1,
          std::to_string(spec.hosts) + " hosts with " + std::to_string(spec.nics_per_host) + " NICs each",
          "pass at least one host and one NIC per host");
  LinkGraph graph;
  const int network = graph.add_vertex(VertexKind::network, "network", -1);
  const Link pcie{LinkKind::pcie, spec.pcie_generation, 16};
  for (int h = 0; h < spec.hosts; ++h) {
    const std::vector<int> gpus = add_nvswitch_box(graph, spec.box, h, h * spec.box.gpus);
    const int cpu = graph.add_vertex(VertexKind::cpu, "h" + std::to_string(h) + ".cpu0", h);
    for (int gpu : gpus) graph.add_link(gpu, cpu, pcie);
    for (int n = 0; n < spec.nics_per_host; ++n) {
      const int nic = graph.add_vertex(VertexKind::nic, "h" + std::to_string(h) + ".nic" + std::to_string(n), h);
      graph.add_link(spec.gpu_direct ? gpus[std::size_t(n) % gpus.size()] : cpu, nic, pcie);
      graph.add_link(nic, network, Link{LinkKind::network, 0, 0}, spec.nic_bytes_per_s);
    }
  }
  return graph;
}

}  // namespace radixmesh::mesh
