// Copies between host vectors and device arrays for the GPU tests, and the poison that shows
// whether a call wrote an output: every GPU test poisons its outputs before a run.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh::testing {

inline constexpr unsigned char poison_byte = 0xA5;

template <class T> std::vector<T> to_host(const T* device, std::size_t n) {
  std::vector<T> host(n);
  if (n) RXM_CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}
// On device 0, as every single-GPU test runs.
template <class T> DeviceArray<T> to_device(const std::vector<T>& host) {
  DeviceArray<T> device(0, host.size());
  if (!host.empty()) RXM_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}
template <class T> DeviceArray<T> poisoned(std::size_t n) {
  DeviceArray<T> device(0, n);
  if (n) RXM_CUDA_CHECK(cudaMemset(device.data(), poison_byte, n * sizeof(T)));
  return device;
}
// Every byte still the poison: nothing was written.
template <class T> bool untouched(const T* device, std::size_t n) {
  const auto host = to_host(device, n);
  const auto* bytes = reinterpret_cast<const unsigned char*>(host.data());
  return std::all_of(bytes, bytes + n * sizeof(T), [](unsigned char b) { return b == poison_byte; });
}

}  // namespace radixmesh::testing
