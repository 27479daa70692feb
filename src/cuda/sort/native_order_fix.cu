// The fix-up from CUB's native float order to radixmesh's (native_float.hpp): six stream-ordered
// steps, each returning at once when it has nothing to do. Only the keys that must move are moved:
//   plan:    three warps search the sorted keys (32 probes a round): the sign-set NaN group
//            (k keys: a prefix ascending, a suffix descending) and the run of zeros [lo, hi).
//   count:   per tile, how many zeros of the run have the sign that comes first in our order
//            (-0.0 ascending, +0.0 descending); 0 for tiles outside the run.
//   scan:    cub::DeviceScan over those counts (the last entry is the run's total).
//   save:    the NaN group (if 0 < k < n) and the zero run (if both signs are in it) to scratch,
//            16-byte copies where the two arrays are equally aligned.
//   shift:   if 0 < k < n, every other key moves by k (the NaN group goes to the other end):
//            in place, one read and one write per key and value, tiles taken in order by ticket;
//            a tile writes only once the tiles its destination overlaps have read (per-tile flags,
//            as in a decoupled look-back). Keys of a saved zero run are left to the next step.
//   restore: the NaN group from scratch to its end, and the saved zero run from scratch as a
//            stable partition by sign (rank = tile prefix + block scan).
// So a NaN costs one pass over everything and two zero signs cost the run, not a copy of all n
// keys and values to scratch and a scatter of all n back (docs/design/sort.md has the figures).
// The zero run's tiles are tiles of the whole array, so that count and restore agree on them.
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/sort/cub_radix_sort.cuh"
#include "cuda/sort/native_float.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

constexpr int fix_threads = 256;
constexpr int fix_items = 16;  // per thread and tile
constexpr std::size_t fix_tile = std::size_t(fix_threads) * fix_items;
constexpr std::size_t fix_max_blocks = 1024;
constexpr std::size_t workspace_alignment = 256;

struct FixPlan {
  unsigned long long nan_count;   // k: sign-set NaNs
  unsigned long long zero_begin;  // the run of +-0.0 in the sorted keys
  unsigned long long zero_end;
  unsigned int ticket;  // the shift's next tile
};

// What moves, decided on the device from the plan and the scanned counts (no host sync).
struct FixSteps {
  std::size_t k, lo, hi, firsts;  // firsts: zeros of the run whose sign our order puts first
  bool rotate;                    // 0 < k < n: every key outside the NaN group moves by k
  bool partition;                 // both zero signs in the run
};
__device__ FixSteps steps_of(const FixPlan* plan, const unsigned* tile_prefix, std::size_t tiles, std::size_t n) {
  FixSteps s;
  s.k = plan->nan_count;
  s.lo = plan->zero_begin;
  s.hi = plan->zero_end;
  s.firsts = tile_prefix[tiles];
  s.rotate = s.k > 0 && s.k < n;
  s.partition = s.firsts > 0 && s.firsts < s.hi - s.lo;
  return s;
}

template <class K> struct FloatBits {
  using U = key_bits_t<K>;
  static constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  __device__ static bool negative_nan(U x) { return (x & sign) != 0 && key_traits<K>::is_nan_bits(x); }
  __device__ static bool zero(U x) { return U(x & U(~sign)) == 0; }
  __device__ static bool signed_bit(U x) { return (x & sign) != 0; }
  // A zero of the sign that our order puts first: -0.0 ascending, +0.0 descending.
  __device__ static bool first_zero(U x, bool descending) { return signed_bit(x) != descending; }
};

// "No values" is V = void*: a type the kernels can name and never dereference.
template <class V> constexpr bool has_values_v = !std::is_same_v<V, void*>;

