// The host API's kernels for delta buckets over 4- and 8-byte integer keys. See runtime_split.hpp.
#include "cuda/multisplit/runtime_split.cuh"

namespace radixmesh::detail {
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint32_t, cuda::RuntimeShape::delta_integer)
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint64_t, cuda::RuntimeShape::delta_integer)
}  // namespace radixmesh::detail
