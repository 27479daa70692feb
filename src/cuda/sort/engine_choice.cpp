// The automatic engine choice, and the switch from an engine to its code.
//
// automatic = CUB onesweep for every shape. Measured on an NVIDIA H200, 2^28 uniform keys,
// device-resident, device-level API, median of 10 (bench_sort_cuda, bench/results/sort.jsonl):
//                   cub_onesweep   multisplit_lsd (8-bit digits)
//   u32 keys          6.32 ms        8.46 ms   (run at 2e69bd6; 13.20 ms at 9854931, 9.30 at 7780b03)
//   u32/u32 pairs     7.41 ms       15.67 ms
//   f32 keys          7.23 ms        9.09 ms   (both include the encode and decode passes)
//   u64 keys         16.42 ms       29.72 ms   (at 7780b03)
//   u64/u64 pairs    24.60 ms       56.19 ms   (at 7780b03)
// The LSD engine needs its 8-bit multisplit pass under ~1.58 ms (keys; CUB's 6.32 ms / 4 passes)
// to win; it stays selectable (SortEngine::multisplit_lsd) and tested, and this is the place to
// switch once the multisplit kernels get there.
#include "cuda/sort/engine.hpp"
#include "cuda/sort/lsd_engine.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

SortEngine choose_engine(SortEngine requested, const EncodedSortShape&) {
  if (requested != SortEngine::automatic) return requested;
  return SortEngine::cub_onesweep;
}

void sort_encoded_double_buffer(SortEngine engine, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                const EncodedSortShape& shape, cudaStream_t stream) {
  if (choose_engine(engine, shape) == SortEngine::multisplit_lsd)
    lsd_sort_double_buffer(temp, temp_bytes, buffers, shape, stream);
  else
    cub_sort_double_buffer(temp, temp_bytes, buffers, shape, stream);
}

void sort_encoded_copy(SortEngine engine, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                       const void* values_in, void* values_out, const EncodedSortShape& shape, cudaStream_t stream) {
  if (choose_engine(engine, shape) == SortEngine::multisplit_lsd)
    lsd_sort_copy(temp, temp_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
  else
    cub_sort_copy(temp, temp_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
}

}  // namespace radixmesh::detail
