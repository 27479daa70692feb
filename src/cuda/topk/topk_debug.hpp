// TopkProblem::debug_checks (set by rxm::topk from RXM_TOPK_DEBUG=1): the GPU top-k synchronizes
// after every launch (its own kernels and CUB's) and names the stage that failed, and checks that
// every row selected exactly min(k, length) winners before they are ordered and written. Off by
// default (the device-level entry never synchronizes); the tests run cases with it on. A
// miscounted select (the symptom of a race in the bucket pick, docs/design/topk.md) then fails with a message
// instead of returning unwritten places.
#pragma once
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

class DebugChecks {
 public:
  DebugChecks(cudaStream_t stream, bool on) : stream_(stream), on_(on) {}

  // Always: the launch itself (bad configuration). With debugging: its execution too.
  void after_launch(const char* stage) const {
    check(cudaGetLastError(), stage, "launch");
    if (on_) check(cudaStreamSynchronize(stream_), stage, "execution");
  }

  void check_winner_counts(const unsigned long long* device_counts, const device::TopkProblem& pr) const {
    if (!on_) return;
    check(cudaStreamSynchronize(stream_), "winner count check", "execution");
    std::vector<unsigned long long> counts(pr.rows);
    check(cudaMemcpy(counts.data(), device_counts, pr.rows * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "winner count check", "copy");
    std::vector<std::uint64_t> offsets;
    if (pr.row_offsets) {
      offsets.resize(pr.rows + 1);
      check(cudaMemcpy(offsets.data(), pr.row_offsets, offsets.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost),
            "winner count check", "copy");
    }
    for (std::size_t r = 0; r < pr.rows; ++r) {
      const std::uint64_t length = pr.row_offsets ? offsets[r + 1] - offsets[r] : pr.row_length;
      const std::uint64_t want = length < pr.k ? length : pr.k;
      if (counts[r] != want)
        throw_error(ErrorCode::internal,
                    "device::topk (RXM_TOPK_DEBUG): row " + std::to_string(r) + " of length " + std::to_string(length) +
                        " selected " + std::to_string(counts[r]) + " winners for k = " + std::to_string(pr.k),
                    "report this with the input: the radix select miscounted");
    }
  }

 private:
  // The project's CUDA error (cuda_check.hpp), naming the stage and what failed in it.
  static void check(cudaError_t status, const char* stage, const char* what) {
    if (status != cudaSuccess)
      throw_cuda_error(status, (std::string("device::topk: ") + stage + " (" + what + ")").c_str(), __FILE__, __LINE__);
  }

  cudaStream_t stream_;
  bool on_;
};

}  // namespace radixmesh::detail::topk_gpu
