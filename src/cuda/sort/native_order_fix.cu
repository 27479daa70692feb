// The fix-up from CUB's native float order to radixmesh's (native_float.hpp):
// five stream-ordered kernels, every one but the first returning at once when
// there is nothing to fix.
//   plan:     three warps search the sorted keys (32 probes a round): the
//   sign-set NaN group
//             (prefix ascending, suffix descending) and the run of zeros
//             [zero_begin, zero_end).
//   count:    per tile of the zero run, how many zeros have the sign that comes
//   first in our order
//             (-0.0 ascending, +0.0 descending).
//   scan:     one block: exclusive prefix of those counts; decides whether
//   anything moves. copy:     keys (and values) to scratch, only if something
//   moves. scatter:  from scratch to the final place: a rotation by the NaN
//   count, and inside the zero run
//             a stable partition by sign (rank from the tile prefix and a block
//             scan).
// The zero run's tiles are tiles of the whole array, so that count and scatter
// agree on them.
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/native_float.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

constexpr int fix_threads = 256;
constexpr int fix_items = 16;  // per thread and tile
constexpr std::size_t fix_tile = std::size_t(fix_threads) * fix_items;
constexpr std::size_t fix_max_blocks = 1024;
constexpr std::size_t fix_plan_bytes = 256;  // FixPlan, padded so the tile counts stay aligned

struct FixPlan {
  unsigned long long nan_count;   // sign-set NaNs
  unsigned long long zero_begin;  // the run of +-0.0 in the sorted keys
  unsigned long long zero_end;
  unsigned long long first_zeros;  // zeros of the sign our order puts first
  int needed;                      // 1: some key or value moves
};
static_assert(sizeof(FixPlan) <= fix_plan_bytes);

template <class K> struct FloatBits {
  using U = key_bits_t<K>;
  static constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  __device__ static bool negative_nan(U x) { return (x & sign) != 0 && key_traits<K>::is_nan_bits(x); }
  __device__ static bool zero(U x) { return U(x & U(~sign)) == 0; }
  __device__ static bool signed_bit(U x) { return (x & sign) != 0; }
  // A zero of the sign that our order puts first: -0.0 ascending, +0.0
  // descending.
  __device__ static bool first_zero(U x, bool descending) { return signed_bit(x) != descending; }
};

// First index in [0, n) where pred holds, n if none; pred must be false...false
// true...true. A whole warp calls it: each round 32 lanes probe 32 evenly
// spaced indices, so about log32(n) dependent loads.
template <class Pred> __device__ std::size_t warp_partition_point(std::size_t n, Pred pred) {
  const unsigned lane = threadIdx.x % 32;
  std::size_t lo = 0, hi = n;  // the answer lies in [lo, hi]
  while (hi - lo > 32) {
    const std::size_t step = (hi - lo + 31) / 32;
    const std::size_t probe = lo + lane * step;
    const unsigned votes = __ballot_sync(~0u, probe >= hi || pred(probe));
    if (votes == 0) {
      lo = lo + 31 * step + 1;
      continue;
    }
    const unsigned first = unsigned(__ffs(int(votes)) - 1);
    if (first == 0) return lo;
    const std::size_t true_at = lo + first * step;
    lo = lo + (first - 1) * step + 1;
    hi = true_at < hi ? true_at : hi;
  }
  const std::size_t probe = lo + lane;
  const unsigned votes = __ballot_sync(~0u, probe >= hi || pred(probe));
  return votes == 0 ? hi : lo + unsigned(__ffs(int(votes)) - 1);
}

template <class K>
__global__ void find_fix_plan(const key_bits_t<K>* keys, std::size_t n, bool descending, FixPlan* plan) {
  using F = FloatBits<K>;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    std::size_t nan_count;
    if (!descending)  // a prefix: usually keys[0] already says there is none
      nan_count = warp_partition_point(n, [&](std::size_t i) { return !F::negative_nan(keys[i]); });
    else if (!F::negative_nan(keys[n - 1]))
      nan_count = 0;
    else
      nan_count = n - warp_partition_point(n, [&](std::size_t i) { return F::negative_nan(keys[i]); });
    if (lane == 0) plan->nan_count = nan_count;
  } else if (warp == 1) {
    // Ascending: [-NaN, negative, zeros, positive, +NaN]; descending: the
    // reverse.
    const std::size_t begin = warp_partition_point(n, [&](std::size_t i) {
      const auto x = keys[i];
      return F::zero(x) || (F::signed_bit(x) == descending);
    });
    if (lane == 0) plan->zero_begin = begin;
  } else if (warp == 2) {
    const std::size_t end = warp_partition_point(n, [&](std::size_t i) {
      const auto x = keys[i];
      return !F::zero(x) && (F::signed_bit(x) == descending);
    });
    if (lane == 0) plan->zero_end = end;
  }
}

