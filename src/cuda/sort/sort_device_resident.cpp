// rxm::sort on device-resident keys (device_span): in place on the keys' own device.
//
// Encode in place, sort in a double buffer (the caller's array and one scratch array), decode
// back into the caller's array, fused with the copy back when the result lands in scratch. Floats on
// CUB's engine are neither encoded nor decoded: CUB's native float sort, then the fix-up to our
// order (native_float.hpp), which uses the double buffer's idle half as its scratch.
//
// The scratch half, the engine's temp and the fix-up workspace come from the context's scratch
// pool for the device (cuda/runtime/scratch.hpp): reused from call to call, stream-ordered, where
// cudaMalloc/cudaFree per call cost 1.08 ms of 7.40 at 2^28 u32 keys on the H200 (0.85x CUB
// SortKeys; pairs 9.63 against 7.45). With the pool (H200, bench_sort_cuda --type u32 --values
// 0|4 at 6812eb98de4b): keys 5.944 ms against the device-level API's 5.456, pairs 8.370 against
// 7.453.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/sort/device_memory_check.hpp"
#include "cuda/sort/engine.hpp"
#include "cuda/sort/key_codec.hpp"
#include "cuda/sort/native_float.hpp"
#include "cuda/sort/sort_in_place.hpp"

namespace radixmesh::detail {

namespace {

std::string where(int device) { return device < 0 ? std::string("host memory") : "device " + std::to_string(device); }

// The index of `device` among the context's devices; throws if the context does not use it.
std::size_t context_slot(const Context& ctx, int device, const char* what) {
  const auto& devices = ctx.devices();
  auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return d.id == device; });
  require(it != devices.end(),
          std::string("sort: ") + what + " are on device " + std::to_string(device) +
              ", which is not one of this context's devices",
          "make the context with Context::local({...}) including that device, or copy the data to one of its devices");
  return std::size_t(it - devices.begin());
}

void require_on_device(const void* ptr, int claimed, const char* what) {
  const int actual = device_of_pointer(ptr);
  require(actual == claimed,
          std::string("sort: the ") + what + " span says device " + std::to_string(claimed) + " but its memory is " +
              where(actual),
          "build the device_span with the device that allocated the memory (for host memory use std::span)");
}

}  // namespace

void sort_in_place_queued(const CudaResources::PerDevice& resources, const SortPlan& plan, void* keys, void* values,
                          const SortOptions& options) {
  const std::size_t n = plan.n, value_bytes = plan.value_bytes;
  const KeyType type = plan.type;
  if (n <= 1 || plan.begin_bit == plan.end_bit) return;
  const std::size_t key_bytes = size_of(type);
  const EncodedSortShape shape{n, int(key_bytes), int(value_bytes), plan.begin_bit, plan.end_bit};
  const SortEngine engine = choose_engine(options.engine, shape);
  const int keys_device = resources.device;
  DeviceGuard guard(keys_device);
  cudaStream_t stream = resources.stream;

  const bool native = native_float_path_applies(type, shape, engine, options.float_path);
  EncodedDoubleBuffer buffers;
  std::size_t engine_bytes = 0;
  if (native)
    cub_native_float_sort_double_buffer(plan.order, nullptr, engine_bytes, buffers, shape, stream);
  else
    sort_encoded_double_buffer(engine, nullptr, engine_bytes, buffers, shape, stream);
  const std::size_t fix_bytes = native ? native_order_fix_workspace_bytes(n) : 0;
  const std::size_t scratch_bytes =
      n * (key_bytes + value_bytes) + engine_bytes + fix_bytes + 4 * ScratchBuffer::alignment;
  make_room_for_scratch(resources, scratch_bytes);  // memory the pool keeps idle counts as free
  require_device_memory(keys_device, scratch_bytes,
                        "sorting " + std::to_string(n) + " device-resident " + std::string(name_of(type)) + " keys" +
                            (value_bytes ? " with " + std::to_string(value_bytes) + "-byte values" : ""));
  ScratchBuffer scratch_keys(resources, n * key_bytes);
  ScratchBuffer scratch_values(resources, n * value_bytes);
  ScratchBuffer engine_temp(resources, engine_bytes);
  ScratchBuffer fix_workspace(resources, fix_bytes);

  const bool encoded = !native && !encoding_is_identity(type, plan.order);
  if (encoded) launch_encode_keys(type, plan.order, keys, keys, n, stream);
  buffers.keys[0] = keys;
  buffers.keys[1] = scratch_keys.data();
  buffers.values[0] = values;
  buffers.values[1] = scratch_values.data();
  if (native) {
    cub_native_float_sort_double_buffer(plan.order, engine_temp.data(), engine_bytes, buffers, shape, stream);
    const int result = buffers.selector, idle = result ^ 1;
    launch_native_order_fix(type, plan.order, buffers.keys[result], buffers.values[result], int(value_bytes), n,
                            buffers.keys[idle], buffers.values[idle], fix_workspace.data(), stream);
  } else {
    sort_encoded_double_buffer(engine, engine_temp.data(), engine_bytes, buffers, shape, stream);
  }
  if (buffers.selector == 0) {
    if (encoded) launch_decode_keys(type, plan.order, keys, keys, n, stream);
  } else {
    if (!encoded)
      RXM_CUDA_CHECK(cudaMemcpyAsync(keys, scratch_keys.data(), n * key_bytes, cudaMemcpyDeviceToDevice, stream));
    else
      launch_decode_keys(type, plan.order, scratch_keys.data(), keys, n, stream);
    if (value_bytes)
      RXM_CUDA_CHECK(
          cudaMemcpyAsync(values, scratch_values.data(), n * value_bytes, cudaMemcpyDeviceToDevice, stream));
  }
}

void sort_device(Context& ctx, KeyType type, void* keys, std::size_t n, int keys_device, void* values,
                 std::size_t values_n, int values_device, std::size_t value_bytes, const SortOptions& options) {
  require(ctx.backend() == Backend::cuda, "sort: device-resident keys were given to a CPU context",
          "make the context with Context::local() on a machine with a GPU, or pass host memory (std::span)");
  const SortPlan plan = validate_sort(type, n, value_bytes, options);
  require(value_bytes == 0 || values_n == n,
          "sort: " + std::to_string(n) + " keys but " + std::to_string(values_n) + " values",
          "pass a values span with exactly one value per key");
  require(n == 0 || keys != nullptr, "sort: keys is null", "pass the keys' device storage");
  require(value_bytes == 0 || n == 0 || values != nullptr, "sort: values is null", "pass the values' device storage");
  if (n == 0) return;
  const std::size_t slot = context_slot(ctx, keys_device, "keys");
  require_on_device(keys, keys_device, "keys");
  if (value_bytes) {
    require(values_device == keys_device,
            "sort: keys are on device " + std::to_string(keys_device) + " but values on device " +
                std::to_string(values_device),
            "put keys and values on the same device");
    require_on_device(values, values_device, "values");
  }
  if (n <= 1 || plan.begin_bit == plan.end_bit) return;
  DeviceGuard guard(keys_device);
  const CudaResources::PerDevice& resources = cuda_resources(ctx).devices[slot];
  sort_in_place_queued(resources, plan, keys, values, options);
  RXM_CUDA_CHECK(cudaStreamSynchronize(resources.stream));
}

}  // namespace radixmesh::detail
