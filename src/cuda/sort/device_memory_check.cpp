#include "cuda/sort/device_memory_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {
std::string gib_and_bytes(std::size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f GiB (%zu bytes)", double(bytes) / double(1ull << 30), bytes);
  return text;
}
}  // namespace

void require_device_memory(int device, std::size_t bytes, const std::string& what) {
  DeviceGuard guard(device);
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw_error(ErrorCode::out_of_memory,
                what + " needs " + gib_and_bytes(bytes) + " of device memory on device " + std::to_string(device) +
                    ", but only " + gib_and_bytes(free_bytes) + " of " + gib_and_bytes(total_bytes) + " is free",
                "sort fewer keys at a time (or a narrower bit range of them), free device memory, or use host "
                "input on a context with more GPUs");
}

}  // namespace radixmesh::detail
