#include "bench_device.hpp"

#if defined(RXM_HAS_CUDA)
#include "harness/harness.hpp"

namespace radixmesh::cli {

double device_copy_bandwidth(int device, std::size_t bytes) {
  RXM_CUDA_CHECK(cudaSetDevice(device));
  DeviceBuffer from(device, bytes), to(device, bytes);
  RXM_CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
  const bench::Stats s = bench::time_host(
      nullptr,
      [&] {
        RXM_CUDA_CHECK(cudaMemcpy(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice));
        RXM_CUDA_CHECK(cudaDeviceSynchronize());
      },
      1, 5);
  return s.min_ms > 0 ? 2.0 * double(bytes) / (s.min_ms * 1e-3) : 0;
}

}  // namespace radixmesh::cli
#endif
