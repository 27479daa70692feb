// The device-level sort (include/radixmesh/device/sort.cuh): encode, sort with an engine, decode,
// all stream-ordered in the caller's temporary storage. Floats on CUB's engine skip both passes:
// CUB's native float sort, then the fix-up to our order (native_float.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/engine.hpp"
#include "cuda/sort/key_codec.hpp"
#include "cuda/sort/native_float.hpp"
#include "radixmesh/device/sort.cuh"
#include "radixmesh/error.hpp"

namespace radixmesh::cuda::detail {

namespace {
bool overlap(const void* a, const void* b, std::size_t bytes) {
  if (!a || !b) return false;
  auto x = static_cast<const char*>(a), y = static_cast<const char*>(b);
  return bytes != 0 && x < y + bytes && y < x + bytes;
}

// The native float path's temporary storage: CUB's temp, and after CUB is done (stream order) the
// fix-up's scratch keys, scratch values and workspace in the same bytes.
struct NativeFloatTemp {
  void* keys = nullptr;
  void* values = nullptr;
  void* workspace = nullptr;
  std::size_t bytes = 0;  // max(CUB's temp, the fix-up's three parts)
};
NativeFloatTemp native_float_temp(void* base, Order order, const ::radixmesh::detail::EncodedSortShape& shape,
                                  cudaStream_t stream) {
  namespace core = ::radixmesh::detail;
  std::size_t cub_bytes = 0;
  core::cub_native_float_sort_copy(order, nullptr, cub_bytes, nullptr, nullptr, nullptr, nullptr, shape, stream);
  core::TempCarver fix(base);
  NativeFloatTemp t;
  t.keys = fix.take(shape.n * std::size_t(shape.key_bytes));
  t.values = fix.take(shape.n * std::size_t(shape.value_bytes));
  t.workspace = fix.take(core::native_order_fix_workspace_bytes(shape.n));
  t.bytes = fix.used() > cub_bytes ? fix.used() : cub_bytes;
  return t;
}
}  // namespace

void sort_erased(void* temp, std::size_t& temp_bytes, KeyType type, const void* keys_in, void* keys_out,
                 const void* values_in, void* values_out, std::size_t value_bytes, std::size_t n,
                 const SortOptions& options, cudaStream_t stream) {
  namespace core = ::radixmesh::detail;
  const core::SortPlan plan = core::validate_sort(type, n, value_bytes, options);
  const Order order = plan.order;
  const SortEngine engine = options.engine;
  const std::size_t key_bytes = size_of(type);
  // Pointers may be null in a size query (as in CUB), but never overlap.
  require(temp == nullptr || n == 0 || (keys_in && keys_out), "cuda::sort: a key pointer is null",
          "pass the keys' device storage");
  require(temp == nullptr || n == 0 || value_bytes == 0 || (values_in && values_out),
          "cuda::sort: a value pointer is null", "pass the values' device storage");
  require(!overlap(keys_in, keys_out, n * key_bytes), "cuda::sort: keys_out overlaps keys_in",
          "sort into a separate array (rxm::sort on a device_span sorts in place)");
  require(value_bytes == 0 || !overlap(values_in, values_out, n * value_bytes),
          "cuda::sort: values_out overlaps values_in", "sort into a separate array");

  const core::EncodedSortShape shape{n, int(key_bytes), int(value_bytes), plan.begin_bit, plan.end_bit};
  const SortEngine chosen = core::choose_engine(engine, shape);
  // A stable sort on no bits, or of fewer than two keys, is a copy.
  const bool copy_only = n <= 1 || plan.begin_bit == plan.end_bit;
  const bool identity = core::encoding_is_identity(type, order);
  const bool native = !copy_only && core::native_float_path_applies(type, shape, chosen, options.float_path);

  core::TempCarver carver(temp);
  void* encoded = copy_only || identity || native ? nullptr : carver.take(n * key_bytes);
  std::size_t engine_bytes = 0;
  if (native)
    engine_bytes = native_float_temp(nullptr, order, shape, stream).bytes;
  else if (!copy_only)
    core::sort_encoded_copy(chosen, nullptr, engine_bytes, nullptr, nullptr, nullptr, nullptr, shape, stream);
  void* engine_temp = carver.take(engine_bytes);
  const std::size_t needed = carver.used() > 0 ? carver.used() : 1;  // never 0: a null temp means "query"
  if (temp == nullptr) {
    temp_bytes = needed;
    return;
  }
  require(temp_bytes >= needed,
          "cuda::sort: temporary storage is " + std::to_string(temp_bytes) + " bytes but this sort needs " +
              std::to_string(needed),
          "call once with temp == nullptr to get temp_bytes, and pass the same arguments when sorting");

  if (copy_only) {
    RXM_CUDA_CHECK(cudaMemcpyAsync(keys_out, keys_in, n * key_bytes, cudaMemcpyDeviceToDevice, stream));
    if (value_bytes)
      RXM_CUDA_CHECK(cudaMemcpyAsync(values_out, values_in, n * value_bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (native) {
    const NativeFloatTemp fix = native_float_temp(engine_temp, order, shape, stream);
    core::cub_native_float_sort_copy(order, engine_temp, engine_bytes, keys_in, keys_out, values_in, values_out, shape,
                                     stream);
    core::launch_native_order_fix(type, order, keys_out, values_out, int(value_bytes), n, fix.keys, fix.values,
                                  fix.workspace, stream);
    return;
  }
  const void* sort_input = keys_in;
  if (!identity) {
    core::launch_encode_keys(type, order, keys_in, encoded, n, stream);
    sort_input = encoded;
  }
  core::sort_encoded_copy(chosen, engine_temp, engine_bytes, sort_input, keys_out, values_in, values_out, shape,
                          stream);
  if (!identity) core::launch_decode_keys(type, order, keys_out, keys_out, n, stream);
}

}  // namespace radixmesh::cuda::detail
