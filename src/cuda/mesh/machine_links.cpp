// The link graph of a CUDA context's devices (MGI's GIG for this machine): what
// `radixmesh info --links` prints and what the exchange planner routes over.
//
// Vertices: one GPU vertex per participant (logical devices of one GPU each get one), a CPU, and
// an NVSwitch where GPUs have NVLinks to one. Edges:
// - NVLink between GPUs, and GPU-NVSwitch, counted per remote from NVML (dlopen);
// - PCIe from every physical GPU to the CPU, generation and width from sysfs;
// - logical devices of one GPU reach each other through that GPU's memory: participant -> "read"
//   -> "write" -> participant, the read-to-write edge carrying the GPU's copy rate, shared by
//   every exchange on that GPU.
// Nominal capacities come from the link kind; --measure replaces them with rates measured here
// (a 256 MiB device copy per GPU, a peer copy per ordered GPU pair) and keeps them in a cache file
// keyed by the GPUs' UUIDs and the driver, so later runs reuse them.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/backends.hpp"
#include "cuda/mesh/machine_cache.hpp"
#include "cuda/mesh/machine_links.hpp"
#include "core/mesh/json_text.hpp"
#include "core/mesh/exchange_plan.hpp"
#include "core/mesh/link_graph.hpp"
#include "core/mesh/routes.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/nvml_links.hpp"
#include "cuda/runtime/pcie_link.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

constexpr std::size_t probe_bytes = std::size_t(256) << 20;

// Measured rates, bytes/s: a GPU's device-to-device copy, and GPU a to GPU b peer copies.
struct Rates {
  std::map<int, double> copy;                  // CUDA ordinal -> bytes copied / s
  std::map<std::pair<int, int>, double> peer;  // (from, to) ordinals -> bytes / s
};

double time_copy_ms(int device, void* dst, int dst_device, const void* src, std::size_t bytes) {
  DeviceGuard guard(device);
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  RXM_CUDA_CHECK(cudaEventCreate(&start));
  RXM_CUDA_CHECK(cudaEventCreate(&stop));
  float best = 0;
  for (int rep = 0; rep < 4; ++rep) {  // the first is a warm-up; the fastest of the rest counts
    RXM_CUDA_CHECK(cudaEventRecord(start, stream));
    if (dst_device == device)
      RXM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    else
      RXM_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, device, bytes, stream));
    RXM_CUDA_CHECK(cudaEventRecord(stop, stream));
    RXM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    RXM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (rep > 0 && (best == 0 || ms < best)) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return best;
}

struct ProbeBuffer {
  int device;
  void* data = nullptr;
  ProbeBuffer(int d, std::size_t bytes) : device(d) {
    DeviceGuard guard(d);
    RXM_CUDA_CHECK(cudaMalloc(&data, bytes));
    RXM_CUDA_CHECK(cudaMemset(data, 1, bytes));
  }
  ~ProbeBuffer() {
    DeviceGuard guard(device);
    cudaFree(data);
  }
};

Rates measure(const std::vector<int>& gpus, bool pairs) {
  Rates r;
  std::map<int, std::unique_ptr<ProbeBuffer>> a, b;
  for (int g : gpus) {
    a[g] = std::make_unique<ProbeBuffer>(g, probe_bytes);
    b[g] = std::make_unique<ProbeBuffer>(g, probe_bytes);
    r.copy[g] = double(probe_bytes) / (time_copy_ms(g, b[g]->data, g, a[g]->data, probe_bytes) / 1e3);
  }
  if (pairs)
    for (int from : gpus)
      for (int to : gpus)
        if (from != to)
          r.peer[{from, to}] = double(probe_bytes) / (time_copy_ms(from, b[to]->data, to, a[from]->data, probe_bytes) / 1e3);
  return r;
}

