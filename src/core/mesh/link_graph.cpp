#include "core/mesh/link_graph.hpp"

#include <algorithm>
#include <string>

#include "core/mesh/json_text.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

std::uint64_t nvlink_bytes_per_s(int generation, int lanes) {
  require(generation >= 1 && generation <= 5, "NVLink generation " + std::to_string(generation) + " is unknown",
          "pass a generation from 1 to 5");
  require(lanes >= 1, "an NVLink link needs at least one lane", "pass lanes >= 1");
  const std::uint64_t per_lane = generation == 1 ? 20'000'000'000ull : generation == 5 ? 50'000'000'000ull
                                                                                         : 25'000'000'000ull;
  return per_lane * std::uint64_t(lanes);
}

std::uint64_t pcie_bytes_per_s(int generation, int width) {
  // Bytes per second per lane after 8b/10b (gen 1-2), 128b/130b (gen 3-5) or FLIT (gen 6) encoding.
  static constexpr std::uint64_t per_lane[] = {250'000'000ull,   500'000'000ull,   984'615'384ull,
                                               1'969'230'769ull, 3'938'461'538ull, 7'563'000'000ull};
  require(generation >= 1 && generation <= 6, "PCIe generation " + std::to_string(generation) + " is unknown",
          "pass a generation from 1 to 6");
  require(width == 1 || width == 2 || width == 4 || width == 8 || width == 16,
          "PCIe width x" + std::to_string(width) + " does not exist", "pass a width of 1, 2, 4, 8 or 16");
  return per_lane[generation - 1] * std::uint64_t(width);
}

std::uint64_t nominal_bytes_per_s(const Link& link) {
  switch (link.kind) {
    case LinkKind::nvlink: return nvlink_bytes_per_s(link.generation, link.lanes);
    case LinkKind::pcie: return pcie_bytes_per_s(link.generation, link.lanes);
    case LinkKind::network:
    case LinkKind::host_memory:
    case LinkKind::device_memory: break;
  }
  throw_error(ErrorCode::invalid_argument, "a " + to_string(link.kind) + " link has no nominal capacity",
              "pass its capacity in bytes per second when adding the link");
}

std::string to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::cpu: return "cpu";
    case VertexKind::pcie_switch: return "pcie_switch";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::nic: return "nic";
    case VertexKind::network: return "network";
    case VertexKind::device_memory: return "device_memory";
  }
  return "?";
}

std::string to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::network: return "network";
    case LinkKind::host_memory: return "host_memory";
    case LinkKind::device_memory: return "device_memory";
  }
  return "?";
}

std::string describe(const Link& link) {
  switch (link.kind) {
    case LinkKind::nvlink: return "NVLink" + std::to_string(link.generation) + " x" + std::to_string(link.lanes);
    case LinkKind::pcie: return "PCIe" + std::to_string(link.generation) + " x" + std::to_string(link.lanes);
    case LinkKind::network: return "network";
    case LinkKind::host_memory: return "host memory";
    case LinkKind::device_memory: return "device memory";
  }
  return "?";
}

int LinkGraph::add_vertex(VertexKind kind, std::string name, int host, int participant) {
  if (kind == VertexKind::gpu) {
    require(participant >= 0, "GPU vertex '" + name + "' has no participant index",
            "pass the mesh participant (device index of the exchange) it stands for");
    for (const Vertex& v : vertices_)
      require(v.participant != participant,
              "participant " + std::to_string(participant) + " is already GPU vertex '" + v.name + "'",
              "give every GPU vertex its own participant index");
  } else {
    require(participant == -1, to_string(kind) + " vertex '" + name + "' cannot stand for a participant",
            "pass participant -1 for vertices that are not GPUs");
  }
  if (kind == VertexKind::network) {
    require(network_vertex() < 0, "the graph already has a network vertex", "join every NIC to the one network vertex");
    require(host == -1, "the network vertex belongs to no host", "pass host -1 for it");
  } else {
    require(host >= 0, to_string(kind) + " vertex '" + name + "' has host " + std::to_string(host),
            "pass a host index >= 0");
  }
  vertices_.push_back(Vertex{kind, std::move(name), host, participant});
  out_.emplace_back();
  return int(vertices_.size()) - 1;
}

void LinkGraph::check_vertex(int v, const char* role) const {
  require(v >= 0 && v < int(vertices_.size()),
          std::string(role) + " vertex " + std::to_string(v) + " is not in the graph (it has " +
              std::to_string(vertices_.size()) + " vertices)",
          "pass an index returned by add_vertex");
}

