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
};

// Whether CUB runs with 64-bit offsets (its item-count type) for this shape. Always at 2^32 items
// and above; below, CUB tunes its passes per offset width, and the width is chosen by measurement
// (cub_engine.cu records the figures).
bool cub_uses_wide_offsets(const EncodedSortShape& shape);

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
