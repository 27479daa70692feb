// The one explicit instantiation list of the digit multisplit: 4 key widths x {keys, 4-, 8-byte values},
// and its two engines (radixmesh/device/multisplit_digit.hpp): ours, or CUB's onesweep pass on the digit's bits.
#include <algorithm>

#include "cuda/multisplit/multisplit_digit.hpp"
#include "cuda/sort/cub_engine.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/device/multisplit.cuh"

namespace radixmesh::cuda {

namespace {

// offsets[b] = the first position of `split` whose digit is >= b (the digits of a split by that
// digit do not decrease), offsets[m] = n: one binary search per bucket, ~log2(n) dependent loads.
template <class U>
__global__ void offsets_by_search_kernel(const U* split, std::uint32_t n, raw_digit<U> digit, std::uint32_t m,
                                         std::uint32_t* offsets) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > m) return;
  std::uint32_t lo = 0, hi = n;
  if (b == m) lo = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (digit(split[mid]) < b) lo = mid + 1;
    else hi = mid;
  }
  offsets[b] = lo;
}

}  // namespace

template <int KeyBits, int ValueBytes>
cudaError_t multisplit_digit(void* temp, std::size_t& temp_bytes, const digit_key_t<KeyBits>* keys_in,
                             digit_key_t<KeyBits>* keys_out, const void* values_in, void* values_out, std::size_t n,
                             int shift, int bits, std::uint32_t* bucket_offsets, cudaStream_t stream,
                             DigitEngine engine, const MultisplitTuning& tuning) {
  using U = digit_key_t<KeyBits>;
  if (bits < 0 || bits > 16 || shift < 0 || shift + bits > KeyBits) return cudaErrorInvalidValue;
  const raw_digit<U> digit{shift, (std::uint32_t(1) << bits) - 1};
  const std::uint32_t m = std::uint32_t(1) << bits;
  auto ours = [&](void* ours_temp, std::size_t& ours_bytes) {
    return device::multisplit_detail::multisplit<U, ValueBytes>(ours_temp, ours_bytes, keys_in, keys_out, values_in,
                                                                values_out, n, digit, m, bucket_offsets, stream,
                                                                nullptr, tuning);
  };
  if (chosen_digit_engine(engine, KeyBits, bits, ValueBytes) == DigitEngine::own || bits == 0)
    return ours(temp, temp_bytes);
  if (n > (std::size_t(1) << 32) - (std::size_t(1) << 16)) return cudaErrorInvalidValue;  // the same limit as ours
  detail::EncodedSortShape shape;
  shape.n = n;
  shape.key_bytes = KeyBits / 8;
  shape.value_bytes = ValueBytes;
  shape.begin_bit = shift;
  shape.end_bit = shift + bits;
  // Temp: CUB's (plus its alternate buffers when the digit takes it two passes, above 8 bits) or
  // ours, whichever is larger: a histogram-only run (keys_out == nullptr) takes our counting pass,
  // and the size must not depend on the pointers, which CUB-style callers often leave null in the
  // query (the device-level entry forwards here). Checked here so that too little of it
  // is cudaErrorInvalidValue with nothing written, and CUB's failures come back as codes
  // (cub_sort_copy throws rxm::Error).
  std::size_t needed = 0;
  cudaError_t status = ours(nullptr, needed);
  if (status != cudaSuccess) return status;
  try {
    std::size_t cub_bytes = 0;
    detail::cub_sort_copy(nullptr, cub_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
    needed = std::max(needed, cub_bytes);
    if (temp == nullptr) {
      temp_bytes = needed;
      return cudaSuccess;
    }
    if (temp_bytes < needed) return cudaErrorInvalidValue;
    if (keys_out == nullptr) return ours(temp, temp_bytes);
    detail::cub_sort_copy(temp, temp_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
  } catch (const Error&) {
    status = cudaGetLastError();
    return status != cudaSuccess ? status : cudaErrorUnknown;
  }
  if (bucket_offsets == nullptr) return cudaSuccess;
  offsets_by_search_kernel<U><<<(m + 1 + 255) / 256, 256, 0, stream>>>(keys_out, std::uint32_t(n), digit, m,
                                                                         bucket_offsets);
  return cudaGetLastError();
}

#define RXM_MULTISPLIT_DIGIT_INSTANCE(KB, VB)                                                                  \
  template cudaError_t multisplit_digit<KB, VB>(void*, std::size_t&, const digit_key_t<KB>*, digit_key_t<KB>*, \
                                                const void*, void*, std::size_t, int, int, std::uint32_t*,     \
                                                cudaStream_t, DigitEngine, const MultisplitTuning&);
RXM_MULTISPLIT_DIGIT_INSTANCE(8, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(8, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(8, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(16, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(16, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(16, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(32, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(32, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(32, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(64, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(64, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(64, 8)

}  // namespace radixmesh::cuda