template <class K> __global__ void __launch_bounds__(fix_threads)
    count_first_zeros(const key_bits_t<K>* keys, bool descending, const FixPlan* plan, unsigned* tile_counts) {
  using F = FloatBits<K>;
  using Reduce = cub::BlockReduce<unsigned, fix_threads>;
  __shared__ typename Reduce::TempStorage temp;
  const std::size_t lo = plan->zero_begin, hi = plan->zero_end;
  if (lo >= hi) return;
  const std::size_t first_tile = lo / fix_tile, end_tile = (hi - 1) / fix_tile + 1;
  for (std::size_t t = first_tile + blockIdx.x; t < end_tile; t += gridDim.x) {
    unsigned count = 0;
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = t * fix_tile + std::size_t(i) * fix_threads + threadIdx.x;  // striped: coalesced
      if (s >= lo && s < hi && F::first_zero(keys[s], descending)) ++count;
    }
    const unsigned total = Reduce(temp).Sum(count);
    if (threadIdx.x == 0) tile_counts[t] = total;
    __syncthreads();  // temp is reused by the next tile
  }
}

constexpr int scan_threads = 1024;

__global__ void __launch_bounds__(scan_threads) scan_tile_counts(FixPlan* plan, unsigned* tile_counts) {
  using Scan = cub::BlockScan<unsigned, scan_threads>;
  __shared__ typename Scan::TempStorage temp;
  const std::size_t lo = plan->zero_begin, hi = plan->zero_end;
  unsigned long long carry = 0;
  if (lo < hi) {
    const std::size_t first_tile = lo / fix_tile, end_tile = (hi - 1) / fix_tile + 1;
    for (std::size_t base = first_tile; base < end_tile; base += scan_threads) {
      const std::size_t t = base + threadIdx.x;
      const unsigned count = t < end_tile ? tile_counts[t] : 0u;
      unsigned before = 0, sum = 0;
      Scan(temp).ExclusiveSum(count, before, sum);
      if (t < end_tile) tile_counts[t] = unsigned(carry) + before;  // < 2^32: n is (native_float_path_applies)
      carry += sum;
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    plan->first_zeros = carry;
    // Both zeros present: the run needs its partition (a no-op where it happens
    // to be partitioned).
    plan->needed = plan->nan_count > 0 || (carry > 0 && carry < hi - lo);
  }
}

template <class U, class V> __global__ void __launch_bounds__(fix_threads)
    copy_for_fix(const U* keys, const V* values, U* scratch_keys, V* scratch_values, std::size_t n,
                 const FixPlan* plan) {
  if (!plan->needed) return;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    scratch_keys[i] = keys[i];
    if constexpr (!std::is_same_v<V, void*>) scratch_values[i] = values[i];
  }
}

template <class K, class V> __global__ void __launch_bounds__(fix_threads)
    scatter_fixed(const key_bits_t<K>* scratch_keys, const V* scratch_values, key_bits_t<K>* keys, V* values,
                  std::size_t n, bool descending, const FixPlan* plan, const unsigned* tile_prefix) {
  using F = FloatBits<K>;
  using Scan = cub::BlockScan<unsigned, fix_threads>;
  constexpr bool has_values = !std::is_same_v<V, void*>;
  __shared__ typename Scan::TempStorage temp;
  if (!plan->needed) return;
  const std::size_t k = plan->nan_count, lo = plan->zero_begin, hi = plan->zero_end, firsts = plan->first_zeros;
  // Our order moves the sign-set NaNs from CUB's front (ascending) or back
  // (descending) to the other end.
  auto rotated = [&](std::size_t s) {
    if (!descending) return s >= k ? s - k : s + (n - k);
    return s + k < n ? s + k : s + k - n;
  };
  auto move = [&](std::size_t from, std::size_t to) {
    keys[to] = scratch_keys[from];
    if constexpr (has_values) values[to] = scratch_values[from];
  };
  const std::size_t zeros_to = rotated(lo);  // the run holds no NaN, so it moves as one block
  const std::size_t tiles = (n + fix_tile - 1) / fix_tile;
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * fix_tile;
    if (base >= hi || base + fix_tile <= lo) {  // outside the zero run: the rotation only (block-uniform)
      for (int i = 0; i < fix_items; ++i) {
        const std::size_t s = base + std::size_t(i) * fix_threads + threadIdx.x;
        if (s < n) move(s, rotated(s));
      }
      continue;
    }
    // Blocked arrangement: thread j owns fix_items consecutive keys, so its
    // rank is a prefix sum.
    const std::size_t mine = base + std::size_t(threadIdx.x) * fix_items;
    unsigned count = 0;
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = mine + i;
      if (s >= lo && s < hi && F::first_zero(scratch_keys[s], descending)) ++count;
    }
    unsigned before = 0;
    Scan(temp).ExclusiveSum(count, before);
    std::size_t rank = std::size_t(tile_prefix[t]) + before;  // first-sign zeros in [lo, s)
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = mine + i;
      if (s >= n) break;
      if (s < lo || s >= hi) {
        move(s, rotated(s));
      } else if (F::first_zero(scratch_keys[s], descending)) {
        move(s, zeros_to + rank);
        ++rank;
      } else {
        move(s, zeros_to + firsts + (s - lo - rank));
      }
    }
    __syncthreads();  // temp is reused by the next tile
  }
}

