#include "cuda/mesh/machine_cache.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

namespace {

std::string uuid_of(int device) {
  cudaDeviceProp p{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  char text[4];
  std::string s;
  for (int i = 0; i < 16; ++i) {
    std::snprintf(text, sizeof text, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
    s += text;
  }
  return s;
}

}  // namespace

std::filesystem::path machine_cache_dir() {
  if (const char* d = std::getenv("RXM_LINKS_CACHE")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return std::filesystem::path(x) / "radixmesh";
  if (const char* h = std::getenv("HOME")) return std::filesystem::path(h) / ".cache" / "radixmesh";
  return std::filesystem::temp_directory_path() / "radixmesh";
}

std::string machine_cache_key(const std::vector<int>& gpus, const std::string& driver) {
  std::string key = "driver " + driver;
  for (int g : gpus) key += " " + uuid_of(g);
  return key;
}

std::filesystem::path machine_cache_file(const std::string& key, const char* kind) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the key names the file
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  char name[64];
  std::snprintf(name, sizeof name, "%s-%016llx.txt", kind, static_cast<unsigned long long>(h));
  return machine_cache_dir() / name;
}

}  // namespace radixmesh::detail
