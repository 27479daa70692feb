// A CUDA graph captured from the work a callable enqueues on a stream, instantiated once and
// launched as often as needed: how an LLM server replays its top-k, and how the tests and the
// benchmarks time and check it. The capture is thread-local, so other threads' streams may run
// meanwhile.
#pragma once
#include <cuda_runtime_api.h>

#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

class CapturedGraph {
 public:
  // Captures `enqueue()` called `times` times on `stream` (each call enqueues work, allocating and
  // synchronizing nothing).
  template <class Enqueue>
  CapturedGraph(cudaStream_t stream, Enqueue&& enqueue, int times = 1) : stream_(stream) {
    RXM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int c = 0; c < times; ++c) enqueue();
    } catch (...) {  // the stream leaves capture mode, and the partial graph goes
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
      throw;
    }
    RXM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph_, 0);
    if (made != cudaSuccess) {
      cudaGraphDestroy(graph_);
      throw_cuda_error(made, "cudaGraphInstantiate", __FILE__, __LINE__);
    }
  }
  ~CapturedGraph() {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void launch() const { RXM_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaStream_t stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace radixmesh::detail
