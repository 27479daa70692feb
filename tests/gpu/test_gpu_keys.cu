// The key encodings computed on the GPU must match the host bit for bit.
#include <gtest/gtest.h>

#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;

namespace {

template <class T>
__global__ void encode_kernel(const T* in, rxm::key_bits_t<T>* out, rxm::key_bits_t<T>* out_desc, T* round_trip,
                              std::size_t n) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  out[i] = rxm::encode_key(in[i]);
  out_desc[i] = rxm::encode_key(in[i], rxm::Order::descending);
  round_trip[i] = rxm::decode_key<T>(out[i]);
}

template <class T> void check_on_gpu(std::size_t n) {
  using B = rxm::key_bits_t<T>;
  std::vector<T> host;
  if constexpr (sizeof(T) <= 2) {  // every bit pattern
    n = std::size_t(1) << (8 * sizeof(T));
    for (std::size_t i = 0; i < n; ++i) host.push_back(rxm::from_bits<T>(B(i)));
  } else {
    host = rxm::testing::random_bit_patterns<T>(n, rxm::testing::test_seed());
  }
  rxm::DeviceArray<T> in(0, n), round_trip(0, n);
  rxm::DeviceArray<B> enc(0, n), enc_desc(0, n);
  RXM_CUDA_CHECK(cudaMemcpy(in.data(), host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(enc.data(), 0xA5, n * sizeof(B)));  // poison
  encode_kernel<<<unsigned((n + 255) / 256), 256>>>(in.data(), enc.data(), enc_desc.data(), round_trip.data(), n);
  RXM_CUDA_CHECK_LAUNCH();
  std::vector<B> got(n), got_desc(n);
  std::vector<T> got_round(n);
  RXM_CUDA_CHECK(cudaMemcpy(got.data(), enc.data(), n * sizeof(B), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got_desc.data(), enc_desc.data(), n * sizeof(B), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got_round.data(), round_trip.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], rxm::encode_key(host[i])) << "element " << i;
    ASSERT_EQ(got_desc[i], rxm::encode_key(host[i], rxm::Order::descending)) << "element " << i;
    ASSERT_EQ(rxm::to_bits(got_round[i]), rxm::to_bits(host[i])) << "element " << i;
  }
}

}  // namespace

TEST(GpuKeys, EncodingsMatchHost) {
  RXM_REQUIRE_GPU();
  const std::size_t n = (1 << 20) + 7;
  check_on_gpu<std::uint8_t>(n);
  check_on_gpu<std::int8_t>(n);
  check_on_gpu<std::uint16_t>(n);
  check_on_gpu<std::int16_t>(n);
  check_on_gpu<rxm::half_t>(n);
  check_on_gpu<rxm::bfloat16_t>(n);
  check_on_gpu<std::uint32_t>(n);
  check_on_gpu<std::int32_t>(n);
  check_on_gpu<float>(n);
  check_on_gpu<std::uint64_t>(n);
  check_on_gpu<std::int64_t>(n);
  check_on_gpu<double>(n);
}