// First index in [0, n) where pred holds, n if none; pred must be false...false true...true.
// A whole warp calls it: each round 32 lanes probe 32 evenly spaced indices, so about log32(n)
// dependent loads.
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
    if (lane == 0) {
      plan->nan_count = nan_count;
      plan->ticket = 0;
    }
  } else if (warp == 1) {
    // Ascending: [-NaN, negative, zeros, positive, +NaN]; descending: the reverse.
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

// Writes every tile's count (tiles + 1 entries, the last 0, so that the exclusive scan's last
// entry is the total) and clears the shift's flags.
template <class K> __global__ void __launch_bounds__(fix_threads)
    count_first_zeros(const key_bits_t<K>* keys, std::size_t tiles, bool descending, const FixPlan* plan,
                      unsigned* tile_counts, unsigned* tile_flags) {
  using F = FloatBits<K>;
  using Reduce = cub::BlockReduce<unsigned, fix_threads>;
  __shared__ typename Reduce::TempStorage temp;
  const std::size_t lo = plan->zero_begin, hi = plan->zero_end;
  for (std::size_t t = blockIdx.x; t <= tiles; t += gridDim.x) {
    const std::size_t base = t * fix_tile;
    if (t == tiles || base >= hi || base + fix_tile <= lo) {  // block-uniform
      if (threadIdx.x == 0) {
        tile_counts[t] = 0;
        if (t < tiles) tile_flags[t] = 0;
      }
      continue;
    }
    unsigned count = 0;
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = base + std::size_t(i) * fix_threads + threadIdx.x;  // striped: coalesced
      if (s >= lo && s < hi && F::first_zero(keys[s], descending)) ++count;
    }
    const unsigned total = Reduce(temp).Sum(count);
    if (threadIdx.x == 0) {
      tile_counts[t] = total;
      tile_flags[t] = 0;
    }
    __syncthreads();  // temp is reused by the next tile
  }
}

// to[i] = from[i] for i in [lo, hi), the whole grid: 16-byte vectors where both arrays are equally
// aligned (scratch is 256-byte aligned, a caller's array may be offset), elementwise otherwise.
template <class T> __device__ void copy_range(const T* from, T* to, std::size_t lo, std::size_t hi) {
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  constexpr std::size_t per_vector = 16 / sizeof(T);
  const auto from_address = reinterpret_cast<std::uintptr_t>(from), to_address = reinterpret_cast<std::uintptr_t>(to);
  std::size_t vector_begin = hi, vector_end = hi;
  if (lo < hi && (from_address - to_address) % 16 == 0) {
    const std::size_t misaligned = (from_address + lo * sizeof(T)) % 16;  // a multiple of sizeof(T)
    vector_begin = lo + (misaligned ? (16 - misaligned) / sizeof(T) : 0);
    if (vector_begin > hi) vector_begin = hi;
    vector_end = vector_begin + (hi - vector_begin) / per_vector * per_vector;
  }
  const auto* from_vectors = reinterpret_cast<const uint4*>(from + vector_begin);
  auto* to_vectors = reinterpret_cast<uint4*>(to + vector_begin);
  for (std::size_t v = first; v < (vector_end - vector_begin) / per_vector; v += stride) to_vectors[v] = from_vectors[v];
  // The elementwise rest: before the vectors and after them (all of [lo, hi) when unaligned).
  const std::size_t head = vector_begin - lo;
  const std::size_t rest = head + (hi - vector_end);
  for (std::size_t j = first; j < rest; j += stride) {
    const std::size_t i = j < head ? lo + j : vector_end + (j - head);
    to[i] = from[i];
  }
}

// The NaN group's place in CUB's order, and where the rotation sends a key.
struct Rotation {
  std::size_t n, k;
  bool descending;
  __device__ std::size_t nan_begin() const { return descending ? n - k : 0; }
  __device__ std::size_t to(std::size_t s) const {
    if (!descending) return s >= k ? s - k : s + (n - k);
    return s + k < n ? s + k : s + k - n;
  }
};

template <class U, class V> __global__ void __launch_bounds__(fix_threads)
    save_for_fix(const U* keys, const V* values, U* scratch_keys, V* scratch_values, std::size_t n, bool descending,
                 const FixPlan* plan, const unsigned* tile_prefix, std::size_t tiles) {
  const FixSteps steps = steps_of(plan, tile_prefix, tiles, n);
  const Rotation rotation{n, steps.k, descending};
  auto save = [&](std::size_t lo, std::size_t hi) {
    copy_range(keys, scratch_keys, lo, hi);
    if constexpr (has_values_v<V>) copy_range(values, scratch_values, lo, hi);
  };
  if (steps.rotate) save(rotation.nan_begin(), rotation.nan_begin() + steps.k);
  if (steps.partition) save(steps.lo, steps.hi);
}

