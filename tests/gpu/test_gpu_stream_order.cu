// Host-level calls on device spans start after the caller's work queued before them on the legacy
// default stream (cuda_resources.hpp: the context's streams are blocking streams). A kernel on
// stream 0 waits ~30 ms and then writes the keys; the call made right after its launch must see
// what it wrote: one GPU's sort, top-k, and the mesh sort over four logical devices. Each call runs
// once before on the same context and sizes, so that its scratch comes from a warm pool: a first
// call's allocations may synchronize the device and hide a missing wait.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;

namespace {

constexpr std::uint64_t wait_ns = 30'000'000;

// keys[i] = n - 1 - i (plus `base`), written after the kernel has waited wait_ns.
__global__ void late_writer(std::uint32_t* keys, std::size_t n, std::uint32_t base) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < wait_ns);
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    keys[i] = base + std::uint32_t(n - 1 - i);
}

// The first place where got and want differ, or "none" (a whole vector would flood the log).
std::string first_difference(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want) {
  const auto at = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
  if (at.first == got.end() && at.second == want.end()) return "none";
  const auto i = std::size_t(at.first - got.begin());
  return "element " + std::to_string(i) + ": " + (at.first == got.end() ? "end" : std::to_string(*at.first)) +
         " instead of " + (at.second == want.end() ? "end" : std::to_string(*at.second));
}

void write_late_on_the_legacy_stream(std::uint32_t* keys, std::size_t n, std::uint32_t base) {
  RXM_CUDA_CHECK(cudaMemset(keys, 0, n * sizeof(std::uint32_t)));  // what a call that ran too early would see
  late_writer<<<64, 256, 0, cudaStreamLegacy>>>(keys, n, base);
  RXM_CUDA_CHECK(cudaGetLastError());
}

TEST(GpuStreamOrder, SortStartsAfterTheLegacyStreamsKernel) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local();
  const std::size_t n = std::size_t(1) << 20;
  rxm::DeviceArray<std::uint32_t> keys(ctx.devices().at(0).id, n);
  write_late_on_the_legacy_stream(keys.data(), n, 0);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  rxm::sort(ctx, rxm::device_span(keys));  // the warm-up
  write_late_on_the_legacy_stream(keys.data(), n, 0);
  rxm::sort(ctx, rxm::device_span(keys));
  std::vector<std::uint32_t> got(n), want(n);
  RXM_CUDA_CHECK(cudaMemcpy(got.data(), keys.data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  std::iota(want.begin(), want.end(), 0u);
  EXPECT_EQ(first_difference(got, want), "none");
}

TEST(GpuStreamOrder, TopkStartsAfterTheLegacyStreamsKernel) {
  RXM_REQUIRE_GPU();
  auto ctx = rxm::Context::local();
  const std::size_t n = std::size_t(1) << 20, k = 5;
  rxm::DeviceArray<std::uint32_t> values(ctx.devices().at(0).id, n);
  const rxm::device_span<const std::uint32_t> span(values.data(), n, values.device());
  write_late_on_the_legacy_stream(values.data(), n, 1);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  (void)rxm::topk(ctx, span, k);  // the warm-up
  write_late_on_the_legacy_stream(values.data(), n, 1);
  const auto top = rxm::topk(ctx, span, k);
  for (std::size_t j = 0; j < k; ++j) {
    EXPECT_EQ(top.values[j], std::uint32_t(n - j)) << j;
    EXPECT_EQ(top.indices[j], std::int64_t(j)) << j;
  }
}

TEST(GpuStreamOrder, MeshSortStartsAfterTheLegacyStreamsKernel) {
  RXM_REQUIRE_GPU();
  const int gpu = rxm::Context::local().devices().at(0).id;
  auto ctx = rxm::Context::local({gpu, gpu, gpu, gpu});
  const std::size_t per_shard = std::size_t(1) << 18;
  std::vector<rxm::DeviceArray<std::uint32_t>> arrays;
  std::vector<rxm::device_span<std::uint32_t>> shards;
  for (int s = 0; s < 4; ++s) {
    arrays.emplace_back(gpu, per_shard);
    write_late_on_the_legacy_stream(arrays.back().data(), per_shard, std::uint32_t(s) * 7);
    shards.push_back(rxm::device_span(arrays.back()));
  }
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(shards));  // the warm-up
  for (int s = 0; s < 4; ++s) write_late_on_the_legacy_stream(arrays[s].data(), per_shard, std::uint32_t(s) * 7);
  rxm::sort_shards(ctx, std::span<const rxm::device_span<std::uint32_t>>(shards));
  std::vector<std::uint32_t> got, want;
  for (int s = 0; s < 4; ++s) {
    std::vector<std::uint32_t> part(per_shard);
    RXM_CUDA_CHECK(
        cudaMemcpy(part.data(), arrays[s].data(), per_shard * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    got.insert(got.end(), part.begin(), part.end());
    for (std::size_t i = 0; i < per_shard; ++i) want.push_back(std::uint32_t(s) * 7 + std::uint32_t(i));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(first_difference(got, want), "none");
}

}  // namespace
