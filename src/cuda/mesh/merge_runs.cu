// The cuts: a block per place, a warp per run. The sort key at the place is found bit by bit from
// the top (the largest key with at most `place` elements below it, over all runs), each warp
// narrowing its run to the keys that share the bits decided so far, so the searches shrink as the
// key grows. The merge of two runs is CUB's (DeviceMerge), which measured 1.5x faster than a merge
// path kernel of our own (docs/design/mesh-sort.md, "The merge strategy").
#include "cuda/mesh/merge_runs.hpp"

#include <algorithm>
#include <string>
#include <cub/device/device_merge.cuh>
#include <cuda/std/cstdint>
#include <cuda/std/functional>
#include <type_traits>

#include "cuda/mesh/sort_field.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/scratch.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace {

using u64 = unsigned long long;

constexpr int max_runs = int(max_device_runs);
constexpr int max_places = 64;  // places per launch of the search

struct RunTable {
  const void* keys[max_runs];
  u64 n[max_runs];
  u64 places[max_places];
};

// The first index in [lo, hi) of a sorted run whose sort key is at least `key` (hi if none), by a
// whole warp: each step probes 32 places spread over the range and keeps the stretch between the
// last probe below `key` and the first that is not, so 2^28 keys take 6 steps of dependent loads.
template <class U>
__device__ u64 warp_lower_bound(const U* keys, u64 lo, u64 hi, u64 key, const SortField<U>& field) {
  const int lane = int(threadIdx.x % 32);
  while (hi - lo > 32) {
    const u64 probe = lo + (hi - lo) * u64(lane + 1) / 33;
    const unsigned below = __ballot_sync(~0u, u64(field(keys[probe])) < key);
    const int c = __popc(below);  // the probes below `key` are the first c (the run is sorted)
    const u64 last_below = __shfl_sync(~0u, probe, c > 0 ? c - 1 : 0);
    const u64 first_not = __shfl_sync(~0u, probe, c < 32 ? c : 31);
    if (c > 0) lo = last_below + 1;
    if (c < 32) hi = first_not;
  }
  const u64 at = lo + u64(lane);
  return lo + u64(__popc(__ballot_sync(~0u, at < hi && u64(field(keys[at])) < key)));
}

template <class U>
__global__ void __launch_bounds__(max_runs * 32) cuts_kernel(RunTable table, int runs, int bits, SortField<U> field,
                                                              u64* cuts) {
  __shared__ u64 below[max_runs], lo_of[max_runs], hi_of[max_runs];
  const int r = int(threadIdx.x / 32);
  const u64 place = table.places[blockIdx.x];
  const U* keys = static_cast<const U*>(table.keys[r]);
  // The run's keys in [lo, hi) are those whose sort key starts with the bits of `key` decided so far.
  u64 lo = 0, hi = table.n[r], key = 0;
  for (int bit = bits - 1; bit >= 0; --bit) {
    const u64 candidate = key | (u64(1) << bit);
    const u64 at = warp_lower_bound(keys, lo, hi, candidate, field);
    if (threadIdx.x % 32 == 0) below[r] = at;
    __syncthreads();
    u64 sum = 0;
    for (int j = 0; j < runs; ++j) sum += below[j];
    __syncthreads();
    if (sum <= place) {
      key = candidate;
      lo = at;
    } else {
      hi = at;
    }
  }
  // Now [lo, hi) holds exactly the run's keys equal to the key at the place; the place takes
  // everything below it and its share of those ties, earlier runs first.
  if (threadIdx.x % 32 == 0) {
    lo_of[r] = lo;
    hi_of[r] = hi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 need = place;
    for (int j = 0; j < runs; ++j) need -= lo_of[j];
    for (int j = 0; j < runs; ++j) {
      const u64 take = need < hi_of[j] - lo_of[j] ? need : hi_of[j] - lo_of[j];
      cuts[u64(blockIdx.x) * u64(runs) + u64(j)] = lo_of[j] + take;
      need -= take;
    }
  }
}

template <class U> void launch_cuts(const CudaResources::PerDevice& device, const SortPlan& plan,
                                    const RunTable& table, int runs, int places, u64* cuts) {
  cuts_kernel<U><<<places, runs * 32, 0, device.stream>>>(table, runs, plan.end_bit - plan.begin_bit,
                                                          SortField<U>::of(plan), cuts);
  RXM_CUDA_CHECK(cudaGetLastError());
}

// The sort key's order of raw keys, for CUB's merge.
template <class U> struct FieldLess {
  SortField<U> field;
  __device__ __forceinline__ bool operator()(U x, U y) const { return field(x) < field(y); }
};

// Integer keys on every bit: the sort key is the raw key with some bits flipped (the sign bit for
// signed keys, every bit for descending), so one XOR per compare does; none for unsigned ascending
// keys. The whole encoding in every compare made CUB's merge 1.5x slower (bench/phases/merge_two.cu).
template <class U> struct XorLess {
  U flip;
  __device__ __forceinline__ bool operator()(U x, U y) const { return U(x ^ flip) < U(y ^ flip); }
};
template <class U> bool integer_order(const SortField<U>& f) {
  return f.encoding.float_flip == 0 && f.encoding.bias == 0 && f.shift == 0 && f.mask == U(~U(0));
}

