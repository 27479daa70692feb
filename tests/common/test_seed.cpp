#include <cstdlib>
#include <random>

#include "common/random_keys.hpp"

namespace radixmesh::testing {
std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    if (const char* pinned = std::getenv("RXM_TEST_SEED")) return std::uint64_t(std::strtoull(pinned, nullptr, 10));
    return std::uint64_t(std::random_device{}()) << 32 | std::random_device{}();
  }();
  return seed;
}
}  // namespace radixmesh::testing
