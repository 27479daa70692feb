// CUB's radix sort on native floating-point keys (native_float.hpp says why).
// Instantiations, explicitly: key width {16 as __half, 32 as float, 64 as
// double} x values {none, 32-bit, 64-bit} x {ascending, descending} x {copy,
// double-buffer}, 32-bit offsets only = 36 dispatches. Kept out of
// cub_engine.cu so that the two compile in parallel.
#include <cuda_fp16.h>  // before CUB, so that its __half traits are defined

#include <cstdint>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/native_float.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

template <class K, class V, bool Descending> void sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in,
                                                            void* keys_out, const void* values_in, void* values_out,
                                                            std::uint32_t n, cudaStream_t stream) {
  const auto* kin = static_cast<const K*>(keys_in);
  auto* kout = static_cast<K*>(keys_out);
  constexpr int bits = int(sizeof(K) * 8);
  if constexpr (std::is_void_v<V>) {
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, kin, kout, n, 0, bits, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, kin, kout, n, 0, bits, stream));
  } else {
    const auto* vin = static_cast<const V*>(values_in);
    auto* vout = static_cast<V*>(values_out);
    if constexpr (Descending)
      RXM_CUDA_CHECK(
          cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, kin, kout, vin, vout, n, 0, bits, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, vin, vout, n, 0, bits, stream));
  }
  RXM_CUDA_CHECK_LAUNCH();
}

template <class K, class V, bool Descending> void sort_double_buffer(void* temp, std::size_t& temp_bytes,
                                                                     EncodedDoubleBuffer& b, std::uint32_t n,
                                                                     cudaStream_t stream) {
  cub::DoubleBuffer<K> keys(static_cast<K*>(b.keys[b.selector]), static_cast<K*>(b.keys[b.selector ^ 1]));
  constexpr int bits = int(sizeof(K) * 8);
  if constexpr (std::is_void_v<V>) {
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, keys, n, 0, bits, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, n, 0, bits, stream));
  } else {
    cub::DoubleBuffer<V> values(static_cast<V*>(b.values[b.selector]), static_cast<V*>(b.values[b.selector ^ 1]));
    if constexpr (Descending)
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, values, n, 0, bits, stream));
    else
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, n, 0, bits, stream));
    if (temp && (values.Current() == b.values[0]) != (keys.Current() == b.keys[0]))
      throw_error(ErrorCode::internal, "CUB left keys and values in different buffers", "report this as a bug");
  }
  if (temp) b.selector = keys.Current() == b.keys[0] ? 0 : 1;
  RXM_CUDA_CHECK_LAUNCH();
}

// Run-time width, value width and order to template arguments: the
// instantiation list.
template <class F> void with_types(Order order, const EncodedSortShape& s, F&& f) {
  require(s.n <= std::numeric_limits<std::uint32_t>::max(), "native float sort: more than 2^32 - 1 keys",
          "use the encoded path (native_float_path_applies() is false for this "
          "size)");
  auto with_order = [&](auto key, auto value) {
    if (order == Order::descending)
      f(key, value, std::true_type{});
    else
      f(key, value, std::false_type{});
  };
  auto with_value = [&](auto key) {
    switch (s.value_bytes) {
      case 0: return with_order(key, static_cast<void*>(nullptr));
      case 4: return with_order(key, static_cast<std::uint32_t*>(nullptr));
      case 8: return with_order(key, static_cast<std::uint64_t*>(nullptr));
    }
    throw_error(ErrorCode::internal, "native float sort got values of " + std::to_string(s.value_bytes) + " bytes",
                "report this as a bug");
  };
  switch (s.key_bytes) {
    case 2: return with_value(__half{});
    case 4: return with_value(float{});
    case 8: return with_value(double{});
  }
  throw_error(ErrorCode::internal, "native float sort got keys of " + std::to_string(s.key_bytes) + " bytes",
              "report this as a bug");
}

template <class Tag> using value_of = std::remove_pointer_t<Tag>;

}  // namespace

bool native_float_path_applies(KeyType type, const EncodedSortShape& shape, SortEngine engine) {
  if (const char* forced = std::getenv("RXM_CUDA_SORT_FLOAT_PATH"); forced && std::string_view(forced) == "encoded")
    return false;
  return is_floating(type) && engine == SortEngine::cub_onesweep && shape.begin_bit == 0 &&
         shape.end_bit == shape.key_bytes * 8 && shape.n >= 2 && shape.n <= std::numeric_limits<std::uint32_t>::max();
}

void cub_native_float_sort_copy(Order order, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                                const void* values_in, void* values_out, const EncodedSortShape& shape,
                                cudaStream_t stream) {
  with_types(order, shape, [&](auto key, auto value, auto descending) {
    sort_copy<decltype(key), value_of<decltype(value)>, decltype(descending)::value>(
        temp, temp_bytes, keys_in, keys_out, values_in, values_out, std::uint32_t(shape.n), stream);
  });
}

void cub_native_float_sort_double_buffer(Order order, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                         const EncodedSortShape& shape, cudaStream_t stream) {
  with_types(order, shape, [&](auto key, auto value, auto descending) {
    sort_double_buffer<decltype(key), value_of<decltype(value)>, decltype(descending)::value>(
        temp, temp_bytes, buffers, std::uint32_t(shape.n), stream);
  });
}

}  // namespace radixmesh::detail
