// The host API's kernels for hash buckets (buckets::hash) over 4- and 8-byte keys. See runtime_split.hpp.
#include "cuda/multisplit/runtime_split.cuh"

namespace radixmesh::detail {
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint32_t, cuda::RuntimeShape::hash)
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint64_t, cuda::RuntimeShape::hash)
}  // namespace radixmesh::detail
