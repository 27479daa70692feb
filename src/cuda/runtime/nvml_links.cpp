#include "cuda/runtime/nvml_links.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <type_traits>

namespace radixmesh::detail {

namespace {

// nvmlDeviceGetNvLinkVersion answers with nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0,
// 5 = 3.1, 6 = 4.0, 7 = 5.0 (an H100's links read 6). The link graph wants the generation.
int nvlink_generation(unsigned nvml_version) {
  static constexpr int generation[] = {0, 1, 2, 2, 3, 3, 4, 5};
  return nvml_version < std::size(generation) ? generation[nvml_version] : 0;
}

// The few NVML declarations used here (nvml.h is not part of the CUDA toolkit here; these
// signatures and layouts are NVML's stable ABI).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
enum nvmlIntNvLinkDeviceType_t { NVML_NVLINK_DEVICE_TYPE_GPU = 0, NVML_NVLINK_DEVICE_TYPE_IBMNPU = 1,
                                 NVML_NVLINK_DEVICE_TYPE_SWITCH = 2, NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF };

struct Nvml {
  void* library = nullptr;
  std::string reason;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*handle_by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*remote_type)(nvmlDevice_t, unsigned, nvmlIntNvLinkDeviceType_t*) = nullptr;  // optional

  Nvml() {
    library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      reason = "NVML (libnvidia-ml.so.1) was not found";
      return;
    }
    auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, name)); };
    sym(init, "nvmlInit_v2");
    sym(handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(link_state, "nvmlDeviceGetNvLinkState");
    sym(link_version, "nvmlDeviceGetNvLinkVersion");
    sym(remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    sym(remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    if (!init || !handle_by_bus_id || !link_state || !link_version || !remote_pci) {
      reason = "NVML lacks the NVLink queries";
      library = nullptr;
      return;
    }
    if (init() != NVML_SUCCESS) {
      reason = "NVML did not initialise";
      library = nullptr;
    }
  }
};

const Nvml& nvml() {
  static const Nvml instance;  // loaded once; never unloaded (other threads may still query it)
  return instance;
}

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

NvmlLinks nvlink_ports(const std::string& pci_bus_id) {
  NvmlLinks out;
  const Nvml& n = nvml();
  if (!n.library) {
    out.reason = n.reason;
    return out;
  }
  out.loaded = true;
  nvmlDevice_t device = nullptr;
  if (n.handle_by_bus_id(pci_bus_id.c_str(), &device) != NVML_SUCCESS) {
    out.reason = "NVML does not know the GPU at " + pci_bus_id;
    return out;
  }
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    int active = 0;
    if (n.link_state(device, link, &active) != NVML_SUCCESS || !active) continue;
    NvlinkPort port;
    unsigned version = 0;
    if (n.link_version(device, link, &version) == NVML_SUCCESS) port.version = nvlink_generation(version);
    nvmlPciInfo_t remote{};
    if (n.remote_pci(device, link, &remote) == NVML_SUCCESS) port.remote_pci_bus_id = upper(remote.busId);
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (n.remote_type && n.remote_type(device, link, &type) == NVML_SUCCESS) {
      port.remote = type == NVML_NVLINK_DEVICE_TYPE_GPU      ? NvlinkPort::Remote::gpu
                    : type == NVML_NVLINK_DEVICE_TYPE_SWITCH ? NvlinkPort::Remote::nvswitch
                                                             : NvlinkPort::Remote::other;
    }
    out.ports.push_back(port);
  }
  return out;
}

}  // namespace radixmesh::detail
