// The kernel side of the host API's multisplit on a device (multisplit_host.cu): one split with a
// RuntimeBuckets functor, its temp storage from the context's scratch pool. Declared here and
// instantiated per key width and RuntimeShape in runtime_split_*.cu, so that the three lists of
// kernels compile as separate translation units (in parallel, and each one at a time in memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuda/multisplit/runtime_buckets.cuh"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/multisplit_tuning.hpp"

namespace radixmesh::detail {

// Device pointers of one split (nullptr keys_out: counts only), and the checked mode's word.
struct RuntimeSplitArgs {
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const void* values_in = nullptr;
  void* values_out = nullptr;
  std::size_t n = 0;
  std::uint32_t m = 1;
  int value_bytes = 0;                     // 0, 4 or 8
  std::uint32_t* offsets = nullptr;        // m + 1 entries
  unsigned long long* bad_index = nullptr; // checked mode: first index of an id >= m, or ~0; the
                                           // outputs stay untouched when there is one
  MultisplitTuning tuning = {};            // the kernels' knobs (MultisplitOptions::tuning)
};

// Calls f(std::integral_constant<int, B>{}) for the value width B in {0, 4, 8} named at run time.
template <class F> void with_value_bytes(int value_bytes, F&& f) {
  switch (value_bytes) {
    case 0: f(std::integral_constant<int, 0>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

// Queues the split on the device's stream (no synchronization); throws rxm::Error on a CUDA error.
template <class U, cuda::RuntimeShape Shape>
void run_runtime_split(const CudaResources::PerDevice& device, const cuda::RuntimeBuckets<U, Shape>& buckets,
                       const RuntimeSplitArgs& args);

}  // namespace radixmesh::detail
