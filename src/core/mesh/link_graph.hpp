// The link graph (MGI's GPU Infrastructure Graph): the devices that produce or forward data on
// one or several hosts, and the links between them with a per-direction capacity. The exchange
// planner (exchange_plan.hpp) routes bytes over it; links_text and links_json print it (the forms
// meant for `radixmesh info --links`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace radixmesh::mesh {

// GPUs and CPUs are managed vertices (they hold buffers, so a route through one stores and
// forwards); switches, NICs, the network and a GPU's memory only forward. A GPU's memory is the
// vertex that logical devices of one GPU (several participants on it) exchange through.
enum class VertexKind { gpu, cpu, pcie_switch, nvswitch, nic, network, device_memory };

// What a link is made of. nvlink: generation and lane count; pcie: generation and width;
// network: a NIC's port into the fabric; host_memory: a CPU's memory path or a socket-to-socket
// link (QPI/UPI/xGMI); device_memory: a logical device's path into its GPU's memory.
enum class LinkKind { nvlink, pcie, network, host_memory, device_memory };

struct Link {
  LinkKind kind = LinkKind::pcie;
  int generation = 0;  // NVLink or PCIe generation; 0 for network and host_memory
  int lanes = 0;       // NVLink lanes or PCIe width; 0 for network and host_memory
};

struct Vertex {
  VertexKind kind = VertexKind::gpu;
  std::string name;
  int host = 0;          // host index; -1 for the network vertex, which joins hosts
  int participant = -1;  // for a GPU, the mesh participant (device of the exchange) it stands for
};

// One direction of a link. Parallel links between the same two vertices are merged into one edge
// with the summed capacity, as MGI's graph simplification does.
struct Edge {
  int from = 0;
  int to = 0;
  Link link;
  std::uint64_t bytes_per_s = 0;
};

// Nominal per-direction capacities, used where nothing was measured. NVLink: 20 GB/s per lane
// for generation 1, 25 GB/s for generations 2-4 (V100: 6 lanes = 150 GB/s; H100/H200: 18 lanes =
// 450 GB/s), 50 GB/s for generation 5. PCIe: the signalling rate after line encoding, per lane:
// 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 GB/s for generations 1-6 (x16 gen5 = 63 GB/s), before
// protocol overhead.
std::uint64_t nvlink_bytes_per_s(int generation, int lanes);
std::uint64_t pcie_bytes_per_s(int generation, int width);
// The nominal capacity of an nvlink or pcie link; network and host_memory links have no nominal
// figure and are refused (their capacity is given when the link is added).
std::uint64_t nominal_bytes_per_s(const Link& link);

std::string to_string(VertexKind kind);
std::string to_string(LinkKind kind);
// "NVLink4 x18", "PCIe5 x16", "network", "host memory".
std::string describe(const Link& link);

class LinkGraph {
 public:
  // Adds a vertex and returns its index. A GPU names its participant (unique, >= 0), other kinds
  // pass -1; the network vertex (at most one) has host -1, every other vertex a host >= 0.
  int add_vertex(VertexKind kind, std::string name, int host, int participant = -1);
  // Both directions of a link, each with `bytes_per_s`.
  void add_link(int a, int b, Link link, std::uint64_t bytes_per_s);
  // Both directions at the link's nominal capacity.
  void add_link(int a, int b, Link link);
  // One direction only (asymmetric links, or switches that forward one way).
  void add_edge(int from, int to, Link link, std::uint64_t bytes_per_s);

  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const Vertex& vertex(int v) const;
  // Indices of the edges leaving `v`, in the order they were added.
  const std::vector<int>& out_edges(int v) const;
  // The edge from -> to, or -1.
  int edge_between(int from, int to) const;

  // Participants are 0..participant_count()-1, each one GPU vertex (checked by validate()).
  int participant_count() const;
  int gpu_of(int participant) const;  // the GPU vertex of a participant; throws if none
  int host_count() const;             // 1 + the largest host index
  int network_vertex() const;         // -1 when the graph has none

  // Throws rxm::Error(invalid_argument) when participants are not 0..P-1 without gaps, or when
  // GPUs on different hosts exist but no network vertex joins them.
  void validate() const;

 private:
  void check_vertex(int v, const char* role) const;
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> out_;
};

// Printable forms: one line per vertex and per edge (capacities in
// GB/s), and the same as one JSON object {"vertices": [...], "edges": [...]}.
std::string links_text(const LinkGraph& graph);
std::string links_json(const LinkGraph& graph);

}  // namespace radixmesh::mesh
