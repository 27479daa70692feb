#include "cuda/sort/device_memory_check.hpp"

#include <cuda_runtime_api.h>

#include "core/byte_size.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

void require_device_memory(int device, std::size_t bytes, const std::string& what) {
  DeviceGuard guard(device);
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw_error(ErrorCode::out_of_memory,
                what + " needs " + format_bytes(bytes) + " of device memory on device " + std::to_string(device) +
                    ", but only " + format_bytes(free_bytes) + " of " + format_bytes(total_bytes) + " is free",
                "sort fewer keys at a time (or a narrower bit range of them), free device memory, or use host "
                "input on a context with more GPUs");
}

}  // namespace radixmesh::detail
