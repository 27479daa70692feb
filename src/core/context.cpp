#include <algorithm>
#include <string>
#include <thread>

#include "core/context_state.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh {

const char* name_of(Backend b) {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

namespace detail {
ContextState::~ContextState() = default;
}

namespace {
unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

std::string list_ids(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const auto& d : devices) s += (s.empty() ? "" : ",") + std::to_string(d.id);
  return s.empty() ? "none" : s;
}
}  // namespace

Context Context::cpu(unsigned threads) {
  auto s = std::make_shared<detail::ContextState>();
  s->backend = Backend::cpu;
  s->cpu_threads = threads ? threads : hardware_threads();
  s->cpu_fallback_reason = "the CPU backend was asked for";
  return Context(std::move(s));
}

Context Context::cpu_mesh(unsigned n, unsigned threads_per_device) {
  require(n >= 1 && n <= 4096, "cpu_mesh: a mesh of " + std::to_string(n) + " CPU devices",
          "ask for 1 to 4096 devices");
  Context c = cpu(threads_per_device ? threads_per_device : std::max(1u, hardware_threads() / n));
  c.state_->mesh.size = int(n);
  c.state_->mesh.local = {0, int(n)};
  c.state_->mesh.backends.assign(n, Backend::cpu);
  return c;
}

Context Context::local(const std::vector<int>& device_ids, Backend backend) {
  if (backend == Backend::cpu) {
    require(device_ids.empty(), "--devices was given with the CPU backend",
            "drop --devices, or use --backend cuda");
    return cpu();
  }
  CudaDiscovery found = discover_cuda();
  if (found.topology.devices.empty()) {
    if (backend == Backend::cuda || !device_ids.empty())
      throw_error(ErrorCode::unsupported, "the CUDA backend was asked for but " + found.reason,
                  "run on a machine with an NVIDIA GPU and driver, or use --backend cpu");
    Context c = cpu();
    c.state_->cpu_fallback_reason = found.reason;
    return c;
  }
  auto s = std::make_shared<detail::ContextState>();
  s->backend = Backend::cuda;
  s->cpu_threads = hardware_threads();
  s->topology.driver_version = found.topology.driver_version;
  s->topology.runtime_version = found.topology.runtime_version;
  std::vector<int> chosen;  // positions in found.topology.devices
  if (device_ids.empty()) {
    for (std::size_t i = 0; i < found.topology.devices.size(); ++i) chosen.push_back(int(i));
  } else {
    for (int id : device_ids) {
      auto it = std::find_if(found.topology.devices.begin(), found.topology.devices.end(),
                             [&](const DeviceInfo& d) { return d.id == id; });
      if (it == found.topology.devices.end())
        throw_error(ErrorCode::invalid_argument, "unknown CUDA device id " + std::to_string(id),
                    "use one of the visible devices: " + list_ids(found.topology.devices));
      // A device listed again is a logical device: another mesh device on the same GPU, with its
      // own stream and scratch pool (CudaResources makes one entry per listed device).
      chosen.push_back(int(it - found.topology.devices.begin()));
    }
  }
  for (int i : chosen) s->topology.devices.push_back(found.topology.devices[std::size_t(i)]);
  for (int i : chosen) {
    std::vector<PeerLink> row;
    for (int j : chosen) row.push_back(found.topology.peers[std::size_t(i)][std::size_t(j)]);
    s->topology.peers.push_back(std::move(row));
  }
  // Every device of the context is a mesh device of this process (logical devices included).
  s->mesh.size = int(chosen.size());
  s->mesh.local = {0, int(chosen.size())};
  s->mesh.backends.assign(chosen.size(), Backend::cuda);
  s->cuda = detail::make_cuda_resources(s->topology);
  return Context(std::move(s));
}

Backend Context::backend() const { return state_->backend; }
const std::vector<DeviceInfo>& Context::devices() const { return state_->topology.devices; }
const Topology& Context::topology() const { return state_->topology; }
unsigned Context::cpu_threads() const { return state_->cpu_threads; }
const std::string& Context::cpu_fallback_reason() const { return state_->cpu_fallback_reason; }
int Context::mesh_size() const { return state_->mesh.size; }
int Context::mesh_rank() const { return state_->mesh.process_rank; }
MeshDevices Context::local_mesh_devices() const { return state_->mesh.local; }
Backend Context::mesh_backend(int participant) const {
  require(participant >= 0 && participant < state_->mesh.size,
          "participant " + std::to_string(participant) + " is not in this mesh of " +
              std::to_string(state_->mesh.size),
          "name a participant in [0, mesh_size())");
  return state_->mesh.backends[std::size_t(participant)];
}

// The pools live in the CUDA backend; a build without it never has a CUDA context.
std::size_t Context::scratch_bytes() const {
#if defined(RXM_HAS_CUDA)
  if (state_->cuda) return detail::cuda_scratch_bytes(*state_->cuda);
#endif
  return 0;
}

void Context::release_scratch() const {
#if defined(RXM_HAS_CUDA)
  if (state_->cuda) detail::release_cuda_scratch(*state_->cuda);
#endif
}

}  // namespace radixmesh
