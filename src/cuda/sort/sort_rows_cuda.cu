// rxm::sort_rows on a CUDA context (radixmesh/sort.hpp), for host-resident rows (sorted on the
// context's first GPU) and for rows already on one of the context's GPUs (sort_rows_device,
// stream-ordered on the caller's stream). Rows of up to segmented_row_limit keys go through one
// segmented radix sort (CUB's DeviceSegmentedRadixSort: a block per row, on the keys'
// order-preserving encoding, stable), in chunks of fewer than 2^31 keys. Longer rows, which fill
// the GPU one at a time, take the device-level sort (device/sort.cuh) row by row; host-resident
// ones the host-resident sort, as do batches the GPU cannot hold.
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/sort/key_codec.hpp"
#include "radixmesh/device/sort.cuh"

namespace radixmesh::detail {

namespace {

constexpr std::size_t segmented_row_limit = std::size_t(1) << 16;
constexpr std::size_t chunk_key_limit = (std::size_t(1) << 31) - 1;  // CUB's int num_items
constexpr unsigned kThreads = 256;

unsigned grid_for(std::size_t n) { return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 4096)); }

// out[r] = r * row_length for r <= rows: CUB's segment offsets.
__global__ void segment_offsets(int* out, std::size_t rows, std::size_t row_length) {
  for (std::size_t r = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; r <= rows; r += gridDim.x * std::size_t(blockDim.x))
    out[r] = int(r * row_length);
}

// out[i] = i mod row_length: each key's position in its row (the values of an argsort).
template <class V> __global__ void row_positions(V* out, std::size_t n, std::size_t row_length) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * std::size_t(blockDim.x))
    out[i] = V(i % row_length);
}

// out[i] = in[i], int32 to int64: positions sorted as 4-byte values, handed out as 8-byte ones.
__global__ void widen_positions(const std::int32_t* in, std::int64_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * std::size_t(blockDim.x))
    out[i] = in[i];
}

void fill_positions(void* out, std::size_t value_bytes, std::size_t n, std::size_t row_length, cudaStream_t stream) {
  if (value_bytes == 4)
    row_positions<<<grid_for(n), kThreads, 0, stream>>>(static_cast<std::int32_t*>(out), n, row_length);
  else
    row_positions<<<grid_for(n), kThreads, 0, stream>>>(static_cast<std::int64_t*>(out), n, row_length);
  RXM_CUDA_CHECK_LAUNCH();
}

// One chunk of `rows` rows (fewer than 2^31 keys) on dev.stream: keys encoded from keys_src into
// `encoded` (which may be keys_src), sorted by CUB's segmented radix sort into keys_out with the
// values from values_in to values_out (Value void: keys only), then decoded in keys_out.
template <class Bits, class Value>
void segmented_sort_chunk(const CudaResources::PerDevice& dev, const SortPlan& plan, const void* keys_src,
                          void* encoded, void* keys_out, const void* values_in, void* values_out, std::size_t rows,
                          std::size_t row_length) {
  const std::size_t n = rows * row_length;
  cudaStream_t stream = dev.stream;
  constexpr bool with_values = !std::is_void_v<Value>;
  using V = std::conditional_t<with_values, Value, std::uint32_t>;
  auto segmented_sort = [&](void* temp, std::size_t& temp_bytes, const int* begin) {
    const auto* k_in = static_cast<const Bits*>(encoded);
    auto* k_out = static_cast<Bits*>(keys_out);
    if constexpr (with_values)
      return cub::DeviceSegmentedRadixSort::SortPairs(temp, temp_bytes, k_in, k_out, static_cast<const V*>(values_in),
                                                      static_cast<V*>(values_out), int(n), int(rows), begin,
                                                      begin ? begin + 1 : nullptr, plan.begin_bit, plan.end_bit, stream);
    else
      return cub::DeviceSegmentedRadixSort::SortKeys(temp, temp_bytes, k_in, k_out, int(n), int(rows), begin,
                                                     begin ? begin + 1 : nullptr, plan.begin_bit, plan.end_bit,
                                                     stream);
  };
  std::size_t temp_bytes = 0;
  RXM_CUDA_CHECK(segmented_sort(nullptr, temp_bytes, nullptr));
  ScratchBuffer temp(dev, std::max<std::size_t>(temp_bytes, 1)), offsets(dev, (rows + 1) * sizeof(int));
  segment_offsets<<<grid_for(rows + 1), kThreads, 0, stream>>>(offsets.as<int>(), rows, row_length);
  RXM_CUDA_CHECK_LAUNCH();
  launch_encode_keys(plan.type, plan.order, keys_src, encoded, n, stream);
  RXM_CUDA_CHECK(segmented_sort(temp.data(), temp_bytes, offsets.as<int>()));
  launch_decode_keys(plan.type, plan.order, keys_out, keys_out, n, stream);
}

