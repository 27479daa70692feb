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

bench::Stats time_device_topk(int device, device::TopkProblem problem, int warmup, int reps, std::string& path) {
  RXM_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t places = problem.rows * problem.k;
  DeviceBuffer out_values(device, places * size_of(problem.type)), out_indices(device, places * problem.index_bytes);
  problem.out_values = out_values.data(), problem.out_indices = out_indices.data();
  path = device::topk_path_name(problem, device);
  const std::size_t bytes = device::topk_temp_bytes(problem, device);
  DeviceBuffer temp(device, bytes);
  return bench::time_device(nullptr, [&] { device::topk(temp.data(), bytes, problem, nullptr); }, warmup, reps);
}

}  // namespace radixmesh::cli
#endif
