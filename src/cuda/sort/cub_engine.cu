// The one translation unit that instantiates CUB's radix sort. Instantiations, explicitly:
//   key width {8, 16, 32, 64} x values {none, 32-bit, 64-bit} x offsets {32-bit, 64-bit}
//   x {double-buffer, copy} = 48 dispatches.
// 32-bit offsets below 2^32 items keep CUB's fastest path (what its own benchmarks use); 64-bit
// offsets take larger arrays. Compile time of this file is reported in src/cuda/sort/README.md.
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/cub_engine.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

template <class K, class V, class Offset>
void sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& b, const EncodedSortShape& s,
                        cudaStream_t stream) {
  cub::DoubleBuffer<K> keys(static_cast<K*>(b.keys[b.selector]), static_cast<K*>(b.keys[b.selector ^ 1]));
  if constexpr (std::is_void_v<V>) {
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, Offset(s.n), s.begin_bit, s.end_bit, stream));
  } else {
    cub::DoubleBuffer<V> values(static_cast<V*>(b.values[b.selector]), static_cast<V*>(b.values[b.selector ^ 1]));
    RXM_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, Offset(s.n), s.begin_bit, s.end_bit, stream));
    // CUB moves keys and values together, so both selectors agree; check it rather than assume.
    if (temp && (values.Current() == b.values[0]) != (keys.Current() == b.keys[0]))
      throw_error(ErrorCode::internal, "CUB left keys and values in different buffers", "report this as a bug");
  }
  if (temp) b.selector = keys.Current() == b.keys[0] ? 0 : 1;
  RXM_CUDA_CHECK_LAUNCH();
}

template <class K, class V, class Offset>
void sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
               void* values_out, const EncodedSortShape& s, cudaStream_t stream) {
  if constexpr (std::is_void_v<V>) {
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, static_cast<const K*>(keys_in),
                                                  static_cast<K*>(keys_out), Offset(s.n), s.begin_bit, s.end_bit,
                                                  stream));
  } else {
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        temp, temp_bytes, static_cast<const K*>(keys_in), static_cast<K*>(keys_out), static_cast<const V*>(values_in),
        static_cast<V*>(values_out), Offset(s.n), s.begin_bit, s.end_bit, stream));
  }
  RXM_CUDA_CHECK_LAUNCH();
}

// The run-time widths and size to template arguments: the explicit instantiation list.
template <class F> void with_widths(const EncodedSortShape& s, F&& f) {
  auto with_offset = [&](auto key, auto value) {
    if (s.n <= std::numeric_limits<std::uint32_t>::max())
      f(key, value, std::uint32_t{});
    else
      f(key, value, std::uint64_t{});
  };
  auto with_value = [&](auto key) {
    switch (s.value_bytes) {
      case 0: return with_offset(key, static_cast<void*>(nullptr));
      case 4: return with_offset(key, static_cast<std::uint32_t*>(nullptr));
      case 8: return with_offset(key, static_cast<std::uint64_t*>(nullptr));
    }
    throw_error(ErrorCode::internal, "sort engine got values of " + std::to_string(s.value_bytes) + " bytes",
                "report this as a bug");
  };
  switch (s.key_bytes) {
    case 1: return with_value(std::uint8_t{});
    case 2: return with_value(std::uint16_t{});
    case 4: return with_value(std::uint32_t{});
    case 8: return with_value(std::uint64_t{});
  }
  throw_error(ErrorCode::internal, "sort engine got keys of " + std::to_string(s.key_bytes) + " bytes",
              "report this as a bug");
}

// A value tag is a pointer type so that "no values" can be void*; V is what it points to.
template <class Tag> using value_of = std::remove_pointer_t<Tag>;

}  // namespace

void cub_sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                            const EncodedSortShape& shape, cudaStream_t stream) {
  with_widths(shape, [&](auto key, auto value, auto offset) {
    sort_double_buffer<decltype(key), value_of<decltype(value)>, decltype(offset)>(temp, temp_bytes, buffers, shape,
                                                                                   stream);
  });
}

void cub_sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                   void* values_out, const EncodedSortShape& shape, cudaStream_t stream) {
  with_widths(shape, [&](auto key, auto value, auto offset) {
    sort_copy<decltype(key), value_of<decltype(value)>, decltype(offset)>(temp, temp_bytes, keys_in, keys_out,
                                                                          values_in, values_out, shape, stream);
  });
}

}  // namespace radixmesh::detail
