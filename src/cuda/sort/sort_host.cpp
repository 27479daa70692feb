// rxm::sort on host-resident keys with a CUDA context: staged to the context's first device
// through pinned memory (host_staging.hpp), encoded as each chunk lands, sorted on the device,
// decoded as each chunk leaves.
#include <cuda_runtime_api.h>

#include <string>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/sort/device_memory_check.hpp"
#include "cuda/sort/engine.hpp"
#include "cuda/sort/host_staging.hpp"
#include "cuda/sort/key_codec.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh::detail {

void cuda_sort_host(Context& ctx, const SortPlan& plan, void* keys, void* values) {
  const auto& device = cuda_resources(ctx).devices.at(0);
  const std::size_t n = plan.n, key_bytes = size_of(plan.type), value_bytes = plan.value_bytes;
  const EncodedSortShape shape{n, int(key_bytes), int(value_bytes), plan.begin_bit, plan.end_bit};
  const SortEngine engine = choose_engine(SortEngine::automatic, shape);
  DeviceGuard guard(device.device);
  cudaStream_t stream = device.stream;

  EncodedDoubleBuffer buffers;
  std::size_t engine_bytes = 0;
  sort_encoded_double_buffer(engine, nullptr, engine_bytes, buffers, shape, stream);
  require_device_memory(device.device,
                        2 * n * (key_bytes + value_bytes) + engine_bytes + 4 * TempCarver::alignment,
                        "sorting " + std::to_string(n) + " " + std::string(name_of(plan.type)) + " keys" +
                            (value_bytes ? " with " + std::to_string(value_bytes) + "-byte values" : "") +
                            " on the GPU");
  DeviceBuffer keys_a(device.device, n * key_bytes), keys_b(device.device, n * key_bytes);
  DeviceBuffer values_a(device.device, n * value_bytes), values_b(device.device, n * value_bytes);
  DeviceBuffer engine_temp(device.device, engine_bytes);
  buffers.keys[0] = keys_a.data();
  buffers.keys[1] = keys_b.data();
  buffers.values[0] = values_a.data();
  buffers.values[1] = values_b.data();

  const bool identity = encoding_is_identity(plan.type, plan.order);
  // Encoding (and decoding) one chunk in place, queued right behind the chunk's copy.
  auto transcode_chunk = [&](bool encode, void* base) -> ChunkWork {
    if (identity) return {};
    return [=, &plan](std::size_t first, std::size_t count) {
      void* chunk = static_cast<char*>(base) + first * key_bytes;
      if (encode)
        launch_encode_keys(plan.type, plan.order, chunk, chunk, count, stream);
      else
        launch_decode_keys(plan.type, plan.order, chunk, chunk, count, stream);
    };
  };

  HostStaging staging(stream, ctx.cpu_threads());
  staging.upload(keys_a.data(), keys, n, key_bytes, transcode_chunk(true, keys_a.data()));
  if (value_bytes) staging.upload(values_a.data(), values, n, value_bytes);
  sort_encoded_double_buffer(engine, engine_temp.data(), engine_bytes, buffers, shape, stream);
  void* sorted_keys = buffers.keys[buffers.selector];
  staging.download(keys, sorted_keys, n, key_bytes, transcode_chunk(false, sorted_keys));
  if (value_bytes) staging.download(values, buffers.values[buffers.selector], n, value_bytes);
}

}  // namespace radixmesh::detail
