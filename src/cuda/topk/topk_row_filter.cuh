// The row-filter variant of the row-stream family: many rows with a large k (4096 rows, k = 1024),
// split into kernels by what bounds each step, so that the read runs at full occupancy and the
// select and sort run in blocks sized for them. Design and measurements: docs/design/topk.md.
//
// 1. row_filter: a block per row streams the row through the row-stream tiles with the guessed
//    seed (stream_best's guess), holding no keys in shared memory, and appends every key above the
//    threshold to the row's slots in temporary storage. Once raise_after keys were appended, and
//    again after each further k, the threshold is raised to a lower bound of the k-th best
//    appended key (kth_floor: two radix passes over the appended keys where they lie). A row whose
//    slots overflow, whose guess left fewer than k keys above it, or too short to guess from is
//    listed for step 3. A last raise over everything appended ends the row.
// 2. row_filter_finish: a block per row loads the appended keys above the final threshold into
//    shared memory; best first, up to kFinishSortMax of them are sorted whole and the first k
//    written, else the k best are kept and written (write_row). A row whose keys do not fit its
//    buffer is listed too.
// 3. row_filter_left: one wave of row-stream blocks loops over the listed rows (stream_best and
//    write_row over the whole row): rows that defeat the filter (ascending rows, ties) stay exact.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/topk/topk_row_stream.cuh"

