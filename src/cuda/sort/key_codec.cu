// Elementwise encode/decode passes: 16-byte loads and stores where both pointers allow it.
#include <cstdint>
#include <cstring>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/key_codec.hpp"

namespace radixmesh::detail {

namespace {

template <class K, bool Encode> struct transcode {
  using bits = key_bits_t<K>;
  Order order;
  __device__ __forceinline__ bits operator()(bits x) const {
    if constexpr (Encode) return encode_key(from_bits<K>(x), order);
    else return to_bits(decode_key<K>(x, order));
  }
};

// Each thread transcodes whole 16-byte vectors; the n % per_vector tail goes to the first threads.
template <class K, bool Encode>
__global__ void transcode_vectors(const uint4* in, uint4* out, std::size_t n, transcode<K, Encode> op) {
  using bits = key_bits_t<K>;
  constexpr std::size_t per_vector = sizeof(uint4) / sizeof(bits);
  const std::size_t vectors = n / per_vector;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t v = first; v < vectors; v += stride) {
    uint4 x = in[v];
    bits lanes[per_vector];
    memcpy(lanes, &x, sizeof x);
#pragma unroll
    for (std::size_t j = 0; j < per_vector; ++j) lanes[j] = op(lanes[j]);
    memcpy(&x, lanes, sizeof x);
    out[v] = x;
  }
  if (const std::size_t tail = vectors * per_vector + first; tail < n)
    reinterpret_cast<bits*>(out)[tail] = op(reinterpret_cast<const bits*>(in)[tail]);
}

// Fallback for pointers that are not 16-byte aligned (a device_span into the middle of an array).
template <class K, bool Encode>
__global__ void transcode_elements(const key_bits_t<K>* in, key_bits_t<K>* out, std::size_t n, transcode<K, Encode> op) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = op(in[i]);
}

constexpr unsigned threads_per_block = 256;
constexpr std::size_t max_blocks = 8192;  // grid-stride beyond: about 16 waves of 132 SMs x 1024 threads

unsigned blocks_for(std::size_t items) {
  std::size_t blocks = (items + threads_per_block - 1) / threads_per_block;
  return unsigned(blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks));
}

template <bool Encode>
void launch_transcode(KeyType type, Order order, const void* in, void* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  visit_key_type(type, [&](auto tag) {
    using K = decltype(tag);
    using bits = key_bits_t<K>;
    transcode<K, Encode> op{order};
    const bool aligned = (reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) % 16 == 0;
    if (aligned) {
      const std::size_t per_vector = sizeof(uint4) / sizeof(bits);
      // Enough threads for every vector and for the tail (fewer than per_vector elements).
      const std::size_t items = n / per_vector > per_vector ? n / per_vector : per_vector;
      transcode_vectors<K, Encode><<<blocks_for(items), threads_per_block, 0, stream>>>(
          static_cast<const uint4*>(in), static_cast<uint4*>(out), n, op);
    } else {
      transcode_elements<K, Encode><<<blocks_for(n), threads_per_block, 0, stream>>>(
          static_cast<const bits*>(in), static_cast<bits*>(out), n, op);
    }
    RXM_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

bool encoding_is_identity(KeyType type, Order order) {
  return order == Order::ascending &&
         (type == KeyType::u8 || type == KeyType::u16 || type == KeyType::u32 || type == KeyType::u64);
}

void launch_encode_keys(KeyType type, Order order, const void* in, void* out, std::size_t n, cudaStream_t stream) {
  launch_transcode<true>(type, order, in, out, n, stream);
}
void launch_decode_keys(KeyType type, Order order, const void* in, void* out, std::size_t n, cudaStream_t stream) {
  launch_transcode<false>(type, order, in, out, n, stream);
}

}  // namespace radixmesh::detail