// The cache holds the key line, then "copy <ordinal> <rate>" and "peer <from> <to> <rate>" lines.
bool load_rates(const std::filesystem::path& file, const std::string& key, Rates& r) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line) || line != key) return false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what;
    words >> what;
    if (what == "copy") {
      int g = 0;
      double rate = 0;
      words >> g >> rate;
      r.copy[g] = rate;
    } else if (what == "peer") {
      int a = 0, b = 0;
      double rate = 0;
      words >> a >> b >> rate;
      r.peer[{a, b}] = rate;
    }
  }
  return true;
}

void save_rates(const std::filesystem::path& file, const std::string& key, const Rates& r) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file);
  if (!out) return;  // a cache that cannot be written only costs the next run a probe
  out << key << "\n";
  for (const auto& [g, rate] : r.copy) out << "copy " << g << " " << rate << "\n";
  for (const auto& [pair, rate] : r.peer) out << "peer " << pair.first << " " << pair.second << " " << rate << "\n";
}

double nominal_copy_rate(int device) {
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaGetLastError();
  // Double data rate; a copy reads and writes each byte, so it runs at half the peak.
  return double(clock_khz) * 1e3 * 2 * double(bus_bits) / 8 / 2;
}

}  // namespace

MachineLinks machine_links(const Context& ctx, bool measure_links) {
  const Topology& t = ctx.topology();
  std::vector<int> gpus;  // distinct ordinals, in order of first use
  std::map<int, std::vector<int>> participants_of;
  for (std::size_t i = 0; i < t.devices.size(); ++i) {
    const int g = t.devices[i].id;
    if (participants_of[g].empty()) gpus.push_back(g);
    participants_of[g].push_back(int(i));
  }
  MachineLinks report;
  const std::string key = detail::machine_cache_key(gpus, t.driver_version);
  const std::filesystem::path file = detail::machine_cache_file(key, "links");
  Rates rates;
  if (measure_links) {
    rates = measure(gpus, gpus.size() > 1);
    save_rates(file, key, rates);
    report.source = "measured now (cached in " + file.string() + ")";
  } else if (load_rates(file, key, rates)) {
    report.source = "measured earlier (" + file.string() + ")";
  } else {
    report.source = "nominal (from the link types; `--measure` measures them)";
  }

  mesh::LinkGraph g;
  const int cpu = g.add_vertex(mesh::VertexKind::cpu, "cpu", 0);
  std::map<int, int> first_vertex;  // ordinal -> the GPU vertex of its first participant
  int nvswitch = -1;
  std::map<std::string, int> by_bus;  // upper-case bus id -> ordinal
  for (const auto& d : t.devices) {
    std::string bus = d.pci_bus_id;
    for (char& c : bus) c = char(std::toupper(static_cast<unsigned char>(c)));
    by_bus[bus] = d.id;
  }
  for (int gpu : gpus) {
    const auto& parts = participants_of[gpu];
    std::vector<int> vs;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const std::string name = "gpu" + std::to_string(gpu) + (parts.size() > 1 ? "." + std::to_string(k) : "");
      vs.push_back(g.add_vertex(mesh::VertexKind::gpu, name, 0, parts[k]));
    }
    first_vertex[gpu] = vs[0];
    const std::string& bus = t.devices[std::size_t(parts[0])].pci_bus_id;
    const PcieLinkInfo pcie = pcie_link_of(bus);
    const mesh::Link pcie_link{mesh::LinkKind::pcie, pcie.generation ? pcie.generation : 4, pcie.width ? pcie.width : 16};
    if (parts.size() > 1) {
      const double rate = rates.copy.count(gpu) ? rates.copy[gpu] : nominal_copy_rate(gpu);
      const auto bytes = std::uint64_t(rate);
      const mesh::Link mem{mesh::LinkKind::device_memory, 0, 0};
      const int read = g.add_vertex(mesh::VertexKind::device_memory, "gpu" + std::to_string(gpu) + ".memory.read", 0);
      const int write = g.add_vertex(mesh::VertexKind::device_memory, "gpu" + std::to_string(gpu) + ".memory.write", 0);
      g.add_edge(read, write, mem, bytes);
      for (int v : vs) {
        g.add_edge(v, read, mem, bytes);
        g.add_edge(write, v, mem, bytes);
      }
      g.add_link(read, cpu, pcie_link);  // the GPU's PCIe link, shared by its logical devices
    } else {
      g.add_link(vs[0], cpu, pcie_link);
    }
    const NvmlLinks nv = nvlink_ports(bus);
    if (!nv.loaded && report.notes.find(nv.reason) == std::string::npos) report.notes += nv.reason + "; ";
    std::map<int, int> lanes_to_gpu;
    int lanes_to_switch = 0, version = 0;
    for (const NvlinkPort& port : nv.ports) {
      version = std::max(version, port.version);
      if (port.remote == NvlinkPort::Remote::nvswitch) ++lanes_to_switch;
      else if (auto it = by_bus.find(port.remote_pci_bus_id); it != by_bus.end()) ++lanes_to_gpu[it->second];
    }
    if (!nv.ports.empty() && version == 0) {  // NVML gave no version this build knows
      version = 4;
      report.notes += "NVLink version not known to radixmesh: nominal rates assume NVLink 4; ";
    }
    if (lanes_to_switch) {
      if (nvswitch < 0) nvswitch = g.add_vertex(mesh::VertexKind::nvswitch, "nvswitch", 0);
      g.add_link(vs[0], nvswitch, {mesh::LinkKind::nvlink, version, lanes_to_switch});
    }
    // Each GPU pair's NVLinks are added once, from the later GPU's side.
    for (const auto& [peer, lanes] : lanes_to_gpu)
      if (first_vertex.count(peer) && peer != gpu) {
        const mesh::Link link{mesh::LinkKind::nvlink, version, lanes};
        const auto a_to_b = rates.peer.count({gpu, peer}) ? std::uint64_t(rates.peer[{gpu, peer}]) : mesh::nominal_bytes_per_s(link);
        const auto b_to_a = rates.peer.count({peer, gpu}) ? std::uint64_t(rates.peer[{peer, gpu}]) : mesh::nominal_bytes_per_s(link);
        g.add_edge(vs[0], first_vertex[peer], link, a_to_b);
        g.add_edge(first_vertex[peer], vs[0], link, b_to_a);
      }
  }
  g.validate();
  report.graph = std::move(g);
  return report;
}

