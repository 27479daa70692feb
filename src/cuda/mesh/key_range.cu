#include "cuda/mesh/key_range.hpp"

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>

#include "cuda/multisplit/runtime_buckets.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/scratch.hpp"

namespace radixmesh::detail {
namespace {

constexpr int block_threads = 256;

template <class U>
__global__ void key_range_kernel(const U* keys, std::size_t n, cuda::RuntimeEncoding<U> encoding, U flip, int shift,
                                 std::uint64_t mask, unsigned long long* out) {
  unsigned long long lo = ~0ull, hi = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned long long key = (std::uint64_t(U(encoding(keys[i]) ^ flip)) >> shift) & mask;
    lo = key < lo ? key : lo;
    hi = key > hi ? key : hi;
  }
  using Reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename Reduce::TempStorage storage;
  const unsigned long long block_lo = Reduce(storage).Reduce(lo, ::cuda::minimum<>{});
  __syncthreads();
  const unsigned long long block_hi = Reduce(storage).Reduce(hi, ::cuda::maximum<>{});
  if (threadIdx.x == 0) {
    atomicMin(out, block_lo);
    atomicMax(out + 1, block_hi);
  }
}

template <class U>
void run(const CudaResources::PerDevice& device, const SortPlan& plan, const void* keys, unsigned long long* out) {
  const int bits = plan.end_bit - plan.begin_bit;
  const std::uint64_t mask = bits >= 64 ? ~0ull : (std::uint64_t(1) << bits) - 1;
  const U flip = plan.order == Order::descending ? U(~U(0)) : U(0);
  int sms = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device.device));
  const std::size_t wanted = (plan.n + block_threads - 1) / block_threads;
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min<std::size_t>(wanted, std::size_t(sms) * 8)));
  key_range_kernel<U><<<blocks, block_threads, 0, device.stream>>>(static_cast<const U*>(keys), plan.n,
                                                                      cuda::RuntimeEncoding<U>::of(plan.type), flip,
                                                                      plan.begin_bit, mask, out);
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
