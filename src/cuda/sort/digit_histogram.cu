#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/digit_histogram.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::detail {

namespace {

constexpr unsigned histogram_threads = 256;
constexpr unsigned warps_per_block = histogram_threads / 32;

// One shared histogram per warp (atomics collide only within a warp), summed into the global one.
template <class Bits>
__global__ void digit_histogram_kernel(const Bits* keys, std::size_t n, int shift, unsigned mask,
                                       unsigned long long* counts) {
  __shared__ unsigned warp_counts[warps_per_block][1 << max_histogram_bits];
  const unsigned buckets = mask + 1;
  for (unsigned i = threadIdx.x; i < warps_per_block * buckets; i += blockDim.x)
    warp_counts[i / buckets][i % buckets] = 0;
  __syncthreads();
  unsigned* mine = warp_counts[threadIdx.x / 32];
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&mine[unsigned(keys[i] >> shift) & mask], 1u);
  __syncthreads();
  for (unsigned d = threadIdx.x; d < buckets; d += blockDim.x) {
    unsigned long long total = 0;
    for (unsigned w = 0; w < warps_per_block; ++w) total += warp_counts[w][d];
    if (total) atomicAdd(&counts[d], total);
  }
}

template <class Bits>
void launch(const void* keys, std::size_t n, int shift, int bits, unsigned long long* counts, cudaStream_t stream) {
  std::size_t blocks = (n + histogram_threads - 1) / histogram_threads;
  blocks = blocks > 2048 ? 2048 : blocks;  // grid-stride beyond: each block then counts many keys per flush
  digit_histogram_kernel<Bits><<<unsigned(blocks), histogram_threads, 0, stream>>>(
      static_cast<const Bits*>(keys), n, shift, (1u << bits) - 1, counts);
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_digit_histogram(const void* keys, std::size_t n, int key_bytes, int shift, int bits,
                            unsigned long long* counts, cudaStream_t stream) {
  if (n == 0) return;
  switch (key_bytes) {
    case 1: return launch<unsigned_of_size_t<1>>(keys, n, shift, bits, counts, stream);
    case 2: return launch<unsigned_of_size_t<2>>(keys, n, shift, bits, counts, stream);
    case 4: return launch<unsigned_of_size_t<4>>(keys, n, shift, bits, counts, stream);
    default: return launch<unsigned_of_size_t<8>>(keys, n, shift, bits, counts, stream);
  }
}

}  // namespace radixmesh::detail
