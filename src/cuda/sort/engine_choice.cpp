// The automatic engine choice, and the switch from an engine to its code.
//
// automatic = CUB onesweep for every shape (keys-only shapes on CUB's 64-bit-offset tuning,
// cub_engine.cu; float keys on CUB's native float sort, cub_native_float.cu). Measured on an NVIDIA
// H200, 2^28 uniform keys,
// device-resident, device-level API, median of 10 (bench_sort_cuda --suite --device-only at
// 485b627, bench/results/sort.jsonl; docs/design/sort.md):
//                   cub_onesweep   multisplit_lsd (8-bit digits)
//   u32 keys          5.44 ms        8.42 ms   (Zipf(1.0): 5.26 vs 7.23)
//   u32/u32 pairs     7.45 ms       15.52 ms
//   f32 keys          5.67 ms        8.67 ms   (CUB: native float sort + fix-up; LSD: encode/decode)
//   f32/u32 pairs     7.55 ms       14.46 ms
//   f16 keys          3.03 ms        3.37 ms
//   f64 keys         16.47 ms       29.00 ms
//   u64 keys         16.46 ms       30.06 ms
//   u64/u64 pairs    24.81 ms       56.56 ms
// The LSD engine needs its 8-bit multisplit pass under ~1.36 ms (keys; CUB's 5.44 ms / 4 passes)
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
