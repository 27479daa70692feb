// The automatic engine choice, and the switch from an engine to its code.
//
// automatic = CUB onesweep for every shape (session 6: keys-only shapes now run CUB's 64-bit-offset
// tuning, cub_engine.cu: u32 keys 5.45 ms, f32 keys see cub_native_float.cu). Measured on an NVIDIA
// H200 before that change, 2^28 uniform keys,
// device-resident, device-level API, median of 10 (bench_sort_cuda --suite --device-only at
// 08c8c22, bench/results/sort.jsonl):
//                   cub_onesweep   multisplit_lsd (8-bit digits)
//   u32 keys          6.31 ms        8.35 ms   (Zipf(1.0): 6.11 vs 7.17)
//   u32/u32 pairs     7.41 ms       17.08 ms
//   f32 keys          5.63 ms        8.63 ms   (CUB: native float sort + fix-up; LSD: encode/decode)
//   f32/u32 pairs     7.48 ms       15.57 ms
//   f16 keys          2.98 ms        3.41 ms
//   f64 keys         16.33 ms       28.73 ms
//   u64 keys         16.44 ms       29.78 ms
//   u64/u64 pairs    24.58 ms       63.21 ms
// The LSD engine needs its 8-bit multisplit pass under ~1.58 ms (keys; CUB's 6.31 ms / 4 passes)
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
