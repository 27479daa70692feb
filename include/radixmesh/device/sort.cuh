// radixmesh/device/sort.cuh — device-level radix sort for users who compose their own CUDA code.
//
// CUB's contract (cub::DeviceRadixSort): stream-ordered, no hidden synchronization, no allocation;
// the caller provides temporary storage. Call once with temp == nullptr to learn temp_bytes,
// allocate that much device memory, then call again with the same arguments to sort:
//
//   std::size_t temp_bytes = 0;
//   radixmesh::cuda::sort_pairs<float, std::uint32_t>(nullptr, temp_bytes, keys_in, keys_out, values_in,
//                                                     values_out, n);
//   radixmesh::DeviceBuffer temp(device, temp_bytes);   // throws, naming bytes needed vs free, if too big
//   radixmesh::cuda::sort_pairs(temp.data(), temp_bytes, keys_in, keys_out, values_in, values_out, n);
//
// Semantics match rxm::sort: every key type through its order-preserving encoding (keys.hpp:
// -0.0 < +0.0, NaNs after +inf), stable, [begin_bit, end_bit) counted on the encoding (descending:
// on the complemented encoding). Inputs are left untouched; outputs must not overlap inputs. The
// current device must be the one that owns the pointers. Unlike CUB, errors throw radixmesh::Error
// (bad arguments, temp storage too small, a failed CUDA call) instead of returning cudaError_t.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "radixmesh/export.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::cuda {

namespace detail {
// The type-erased entry the templates below forward to (src/cuda/sort/device_sort.cpp).
RXM_API void sort_erased(void* temp, std::size_t& temp_bytes, KeyType type, const void* keys_in, void* keys_out,
                 const void* values_in, void* values_out, std::size_t value_bytes, std::size_t n,
                 const SortOptions& options, cudaStream_t stream);
inline SortOptions options_of(Order order, int begin_bit, int end_bit, SortEngine engine) {
  SortOptions o;
  o.order = order;
  o.begin_bit = begin_bit;
  o.end_bit = end_bit;
  o.engine = engine;
  return o;
}
}  // namespace detail

template <class K> inline constexpr int key_bits_v = int(sizeof(K) * 8);

// Sorts n keys from keys_in into keys_out, ascending.
template <class K>
void sort_keys(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n, int begin_bit = 0,
               int end_bit = key_bits_v<K>, cudaStream_t stream = nullptr, SortEngine engine = SortEngine::automatic) {
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, nullptr, nullptr, 0, n,
                      detail::options_of(Order::ascending, begin_bit, end_bit, engine), stream);
}

template <class K>
void sort_keys_descending(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n,
                          int begin_bit = 0, int end_bit = key_bits_v<K>, cudaStream_t stream = nullptr,
                          SortEngine engine = SortEngine::automatic) {
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, nullptr, nullptr, 0, n,
                      detail::options_of(Order::descending, begin_bit, end_bit, engine), stream);
}

// Sorts keys and carries values (4 or 8 bytes, any trivially copyable type) along.
template <class K, class V>
void sort_pairs(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                std::size_t n, int begin_bit = 0, int end_bit = key_bits_v<K>, cudaStream_t stream = nullptr,
                SortEngine engine = SortEngine::automatic) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::cuda::sort_pairs: values must be 4 or 8 bytes wide");
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, values_in, values_out, sizeof(V), n,
                      detail::options_of(Order::ascending, begin_bit, end_bit, engine), stream);
}

template <class K, class V>
void sort_pairs_descending(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                           V* values_out, std::size_t n, int begin_bit = 0, int end_bit = key_bits_v<K>,
                           cudaStream_t stream = nullptr, SortEngine engine = SortEngine::automatic) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8,
                "radixmesh::cuda::sort_pairs_descending: values must be 4 or 8 bytes wide");
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, values_in, values_out, sizeof(V), n,
                      detail::options_of(Order::descending, begin_bit, end_bit, engine), stream);
}

// The same with every option of rxm::sort (SortOptions: order, bit range with end_bit = -1 for all
// bits, engine, float path), e.g. for benchmarks that compare the float paths.
template <class K>
void sort_keys(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, std::size_t n,
               const SortOptions& options, cudaStream_t stream = nullptr) {
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, nullptr, nullptr, 0, n, options, stream);
}

template <class K, class V>
void sort_pairs(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                std::size_t n, const SortOptions& options, cudaStream_t stream = nullptr) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::cuda::sort_pairs: values must be 4 or 8 bytes wide");
  detail::sort_erased(temp, temp_bytes, key_type_v<K>, keys_in, keys_out, values_in, values_out, sizeof(V), n, options,
                      stream);
}

}  // namespace radixmesh::cuda
