// The automatic engine choice, and the switch from an engine to its code.
//
// automatic: CUB onesweep. The multisplit LSD engine joins when the digit multisplit lands.
#include "cuda/sort/engine.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

SortEngine choose_engine(SortEngine requested, const EncodedSortShape&) {
  if (requested == SortEngine::multisplit_lsd)
    throw_error(ErrorCode::unsupported, "the multisplit LSD sort engine is not in this build yet",
                "use SortEngine::automatic or SortEngine::cub_onesweep");
  return SortEngine::cub_onesweep;
}

void sort_encoded_double_buffer(SortEngine engine, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                const EncodedSortShape& shape, cudaStream_t stream) {
  choose_engine(engine, shape);
  cub_sort_double_buffer(temp, temp_bytes, buffers, shape, stream);
}

void sort_encoded_copy(SortEngine engine, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                       const void* values_in, void* values_out, const EncodedSortShape& shape, cudaStream_t stream) {
  choose_engine(engine, shape);
  cub_sort_copy(temp, temp_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
}

}  // namespace radixmesh::detail
