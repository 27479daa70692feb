#include "bench_device.hpp"

#if defined(RXM_HAS_CUDA)
#include "harness/device_timing.cuh"

namespace radixmesh::cli {

double device_copy_bandwidth(int device, std::size_t bytes) {
  RXM_CUDA_CHECK(cudaSetDevice(device));
  DeviceBuffer from(device, bytes), to(device, bytes);
  RXM_CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
  // The yardstick every GPU benchmark's floor uses (bench/harness/device_timing.cuh).
  return bench::measure_d2d_bandwidth(to.data(), from.data(), bytes, nullptr);
}

}  // namespace radixmesh::cli
#endif
