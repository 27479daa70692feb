// The phase timers' launch (bench/phases/*_phases.cu, after their marked kernel, which defines
// prof_t): the launch three times, the first two to warm up; the last one's CUDA-event time in
// microseconds, its launch error, and its marks (%globaltimer, 0 where none was set) in t.
#pragma once
#include <cuda_runtime.h>

struct MarkedRun {
  float us = 0;
  cudaError_t error = cudaSuccess;
};

template <class Launch> MarkedRun run_marked(Launch launch, unsigned long long (&t)[64]) {
  MarkedRun run;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (int rep = 0; rep < 3; ++rep) {
    const unsigned long long zero[64] = {};
    cudaMemcpyToSymbol(prof_t, zero, sizeof zero);
    cudaEventRecord(e0);
    run.error = launch();
    cudaEventRecord(e1);
    cudaDeviceSynchronize();
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    run.us = ms * 1000;
    cudaMemcpyFromSymbol(t, prof_t, sizeof t);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return run;
}
