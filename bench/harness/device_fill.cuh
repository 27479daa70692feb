// Deterministic device-side inputs for the GPU benchmarks: value i depends only on i and a seed,
// so a run's inputs can be made again (on the CPU too) without keeping them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/buckets.hpp"

namespace radixmesh::bench {

// splitmix64's finalizer (buckets::hash::mix) of i * golden + seed, as a float in [0, 1) with 24
// random bits.
__device__ __forceinline__ float uniform01(std::uint64_t i, std::uint64_t seed) {
  return float(buckets::hash::mix(i * 0x9E3779B97F4A7C15ull + seed) >> 40) * (1.0f / 16777216.0f);
}

// Uniform in [lo, hi).
struct UniformValues {
  float lo, hi;
  std::uint64_t seed;
  __device__ float operator()(std::uint64_t i) const { return lo + (hi - lo) * uniform01(i, seed); }
};

// LLM-like logits: the sum of four uniforms, about normal with sd 1.15, centred on 0.
struct LogitValues {
  __device__ float operator()(std::uint64_t i) const {
    float sum = 0;
    for (std::uint64_t j = 0; j < 4; ++j) sum += uniform01(i * 4 + j, 0x632BE59BD9B4E019ull);
    return 2.0f * (sum - 2.0f);
  }
};

// out[i] = f(i) rounded to T (half and bfloat16 round to nearest), grid-stride.
template <class T, class F> __global__ void fill_values(T* out, std::size_t n, F f) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += gridDim.x * std::size_t(blockDim.x)) {
    const float x = f(i);
    if constexpr (std::is_same_v<T, __half>) out[i] = __float2half_rn(x);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) out[i] = __float2bfloat16_rn(x);
    else out[i] = T(x);
  }
}

}  // namespace radixmesh::bench
