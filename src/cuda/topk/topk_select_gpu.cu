// GPU steps of the distributed radix select (topk_select_gpu.hpp):
//   count: one read of the shard; each block counts the digits of the keys that match the prefix
//     in shared memory, then adds its counts to the device's (64-bit atomics, once per digit);
//   take: the winners in position order, by tiles of 4096 keys: one read counts each tile's keys
//     above the threshold and equal to it; the host turns those counts into each tile's output
//     offset and its share of the equal keys (the first `equal` of them in position order); a
//     second read writes every tile's winners at its offset, in order (two block scans).
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/topk/topk_select_gpu.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

constexpr int count_threads = 256;
constexpr int tile_threads = 256, tile_items = 16;
constexpr std::size_t tile_keys = std::size_t(tile_threads) * tile_items;

template <class T>
__global__ void __launch_bounds__(count_threads)
    count_kernel(const T* values, std::size_t n, TopkOptions options, std::uint64_t mask, std::uint64_t prefix,
                 int shift, int bits, unsigned long long* counts) {
  extern __shared__ unsigned int block_counts[];
  const unsigned radix = 1u << bits;
  for (unsigned d = threadIdx.x; d < radix; d += count_threads) block_counts[d] = 0;
  __syncthreads();
  for (std::size_t i = blockIdx.x * std::size_t(count_threads) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * count_threads) {
    const std::uint64_t rank = topk_rank(values[i], options);
    if ((rank & mask) == prefix) atomicAdd(&block_counts[(rank >> shift) & (radix - 1)], 1u);
  }
  __syncthreads();
  for (unsigned d = threadIdx.x; d < radix; d += count_threads)
    if (block_counts[d]) atomicAdd(&counts[d], (unsigned long long)block_counts[d]);
}

// Keys of tile t above the threshold and equal to it.
template <class T>
__global__ void __launch_bounds__(tile_threads)
    tile_count_kernel(const T* values, std::size_t n, TopkOptions options, std::uint64_t threshold,
                      unsigned* above, unsigned* equal) {
  __shared__ unsigned sums[2];
  if (threadIdx.x < 2) sums[threadIdx.x] = 0;
  __syncthreads();
  const std::size_t base = blockIdx.x * tile_keys;
  unsigned a = 0, e = 0;
  for (std::size_t i = base + threadIdx.x; i < n && i < base + tile_keys; i += tile_threads) {
    const std::uint64_t rank = topk_rank(values[i], options);
    a += rank > threshold;
    e += rank == threshold;
  }
  if (a) atomicAdd(&sums[0], a);
  if (e) atomicAdd(&sums[1], e);
  __syncthreads();
  if (threadIdx.x == 0) {
    above[blockIdx.x] = sums[0];
    equal[blockIdx.x] = sums[1];
  }
}

// Tile t's winners, in position order, from out_offset[t]: every key above the threshold and the
// first equal_take[t] keys equal to it.
template <class T>
__global__ void __launch_bounds__(tile_threads)
    tile_take_kernel(const T* values, std::size_t n, TopkOptions options, std::uint64_t threshold,
                     const unsigned long long* out_offset, const unsigned* equal_take, T* out_values,
                     std::int64_t* out_positions) {
  using Scan = cub::BlockScan<unsigned, tile_threads>;
  __shared__ typename Scan::TempStorage scan_storage;
  const std::size_t base = blockIdx.x * tile_keys + std::size_t(threadIdx.x) * tile_items;
  T v[tile_items];
  std::uint8_t kind[tile_items];  // 2: above, 1: equal, 0: neither
  unsigned equal_here = 0;
#pragma unroll
  for (int j = 0; j < tile_items; ++j) {
    kind[j] = 0;
    if (base + j < n) {
      v[j] = values[base + j];
      const std::uint64_t rank = topk_rank(v[j], options);
      kind[j] = rank > threshold ? 2 : rank == threshold ? 1 : 0;
      equal_here += kind[j] == 1;
    }
  }
  unsigned equal_before = 0;
  Scan(scan_storage).ExclusiveSum(equal_here, equal_before);
  __syncthreads();
  const unsigned share = equal_take[blockIdx.x];
  unsigned taken_here = 0;
#pragma unroll
  for (int j = 0; j < tile_items; ++j) {
    if (kind[j] == 1) kind[j] = equal_before++ < share ? 2 : 0;
    taken_here += kind[j] == 2;
  }
  unsigned taken_before = 0;
  Scan(scan_storage).ExclusiveSum(taken_here, taken_before);
  std::uint64_t at = out_offset[blockIdx.x] + taken_before;
#pragma unroll
  for (int j = 0; j < tile_items; ++j)
    if (kind[j] == 2) {
      out_values[at] = v[j];
      out_positions[at] = std::int64_t(base + j);
      ++at;
    }
}

