// Device discovery: what `radixmesh info` prints and Context::local() chooses from.
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh {

namespace {
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

CudaDiscovery discover_cuda() {
  CudaDiscovery d;
  d.compiled_in = true;
  int driver = 0, runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  d.topology.runtime_version = version_string(runtime);
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
    d.reason = "no NVIDIA driver was found";
    return d;
  }
  d.topology.driver_version = version_string(driver);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    d.reason = status == cudaSuccess ? std::string("no CUDA device is visible")
                                     : std::string("no CUDA device is usable (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return d;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    RXM_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    DeviceInfo info;
    info.id = i;
    info.name = p.name;
    info.total_memory = p.totalGlobalMem;
    info.sm_count = p.multiProcessorCount;
    info.compute_capability_major = p.major;
    info.compute_capability_minor = p.minor;
    info.l2_bytes = std::size_t(p.l2CacheSize);
    info.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) info.pci_bus_id = bus;
    {
      detail::DeviceGuard guard(i);
      std::size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) info.free_memory = free_bytes;
    }
    d.topology.devices.push_back(info);
  }
  d.topology.peers.assign(std::size_t(count), std::vector<PeerLink>(std::size_t(count)));
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      PeerLink& link = d.topology.peers[std::size_t(i)][std::size_t(j)];
      int access = 0, rank = -1, atomics = 0;
      cudaDeviceCanAccessPeer(&access, i, j);
      link.access = access != 0;
      if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j) == cudaSuccess)
        link.performance_rank = link.access ? rank : -1;
      if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, i, j) == cudaSuccess)
        link.native_atomics = atomics != 0;
    }
  return d;
}

}  // namespace radixmesh
