#include "cuda/mesh/key_range.hpp"

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>

#include "cuda/mesh/sort_field.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/scratch.hpp"

namespace radixmesh::detail {
namespace {

constexpr int block_threads = 256;

// Folds one key's sort key into a thread's smallest and largest, in the key's own width (a u32
// key costs 32-bit compares, not 64-bit ones).
template <class U> struct FieldRange {
  SortField<U> field;
  __device__ __forceinline__ void take(U key, U& lo, U& hi) const {
    const U f = field(key);
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
  }
};

// The keys are read in 16-byte vectors (the aligned middle; the few keys before and after it one
// at a time), so the read runs near the device's bandwidth: one read of every key is this step's
// whole cost, and the sorted-input shortcut pays it on every mesh sort.
template <class U>
__global__ void key_range_kernel(const U* keys, std::size_t n, FieldRange<U> field, unsigned long long* out) {
  constexpr std::size_t per_vector = 16 / sizeof(U);
  const std::size_t to_alignment = ((16 - reinterpret_cast<std::uintptr_t>(keys) % 16) % 16) / sizeof(U);
  const std::size_t head = to_alignment < n ? to_alignment : n;
  const std::size_t vectors = (n - head) / per_vector, tail = head + vectors * per_vector;
  const std::size_t thread = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                    threads = std::size_t(gridDim.x) * blockDim.x;
  U lo = U(~U(0)), hi = 0;
  if (thread < head) field.take(keys[thread], lo, hi);
  if (thread < n - tail) field.take(keys[tail + thread], lo, hi);
  const uint4* body = reinterpret_cast<const uint4*>(keys + head);
  for (std::size_t v = thread; v < vectors; v += threads) {
    const uint4 word = body[v];
    U lanes[per_vector];
    memcpy(lanes, &word, sizeof word);
#pragma unroll
    for (std::size_t j = 0; j < per_vector; ++j) field.take(lanes[j], lo, hi);
  }
  // A thread with no key keeps lo = U's largest value and hi = 0: neither moves the result.
  using Reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename Reduce::TempStorage storage;
  const unsigned long long block_lo = Reduce(storage).Reduce((unsigned long long)lo, ::cuda::minimum<>{});
  __syncthreads();
  const unsigned long long block_hi = Reduce(storage).Reduce((unsigned long long)hi, ::cuda::maximum<>{});
  if (threadIdx.x == 0) {
    atomicMin(out, block_lo);
    atomicMax(out + 1, block_hi);
  }
}

template <class U>
void run(const CudaResources::PerDevice& device, const SortPlan& plan, const void* keys, unsigned long long* out) {
  const FieldRange<U> field{SortField<U>::of(plan)};
  int sms = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device.device));
  const std::size_t per_thread = 16 / sizeof(U);
  const std::size_t wanted = (plan.n + block_threads * per_thread - 1) / (block_threads * per_thread);
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min<std::size_t>(wanted, std::size_t(sms) * 8)));
  key_range_kernel<U><<<blocks, block_threads, 0, device.stream>>>(static_cast<const U*>(keys), plan.n, field, out);
  RXM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void device_key_range(const CudaResources::PerDevice& device, const SortPlan& plan, const void* keys,
                      std::uint64_t range[2]) {
  DeviceGuard guard(device.device);
  ScratchBuffer out(device, 2 * sizeof(unsigned long long));
  const unsigned long long start[2] = {~0ull, 0};
  RXM_CUDA_CHECK(cudaMemcpyAsync(out.data(), start, sizeof start, cudaMemcpyHostToDevice, device.stream));
  if (plan.n > 0) switch (size_of(plan.type)) {
      case 1: run<std::uint8_t>(device, plan, keys, out.as<unsigned long long>()); break;
      case 2: run<std::uint16_t>(device, plan, keys, out.as<unsigned long long>()); break;
      case 4: run<std::uint32_t>(device, plan, keys, out.as<unsigned long long>()); break;
      default: run<std::uint64_t>(device, plan, keys, out.as<unsigned long long>()); break;
    }
  unsigned long long got[2];
  RXM_CUDA_CHECK(cudaMemcpyAsync(got, out.data(), sizeof got, cudaMemcpyDeviceToHost, device.stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(device.stream));
  range[0] = got[0];
  range[1] = got[1];
}

}  // namespace radixmesh::detail