// The rotation's in-place part: every key outside the NaN group (and outside a saved zero run)
// moves by k. Tiles are taken in the direction of the move (ascending: first to last, keys move
// down; descending: last to first, keys move up), so a tile's destination overlaps only the sources
// of itself and of tiles taken before it; it waits for their read flags before writing. Earlier
// tickets belong to running blocks that read before they wait, so the wait always ends.
template <class U, class V> __global__ void __launch_bounds__(fix_threads)
    shift_in_place(U* keys, V* values, std::size_t n, bool descending, FixPlan* plan, const unsigned* tile_prefix,
                   std::size_t tiles, unsigned* tile_flags) {
  const FixSteps steps = steps_of(plan, tile_prefix, tiles, n);
  if (!steps.rotate) return;
  const Rotation rotation{n, steps.k, descending};
  const std::size_t k = steps.k, nan_lo = rotation.nan_begin(), nan_hi = nan_lo + k;
  auto moves_here = [&](std::size_t s) {
    return s < n && (s < nan_lo || s >= nan_hi) && !(steps.partition && s >= steps.lo && s < steps.hi);
  };
  __shared__ std::size_t ticket_shared;
  for (;;) {
    if (threadIdx.x == 0) {
      ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> ticket(plan->ticket);
      ticket_shared = ticket.fetch_add(1u, ::cuda::memory_order_relaxed);
    }
    __syncthreads();
    const std::size_t ticket = ticket_shared;
    if (ticket >= tiles) break;  // block-uniform
    const std::size_t t = descending ? tiles - 1 - ticket : ticket;
    const std::size_t base = t * fix_tile;

    U tile_keys[fix_items];
    [[maybe_unused]] std::conditional_t<has_values_v<V>, V, char> tile_values[fix_items];
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = base + std::size_t(i) * fix_threads + threadIdx.x;  // striped: coalesced
      if (moves_here(s)) {
        tile_keys[i] = keys[s];
        if constexpr (has_values_v<V>) tile_values[i] = values[s];
      }
    }
    __syncthreads();  // every read of this tile is done
    if (threadIdx.x == 0) {
      __threadfence();
      ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device>(tile_flags[t]).store(1u, ::cuda::memory_order_release);
      // The tiles whose sources overlap this tile's destinations (minus the NaN group's slots).
      const std::size_t end = base + fix_tile < n ? base + fix_tile : n;
      std::size_t to_lo = 0, to_hi = 0;
      if (!descending && end > k) {
        to_lo = (base > k ? base : k) - k;
        to_hi = end - k;
      } else if (descending && base < n - k) {
        to_lo = base + k;
        to_hi = (end < n - k ? end : n - k) + k;
      }
      if (to_lo < to_hi)
        for (std::size_t u = to_lo / fix_tile; u <= (to_hi - 1) / fix_tile; ++u) {
          if (u == t) continue;
          ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> flag(tile_flags[u]);
          while (flag.load(::cuda::memory_order_acquire) == 0) {
          }
        }
    }
    __syncthreads();  // the overlapped tiles have read: write (also: ticket_shared may be reused)
    for (int i = 0; i < fix_items; ++i) {
      const std::size_t s = base + std::size_t(i) * fix_threads + threadIdx.x;
      if (moves_here(s)) {
        const std::size_t d = rotation.to(s);
        keys[d] = tile_keys[i];
        if constexpr (has_values_v<V>) values[d] = tile_values[i];
      }
    }
  }
}

