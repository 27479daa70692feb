// radixmesh info: what this machine offers radixmesh: CPU, memory, CUDA build and driver, every
// GPU and the peer-access matrix between them, or why there is no GPU.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "cli_common.hpp"
#include "commands.hpp"
#include "radixmesh/links.hpp"

#if RXM_CLI_HAS_BENCH
#include "harness/harness.hpp"  // cpu_model_name(): the one /proc/cpuinfo reader
#endif

namespace radixmesh::cli {

namespace {

std::string cpu_model() {
#if RXM_CLI_HAS_BENCH
  return bench::cpu_model_name();
#else
  return "unknown (built with RXM_BUILD_BENCH=OFF)";
#endif
}

std::size_t total_host_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size) : 0;
}

nlohmann::json device_json(const DeviceInfo& d) {
  return {{"id", d.id},
          {"name", d.name},
          {"total_memory", d.total_memory},
          {"free_memory", d.free_memory},
          {"sm_count", d.sm_count},
          {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                     std::to_string(d.compute_capability_minor)},
          {"l2_bytes", d.l2_bytes},
          {"shared_memory_per_block_optin", d.shared_memory_per_block_optin},
          {"pci_bus_id", d.pci_bus_id}};
}

nlohmann::json info_json(const CudaDiscovery& cuda) {
  nlohmann::json devices = nlohmann::json::array(), peers = nlohmann::json::array();
  for (const auto& d : cuda.topology.devices) devices.push_back(device_json(d));
  for (std::size_t i = 0; i < cuda.topology.peers.size(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < cuda.topology.peers[i].size(); ++j) {
      const PeerLink& link = cuda.topology.peers[i][j];
      row.push_back(i == j ? nlohmann::json(nullptr)
                           : nlohmann::json{{"access", link.access},
                                            {"performance_rank", link.performance_rank},
                                            {"native_atomics", link.native_atomics}});
    }
    peers.push_back(row);
  }
  return {{"command", "info"},
          {"cpu", {{"model", cpu_model()}, {"threads", std::thread::hardware_concurrency()}}},
          {"memory", {{"total", total_host_memory()}, {"available", available_host_memory()}}},
          {"cuda",
           {{"compiled_in", cuda.compiled_in},
            {"driver_version", cuda.topology.driver_version},
            {"runtime_version", cuda.topology.runtime_version},
            {"devices", devices},
            {"peers", peers},
            {"reason", cuda.reason}}}};
}

void print_peer_matrix(const Topology& topology) {
  std::printf("  peer access (rank: lower is faster; '-' no access):\n        ");
  for (const auto& d : topology.devices) std::printf(" GPU%-3d", d.id);
  std::printf("\n");
  for (std::size_t i = 0; i < topology.devices.size(); ++i) {
    std::printf("  GPU%-3d", topology.devices[i].id);
    for (std::size_t j = 0; j < topology.devices.size(); ++j) {
      const PeerLink& link = topology.peers[i][j];
      if (i == j) std::printf("  %-5s", "X");
      else if (!link.access) std::printf("  %-5s", "-");
      else std::printf("  r%-4d", link.performance_rank);
    }
    std::printf("\n");
  }
}

void print_info(const CudaDiscovery& cuda) {
  std::printf("CPU:    %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
  std::printf("memory: %s total, %s available\n", format_bytes(total_host_memory()).c_str(),
              format_bytes(available_host_memory()).c_str());
  std::printf("CUDA:   %s", cuda.compiled_in ? "compiled in" : "not compiled in");
  if (!cuda.topology.driver_version.empty()) std::printf(", driver %s", cuda.topology.driver_version.c_str());
  if (!cuda.topology.runtime_version.empty()) std::printf(", runtime %s", cuda.topology.runtime_version.c_str());
  std::printf("\n");
  if (cuda.topology.devices.empty()) {
    std::printf("GPUs:   none: %s\n", cuda.reason.c_str());
    return;
  }
  std::printf("GPUs:   %zu\n", cuda.topology.devices.size());
  for (const auto& d : cuda.topology.devices)
    std::printf("  GPU%d  %s  cc %d.%d  %d SMs  memory %s (%s free)  L2 %s  PCI %s\n", d.id, d.name.c_str(),
                d.compute_capability_major, d.compute_capability_minor, d.sm_count,
                format_bytes(d.total_memory).c_str(), format_bytes(d.free_memory).c_str(),
                format_bytes(d.l2_bytes).c_str(), d.pci_bus_id.c_str());
  if (cuda.topology.devices.size() > 1) print_peer_matrix(cuda.topology);
}

}  // namespace

// --links: the link graph of every visible GPU (or of --devices, logical devices included) and
// the bandwidth between them; --measure times the links now instead of using nominal figures.
void print_links(const OutputFlags& output, const std::vector<int>& devices, bool measure) {
  const Context ctx = Context::local(devices);
  const LinkReport r = link_report(ctx, measure);
  if (output.json) {
    std::printf("%s\n", r.json.c_str());
    return;
  }
  std::printf("links (%s):\n%s", r.source.c_str(), r.text.c_str());
  if (!r.notes.empty()) std::printf("notes: %s\n", r.notes.c_str());
}

struct InfoFlags {
  bool links = false, measure = false;
  std::vector<int> devices;
};

std::vector<Command> register_info(CLI::App& root, const Invocation&) {
  auto output = std::make_shared<OutputFlags>();
  auto flags = std::make_shared<InfoFlags>();
  CLI::App* cmd = root.add_subcommand("info", "Show the CPU, memory, CUDA build, GPUs and their peer links");
  add_output_flags(*cmd, *output);
  cmd->add_flag("--links", flags->links, "print the link graph of the GPUs and the bandwidth between them");
  cmd->add_flag("--measure", flags->measure, "with --links: measure the links now (and cache the rates)");
  cmd->add_option("--devices", flags->devices, "with --links: these CUDA ordinals (repeat one for logical devices)")
      ->delimiter(',');
  return {{cmd, [output, flags] {
             if (flags->links || flags->measure) return print_links(*output, flags->devices, flags->measure);
             const CudaDiscovery cuda = discover_cuda();
             if (output->json) print_json(info_json(cuda));
             else print_info(cuda);
           }}};
}

}  // namespace radixmesh::cli
