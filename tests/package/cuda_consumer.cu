// A downstream CUDA program built against an installed radixmesh: a .cu file that includes the
// public and the device-level headers (C++20, from the package's own compile features), holds its
// keys as CUDA's __half, and sorts them on the GPU with rxm::sort on a device_span<__half>.
// Compiling and linking it is the test wherever nvcc is present; it runs only where a GPU is.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <radixmesh/device/multisplit.cuh>
#include <radixmesh/device/sort.cuh>
#include <radixmesh/device/topk.cuh>
#include <radixmesh/radixmesh.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rxm = radixmesh;

// CUDA's types take the f16 / bf16 paths: the same key type, the same order of the same bits.
static_assert(rxm::key_type_v<__half> == rxm::KeyType::f16);
static_assert(rxm::key_type_v<__nv_bfloat16> == rxm::KeyType::bf16);
static_assert(std::is_same_v<rxm::key_bits_t<__half>, std::uint16_t>);
static_assert(std::is_same_v<rxm::key_bits_t<__nv_bfloat16>, std::uint16_t>);

// A device-level template instantiated here, with this program's flags: delta buckets over __half.
std::size_t delta_split_temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  const __half* none = nullptr;
  const cudaError_t status = rxm::device::multisplit(nullptr, bytes, none, static_cast<__half*>(nullptr), n,
                                                     rxm::buckets::delta<__half>{}, 4, nullptr);
  return status == cudaSuccess ? bytes : 0;
}

int main() {
  const rxm::CudaDiscovery cuda = rxm::discover_cuda();
  if (cuda.topology.devices.empty()) {
    std::printf("cuda consumer: built; not run, no CUDA device (%s)\n", cuda.reason.c_str());
    return 0;
  }
  auto ctx = rxm::Context::local({}, rxm::Backend::cuda);
  const int device = ctx.devices().front().id;
  cudaSetDevice(device);

  const std::size_t n = 1 << 16;
  std::vector<__half> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = __float2half(float((i * 7919) % 2003) - 1000.0f);
  rxm::DeviceArray<__half> on_device(device, n);
  bool ok = cudaMemcpy(on_device.data(), keys.data(), n * sizeof(__half), cudaMemcpyHostToDevice) == cudaSuccess;
  rxm::sort(ctx, rxm::device_span<__half>(on_device));
  std::vector<__half> sorted(n);
  ok = ok && cudaMemcpy(sorted.data(), on_device.data(), n * sizeof(__half), cudaMemcpyDeviceToHost) == cudaSuccess;

  // The reference: the same bits as rxm::half_t, sorted on the host by the library's key order.
  std::vector<rxm::half_t> expected(n);
  std::memcpy(expected.data(), keys.data(), n * sizeof(__half));
  std::stable_sort(expected.begin(), expected.end(), rxm::key_less<rxm::half_t>{});
  ok = ok && std::memcmp(sorted.data(), expected.data(), n * sizeof(__half)) == 0;
  ok = ok && delta_split_temp_bytes(n) > 0;
  std::printf("cuda consumer: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