// The rows of a batch that fit one chunk: at least one, and fewer than 2^31 keys in all.
std::size_t chunk_rows_of(std::size_t rows, std::size_t row_length) {
  return std::max<std::size_t>(1, std::min(rows, chunk_key_limit / row_length));
}

template <class F> void with_key_bits(std::size_t key_bytes, F&& f) {
  switch (key_bytes) {
    case 1: f(std::uint8_t{}); break;
    case 2: f(std::uint16_t{}); break;
    case 4: f(std::uint32_t{}); break;
    default: f(std::uint64_t{}); break;
  }
}

// segmented_sort_chunk with the key width and the value type of `plan`.
template <class... Args> void sort_chunk(const SortPlan& plan, const CudaResources::PerDevice& dev, Args... args) {
  with_key_bits(size_of(plan.type), [&](auto bits) {
    using Bits = decltype(bits);
    if (plan.value_bytes == 4) segmented_sort_chunk<Bits, std::uint32_t>(dev, plan, args...);
    else if (plan.value_bytes == 8) segmented_sort_chunk<Bits, std::uint64_t>(dev, plan, args...);
    else segmented_sort_chunk<Bits, void>(dev, plan, args...);
  });
}

std::byte* at(void* base, std::size_t index, std::size_t bytes) { return static_cast<std::byte*>(base) + index * bytes; }
const std::byte* at(const void* base, std::size_t index, std::size_t bytes) {
  return static_cast<const std::byte*>(base) + index * bytes;
}

}  // namespace

bool cuda_sort_rows_host(Context& ctx, const SortPlan& row_plan, void* keys, std::size_t rows, void* values) {
  const std::size_t row_length = row_plan.n, key_bytes = size_of(row_plan.type), value_bytes = row_plan.value_bytes;
  if (row_length > segmented_row_limit) return false;
  const CudaResources::PerDevice& dev = cuda_resources(ctx).devices.front();
  DeviceGuard guard(dev.device);
  const std::size_t chunk_rows = chunk_rows_of(rows, row_length);
  // Keys and values twice (in and out) plus CUB's temp, which is small beside them.
  const std::size_t need = 2 * chunk_rows * row_length * (key_bytes + value_bytes) + (std::size_t(64) << 20);
  make_room_for_scratch(dev, need);
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes) return false;
  for (std::size_t first = 0; first < rows; first += chunk_rows) {
    const std::size_t count = std::min(chunk_rows, rows - first), n = count * row_length;
    std::byte* k = at(keys, first * row_length, key_bytes);
    std::byte* v = value_bytes ? at(values, first * row_length, value_bytes) : nullptr;
    ScratchBuffer in(dev, n * key_bytes), out(dev, n * key_bytes), values_in(dev, value_bytes ? n * value_bytes : 1),
        values_out(dev, value_bytes ? n * value_bytes : 1);
    RXM_CUDA_CHECK(cudaMemcpyAsync(in.data(), k, n * key_bytes, cudaMemcpyHostToDevice, dev.stream));
    if (value_bytes)
      RXM_CUDA_CHECK(cudaMemcpyAsync(values_in.data(), v, n * value_bytes, cudaMemcpyHostToDevice, dev.stream));
    sort_chunk(row_plan, dev, static_cast<const void*>(in.data()), in.data(), out.data(),
               static_cast<const void*>(values_in.data()), values_out.data(), count, row_length);
    RXM_CUDA_CHECK(cudaMemcpyAsync(k, out.data(), n * key_bytes, cudaMemcpyDeviceToHost, dev.stream));
    if (value_bytes)
      RXM_CUDA_CHECK(cudaMemcpyAsync(v, values_out.data(), n * value_bytes, cudaMemcpyDeviceToHost, dev.stream));
    RXM_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
  }
  return true;
}

