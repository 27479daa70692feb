// The automatic engine choice, and the switch from an engine to its code.
//
// automatic: CUB onesweep for every shape until the multisplit LSD engine has been measured
// against it on the device (see bench/results/sort.jsonl and the note in README.md here).
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