void LinkGraph::add_edge(int from, int to, Link link, std::uint64_t bytes_per_s) {
  check_vertex(from, "source");
  check_vertex(to, "destination");
  require(from != to, "a link from vertex '" + vertices_[from].name + "' to itself", "join two different vertices");
  require(bytes_per_s > 0, "a link with zero capacity", "leave the link out, or pass its capacity");
  const int existing = edge_between(from, to);
  if (existing >= 0) {
    Edge& e = edges_[existing];
    require(e.link.kind == link.kind && e.link.generation == link.generation,
            "vertices '" + vertices_[from].name + "' and '" + vertices_[to].name + "' are joined by links of two kinds",
            "join two vertices by links of one kind and generation (they are merged into one edge)");
    e.link.lanes += link.lanes;
    e.bytes_per_s += bytes_per_s;
    return;
  }
  edges_.push_back(Edge{from, to, link, bytes_per_s});
  out_[from].push_back(int(edges_.size()) - 1);
}

void LinkGraph::add_link(int a, int b, Link link, std::uint64_t bytes_per_s) {
  add_edge(a, b, link, bytes_per_s);
  add_edge(b, a, link, bytes_per_s);
}

void LinkGraph::add_link(int a, int b, Link link) { add_link(a, b, link, nominal_bytes_per_s(link)); }

const Vertex& LinkGraph::vertex(int v) const {
  check_vertex(v, "a");
  return vertices_[v];
}

const std::vector<int>& LinkGraph::out_edges(int v) const {
  check_vertex(v, "a");
  return out_[v];
}

int LinkGraph::edge_between(int from, int to) const {
  check_vertex(from, "source");
  for (int e : out_[from])
    if (edges_[e].to == to) return e;
  return -1;
}

int LinkGraph::participant_count() const {
  return int(std::count_if(vertices_.begin(), vertices_.end(), [](const Vertex& v) { return v.participant >= 0; }));
}

int LinkGraph::gpu_of(int participant) const {
  for (std::size_t v = 0; v < vertices_.size(); ++v)
    if (vertices_[v].participant == participant) return int(v);
  throw_error(ErrorCode::invalid_argument, "participant " + std::to_string(participant) + " has no GPU vertex",
              "add a GPU vertex for every participant 0.." + std::to_string(participant_count() - 1));
}

int LinkGraph::host_count() const {
  int hosts = 0;
  for (const Vertex& v : vertices_) hosts = std::max(hosts, v.host + 1);
  return hosts;
}

int LinkGraph::network_vertex() const {
  for (std::size_t v = 0; v < vertices_.size(); ++v)
    if (vertices_[v].kind == VertexKind::network) return int(v);
  return -1;
}

void LinkGraph::validate() const {
  const int participants = participant_count();
  require(participants > 0, "the link graph has no GPU vertex", "add one GPU vertex per participant");
  for (int p = 0; p < participants; ++p) gpu_of(p);
  int first_host = -1;
  bool several_hosts = false;
  for (const Vertex& v : vertices_) {
    if (v.kind != VertexKind::gpu) continue;
    if (first_host < 0) first_host = v.host;
    several_hosts = several_hosts || v.host != first_host;
  }
  require(!several_hosts || network_vertex() >= 0, "GPUs on several hosts but no network vertex joins them",
          "add a network vertex and link every host's NICs to it");
}

std::string links_text(const LinkGraph& graph) {
  std::string out = "vertices:\n";
  char line[256];
  for (std::size_t v = 0; v < graph.vertices().size(); ++v) {
    const Vertex& x = graph.vertices()[v];
    std::snprintf(line, sizeof line, "  %3zu  %-12s %-16s host %2d", v, to_string(x.kind).c_str(), x.name.c_str(), x.host);
    out += line;
    if (x.participant >= 0) out += "  participant " + std::to_string(x.participant);
    out += "\n";
  }
  out += "edges (per direction):\n";
  for (const Edge& e : graph.edges()) {
    std::snprintf(line, sizeof line, "  %-16s -> %-16s %-12s %s\n", graph.vertices()[e.from].name.c_str(),
                  graph.vertices()[e.to].name.c_str(), describe(e.link).c_str(), format_rate(double(e.bytes_per_s)).c_str());
    out += line;
  }
  return out;
}

std::string links_json(const LinkGraph& graph) {
  std::string out = "{\"vertices\":[";
  for (std::size_t v = 0; v < graph.vertices().size(); ++v) {
    const Vertex& x = graph.vertices()[v];
    if (v) out += ",";
    out += "{\"id\":" + std::to_string(v) + ",\"kind\":" + json_quote(to_string(x.kind)) + ",\"name\":" + json_quote(x.name) +
           ",\"host\":" + std::to_string(x.host) + ",\"participant\":" + std::to_string(x.participant) + "}";
  }
  out += "],\"edges\":[";
  for (std::size_t i = 0; i < graph.edges().size(); ++i) {
    const Edge& e = graph.edges()[i];
    if (i) out += ",";
    out += "{\"from\":" + std::to_string(e.from) + ",\"to\":" + std::to_string(e.to) + ",\"link\":" +
           json_quote(to_string(e.link.kind)) + ",\"generation\":" + std::to_string(e.link.generation) +
           ",\"lanes\":" + std::to_string(e.link.lanes) + ",\"bytes_per_s\":" + std::to_string(e.bytes_per_s) + "}";
  }
  return out + "]}";
}

}  // namespace radixmesh::mesh