// int64 positions are sorted as int32 (rows shorter than 2^31) and widened once at the end: a
// radix pass moves 8 bytes per key instead of 12 (u32 keys), which is most of a sort's time.
void cuda_sort_rows_device(Context& ctx, const SortPlan& row_plan, const DeviceRowsSort& s,
                           const SortOptions& options) {
  CudaResources::PerDevice dev = context_device(ctx, s.device, "sort_rows: the keys live");
  dev.stream = static_cast<cudaStream_t>(s.stream);
  DeviceGuard guard(dev.device);
  const std::size_t row_length = s.row_length, rows = s.n / row_length, key_bytes = size_of(s.type);
  const bool narrow = s.positions && s.value_bytes == 8 && row_length <= std::size_t(INT32_MAX);
  const std::size_t value_bytes = narrow ? 4 : s.value_bytes;  // what the sort moves
  SortPlan plan = row_plan;
  plan.value_bytes = value_bytes;
  const bool values_in_place = value_bytes && !s.positions && s.values_in == s.values_out;
  // The n values from element i0 on: read from the caller's array, or from `scratch` holding the
  // positions (filled by the caller) or a copy of the caller's values (sorted in place); written
  // to the caller's array, or as int32 positions into `narrow_out`, widened after the sort.
  auto values_from = [&](const ScratchBuffer& scratch, std::size_t i0, std::size_t n) -> const void* {
    if (!value_bytes) return nullptr;
    if (s.positions) return scratch.data();
    const void* caller = at(s.values_in, i0, value_bytes);
    if (!values_in_place) return caller;
    RXM_CUDA_CHECK(cudaMemcpyAsync(scratch.data(), caller, n * value_bytes, cudaMemcpyDeviceToDevice, dev.stream));
    return scratch.data();
  };
  auto values_to = [&](const ScratchBuffer& narrow_out, std::size_t i0) -> void* {
    return narrow ? narrow_out.data() : value_bytes ? at(s.values_out, i0, value_bytes) : nullptr;
  };
  auto widen = [&](const ScratchBuffer& narrow_out, std::size_t i0, std::size_t n) {
    widen_positions<<<grid_for(n), kThreads, 0, dev.stream>>>(narrow_out.as<std::int32_t>(),
                                                              static_cast<std::int64_t*>(s.values_out) + i0, n);
    RXM_CUDA_CHECK_LAUNCH();
  };
  if (rows > 1 && row_length <= segmented_row_limit) {
    const std::size_t chunk_rows = chunk_rows_of(rows, row_length);
    for (std::size_t first = 0; first < rows; first += chunk_rows) {
      const std::size_t count = std::min(chunk_rows, rows - first), n = count * row_length, i0 = first * row_length;
      ScratchBuffer encoded(dev, n * key_bytes), values(dev, s.positions || values_in_place ? n * value_bytes : 0),
          narrow_out(dev, narrow ? n * 4 : 0);
      if (s.positions) fill_positions(values.data(), value_bytes, n, row_length, dev.stream);
      sort_chunk(plan, dev, static_cast<const void*>(at(s.keys_in, i0, key_bytes)), encoded.data(),
                 static_cast<void*>(at(s.keys_out, i0, key_bytes)), values_from(values, i0, n), values_to(narrow_out, i0),
                 count, row_length);
      if (narrow) widen(narrow_out, i0, n);
    }
    return;
  }
  // Long rows (or one): the device-level sort, row after row, from copies where it sorts in place.
  std::size_t temp_bytes = 0;
  cuda::detail::sort_erased(nullptr, temp_bytes, s.type, nullptr, nullptr, nullptr, nullptr, value_bytes, row_length,
                            options, dev.stream);
  const bool keys_in_place = s.keys_in == s.keys_out;
  ScratchBuffer temp(dev, std::max<std::size_t>(temp_bytes, 1)), keys(dev, keys_in_place ? row_length * key_bytes : 0),
      values(dev, s.positions || values_in_place ? row_length * value_bytes : 0),
      narrow_out(dev, narrow ? row_length * 4 : 0);
  if (s.positions) fill_positions(values.data(), value_bytes, row_length, row_length, dev.stream);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i0 = r * row_length;
    const void* keys_in = at(s.keys_in, i0, key_bytes);
    if (keys_in_place) {
      RXM_CUDA_CHECK(cudaMemcpyAsync(keys.data(), keys_in, row_length * key_bytes, cudaMemcpyDeviceToDevice, dev.stream));
      keys_in = keys.data();
    }
    cuda::detail::sort_erased(temp.data(), temp_bytes, s.type, keys_in, at(s.keys_out, i0, key_bytes),
                              values_from(values, i0, row_length), values_to(narrow_out, i0), value_bytes, row_length,
                              options, dev.stream);
    if (narrow) widen(narrow_out, i0, row_length);
  }
}

}  // namespace radixmesh::detail