int count_grid(std::size_t n, int device) {
  int sms = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return int(std::clamp<std::size_t>((n + count_threads - 1) / count_threads, 1, std::size_t(sms) * 8));
}

}  // namespace

void cuda_topk_select_count(const CudaResources::PerDevice& dev, const TopkSelectScan& s, std::uint64_t* counts) {
  const std::size_t radix = std::size_t(1) << s.bits;
  DeviceGuard guard(dev.device);
  ScratchBuffer device_counts(dev, radix * sizeof(unsigned long long));
  auto* c = device_counts.as<unsigned long long>();
  RXM_CUDA_CHECK(cudaMemsetAsync(c, 0, radix * sizeof(unsigned long long), dev.stream));
  if (s.n) {
    visit_key_type(s.type, [&](auto tag) {
      using T = decltype(tag);
      count_kernel<T><<<count_grid(s.n, dev.device), count_threads, radix * sizeof(unsigned), dev.stream>>>(
          static_cast<const T*>(s.values), s.n, s.options, s.mask, s.prefix, s.shift, s.bits, c);
    });
    RXM_CUDA_CHECK_LAUNCH();
  }
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  RXM_CUDA_CHECK(cudaMemcpyAsync(counts, c, radix * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, dev.stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
}

void cuda_topk_select_take(const CudaResources::PerDevice& dev, const TopkSelectTake& t) {
  if (t.count == 0) return;
  DeviceGuard guard(dev.device);
  const std::size_t tiles = (t.n + tile_keys - 1) / tile_keys, value_bytes = size_of(t.type);
  ScratchBuffer tile_counts(dev, 2 * tiles * sizeof(unsigned));
  auto* above = tile_counts.as<unsigned>();
  unsigned* equal = above + tiles;
  visit_key_type(t.type, [&](auto tag) {
    using T = decltype(tag);
    tile_count_kernel<T><<<unsigned(tiles), tile_threads, 0, dev.stream>>>(static_cast<const T*>(t.values), t.n,
                                                                            t.options, t.threshold, above, equal);
  });
  RXM_CUDA_CHECK_LAUNCH();
  std::vector<unsigned> counted(2 * tiles);
  RXM_CUDA_CHECK(cudaMemcpyAsync(counted.data(), above, counted.size() * sizeof(unsigned), cudaMemcpyDeviceToHost,
                                 dev.stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(dev.stream));

  // Each tile's offset in the output and its share of the equal keys (the first ones by position).
  std::vector<unsigned long long> offset(tiles);
  std::vector<unsigned> share(tiles);
  std::uint64_t written = 0, equal_left = t.equal;
  for (std::size_t i = 0; i < tiles; ++i) {
    offset[i] = written;
    share[i] = unsigned(std::min<std::uint64_t>(counted[tiles + i], equal_left));
    equal_left -= share[i];
    written += counted[i] + share[i];
  }
  require(written == t.count && equal_left == 0,
          "topk: a mesh device found " + std::to_string(written) + " winners where its counts said " +
              std::to_string(t.count),
          "report this as a bug");
  ScratchBuffer plan(dev, tiles * (sizeof(unsigned long long) + sizeof(unsigned)));
  auto* device_offset = plan.as<unsigned long long>();
  auto* device_share = reinterpret_cast<unsigned*>(device_offset + tiles);
  RXM_CUDA_CHECK(cudaMemcpyAsync(device_offset, offset.data(), tiles * sizeof(unsigned long long),
                                 cudaMemcpyHostToDevice, dev.stream));
  RXM_CUDA_CHECK(
      cudaMemcpyAsync(device_share, share.data(), tiles * sizeof(unsigned), cudaMemcpyHostToDevice, dev.stream));
  ScratchBuffer out(dev, t.count * (value_bytes + sizeof(std::int64_t)) + 8);
  auto* out_positions = out.as<std::int64_t>();
  auto* out_values = reinterpret_cast<std::byte*>(out_positions + t.count);
  visit_key_type(t.type, [&](auto tag) {
    using T = decltype(tag);
    tile_take_kernel<T><<<unsigned(tiles), tile_threads, 0, dev.stream>>>(
        static_cast<const T*>(t.values), t.n, t.options, t.threshold, device_offset, device_share,
        reinterpret_cast<T*>(out_values), out_positions);
  });
  RXM_CUDA_CHECK_LAUNCH();
  RXM_CUDA_CHECK(cudaMemcpyAsync(t.out_values, out_values, t.count * value_bytes, cudaMemcpyDeviceToHost, dev.stream));
  RXM_CUDA_CHECK(cudaMemcpyAsync(t.out_positions, out_positions, t.count * sizeof(std::int64_t),
                                 cudaMemcpyDeviceToHost, dev.stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
}

}  // namespace radixmesh::detail
