// The cuts: a block per place, a warp per run. The sort key at the place is found bit by bit from
// the top (the largest key with at most `place` elements below it, over all runs), each warp
// narrowing its run to the keys that share the bits decided so far, so the searches shrink as the
// key grows. The merge: merge path (each tile of 2048 outputs finds where it starts in both runs
// with one binary search, done for every tile by a kernel of its own), the tile's keys staged in
// shared memory, each thread merging 8 of them, then written out in order.
#include "cuda/mesh/merge_runs.hpp"

#include <algorithm>
#include <string>
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

constexpr int merge_threads = 256, merge_items = 8, merge_tile = merge_threads * merge_items;

// How many of a's elements come before place `diagonal` of the stable merge of a and b.
template <class U, class I>
__device__ I merge_path(const U* a, I na, const U* b, I nb, I diagonal, const SortField<U>& field) {
  I lo = diagonal > nb ? diagonal - nb : 0, hi = diagonal < na ? diagonal : na;
  while (lo < hi) {
    const I mid = (lo + hi) / 2;
    if (field(a[mid]) <= field(b[diagonal - 1 - mid]))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class U>
__global__ void merge_starts_kernel(const U* a, u64 na, const U* b, u64 nb, u64 tiles, SortField<U> field,
                                    u64* a_starts) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const u64 diagonal = t * merge_tile < na + nb ? t * merge_tile : na + nb;
  a_starts[t] = merge_path<U, u64>(a, na, b, nb, diagonal, field);
}

template <int VB> using ValueOf = std::conditional_t<VB == 8, u64, unsigned>;

template <class U, int VB>
__global__ void __launch_bounds__(merge_threads) merge_kernel(const U* a, const U* b, u64 total,
                                                              const ValueOf<VB>* a_values,
                                                              const ValueOf<VB>* b_values, const u64* a_starts,
                                                              SortField<U> field, U* out, ValueOf<VB>* out_values) {
  __shared__ U keys[merge_tile];
  __shared__ U merged[merge_tile];
  __shared__ unsigned short source[VB ? merge_tile : 1];
  const u64 d0 = u64(blockIdx.x) * merge_tile, d1 = d0 + merge_tile < total ? d0 + merge_tile : total;
  const u64 a0 = a_starts[blockIdx.x], a1 = a_starts[blockIdx.x + 1], b0 = d0 - a0, b1 = d1 - a1;
  const int la = int(a1 - a0), lb = int(b1 - b0), count = la + lb;
  for (int x = int(threadIdx.x); x < count; x += merge_threads) keys[x] = x < la ? a[a0 + u64(x)] : b[b0 + u64(x - la)];
  __syncthreads();
  const int diagonal = min(int(threadIdx.x) * merge_items, count);
  int ia = merge_path<U, int>(keys, la, keys + la, lb, diagonal, field), ib = diagonal - ia;
#pragma unroll
  for (int j = 0; j < merge_items; ++j) {
    if (diagonal + j >= count) break;
    const bool take_a = ia < la && (ib >= lb || field(keys[ia]) <= field(keys[la + ib]));
    const int from = take_a ? ia : la + ib;
    merged[diagonal + j] = keys[from];
    if constexpr (VB != 0) source[diagonal + j] = (unsigned short)from;
    ia += take_a;
    ib += !take_a;
  }
  __syncthreads();
  for (int x = int(threadIdx.x); x < count; x += merge_threads) {
    out[d0 + u64(x)] = merged[x];
    if constexpr (VB != 0) {
      const int from = source[x];
      out_values[d0 + u64(x)] = from < la ? a_values[a0 + u64(from)] : b_values[b0 + u64(from - la)];
    }
  }
}

template <class U, int VB>
void merge_typed(const CudaResources::PerDevice& device, const SortPlan& plan, const DeviceRun& a, const DeviceRun& b,
                 void* keys_out, void* values_out) {
  using V = ValueOf<VB>;
  const SortField<U> field = SortField<U>::of(plan);
  const u64 total = a.n + b.n, tiles = (total + merge_tile - 1) / merge_tile;
  ScratchBuffer starts(device, (tiles + 1) * sizeof(u64));
  const U* ak = static_cast<const U*>(a.keys);
  const U* bk = static_cast<const U*>(b.keys);
  merge_starts_kernel<U><<<unsigned((tiles + 1 + 255) / 256), 256, 0, device.stream>>>(ak, a.n, bk, b.n, tiles, field,
                                                                                       starts.as<u64>());
  RXM_CUDA_CHECK(cudaGetLastError());
  merge_kernel<U, VB><<<unsigned(tiles), merge_threads, 0, device.stream>>>(
      ak, bk, total, static_cast<const V*>(a.values), static_cast<const V*>(b.values), starts.as<u64>(), field,
      static_cast<U*>(keys_out), static_cast<V*>(values_out));
  RXM_CUDA_CHECK(cudaGetLastError());
}

template <class U>
void merge_keys_of(const CudaResources::PerDevice& device, const SortPlan& plan, const DeviceRun& a,
                   const DeviceRun& b, void* keys_out, void* values_out) {
  switch (plan.value_bytes) {
    case 0: return merge_typed<U, 0>(device, plan, a, b, keys_out, values_out);
    case 4: return merge_typed<U, 4>(device, plan, a, b, keys_out, values_out);
    default: return merge_typed<U, 8>(device, plan, a, b, keys_out, values_out);
  }
}

}  // namespace

void device_cuts_of_runs(const CudaResources::PerDevice& device, const SortPlan& plan, std::span<const DeviceRun> runs,
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

void device_merge_two(const CudaResources::PerDevice& device, const SortPlan& plan, const DeviceRun& a,
                      const DeviceRun& b, void* keys_out, void* values_out) {
  DeviceGuard guard(device.device);
  const std::size_t key_bytes = size_of(plan.type), value_bytes = plan.value_bytes;
  if (a.n == 0 || b.n == 0) {  // one run: a copy
    const DeviceRun& only = a.n ? a : b;
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
