// Engine 2: least-significant-digit radix sort, one radixmesh digit multisplit per digit
// (src/cuda/multisplit/multisplit_digit.hpp). Each multisplit is stable, so after the pass on
// the most significant digit the keys are sorted by all of [begin_bit, end_bit) (Knuth 5.2.5;
// the multisplit paper, Ashkiani et al. 2017, section 6, builds its radix sort the same way).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/sort/cub_engine.hpp"

namespace radixmesh::detail {

// The multisplit's limit on n (its offsets are 32-bit, with room for one tile of slack).
inline constexpr std::size_t lsd_max_items = (std::size_t(1) << 32) - (std::size_t(1) << 16) - 1;
// Digit width: 256 buckets per pass, the multisplit's tuned m <= 256 variant.
inline constexpr int lsd_default_digit_bits = 8;

// Same contracts as cub_sort_double_buffer / cub_sort_copy (cub_engine.hpp).
void lsd_sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                            const EncodedSortShape& shape, cudaStream_t stream,
                            int digit_bits = lsd_default_digit_bits);
void lsd_sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                   void* values_out, const EncodedSortShape& shape, cudaStream_t stream,
                   int digit_bits = lsd_default_digit_bits);

}  // namespace radixmesh::detail
