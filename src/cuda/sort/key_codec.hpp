// Encoding keys to their order-preserving unsigned bits (keys.hpp) and back, on the GPU.
//
// The sort engines work on encoded keys only, so they are instantiated per key width; these
// elementwise passes are the one place a key's *type* matters. Both run stream-ordered on `stream`
// and may work in place (in == out).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::detail {

// True where encode_key is the identity (unsigned keys, ascending): no pass is needed.
bool encoding_is_identity(KeyType type, Order order);

// out[i] = encode_key(in[i], order), i < n. in: keys of `type`; out: their unsigned encoding.
void launch_encode_keys(KeyType type, Order order, const void* in, void* out, std::size_t n, cudaStream_t stream);
// out[i] = decode_key(in[i], order): the inverse of launch_encode_keys.
void launch_decode_keys(KeyType type, Order order, const void* in, void* out, std::size_t n, cudaStream_t stream);

}  // namespace radixmesh::detail
