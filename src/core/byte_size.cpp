#include "core/byte_size.hpp"

#include <cstdio>

namespace radixmesh::detail {

std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = double(bytes) / 1024.0;
  std::size_t unit = 0;
  while (scaled >= 1024.0 && unit + 1 < std::size(units)) {
    scaled /= 1024.0;
    ++unit;
  }
  char text[96];
  std::snprintf(text, sizeof text, "%.3f %s (%zu bytes)", scaled, units[unit], bytes);
  return text;
}

}  // namespace radixmesh::detail
