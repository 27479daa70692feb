// A merge path kernel of our own (merge_path_kernel.cuh) over items per thread, beside CUB's
// DeviceMerge (which the mesh sort's merge strategy uses, src/cuda/mesh/merge_runs.cu), with raw
// compares and with the sort key's (SortField: the cost of the encoding in every compare), and a
// device copy of the same bytes (the floor: every key read once and written once). Two sorted runs of n/2 random
// keys each; every result checked against CUB's keys. Outside CMake:
//   nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -Isrc -Iinclude -Ibench/phases \
//     bench/phases/merge_two.cu -o merge_two
//   ./merge_two [n, 2^30] [reps, 10]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_merge.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <vector>

#include "merge_path_kernel.cuh"
#include "host_timing.hpp"

namespace merge = radixmesh::detail::merge;
using radixmesh::detail::SortField;
using u64 = unsigned long long;

template <class U> __global__ void fill_random(U* keys, u64 n, u64 seed) {
  for (u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += u64(gridDim.x) * blockDim.x) {
    u64 x = (i + seed) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    keys[i] = U(x);
  }
}

template <class F> double time_ms(F run, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  run();  // warm-up
  std::vector<float> times;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <class U, int VB> void run(u64 n, int reps) {
  using V = merge::ValueOf<VB>;
  const u64 na = n / 2, nb = n - na;
  U *keys, *out, *want;
  V *values = nullptr, *out_values = nullptr;
  CHECK(cudaMalloc(&keys, n * sizeof(U)));
  CHECK(cudaMalloc(&out, n * sizeof(U)));
  CHECK(cudaMalloc(&want, n * sizeof(U)));
  if (VB) {
    CHECK(cudaMalloc(&values, n * sizeof(V)));
    CHECK(cudaMalloc(&out_values, n * sizeof(V)));
    CHECK(cudaMemset(values, 0, n * sizeof(V)));
  }
  fill_random<<<1024, 256>>>(keys, n, 12345);
  {  // each half sorted
    std::size_t temp_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys, out, nb));
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, out, na));
    CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys + na, out + na, nb));
    CHECK(cudaMemcpy(keys, out, n * sizeof(U), cudaMemcpyDeviceToDevice));
    CHECK(cudaFree(temp));
  }
  const double bytes = 2.0 * double(n) * double(sizeof(U) + VB);  // read once, written once
  const double copy = time_ms([&] { CHECK(cudaMemcpyAsync(want, keys, n * sizeof(U), cudaMemcpyDeviceToDevice)); }, reps);
  const double floor_ms = copy * double(sizeof(U) + VB) / double(sizeof(U));
  std::size_t cub_bytes = 0;
  CHECK(cub::DeviceMerge::MergeKeys(nullptr, cub_bytes, keys, na, keys + na, nb, want, cuda::std::less<U>{}));
  void* cub_temp;
  CHECK(cudaMalloc(&cub_temp, cub_bytes));
  const double cub_ms = time_ms(
      [&] { CHECK(cub::DeviceMerge::MergeKeys(cub_temp, cub_bytes, keys, na, keys + na, nb, want, cuda::std::less<U>{})); },
      reps);
  const SortField<U> field{{}, U(0), U(~U(0)), 0};
  const auto by_field = [field] __device__(U x, U y) { return field(x) < field(y); };
  const double cub_field_ms = time_ms(
      [&] { CHECK(cub::DeviceMerge::MergeKeys(cub_temp, cub_bytes, keys, na, keys + na, nb, want, by_field)); }, reps);
  double cub_pairs_ms = 0;
  if constexpr (VB != 0) {
    std::size_t pair_bytes = 0;
    CHECK(cub::DeviceMerge::MergePairs(nullptr, pair_bytes, keys, values, na, keys + na, values + na, nb, out,
                                       out_values, cuda::std::less<U>{}));
    void* pair_temp;
    CHECK(cudaMalloc(&pair_temp, pair_bytes));
    cub_pairs_ms = time_ms(
        [&] {
          CHECK(cub::DeviceMerge::MergePairs(pair_temp, pair_bytes, keys, values, na, keys + na, values + na, nb, out,
                                             out_values, cuda::std::less<U>{}));
        },
        reps);
    CHECK(cudaFree(pair_temp));
  }
  std::printf("%s keys, %s, n = %llu: floor (a device copy of the bytes) %.3f ms (%.0f GB/s); CUB DeviceMerge keys "
              "%.3f ms (raw compares), %.3f ms (the sort key's); CUB pairs %.3f ms\n",
              sizeof(U) == 4 ? "u32" : "u64", VB ? (VB == 4 ? "4-byte values" : "8-byte values") : "no values", n,
              floor_ms, bytes / floor_ms / 1e6, cub_ms, cub_field_ms, cub_pairs_ms);
  u64* starts;
  CHECK(cudaMalloc(&starts, (merge::tiles<3>(n) + 1) * sizeof(u64)));
  std::vector<U> got(n), expected(n);
  CHECK(cudaMemcpy(expected.data(), want, n * sizeof(U), cudaMemcpyDeviceToHost));
  auto variant = [&](auto items_tag) {
    constexpr int items = decltype(items_tag)::value;
    if constexpr (merge::shared_bytes<U, VB>(items) <= 48 * 1024) {  // a static block's shared memory
      CHECK(cudaMemset(out, 0xAB, n * sizeof(U)));
      const double ms = time_ms(
          [&] { merge::launch<U, VB, items>(keys, na, keys + na, nb, values, values, field, out, out_values, starts, 0); },
          reps);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(got.data(), out, n * sizeof(U), cudaMemcpyDeviceToHost));
      std::printf("  items %2d%s: %.3f ms, %.0f GB/s, %.2fx the floor, CUB / ours %.2f%s\n", items, items == merge::items_for<U, VB>() ? " (the library's)" : "", ms, bytes / ms / 1e6,
                  ms / floor_ms, cub_ms / ms, got == expected ? "" : "  MISMATCH");
    }
  };
  variant(std::integral_constant<int, 5>{});
  variant(std::integral_constant<int, 7>{});
  variant(std::integral_constant<int, 8>{});
  variant(std::integral_constant<int, 9>{});
  variant(std::integral_constant<int, 11>{});
  variant(std::integral_constant<int, 13>{});
  variant(std::integral_constant<int, 15>{});
  variant(std::integral_constant<int, 19>{});
  CHECK(cudaFree(starts));
  CHECK(cudaFree(cub_temp));
  CHECK(cudaFree(keys));
  CHECK(cudaFree(out));
  CHECK(cudaFree(want));
  if (VB) {
    CHECK(cudaFree(values));
    CHECK(cudaFree(out_values));
  }
}

int main(int argc, char** argv) {
  const u64 n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (u64(1) << 30);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  run<unsigned, 0>(n, reps);
  run<unsigned, 4>(n, reps);
  run<unsigned, 8>(n, reps);
  run<u64, 0>(n / 2, reps);
  return 0;
}
