// The one translation unit that instantiates CUB's radix sort on encoded (unsigned) keys.
// Instantiations, explicitly:
//   key width {8, 16, 32, 64} x values {none, 32-bit, 64-bit} x offsets {32-bit, 64-bit}
//   x {double-buffer, copy} = 48 dispatches, ascending only (descending is an encoding).
// The offset width per shape is cub_uses_wide_offsets (measured; 64-bit always from 2^32 items).
// The calls themselves are in cub_radix_sort.cuh, shared with the native float sort. Compile time
// of this file is reported in src/cuda/sort/README.md.
#include <cstdint>
#include <limits>

#include "cuda/sort/cub_engine.hpp"
#include "cuda/sort/cub_radix_sort.cuh"

namespace radixmesh::detail {

namespace {

// The run-time widths and size to template arguments: the explicit instantiation list.
template <class F> void with_widths(const EncodedSortShape& s, F&& f) {
  auto with_value = [&](auto key) {
    cub_radix_sort::with_value_tag(s.value_bytes, "sort engine", [&](auto value) {
      if (cub_uses_wide_offsets(s))
        f(key, value, std::uint64_t{});
      else
        f(key, value, std::uint32_t{});
    });
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

}  // namespace

// On the H200 (session 5, bench_multisplit), one keys-only 8-bit pass over 2^28 u32 keys took
// 1.49-1.52 ms with 64-bit offsets against 1.73-1.76 with 32-bit ones, while pairs went the other
// way (2.21-2.29 against 1.95-2.04). Full sorts: PENDING (session 6 measures them).
bool cub_uses_wide_offsets(const EncodedSortShape& shape) {
  if (shape.n > std::numeric_limits<std::uint32_t>::max()) return true;
  return shape.value_bytes == 0;
}

void cub_sort_double_buffer(void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                            const EncodedSortShape& shape, cudaStream_t stream) {
  with_widths(shape, [&](auto key, auto value, auto offset) {
    cub_radix_sort::double_buffer<decltype(key), cub_radix_sort::value_of<decltype(value)>, decltype(offset), false>(
        temp, temp_bytes, buffers, shape, stream);
  });
}

void cub_sort_copy(void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out, const void* values_in,
                   void* values_out, const EncodedSortShape& shape, cudaStream_t stream) {
  with_widths(shape, [&](auto key, auto value, auto offset) {
    cub_radix_sort::copy<decltype(key), cub_radix_sort::value_of<decltype(value)>, decltype(offset), false>(
        temp, temp_bytes, keys_in, keys_out, values_in, values_out, shape, stream);
  });
}

}  // namespace radixmesh::detail
