// The host API's kernels with the generic functor: every key width (1- and 2-byte keys, and
// radix digits, identity and float delta buckets of 4- and 8-byte keys). See runtime_split.hpp.
#include "cuda/multisplit/runtime_split.cuh"

namespace radixmesh::detail {
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint8_t, cuda::RuntimeShape::any)
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint16_t, cuda::RuntimeShape::any)
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint32_t, cuda::RuntimeShape::any)
RXM_INSTANTIATE_RUNTIME_SPLIT(std::uint64_t, cuda::RuntimeShape::any)
}  // namespace radixmesh::detail
