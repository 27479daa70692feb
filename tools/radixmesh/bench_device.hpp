// What the CUDA halves of the CLI benchmarks share (built with CUDA only): copying the generated
// input to the device, and the device-to-device copy bandwidth the floors are measured against.
#pragma once
#if defined(RXM_HAS_CUDA)
#include <cstddef>
#include <string>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "harness/harness.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"

namespace radixmesh::cli {

template <class T> DeviceArray<T> copy_to_device(int device, const std::vector<T>& host) {
  DeviceArray<T> on_device(device, host.size());
  if (!host.empty())
    RXM_CUDA_CHECK(cudaMemcpy(on_device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return on_device;
}

// Device-to-device cudaMemcpy bandwidth of `device` (read + write bytes / s), measured as the GPU
// benchmarks measure it (bench::measure_d2d_bandwidth) over
// `bytes` (use more than the L2 holds).
double device_copy_bandwidth(int device, std::size_t bytes);

// The device-level top-k (radixmesh/device/topk.cuh) of `problem` (values on `device`; its
// outputs are allocated here) with temporary storage and outputs allocated once, timed with CUDA
// events: what a caller that keeps its data on the GPU pays per call, as torch.topk is timed.
// `path` gets the path it took (device::topk_path_name).
bench::Stats time_device_topk(int device, device::TopkProblem problem, int warmup, int reps, std::string& path);

}  // namespace radixmesh::cli
#endif
