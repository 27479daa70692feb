// CUB's radix sort on native floating-point keys (native_float.hpp says why), through the same
// calls as the engine (cub_radix_sort.cuh) with the float key type and a direction.
// Instantiations, explicitly: key width {16 as __half, 32 as float, 64 as double} x values {none,
// 32-bit, 64-bit} x {ascending, descending} x {copy, double-buffer}, 32-bit offsets only = 36
// dispatches. Kept out of cub_engine.cu so that the two compile in parallel.
// 32-bit offsets only, although keys-only encoded sorts take 64-bit ones (cub_uses_wide_offsets):
// with them for keys only, 2^28 f32 keys took 5.744 against 5.670 ms and the in-place
// double-buffer path gave a wrong order from element 15342, cause not found (H200,
// bench_sort_cuda --type f32 at c7accdbd06f8; docs/design/sort.md).
#include <cuda_fp16.h>  // before CUB, so that its __half traits are defined

#include <cstdint>
#include <limits>
#include <string>

#include "cuda/sort/cub_radix_sort.cuh"
#include "cuda/sort/native_float.hpp"

namespace radixmesh::detail {

namespace {

// Run-time width, value width and order to template arguments: the instantiation list.
template <class F> void with_types(Order order, const EncodedSortShape& s, F&& f) {
  require(s.n <= std::numeric_limits<std::uint32_t>::max(), "native float sort: more than 2^32 - 1 keys",
          "use the encoded path (native_float_path_applies() is false for this size)");
  auto with_value = [&](auto key) {
    cub_radix_sort::with_value_tag(s.value_bytes, "native float sort", [&](auto value) {
      cub_radix_sort::with_direction(order == Order::descending,
                                     [&](auto descending) { f(key, value, descending); });
    });
  };
  switch (s.key_bytes) {
    case 2: return with_value(__half{});
    case 4: return with_value(float{});
    case 8: return with_value(double{});
  }
  throw_error(ErrorCode::internal, "native float sort got keys of " + std::to_string(s.key_bytes) + " bytes",
              "report this as a bug");
}

}  // namespace

bool native_float_path_applies(KeyType type, const EncodedSortShape& shape, SortEngine engine, FloatSortPath path) {
  return path == FloatSortPath::automatic && is_floating(type) && engine == SortEngine::cub_onesweep &&
         shape.begin_bit == 0 && shape.end_bit == shape.key_bytes * 8 && shape.n >= 2 &&
         shape.n <= std::numeric_limits<std::uint32_t>::max();
}

void cub_native_float_sort_copy(Order order, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                                const void* values_in, void* values_out, const EncodedSortShape& shape,
                                cudaStream_t stream) {
  with_types(order, shape, [&](auto key, auto value, auto descending) {
    cub_radix_sort::copy<decltype(key), cub_radix_sort::value_of<decltype(value)>, std::uint32_t,
                         decltype(descending)::value>(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                      shape, stream);
  });
}

void cub_native_float_sort_double_buffer(Order order, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                         const EncodedSortShape& shape, cudaStream_t stream) {
  with_types(order, shape, [&](auto key, auto value, auto descending) {
    cub_radix_sort::double_buffer<decltype(key), cub_radix_sort::value_of<decltype(value)>, std::uint32_t,
                                  decltype(descending)::value>(temp, temp_bytes, buffers, shape, stream);
  });
}

}  // namespace radixmesh::detail