LinkReport cuda_link_report(const Context& ctx, bool measure_links) {
  MachineLinks m = machine_links(ctx, measure_links);
  const mesh::LinkGraph& g = m.graph;
  LinkReport report;
  report.source = m.source;
  report.notes = m.notes;
  const auto matrix = mesh::bandwidth_matrix(g);
  report.text = mesh::links_text(g) + "\nbandwidth between participants (max-flow, GB/s; rows send, columns receive):\n" +
                mesh::bandwidth_matrix_text(matrix, g.participant_count());
  std::string mat = "[";
  for (std::size_t i = 0; i < matrix.size(); ++i) mat += (i ? "," : "") + std::to_string(matrix[i]);
  report.json = "{\"source\":" + mesh::json_quote(report.source) + ",\"graph\":" + mesh::links_json(g) +
                ",\"bandwidth_bytes_per_s\":" + mat + "],\"participants\":" + std::to_string(g.participant_count()) + "}";
  return report;
}

LinkReport cuda_exchange_report(const Context& ctx, const std::vector<std::uint64_t>& send_bytes) {
  MachineLinks m = machine_links(ctx, false);
  mesh::SendMatrix matrix(m.graph.participant_count());
  matrix.bytes = send_bytes;
  const mesh::ExchangePlan plan = mesh::plan_exchange(matrix, m.graph);
  LinkReport report;
  report.source = m.source;
  report.notes = m.notes;
  report.text = mesh::plan_text(plan, m.graph);
  report.json = mesh::plan_json(plan);
  return report;
}

}  // namespace radixmesh::detail
