// The automatic engine choice, and the switch from an engine to its code.
//
// automatic = CUB onesweep for every shape, measured (NVIDIA H200, 2^28 uniform u32, device-resident,
// median of 10, bench_sort_cuda at commit 9854931, bench/results/sort.jsonl):
//   keys:          cub_onesweep  6.32 ms   multisplit_lsd 13.20 ms (4 passes of 8 bits: 3.3 ms each)
//   u32/u32 pairs: cub_onesweep  7.41 ms   multisplit_lsd 21.17 ms
// The LSD engine needs its 8-bit multisplit pass under 1.6 ms (keys) to catch up; it stays
// selectable (SortEngine::multisplit_lsd) and tested, and this is the place to switch once the
// multisplit kernels get there.
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