namespace radixmesh::detail::topk_gpu {

// A row's result of row_filter: the keys above `threshold` among its first `count` slots hold its
// k best. count = kFilterListed: the row is listed for row_filter_left.
struct FilterState {
  unsigned long long threshold;
  unsigned count;
};
constexpr unsigned kFilterListed = ~0u;

// The filter's temporary storage and sizes (the plan sets them).
struct FilterBuffers {
  unsigned long long* slots;  // rows x slots_per_row appended keys
  FilterState* states;        // rows
  unsigned* listed;           // rows: the rows left to row_filter_left, in no order
  unsigned* listed_count;     // 1, zeroed before row_filter
  std::uint32_t slots_per_row, raise_after;
};

// The slots a row holds, and the appends before the first raise on the way: 5 and 3 max(k, 256)
// (bench/phases/row_filter_model.py 40: without a raise on the way a row of normal logits appends
// 2.1-2.9 k keys, median, at most 6.2 k), as every raise reads the appended keys three times: most
// rows take only the last one. Small k: as for k = 256.
constexpr std::uint32_t filter_slots_per_row(std::uint32_t k) { return 5 * (k > 256 ? k : 256); }
constexpr std::uint32_t filter_raise_after(std::uint32_t k) { return 3 * (k > 256 ? k : 256); }

// Lists row r for step 3 (one thread calls it).
__device__ inline void list_row(const FilterBuffers& f, std::size_t r) { f.listed[atomicAdd(f.listed_count, 1u)] = unsigned(r); }

// Calls f(key, valid) for keys[0, count), a block's threads taking kKeyBatch at a time with their
// loads issued together (the keys lie in L2: one round trip a batch, not one a key). Every thread
// of the block calls f the same number of times (valid false past count), so that f may use
// warp-wide instructions.
constexpr unsigned kKeyBatch = 4;
template <class F> __device__ void for_each_key(const unsigned long long* keys, unsigned count, F&& f) {
  for (unsigned base = 0; base < count; base += kKeyBatch * blockDim.x) {
    unsigned long long key[kKeyBatch];
#pragma unroll
    for (unsigned j = 0; j < kKeyBatch; ++j) {
      const unsigned i = base + j * blockDim.x + threadIdx.x;
      key[j] = i < count ? __ldcg(keys + i) : 0ull;
    }
#pragma unroll
    for (unsigned j = 0; j < kKeyBatch; ++j) f(key[j], base + j * blockDim.x + threadIdx.x < count);
  }
}

// A lower bound of the k-th best of the keys above `threshold` among keys[0, count) (at least k
// of them, appended by this block before a barrier): the 16 bits of the k-th below the bits those
// keys all share, every lower bit 0, minus one (a later key is taken iff it is greater); never
// below `threshold`. Three reads of the keys where they lie (L2): the shared bits, then two radix
// passes of 8 bits (radix_select_pass_visiting, the reads batched). Every thread calls it; it
// ends with a barrier.
__device__ inline unsigned long long kth_floor(const unsigned long long* keys, unsigned count,
                                               unsigned long long threshold, unsigned k, StreamShared& sh) {
  unsigned long long all = ~0ull, any = 0;
  for_each_key(keys, count, [&](unsigned long long key, bool valid) {
    if (valid && key > threshold) all &= key, any |= key;
  });
  const unsigned long long differ = block_differing_bits(all, any, sh);  // keys are distinct, at least k >= 2
  int high = differ ? 64 - __clzll((long long)differ) : 0;
  unsigned long long prefix = high == 64 ? 0ull : sh.any >> high;
  unsigned need = k;
  auto above = [&](auto add) {
    for_each_key(keys, count, [&](unsigned long long key, bool valid) {
      if (valid && key > threshold) add(key);
    });
  };
  for (int pass = 0; pass < 2 && high > 0; ++pass) {
    radix_select_pass_visiting(sh, above, 0, high, prefix, need);
    __syncthreads();  // the histogram and the decision are rewritten by the next pass
  }
  const unsigned long long floor = high == 64 ? 0ull : prefix << high;
  return floor && floor - 1 > threshold ? floor - 1 : threshold;
}

// Step 1: a block per row of the launch chunk.
template <class T> __global__ void __launch_bounds__(kStreamThreads, sizeof(T) == 2 ? 6 : 5) row_filter(StreamParams<T> p, FilterBuffers f) {
  __shared__ StreamShared sh;
  const std::size_t r = p.row0 + blockIdx.x;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  const unsigned k = p.k;
  if (!guesses_seed(k, length)) {
    if (threadIdx.x == 0) list_row(f, r), f.states[r].count = kFilterListed;
    return;
  }
  const ValueTiles<T> src(p.values + begin, 0, length, p.options, p.index_bits);
  unsigned long long* slots = f.slots + std::uint64_t(r) * f.slots_per_row;
  const std::uint64_t tiles = src.tiles();
  typename ValueTiles<T>::Regs cur, next;
  src.load(cur, 0);
  if (threadIdx.x == 0) sh.count = 0;  // ordered before the appends by seed_from_first_tile's barriers
  unsigned long long threshold = seed_from_first_tile(src, cur, estimate_lanes(k, length), sh);  // the guess
  unsigned raise_at = f.raise_after;
  bool due = false, raised = false;
  // One shared atomic an append, through the row-stream tiles' offer (its warp-ranked vectors where
  // by_warp_pays), as in the row-stream blocks. Appends reserved a warp at a time on every vector
  // step, each lane ranking its own values, measured slower (one H100, 4096 rows: 32000 bf16
  // k = 256 0.418 against 0.284 ms, 128256 k = 1024 1.335 against 0.788; calls HR / HQ,
  // docs/design/topk.md). A thread whose append reaches the raise mark says so at the tile's one
  // barrier. Appends past the slots are counted, not stored.
  auto put = [&](unsigned long long key) {
    const unsigned at = atomicAdd(&sh.count, 1u);
    if (at < f.slots_per_row) slots[at] = key;
    due |= at + 1 >= raise_at;
  };
  if (threadIdx.x < src.loose())
    if (const unsigned long long key = src.loose_key(threadIdx.x); key > threshold) put(key);
  const bool by_warp = by_warp_pays(k, length);
  for (std::uint64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) src.load(next, t + 1);
    src.template offer<true>(cur, t, threshold, by_warp, put);
    // sh.count is read only after this barrier and before the raise's own barriers: no append of
    // the next tile can race with it.
    if (__syncthreads_or(due)) {
      const unsigned count = sh.count;
      if (count > f.slots_per_row) break;  // every thread sees the same count: listed below
      threshold = kth_floor(slots, count, threshold, k, sh);
      raised = true, due = false;
      raise_at = count + k;
    }
    cur = next;
  }
  __syncthreads();
  const unsigned count = sh.count;
  // A raised threshold leaves at least k keys above it; an unraised one, the count.
  const bool listed = count > f.slots_per_row || (!raised && count < k);
  // A last raise over everything appended, so that step 2 selects from about k keys (k and the
  // k-th's ties at 16 bits) rather than from everything above the last raise.
  if (!listed) threshold = kth_floor(slots, count, threshold, k, sh);
  if (threadIdx.x == 0) {
    if (listed) list_row(f, r), f.states[r].count = kFilterListed;  // step 2 skips it
    else f.states[r] = {threshold, count};
  }
}

