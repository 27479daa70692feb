// Engine 1: CUB's DeviceRadixSort (onesweep, Adinets & Merrill 2022) on encoded keys.
//
// Keys arrive already encoded (key_codec.hpp), so CUB sees only unsigned integers of the key's
// width and the engine is instantiated per key width x value width, never per key type.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace radixmesh::detail {

// What a sort engine needs to know about encoded keys: no type, only widths and the bit range.
struct EncodedSortShape {
  std::size_t n = 0;
  int key_bytes = 4;    // 1, 2, 4, 8
  int value_bytes = 0;  // 0 (keys only), 4, 8
  int begin_bit = 0;
  int end_bit = 32;
  // CUB's offsets are 32-bit below 2^32 items unless this asks for 64-bit ones: CUB tunes its
  // passes per offset width, and on the H200 one keys-only 8-bit pass of 2^28 u32 keys took 1.49-1.52
  // ms with 64-bit offsets against 1.73-1.76 with 32-bit ones (pairs: 2.21-2.29 against 1.95-2.04;
  // session 5, bench_multisplit). The digit multisplit asks for them on keys-only splits.
  bool wide_offsets = false;
};

// Two buffers each for keys and values; keys[selector] holds the input. After a sort, selector
// names the buffer holding the result (the other one is scratch). values are unused for keys only.
struct EncodedDoubleBuffer {
  void* keys[2] = {nullptr, nullptr};
  void* values[2] = {nullptr, nullptr};
  int selector = 0;
};

// Sorts keys[selector] (and values alongside) by bits [begin_bit, end_bit), stable, stream-ordered.
// temp == nullptr: only sets temp_bytes. Throws Error(device) if CUB reports an error.
void cub_sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                            const EncodedSortShape& shape, cudaStream_t stream);

// Same, leaving the input untouched: CUB keeps its own alternate buffers in temp (n keys + values).
// The output ranges must not overlap the input ranges.
void cub_sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                   void* values_out, const EncodedSortShape& shape, cudaStream_t stream);

}  // namespace radixmesh::detail