// The saved keys back into place: the NaN group at its end of the order, the zero run partitioned.
template <class K, class V> __global__ void __launch_bounds__(fix_threads)
    restore_fixed(const key_bits_t<K>* scratch_keys, const V* scratch_values, key_bits_t<K>* keys, V* values,
                  std::size_t n, bool descending, const FixPlan* plan, const unsigned* tile_prefix, std::size_t tiles) {
  using F = FloatBits<K>;
  using Scan = cub::BlockScan<unsigned, fix_threads>;
  __shared__ typename Scan::TempStorage temp;
  const FixSteps steps = steps_of(plan, tile_prefix, tiles, n);
  const Rotation rotation{n, steps.rotate ? steps.k : 0, descending};
  auto move = [&](std::size_t from, std::size_t to) {
    keys[to] = scratch_keys[from];
    if constexpr (has_values_v<V>) values[to] = scratch_values[from];
  };
  if (steps.rotate) {
    const std::size_t nan_lo = rotation.nan_begin();
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < steps.k; j += stride)
      move(nan_lo + j, rotation.to(nan_lo + j));
  }
  if (!steps.partition) return;  // block-uniform
  const std::size_t lo = steps.lo, hi = steps.hi, firsts = steps.firsts;
  const std::size_t zeros_to = rotation.to(lo);  // the run holds no NaN, so it moves as one block
  for (std::size_t t = lo / fix_tile + blockIdx.x; t < (hi - 1) / fix_tile + 1; t += gridDim.x) {
    // Blocked arrangement: thread j owns fix_items consecutive keys, so its rank is a prefix sum.
    const std::size_t mine = t * fix_tile + std::size_t(threadIdx.x) * fix_items;
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
      if (s < lo || s >= hi) continue;
      if (F::first_zero(scratch_keys[s], descending)) {
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
std::size_t aligned(std::size_t bytes) { return (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment; }

// The workspace, carved the same way for the size query and the run: plan, counts, prefix, flags,
// and the device scan's own temp.
struct Workspace {
  FixPlan* plan = nullptr;
  unsigned* counts = nullptr;  // tiles + 1
  unsigned* prefix = nullptr;  // tiles + 1
  unsigned* flags = nullptr;   // tiles
  void* scan_temp = nullptr;
  std::size_t scan_bytes = 0;
  std::size_t total = 0;
};
Workspace carve(void* base, std::size_t n) {
  const std::size_t tiles = tiles_of(n);
  Workspace w;
  RXM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, w.scan_bytes, static_cast<const unsigned*>(nullptr),
                                               static_cast<unsigned*>(nullptr), int(tiles + 1)));
  char* p = static_cast<char*>(base);
  auto take = [&](std::size_t bytes) {
    char* at = p ? p + w.total : nullptr;
    w.total += aligned(bytes);
    return at;
  };
  w.plan = reinterpret_cast<FixPlan*>(take(sizeof(FixPlan)));
  w.counts = reinterpret_cast<unsigned*>(take((tiles + 1) * sizeof(unsigned)));
  w.prefix = reinterpret_cast<unsigned*>(take((tiles + 1) * sizeof(unsigned)));
  w.flags = reinterpret_cast<unsigned*>(take(tiles * sizeof(unsigned)));
  w.scan_temp = take(w.scan_bytes);
  return w;
}

template <class K, class V> void launch_typed(Order order, void* keys, void* values, std::size_t n, void* scratch_keys,
                                              void* scratch_values, void* workspace, cudaStream_t stream) {
  using U = key_bits_t<K>;
  const bool descending = order == Order::descending;
  Workspace w = carve(workspace, n);
  auto* k = static_cast<U*>(keys);
  auto* sk = static_cast<U*>(scratch_keys);
  auto* v = static_cast<V*>(values);
  auto* sv = static_cast<V*>(scratch_values);
  const std::size_t tiles = tiles_of(n);
  const unsigned blocks = blocks_of(n);
  find_fix_plan<K><<<1, 96, 0, stream>>>(k, n, descending, w.plan);
  RXM_CUDA_CHECK_LAUNCH();
  count_first_zeros<K><<<blocks, fix_threads, 0, stream>>>(k, tiles, descending, w.plan, w.counts, w.flags);
  RXM_CUDA_CHECK_LAUNCH();
  RXM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(w.scan_temp, w.scan_bytes, w.counts, w.prefix, int(tiles + 1), stream));
  save_for_fix<U, V><<<blocks, fix_threads, 0, stream>>>(k, v, sk, sv, n, descending, w.plan, w.prefix, tiles);
  RXM_CUDA_CHECK_LAUNCH();
  shift_in_place<U, V><<<blocks, fix_threads, 0, stream>>>(k, v, n, descending, w.plan, w.prefix, tiles, w.flags);
  RXM_CUDA_CHECK_LAUNCH();
  restore_fixed<K, V><<<blocks, fix_threads, 0, stream>>>(sk, sv, k, v, n, descending, w.plan, w.prefix, tiles);
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t native_order_fix_workspace_bytes(std::size_t n) { return carve(nullptr, n).total; }

void launch_native_order_fix(KeyType type, Order order, void* keys, void* values, int value_bytes, std::size_t n,
                             void* scratch_keys, void* scratch_values, void* workspace, cudaStream_t stream) {
  if (n < 2) return;
  // cub_radix_sort's value tags name "no values" void*; the fix-up kernels take V = void* for it.
  auto with_values = [&](auto key) {
    using K = decltype(key);
    cub_radix_sort::with_value_tag(value_bytes, "native float fix-up", [&](auto tag) {
      using Tag = decltype(tag);
      using V = std::conditional_t<std::is_same_v<Tag, void*>, void*, cub_radix_sort::value_of<Tag>>;
      launch_typed<K, V>(order, keys, has_values_v<V> ? values : nullptr, n, scratch_keys,
                         has_values_v<V> ? scratch_values : nullptr, workspace, stream);
    });
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