// Step 2's shared memory, in keys: p.capacity (kFinishLoad) keys loaded, the keep area of
// StreamBuffer::keep_best after them; or, sorted output of at most kFinishSortMax keys, their radix
// sort's two halves and tables over the same bytes.
constexpr unsigned kFinishLoad = kStreamRadixEntries;
constexpr unsigned kFinishSortMax = 2048;
constexpr unsigned kFinishSharedKeys =
    2 * kFinishSortMax + unsigned(block_radix_sort_scratch_bytes<kStreamThreads / 32>(0) / 8);
static_assert(kFinishLoad + stream_keep_entries(kRowStreamMaxK) <= kFinishSharedKeys);

// Step 2: a block per row of the launch chunk.
template <class T>
__global__ void __launch_bounds__(kStreamThreads, 4) row_filter_finish(StreamParams<T> p, FilterBuffers f) {
  extern __shared__ unsigned long long stream_keys[];
  __shared__ StreamShared sh;
  StreamBuffer buf{stream_keys, stream_keys + kFinishLoad, sh};
  const std::size_t r = p.row0 + blockIdx.x;
  const FilterState state = f.states[r];
  if (state.count == kFilterListed) return;
  const unsigned long long* slots = f.slots + std::uint64_t(r) * f.slots_per_row;
  if (threadIdx.x == 0) sh.count = 0;
  __syncthreads();
  bool over = false;
  for_each_key(slots, state.count, [&](unsigned long long key, bool valid) {
    const bool take = valid && key > state.threshold;
    const unsigned at = warp_reserve(take, &sh.count);
    if (take && at < p.capacity) buf.keys[at] = key;
    over |= take && at >= p.capacity;
  });
  if (__syncthreads_or(over)) {
    if (threadIdx.x == 0) list_row(f, r);
    return;
  }
  // Best first: up to kFinishSortMax keys sorted whole (one sort, no select), the first k written.
  write_row<T, kFinishSortMax>(p, buf, r, p.rows.begin(r), sh.count);
}

// Step 3: one wave of row-stream blocks over the listed rows (p: the row-stream plan of one
// segment a row). The 32-bit kernel is held to 3 blocks an SM, as row_stream's guess kernel is.
template <class T>
__global__ void __launch_bounds__(kStreamThreads, sizeof(T) == 4 ? 3 : 0) row_filter_left(StreamParams<T> p,
                                                                                          FilterBuffers f) {
  extern __shared__ unsigned long long stream_keys[];
  __shared__ StreamShared sh;
  StreamBuffer buf{stream_keys, stream_keys + p.capacity, sh};
  const unsigned listed = *f.listed_count;
  for (unsigned i = blockIdx.x; i < listed; i += gridDim.x) {
    const std::size_t r = f.listed[i];
    const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
    const ValueTiles<T> src(p.values + begin, 0, length, p.options, p.index_bits);
    const unsigned count = stream_best<false, true>(src, buf, p.k, p.compact_above);
    write_row(p, buf, r, begin, count);
    __syncthreads();  // the buffer is the next row's
  }
}

}  // namespace radixmesh::detail::topk_gpu
