// What the standalone host-side phase programs (host_register.cu, pageable_staging.cu) share: a
// CUDA call checked with its message, the host clock, and work split over host threads.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x)                                                   \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)

using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// f(begin, end) on `threads` threads, over even shares of [0, bytes).
template <class F>
static void on_threads(unsigned threads, std::size_t bytes, F f) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([=] { f(bytes * t / threads, bytes * (t + 1) / threads); });
  for (auto& p : pool) p.join();
}
