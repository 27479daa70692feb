// The one explicit instantiation list of the digit multisplit: 4 key widths x {keys, 4-, 8-byte values}.
#include "cuda/multisplit/multisplit_digit.hpp"
#include "radixmesh/device/multisplit.cuh"

namespace radixmesh::cuda {

template <int KeyBits, int ValueBytes>
cudaError_t multisplit_digit(void* temp, std::size_t& temp_bytes, const digit_key_t<KeyBits>* keys_in,
                             digit_key_t<KeyBits>* keys_out, const void* values_in, void* values_out, std::size_t n,
                             int shift, int bits, std::uint32_t* bucket_offsets, cudaStream_t stream) {
  if (bits < 0 || bits > 16 || shift < 0 || shift + bits > KeyBits) return cudaErrorInvalidValue;
  const raw_digit<digit_key_t<KeyBits>> digit{shift, (std::uint32_t(1) << bits) - 1};
  return device::multisplit_detail::multisplit<digit_key_t<KeyBits>, ValueBytes>(
      temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, digit, std::uint32_t(1) << bits, bucket_offsets,
      stream, nullptr);
}

#define RXM_MULTISPLIT_DIGIT_INSTANCE(KB, VB)                                                                  \
  template cudaError_t multisplit_digit<KB, VB>(void*, std::size_t&, const digit_key_t<KB>*, digit_key_t<KB>*, \
                                                const void*, void*, std::size_t, int, int, std::uint32_t*,     \
                                                cudaStream_t);
RXM_MULTISPLIT_DIGIT_INSTANCE(8, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(8, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(8, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(16, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(16, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(16, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(32, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(32, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(32, 8)
RXM_MULTISPLIT_DIGIT_INSTANCE(64, 0) RXM_MULTISPLIT_DIGIT_INSTANCE(64, 4) RXM_MULTISPLIT_DIGIT_INSTANCE(64, 8)

}  // namespace radixmesh::cuda