// CUB's DeviceMerge, temp storage from the device's pool. Its documentation calls the merge
// unstable; its merge path takes the first run's key on ties (MergePath and SerialMerge in
// cub/block/block_merge_sort.cuh), which the mesh sort's stability needs: the GPU mesh tests'
// all-equal and few-distinct inputs, with every key's global index as its value, check it.
template <class U, class V, class Less>
void cub_merge(const CudaResources::PerDevice& device, const SortedRun& a, const SortedRun& b, void* keys_out,
               void* values_out, Less less) {
  const U* ak = static_cast<const U*>(a.keys);
  const U* bk = static_cast<const U*>(b.keys);
  U* out = static_cast<U*>(keys_out);
  const auto na = ::cuda::std::int64_t(a.n), nb = ::cuda::std::int64_t(b.n);
  std::size_t bytes = 0;
  if constexpr (std::is_void_v<V>) {
    RXM_CUDA_CHECK(cub::DeviceMerge::MergeKeys(nullptr, bytes, ak, na, bk, nb, out, less, device.stream));
    ScratchBuffer temp(device, bytes);
    RXM_CUDA_CHECK(cub::DeviceMerge::MergeKeys(temp.data(), bytes, ak, na, bk, nb, out, less, device.stream));
  } else {
    const V* av = static_cast<const V*>(a.values);
    const V* bv = static_cast<const V*>(b.values);
    V* out_values = static_cast<V*>(values_out);
    RXM_CUDA_CHECK(
        cub::DeviceMerge::MergePairs(nullptr, bytes, ak, av, na, bk, bv, nb, out, out_values, less, device.stream));
    ScratchBuffer temp(device, bytes);
    RXM_CUDA_CHECK(cub::DeviceMerge::MergePairs(temp.data(), bytes, ak, av, na, bk, bv, nb, out, out_values, less,
                                                device.stream));
  }
}

template <class U, class V>
void merge_typed(const CudaResources::PerDevice& device, const SortPlan& plan, const SortedRun& a, const SortedRun& b,
                 void* keys_out, void* values_out) {
  const SortField<U> field = SortField<U>::of(plan);
  if (!integer_order(field)) return cub_merge<U, V>(device, a, b, keys_out, values_out, FieldLess<U>{field});
  const U flip = U(field.encoding.sign_flip ^ field.flip);
  if (flip == 0) return cub_merge<U, V>(device, a, b, keys_out, values_out, ::cuda::std::less<U>{});
  cub_merge<U, V>(device, a, b, keys_out, values_out, XorLess<U>{flip});
}

template <class U>
void merge_keys_of(const CudaResources::PerDevice& device, const SortPlan& plan, const SortedRun& a,
                   const SortedRun& b, void* keys_out, void* values_out) {
  switch (plan.value_bytes) {
    case 0: return merge_typed<U, void>(device, plan, a, b, keys_out, values_out);
    case 4: return merge_typed<U, std::uint32_t>(device, plan, a, b, keys_out, values_out);
    default: return merge_typed<U, std::uint64_t>(device, plan, a, b, keys_out, values_out);
  }
}

}  // namespace

void device_cuts_of_runs(const CudaResources::PerDevice& device, const SortPlan& plan, std::span<const SortedRun> runs,
                         std::span<const std::uint64_t> places, std::uint64_t* cuts) {
  require(runs.size() <= max_device_runs && !runs.empty(),
          "sort: " + std::to_string(runs.size()) + " sorted runs to cut on one GPU",
          "cut at most " + std::to_string(max_device_runs) + " runs at once (a bug in radixmesh)");
  if (places.empty()) return;
  DeviceGuard guard(device.device);
  const std::size_t R = runs.size();
  ScratchBuffer out(device, places.size() * R * sizeof(u64));
  for (std::size_t from = 0; from < places.size(); from += max_places) {
    const int count = int(std::min<std::size_t>(max_places, places.size() - from));
    RunTable table{};
    for (std::size_t r = 0; r < R; ++r) {
      table.keys[r] = runs[r].keys;
      table.n[r] = runs[r].n;
    }
    for (int p = 0; p < count; ++p) table.places[p] = places[from + std::size_t(p)];
    u64* at = out.as<u64>() + from * R;
    switch (size_of(plan.type)) {
      case 1: launch_cuts<std::uint8_t>(device, plan, table, int(R), count, at); break;
      case 2: launch_cuts<std::uint16_t>(device, plan, table, int(R), count, at); break;
      case 4: launch_cuts<std::uint32_t>(device, plan, table, int(R), count, at); break;
      default: launch_cuts<std::uint64_t>(device, plan, table, int(R), count, at); break;
    }
  }
  RXM_CUDA_CHECK(cudaMemcpyAsync(cuts, out.data(), places.size() * R * sizeof(u64), cudaMemcpyDeviceToHost,
                                 device.stream));
  RXM_CUDA_CHECK(cudaStreamSynchronize(device.stream));
}

void device_merge_two(const CudaResources::PerDevice& device, const SortPlan& plan, const SortedRun& a,
                      const SortedRun& b, void* keys_out, void* values_out) {
  DeviceGuard guard(device.device);
  const std::size_t key_bytes = size_of(plan.type), value_bytes = plan.value_bytes;
  if (a.n == 0 || b.n == 0) {  // one run: a copy
    const SortedRun& only = a.n ? a : b;
    if (only.n == 0) return;
    RXM_CUDA_CHECK(cudaMemcpyAsync(keys_out, only.keys, only.n * key_bytes, cudaMemcpyDefault, device.stream));
    if (value_bytes)
      RXM_CUDA_CHECK(
          cudaMemcpyAsync(values_out, only.values, only.n * value_bytes, cudaMemcpyDefault, device.stream));
    return;
  }
  switch (key_bytes) {
    case 1: return merge_keys_of<std::uint8_t>(device, plan, a, b, keys_out, values_out);
    case 2: return merge_keys_of<std::uint16_t>(device, plan, a, b, keys_out, values_out);
    case 4: return merge_keys_of<std::uint32_t>(device, plan, a, b, keys_out, values_out);
    default: return merge_keys_of<std::uint64_t>(device, plan, a, b, keys_out, values_out);
  }
}

}  // namespace radixmesh::detail
