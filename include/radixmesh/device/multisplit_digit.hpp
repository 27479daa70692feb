// radixmesh/device/multisplit_digit.hpp — the digit multisplit: a stable split of raw key bits by
// one radix digit, the engine behind the LSD sort, the host API's radix digits and the
// device-level entry radixmesh::device::multisplit with buckets::radix_digit (device/multisplit.cuh
// forwards such digits here, so a device-level user gets CUB's pass where it measured faster).
// Public because that header template calls it; defined, with its one explicit
// instantiation list, in the library (src/cuda/multisplit/multisplit_digit.cu). Plain C++: no
// device code here, so host-only sources (the LSD engine) include it too.
//
// Signature (stable: the sort's LSD engine calls it):
//   template <int KeyBits, int ValueBytes>
//   cudaError_t radixmesh::cuda::multisplit_digit(void* temp, std::size_t& temp_bytes,
//       const Bits* keys_in, Bits* keys_out, const void* values_in, void* values_out, std::size_t n,
//       int shift, int bits, std::uint32_t* bucket_offsets, cudaStream_t stream,
//       DigitEngine engine = DigitEngine::automatic, const MultisplitTuning& tuning = {});
// Bits = unsigned integer of KeyBits (8/16/32/64); keys are raw bits, already in the
// order-preserving encoding (keys.hpp) when that matters; digit = (key >> shift) & ((1 << bits) - 1),
// 0 <= bits <= 16, shift + bits <= KeyBits. ValueBytes 0 (keys only), 4 or 8. CUB's contract:
// temp == nullptr writes temp_bytes and returns; otherwise stream-ordered, no allocation, no sync.
// temp_bytes depends on the shape and the engine only, never on the pointers (callers may query
// with null ones); where CUB's pass is chosen it covers ours too, which a histogram-only call
// (keys_out == nullptr) runs.
// Stable (LSD-safe). bucket_offsets: device, (1 << bits) + 1 entries, or nullptr. n < 2^32 - 2^16.
// Inputs and outputs must not overlap. Instantiated for every KeyBits x ValueBytes in
// multisplit_digit.cu (one explicit instantiation list). Bad arguments and too little temp storage
// (for either engine) return cudaErrorInvalidValue before anything is written; a CUDA failure
// inside CUB's pass comes back as an error code (cudaGetLastError's, else cudaErrorUnknown: the
// library's CUB wrapper throws rxm::Error, which this entry catches, so that device-level callers
// keep CUB's contract of returned codes).
//
// Engines (DigitEngine): our multisplit (radixmesh/device/multisplit.cuh), or CUB's onesweep radix
// sort restricted to the digit's bit range, which is a stable split by that digit, followed by one
// binary search per bucket of the output for the offsets (CUB's offset width per shape:
// cub_uses_wide_offsets in cub_engine.hpp). `automatic` takes CUB on 4- and 8-byte keys for keys-only
// digits of 8 bits or more and for pairs from 6 bits, where our scatter pass is slower, and ours
// below (H200, 2^28 u32 uniform, bench_multisplit --m 64,256 at 7067fb0: keys m = 64 ours 1.36 ms
// against CUB 1.49, m = 256 2.09 against 1.52; pairs m = 64 ours 2.05 against CUB 1.95, m = 256
// 3.90 against 2.04; m = 32 keys ours 0.99 against 1.48 at 6812eb98de4b; --m 128 at 485b627: keys
// ours 1.493 against CUB's pass 1.532, Zipf 1.484 against 1.520; pairs ours 2.689 against 1.978).
// The LSD sort engine forces `own`: it exists to be the multisplit-based sort CUB is compared with.
// tuning (radixmesh/multisplit_tuning.hpp): the knobs of our passes, where they run; CUB's pass
// ignores them (a knob out of range still returns cudaErrorInvalidValue); temp_bytes does not
// depend on them.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "radixmesh/export.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/multisplit_tuning.hpp"

namespace radixmesh::cuda {

template <int KeyBits> using digit_key_t = unsigned_of_size_t<KeyBits / 8>;

enum class DigitEngine { automatic, own, cub_onesweep };
constexpr int cub_min_digit_bits_keys = 8, cub_min_digit_bits_pairs = 6;

// The engine `automatic` resolves to for a digit of `bits` bits on keys of KeyBits.
constexpr DigitEngine chosen_digit_engine(DigitEngine engine, int key_bits, int bits, int value_bytes) {
  if (engine != DigitEngine::automatic) return engine;
  const int min_bits = value_bytes == 0 ? cub_min_digit_bits_keys : cub_min_digit_bits_pairs;
  return key_bits >= 32 && bits >= min_bits ? DigitEngine::cub_onesweep : DigitEngine::own;
}

template <int KeyBits, int ValueBytes>
RXM_API cudaError_t multisplit_digit(void* temp, std::size_t& temp_bytes, const digit_key_t<KeyBits>* keys_in,
                             digit_key_t<KeyBits>* keys_out, const void* values_in, void* values_out, std::size_t n,
                             int shift, int bits, std::uint32_t* bucket_offsets, cudaStream_t stream,
                             DigitEngine engine = DigitEngine::automatic, const MultisplitTuning& tuning = {});

// The digit of raw unsigned bits, as a device functor.
template <class U> struct raw_digit {
  // A shift and a mask: the warp-owned scatter pass computes it again at write-out rather than
  // storing it (warp_scatter_pass.cuh).
  static constexpr bool cheap_to_recompute = true;
  int shift = 0;
  std::uint32_t mask = 0;
  RXM_HOST_DEVICE std::uint32_t operator()(U key) const { return std::uint32_t(key >> shift) & mask; }
};

#define RXM_MULTISPLIT_DIGIT_EXTERN(KB, VB)                                                                       \
  extern template cudaError_t multisplit_digit<KB, VB>(void*, std::size_t&, const digit_key_t<KB>*,                \
                                                       digit_key_t<KB>*, const void*, void*, std::size_t, int, int, \
                                                       std::uint32_t*, cudaStream_t, DigitEngine,                  \
                                                       const MultisplitTuning&);
RXM_MULTISPLIT_DIGIT_EXTERN(8, 0) RXM_MULTISPLIT_DIGIT_EXTERN(8, 4) RXM_MULTISPLIT_DIGIT_EXTERN(8, 8)
RXM_MULTISPLIT_DIGIT_EXTERN(16, 0) RXM_MULTISPLIT_DIGIT_EXTERN(16, 4) RXM_MULTISPLIT_DIGIT_EXTERN(16, 8)
RXM_MULTISPLIT_DIGIT_EXTERN(32, 0) RXM_MULTISPLIT_DIGIT_EXTERN(32, 4) RXM_MULTISPLIT_DIGIT_EXTERN(32, 8)
RXM_MULTISPLIT_DIGIT_EXTERN(64, 0) RXM_MULTISPLIT_DIGIT_EXTERN(64, 4) RXM_MULTISPLIT_DIGIT_EXTERN(64, 8)
#undef RXM_MULTISPLIT_DIGIT_EXTERN

}  // namespace radixmesh::cuda
