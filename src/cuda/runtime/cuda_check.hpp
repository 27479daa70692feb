// Checks every CUDA runtime call: a failure becomes Error(device) naming the call and the error.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "radixmesh/error.hpp"

namespace radixmesh::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw Error(ErrorCode::device, std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                     cudaGetErrorString(status) + ") at " + file + ":" + std::to_string(line) +
                                     ". fix: check the GPU and driver with `radixmesh info` and nvidia-smi");
}

}  // namespace radixmesh::detail

#define RXM_CUDA_CHECK(call)                                                                   \
  do {                                                                                         \
    cudaError_t rxm_status_ = (call);                                                          \
    if (rxm_status_ != cudaSuccess) ::radixmesh::detail::throw_cuda_error(rxm_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define RXM_CUDA_CHECK_LAUNCH() RXM_CUDA_CHECK(cudaGetLastError())
