// The one translation unit that instantiates CUB's radix sort on encoded (unsigned) keys.
// Instantiations, explicitly:
//   key width {8, 16, 32, 64} x values {none, 32-bit, 64-bit} x offsets {32-bit, 64-bit}
//   x {double-buffer, copy} = 48 dispatches, ascending only (descending is an encoding).
// The offset width per shape is cub_uses_wide_offsets (measured; 64-bit always from 2^32 items).
// The calls themselves are in cub_radix_sort.cuh, shared with the native float sort. Compile time
// of this file is reported in docs/design/sort.md.
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

// Measured on the H200, 2^28 keys, uniform unless said, ms (CUB called with an int count, then
// with a size_t count, same run):
// - one keys-only 8-bit pass of u32 keys (bench_multisplit --m 64,256): 1.73-1.76 / 1.49-1.52;
//   pairs the other way: 1.95-2.04 / 2.21-2.29;
// - full sorts (bench_sort_cuda --suite --device-only at 485b627): u32 keys 6.370 /
//   5.468 (Zipf 6.164 / 5.288), f32 keys as u32 bits 6.209 / 5.314; u32/u32 pairs 7.453 / 8.561,
//   f32/u32 pairs 7.204 / 8.307; u64 keys 16.532 / 16.507, u64/u64 pairs 24.837 / 24.870; u16
//   keys 2.691 / 2.705.
// So keys only take 64-bit offsets (-14 % on 4-byte keys, even elsewhere), pairs 32-bit ones.
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
