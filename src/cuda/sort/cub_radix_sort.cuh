// CUB's DeviceRadixSort behind the engine's buffer and shape types, for any key type CUB sorts
// (unsigned bits in cub_engine.cu, native floats in cub_native_float.cu) and either direction.
// Included only by those two files, each of which instantiates its own list (they compile in
// parallel); nothing here is instantiated on its own.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/cub_engine.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail::cub_radix_sort {

// Sorts buffers.keys[selector] (and values) by bits [begin_bit, end_bit) of K as CUB orders K;
// selector names the result afterwards. temp == nullptr: only sets temp_bytes.
template <class K, class V, class Offset, bool Descending>
void double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& b, const EncodedSortShape& s,
                   cudaStream_t stream) {
  cub::DoubleBuffer<K> keys(static_cast<K*>(b.keys[b.selector]), static_cast<K*>(b.keys[b.selector ^ 1]));
  const Offset n = Offset(s.n);
  if constexpr (std::is_void_v<V>) {
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, keys, n, s.begin_bit, s.end_bit, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, n, s.begin_bit, s.end_bit, stream));
  } else {
    cub::DoubleBuffer<V> values(static_cast<V*>(b.values[b.selector]), static_cast<V*>(b.values[b.selector ^ 1]));
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, values, n, s.begin_bit,
                                                               s.end_bit, stream));
    else
      RXM_CUDA_CHECK(
          cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, n, s.begin_bit, s.end_bit, stream));
    // CUB moves keys and values together, so both selectors agree; check it rather than assume.
    if (temp && (values.Current() == b.values[0]) != (keys.Current() == b.keys[0]))
      throw_error(ErrorCode::internal, "CUB left keys and values in different buffers", "report this as a bug");
  }
  if (temp) b.selector = keys.Current() == b.keys[0] ? 0 : 1;
  RXM_CUDA_CHECK_LAUNCH();
}

// Same, from keys_in into keys_out (values likewise), inputs untouched: CUB keeps its alternate
// buffers in temp.
template <class K, class V, class Offset, bool Descending>
void copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
          void* values_out, const EncodedSortShape& s, cudaStream_t stream) {
  const auto* kin = static_cast<const K*>(keys_in);
  auto* kout = static_cast<K*>(keys_out);
  const Offset n = Offset(s.n);
  if constexpr (std::is_void_v<V>) {
    if constexpr (Descending)
      RXM_CUDA_CHECK(
          cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, kin, kout, n, s.begin_bit, s.end_bit, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, kin, kout, n, s.begin_bit, s.end_bit, stream));
  } else {
    const auto* vin = static_cast<const V*>(values_in);
    auto* vout = static_cast<V*>(values_out);
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, kin, kout, vin, vout, n, s.begin_bit,
                                                               s.end_bit, stream));
    else
      RXM_CUDA_CHECK(
          cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, vin, vout, n, s.begin_bit, s.end_bit, stream));
  }
  RXM_CUDA_CHECK_LAUNCH();
}

// A value tag is a pointer type so that "no values" can be void*; V is what it points to.
template <class Tag> using value_of = std::remove_pointer_t<Tag>;

// The run-time value width to a value tag: f(void*), f(std::uint32_t*) or f(std::uint64_t*).
template <class F> void with_value_tag(int value_bytes, const char* who, F&& f) {
  switch (value_bytes) {
    case 0: return f(static_cast<void*>(nullptr));
    case 4: return f(static_cast<std::uint32_t*>(nullptr));
    case 8: return f(static_cast<std::uint64_t*>(nullptr));
  }
  throw_error(ErrorCode::internal, std::string(who) + " got values of " + std::to_string(value_bytes) + " bytes",
              "report this as a bug");
}

// The run-time order to a std::bool_constant: f(std::true_type{}) for descending.
template <class F> void with_direction(bool descending, F&& f) {
  if (descending)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace radixmesh::detail::cub_radix_sort
