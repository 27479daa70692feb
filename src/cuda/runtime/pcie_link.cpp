#include "cuda/runtime/pcie_link.hpp"

#include <cctype>
#include <fstream>

namespace radixmesh::detail {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

PcieLinkInfo pcie_link_of(const std::string& pci_bus_id, const std::string& sysfs_root) {
  PcieLinkInfo info;
  const std::string dir = sysfs_root + "/bus/pci/devices/" + lower(pci_bus_id);
  const std::string speed = first_line(dir + "/current_link_speed");  // "32.0 GT/s PCIe"
  const std::string width = first_line(dir + "/current_link_width");  // "16"
  try {
    const double gts = speed.empty() ? 0 : std::stod(speed);
    info.generation = gts >= 60 ? 6 : gts >= 30 ? 5 : gts >= 15 ? 4 : gts >= 7 ? 3 : gts >= 4 ? 2 : gts >= 2 ? 1 : 0;
    info.width = width.empty() ? 0 : std::stoi(width);
  } catch (const std::exception&) {
    info = {};
  }
  return info;
}

}  // namespace radixmesh::detail
