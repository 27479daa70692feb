#include <fstream>
#include <string>

#include "core/byte_size.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh {

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

void require_host_memory(std::size_t bytes, const std::string& what) {
  std::size_t available = available_host_memory();
  if (available != 0 && bytes > available)
    throw_error(ErrorCode::out_of_memory,
                what + " needs " + detail::format_bytes(bytes) + " of host memory but only " +
                    detail::format_bytes(available) + " is available",
                "use a smaller size, or a machine with more memory");
}

namespace detail {
void require_host_memory_within(std::size_t bytes, std::size_t limit, const std::string& what) {
  if (limit != 0 && bytes > limit)
    throw_error(ErrorCode::out_of_memory,
                what + " needs " + format_bytes(bytes) + " of host memory but SortOptions::host_memory_limit is " +
                    format_bytes(limit),
                "raise host_memory_limit (0: what the host has available), or sort less per rank");
  require_host_memory(bytes, what);
}
}  // namespace detail

}  // namespace radixmesh
