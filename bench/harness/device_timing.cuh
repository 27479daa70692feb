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

// A start and a stop event, and the milliseconds between them around `run` on `stream`.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    RXM_CUDA_CHECK(cudaEventCreate(&start));
    RXM_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  double time_ms(cudaStream_t stream, const std::function<void()>& run) {
    RXM_CUDA_CHECK(cudaEventRecord(start, stream));
    run();
    RXM_CUDA_CHECK(cudaEventRecord(stop, stream));
    RXM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    RXM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

// Times `run` on `stream` with CUDA events: `warmup` runs unrecorded, then `reps` recorded.
// `setup` (may be empty) is queued before each start event, so it is not timed.
inline Stats time_device(cudaStream_t stream, const std::function<void()>& setup, const std::function<void()>& run,
                         int warmup, int reps) {
  EventPair events;
  std::vector<double> times;
  for (int i = 0; i < warmup + reps; ++i) {
    if (setup) setup();
    const double ms = events.time_ms(stream, run);
    if (i >= warmup) times.push_back(ms);
  }
  return summarize(times);
}

// Times several `runs` in turn within each repetition (a, b, a, b, ...), so that whatever drifts
// over the measurement (the GPU's clocks) weighs on each alike: for ratios between them (sorted
// over unsorted). `warmup` rounds unrecorded, then `reps`; one Stats a run, in order.
inline std::vector<Stats> time_device_interleaved(cudaStream_t stream, const std::vector<std::function<void()>>& runs,
                                                  int warmup, int reps) {
  EventPair events;
  std::vector<std::vector<double>> times(runs.size());
  for (int i = 0; i < warmup + reps; ++i)
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const double ms = events.time_ms(stream, runs[r]);
      if (i >= warmup) times[r].push_back(ms);
    }
  std::vector<Stats> stats;
  for (auto& t : times) stats.push_back(summarize(t));
  return stats;
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
