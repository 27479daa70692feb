// NVLink facts of a GPU from NVML, loaded at run time with dlopen (libnvidia-ml.so.1 comes with
// the driver), so radixmesh has no build dependency on it. Without NVML, or on a GPU without
// NVLink, every list is empty and discovery falls back to PCIe.
#pragma once
#include <string>
#include <vector>

namespace radixmesh::detail {

// One active NVLink of a GPU: its generation and what is at the other end.
struct NvlinkPort {
  int version = 0;
  enum class Remote { gpu, nvswitch, other } remote = Remote::other;
  std::string remote_pci_bus_id;  // "0000:1B:00.0" for a GPU peer (NVML's upper-case form)
};

struct NvmlLinks {
  bool loaded = false;        // NVML was found and initialised
  std::string reason;         // why not, when !loaded
  std::vector<NvlinkPort> ports;  // the device's active links
};

// The active NVLinks of the GPU at `pci_bus_id` (as cudaDeviceGetPCIBusId writes it).
NvmlLinks nvlink_ports(const std::string& pci_bus_id);

}  // namespace radixmesh::detail
