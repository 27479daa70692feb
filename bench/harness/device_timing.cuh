// CUDA-event timing for the GPU benchmarks, and the device-to-device copy bandwidth that their
// floors are measured against. Header-only: included from .cu benchmark files.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "harness/harness.hpp"

namespace radixmesh::bench {

// Times `run` on `stream` with CUDA events: `warmup` runs unrecorded, then `reps` recorded.
// `setup` (may be empty) is queued before each start event, so it is not timed.
inline Stats time_device(cudaStream_t stream, const std::function<void()>& setup, const std::function<void()>& run,
                         int warmup, int reps) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
      RXM_CUDA_CHECK(cudaEventCreate(&start));
      RXM_CUDA_CHECK(cudaEventCreate(&stop));
    }
    ~Events() {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  } events;
  std::vector<double> times;
  for (int i = 0; i < warmup + reps; ++i) {
    if (setup) setup();
    RXM_CUDA_CHECK(cudaEventRecord(events.start, stream));
    run();
    RXM_CUDA_CHECK(cudaEventRecord(events.stop, stream));
    RXM_CUDA_CHECK(cudaEventSynchronize(events.stop));
    float ms = 0;
    RXM_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    if (i >= warmup) times.push_back(ms);
  }
  return summarize(times);
}

inline Stats time_device(cudaStream_t stream, const std::function<void()>& run, int warmup, int reps) {
  return time_device(stream, {}, run, warmup, reps);
}

// Device-to-device copy bandwidth, bytes read + written per second: the floors' yardstick.
inline double measure_d2d_bandwidth(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  Stats s = time_device(
      stream, [&] { RXM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)); }, 2, 10);
  return 2.0 * double(bytes) / (s.median_ms * 1e-3);
}

}  // namespace radixmesh::bench