std::size_t tiles_of(std::size_t n) { return (n + fix_tile - 1) / fix_tile; }
unsigned blocks_of(std::size_t n) {
  const std::size_t tiles = tiles_of(n);
  return unsigned(tiles < 1 ? 1 : (tiles > fix_max_blocks ? fix_max_blocks : tiles));
}

template <class K, class V> void launch_typed(Order order, void* keys, void* values, std::size_t n, void* scratch_keys,
                                              void* scratch_values, void* workspace, cudaStream_t stream) {
  using U = key_bits_t<K>;
  const bool descending = order == Order::descending;
  auto* plan = static_cast<FixPlan*>(workspace);
  auto* tile_counts = reinterpret_cast<unsigned*>(static_cast<char*>(workspace) + fix_plan_bytes);
  auto* k = static_cast<U*>(keys);
  auto* sk = static_cast<U*>(scratch_keys);
  auto* v = static_cast<V*>(values);
  auto* sv = static_cast<V*>(scratch_values);
  const unsigned blocks = blocks_of(n);
  find_fix_plan<K><<<1, 96, 0, stream>>>(k, n, descending, plan);
  RXM_CUDA_CHECK_LAUNCH();
  count_first_zeros<K><<<blocks, fix_threads, 0, stream>>>(k, descending, plan, tile_counts);
  RXM_CUDA_CHECK_LAUNCH();
  scan_tile_counts<<<1, scan_threads, 0, stream>>>(plan, tile_counts);
  RXM_CUDA_CHECK_LAUNCH();
  copy_for_fix<U, V><<<blocks, fix_threads, 0, stream>>>(k, v, sk, sv, n, plan);
  RXM_CUDA_CHECK_LAUNCH();
  scatter_fixed<K, V><<<blocks, fix_threads, 0, stream>>>(sk, sv, k, v, n, descending, plan, tile_counts);
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t native_order_fix_workspace_bytes(std::size_t n) { return fix_plan_bytes + tiles_of(n) * sizeof(unsigned); }

void launch_native_order_fix(KeyType type, Order order, void* keys, void* values, int value_bytes, std::size_t n,
                             void* scratch_keys, void* scratch_values, void* workspace, cudaStream_t stream) {
  if (n < 2) return;
  auto with_values = [&](auto key) {
    using K = decltype(key);
    switch (value_bytes) {
      // "No values" is V = void*: a type the kernels can name and never
      // dereference.
      case 0: return launch_typed<K, void*>(order, keys, nullptr, n, scratch_keys, nullptr, workspace, stream);
      case 4:
        return launch_typed<K, std::uint32_t>(order, keys, values, n, scratch_keys, scratch_values, workspace, stream);
      case 8:
        return launch_typed<K, std::uint64_t>(order, keys, values, n, scratch_keys, scratch_values, workspace, stream);
    }
    throw_error(ErrorCode::internal, "native float fix-up got values of " + std::to_string(value_bytes) + " bytes",
                "report this as a bug");
  };
  switch (type) {
    case KeyType::f16: return with_values(half_t{});
    case KeyType::bf16: return with_values(bfloat16_t{});
    case KeyType::f32: return with_values(float{});
    case KeyType::f64: return with_values(double{});
    default: break;
  }
  throw_error(ErrorCode::internal, "native float fix-up got keys of type " + std::string(name_of(type)),
              "report this as a bug");
}

}  // namespace radixmesh::detail
