// rxm::sort_rows on a CUDA context (radixmesh/sort.hpp): host-resident rows sorted on the
// context's first GPU. A batch of rows up to segmented_row_limit keys each goes up once and is
// sorted by one segmented radix sort (CUB's DeviceSegmentedRadixSort: a block per row, on the
// keys' order-preserving encoding, stable), in chunks of fewer than 2^31 keys; longer rows (few
// enough that a block each would leave SMs idle) and batches the GPU cannot hold take the
// host-resident sort row by row. Returns whether it sorted the batch.
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/sort/key_codec.hpp"

namespace radixmesh::detail {

namespace {

constexpr std::size_t segmented_row_limit = std::size_t(1) << 16;
constexpr std::size_t chunk_key_limit = (std::size_t(1) << 31) - 1;  // CUB's int num_items

template <class Bits, class Value>
void sort_chunk(const CudaResources::PerDevice& dev, const SortPlan& plan, std::byte* keys, std::byte* values,
                std::size_t rows, std::size_t row_length) {
  const std::size_t n = rows * row_length;
  cudaStream_t stream = dev.stream;
  std::vector<int> offsets(rows + 1);
  for (std::size_t r = 0; r <= rows; ++r) offsets[r] = int(r * row_length);
  constexpr bool with_values = !std::is_void_v<Value>;
  using V = std::conditional_t<with_values, Value, std::uint32_t>;
  // CUB's segmented radix sort, for the temp size (null temp) and then for the sort itself.
  auto segmented_sort = [&](void* temp, std::size_t& temp_bytes, const Bits* keys_in, Bits* keys_out,
                            const V* values_in, V* values_out, const int* begin) {
    if constexpr (with_values)
      return cub::DeviceSegmentedRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                      int(n), int(rows), begin, begin ? begin + 1 : nullptr,
                                                      plan.begin_bit, plan.end_bit, stream);
    else
      return cub::DeviceSegmentedRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, int(n), int(rows), begin,
                                                     begin ? begin + 1 : nullptr, plan.begin_bit, plan.end_bit,
                                                     stream);
  };
  std::size_t temp_bytes = 0;
  RXM_CUDA_CHECK(segmented_sort(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, nullptr));
  ScratchBuffer in(dev, n * sizeof(Bits)), out(dev, n * sizeof(Bits)), temp(dev, std::max<std::size_t>(temp_bytes, 1)),
      device_offsets(dev, offsets.size() * sizeof(int)), values_in(dev, with_values ? n * sizeof(V) : 1),
      values_out(dev, with_values ? n * sizeof(V) : 1);
  RXM_CUDA_CHECK(cudaMemcpyAsync(in.data(), keys, n * sizeof(Bits), cudaMemcpyHostToDevice, stream));
  RXM_CUDA_CHECK(cudaMemcpyAsync(device_offsets.data(), offsets.data(), offsets.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream));
  if (with_values)
    RXM_CUDA_CHECK(cudaMemcpyAsync(values_in.data(), values, n * sizeof(V), cudaMemcpyHostToDevice, stream));
  launch_encode_keys(plan.type, plan.order, in.data(), in.data(), n, stream);
  RXM_CUDA_CHECK(segmented_sort(temp.data(), temp_bytes, in.as<Bits>(), out.as<Bits>(), values_in.as<V>(),
                                values_out.as<V>(), device_offsets.as<int>()));
  launch_decode_keys(plan.type, plan.order, out.data(), out.data(), n, stream);
  RXM_CUDA_CHECK(cudaMemcpyAsync(keys, out.data(), n * sizeof(Bits), cudaMemcpyDeviceToHost, stream));
  if (with_values)
    RXM_CUDA_CHECK(cudaMemcpyAsync(values, values_out.data(), n * sizeof(V), cudaMemcpyDeviceToHost, stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class Bits>
void sort_chunk_values(const CudaResources::PerDevice& dev, const SortPlan& plan, std::byte* keys, std::byte* values,
                       std::size_t rows, std::size_t row_length) {
  if (plan.value_bytes == 4) return sort_chunk<Bits, std::uint32_t>(dev, plan, keys, values, rows, row_length);
  if (plan.value_bytes == 8) return sort_chunk<Bits, std::uint64_t>(dev, plan, keys, values, rows, row_length);
  sort_chunk<Bits, void>(dev, plan, keys, values, rows, row_length);
}

}  // namespace

bool cuda_sort_rows_host(Context& ctx, const SortPlan& row_plan, void* keys, std::size_t rows, void* values) {
  const std::size_t row_length = row_plan.n, key_bytes = size_of(row_plan.type), value_bytes = row_plan.value_bytes;
  if (row_length > segmented_row_limit) return false;
  const CudaResources::PerDevice& dev = cuda_resources(ctx).devices.front();
  DeviceGuard guard(dev.device);
  const std::size_t chunk_rows = std::max<std::size_t>(1, std::min(rows, chunk_key_limit / row_length));
  // Keys and values twice (in and out) plus CUB's temp, which is small beside them.
  const std::size_t need = 2 * chunk_rows * row_length * (key_bytes + value_bytes) + (std::size_t(64) << 20);
  make_room_for_scratch(dev, need);
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes) return false;
  for (std::size_t first = 0; first < rows; first += chunk_rows) {
    const std::size_t count = std::min(chunk_rows, rows - first);
    auto* k = static_cast<std::byte*>(keys) + first * row_length * key_bytes;
    auto* v = value_bytes ? static_cast<std::byte*>(values) + first * row_length * value_bytes : nullptr;
    switch (key_bytes) {
      case 1: sort_chunk_values<std::uint8_t>(dev, row_plan, k, v, count, row_length); break;
      case 2: sort_chunk_values<std::uint16_t>(dev, row_plan, k, v, count, row_length); break;
      case 4: sort_chunk_values<std::uint32_t>(dev, row_plan, k, v, count, row_length); break;
      default: sort_chunk_values<std::uint64_t>(dev, row_plan, k, v, count, row_length); break;
    }
  }
  return true;
}

}  // namespace radixmesh::detail
