// A GPU's PCIe link as Linux reports it in sysfs (current speed and width), for the nominal
// capacities of the link graph. Zero generation and width where sysfs does not say.
#pragma once
#include <string>

namespace radixmesh::detail {

struct PcieLinkInfo {
  int generation = 0;  // 1..6, from the link speed (2.5, 5, 8, 16, 32, 64 GT/s)
  int width = 0;       // lanes
};

// `pci_bus_id` as cudaDeviceGetPCIBusId writes it ("0000:1B:00.0"); `sysfs_root` is the
// directory holding bus/pci/devices (tests point it at a fake tree).
PcieLinkInfo pcie_link_of(const std::string& pci_bus_id, const std::string& sysfs_root = "/sys");

}  // namespace radixmesh::detail
