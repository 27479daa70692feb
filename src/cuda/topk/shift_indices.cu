// shift_indices (topk_on_device.hpp): a shard's local top-k indices made global on its device.
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_on_device.hpp"

namespace radixmesh::detail {

namespace {

template <class Index> __global__ void shift_kernel(Index* indices, std::size_t count, std::int64_t by) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x)
    indices[e] = Index(indices[e] + by);
}

}  // namespace

void shift_indices(void* indices, std::size_t count, std::size_t index_bytes, std::int64_t by, cudaStream_t stream) {
  if (count == 0 || by == 0) return;
  constexpr unsigned threads = 256;
  const unsigned blocks = unsigned(std::min<std::size_t>((count + threads - 1) / threads, 4096));
  if (index_bytes == 4)
    shift_kernel<<<blocks, threads, 0, stream>>>(static_cast<std::int32_t*>(indices), count, by);
  else
    shift_kernel<<<blocks, threads, 0, stream>>>(static_cast<std::int64_t*>(indices), count, by);
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace radixmesh::detail
