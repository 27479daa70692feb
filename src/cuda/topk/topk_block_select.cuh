// The one-block select: the whole select of a row, its ordering and its output in one block.
#pragma once
#include "cuda/topk/topk_select_passes.cuh"

namespace radixmesh::detail::topk_gpu {

// ---- the one-block path: the whole select of a row in one block.
// Largest k it keeps in shared memory.
constexpr int kBlockSelectMaxK = 2048;

// The passes of one select inside the block, from state `s` until it is done: `key(i, key, nidx)`
// gives element i's composite (W rank bits, then IB bits of the complemented index) and whether it
// takes part. Each pass: a shared-memory histogram, the bucket picked in the block (no global
// histogram, no last-block handshake). Every thread returns the final state.
template <class U, class Key>
__device__ __forceinline__ RowState<U> block_passes(RowState<U> s, std::uint64_t count, int W, int IB, int digit_bits,
                                                    unsigned* smem_hist, RowState<U>& shared_state,
                                                    typename BinScan::TempStorage& scan_storage, Key&& key) {
  const int bins = 1 << digit_bits, total_bits = W + IB;
  const int max_passes = (total_bits + digit_bits - 1) / digit_bits + 1;
  for (int pass = 0; !s.done && pass < max_passes; ++pass) {
    zero_smem(smem_hist, bins);
    const PassBits pb = next_bits(s.resolved, total_bits, digit_bits);
    for (std::uint64_t i = threadIdx.x; i < count; i += kThreads) {
      U k;
      std::uint64_t nidx;
      if (key(i, k, nidx) && compare_top<U, false>(k, nidx, s, W, IB))
        atomicAdd(smem_hist + composite_digit(k, nidx, IB, pb.low, pb.width), 1u);
    }
    __syncthreads();
    unsigned long long local[kBinsPerThread];
    const unsigned long long sum = load_my_bins(bins, local, [&](int b) { return (unsigned long long)smem_hist[b]; });
    unsigned long long above;
    BinScan(scan_storage).ExclusiveSum(sum, above);
    RowState<U> next = s;  // every thread's copy is `s`; only the picking thread writes the shared one
    if (pick_in_my_bins(local, bins, above, sum, next, total_bits, IB, pb)) shared_state = next;
    __syncthreads();
    s = shared_state;
  }
  return s;
}

// Used when k <= kBlockSelectMaxK and a row's source is small: a delegate row's candidates (about
// k of them for most inputs, up to k * 2^alpha for adversarial ones such as ascending input, which
// then cost this one block more time), or a short raw row. Every radix pass with a shared-memory
// histogram and the bucket picked inside the block (no global histogram, no last-block handshake,
// one launch instead of one per pass), then the winners gathered into shared memory, ordered there
// (bitonic sort: ascending index, or best first with ties by index) and written out. It replaces
// the select launches, the winner gather, CUB's sort(s) and the output kernel: the fixed per-call
// cost that dominated the batched shapes.
template <class U, class Index, bool Scaled>
__global__ void __launch_bounds__(kThreads) block_select(Params<U> p, const Index* input_indices, U* out_values,
                                                         Index* out_indices) {
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ U win_rank[kBlockSelectMaxK];
  __shared__ std::uint64_t win_idx[kBlockSelectMaxK];
  __shared__ RowState<U> shared_state;
  __shared__ unsigned long long win_count;
  __shared__ typename BinScan::TempStorage scan_storage;
  const std::size_t r = blockIdx.y;
  const Source<U> src = row_source(p, r);
  const std::uint64_t idx_mask = low_mask(p.IB);
  RowState<U> s = p.state[r];
  if (threadIdx.x == 0) shared_state = s, win_count = 0;
  __syncthreads();
  [[maybe_unused]] ScaledView<U> sv{false, U(0), {}};
  if constexpr (Scaled) {
    // RadiK's scaling: the select over the scaled ranks first (W bits, no index digits), then the
    // main select below inside its group. (Separate instantiation: the group check on every
    // element, compiled into the default select, made it 1.6-1.9x slower on raw rows: H200,
    // bench_topk --rows-sweep.)
    sv = scaled_view(p, r, src);
    const RowState<U> g = block_passes<U>(s, src.count, p.W, 0, p.digit_bits, smem_hist, shared_state, scan_storage,
                                          [&](std::uint64_t i, U& key, std::uint64_t& nidx) {
                                            U rank;
                                            std::uint64_t idx;
                                            src.load(i, rank, idx);
                                            key = sv.scaled(rank, p.type, p.options), nidx = 0;
                                            return true;
                                          });
    sv.group = g;
    start_inside_group(s, g, sv.sample, p.type, p.options, p.W);
    __syncthreads();  // every thread has read shared_state
    if (threadIdx.x == 0) shared_state = s;
    __syncthreads();
  }
  s = block_passes<U>(s, src.count, p.W, p.IB, p.digit_bits, smem_hist, shared_state, scan_storage,
                      [&](std::uint64_t i, U& rank, std::uint64_t& nidx) {
                        std::uint64_t idx;
                        src.load(i, rank, idx);
                        nidx = ~idx & idx_mask;
                        if constexpr (Scaled) return sv.place(rank, p.type, p.options, p.W) == 0;
                        else return true;
                      });
  // The winners, in any order, into shared memory (exactly min(k, length) of them).
  const std::uint64_t rounded = (src.count + 31) & ~31ull;
  for (std::uint64_t i = threadIdx.x; i < rounded; i += kThreads) {
    U rank = 0;
    std::uint64_t idx = 0;
    const bool in = i < src.count;
    if (in) src.load(i, rank, idx);
    const bool win = is_winner<U, Scaled>(in, rank, idx, idx_mask, s, sv, p);
    warp_append(win, rank, idx, &win_count, win_rank, win_idx, kBlockSelectMaxK);
  }
  __syncthreads();
  const unsigned count = unsigned(win_count < (unsigned long long)kBlockSelectMaxK ? win_count : (unsigned long long)kBlockSelectMaxK);
  unsigned size = 1;
  while (size < count) size *= 2;
  for (unsigned i = count + threadIdx.x; i < size; i += kThreads) win_rank[i] = 0, win_idx[i] = ~0ull;
  __syncthreads();
  // Bitonic sort of the `size` entries: ascending index, or (sorted) best rank first, ties by index.
  const bool by_rank = p.options.sorted;
  auto before = [&](unsigned a, unsigned b) {
    if (by_rank && win_rank[a] != win_rank[b]) return win_rank[a] > win_rank[b];
    return win_idx[a] < win_idx[b];
  };
  for (unsigned block = 2; block <= size; block *= 2)
    for (unsigned stride = block / 2; stride > 0; stride /= 2) {
      for (unsigned t = threadIdx.x; t < size / 2; t += kThreads) {
        const unsigned a = 2 * t - (t & (stride - 1)), b = a + stride;
        const bool forward = (a & block) == 0;
        if (forward ? before(b, a) : before(a, b)) {
          const U tr = win_rank[a];
          win_rank[a] = win_rank[b], win_rank[b] = tr;
          const std::uint64_t ti = win_idx[a];
          win_idx[a] = win_idx[b], win_idx[b] = ti;
        }
      }
      __syncthreads();
    }
  const std::uint64_t begin = p.rows.begin(r);
  for (std::uint64_t q = threadIdx.x; q < p.k; q += kThreads) {
    const std::uint64_t at = r * p.k + q;
    if (q < count) {
      out_values[at] = raw_of_rank<U>(win_rank[q], p.type, p.options);
      out_indices[at] = input_indices ? input_indices[begin + win_idx[q]] : Index(win_idx[q]);
    } else {  // a row shorter than k
      out_values[at] = 0;
      out_indices[at] = Index(-1);
    }
  }
  if (threadIdx.x == 0) p.win_count[r] = count;  // for the RXM_TOPK_DEBUG check
}

// The delegate select of a row in one block (its passes after the delegate pass's first, then the
// qualifying list): one launch instead of one per pass and list_qualifying's, for rows with few
// delegates (batched rows: 2^15 delegates per row of 2^22 at alpha = 7). beta = 1 only.
template <class U> __global__ void __launch_bounds__(kThreads) block_delegate_select(Params<U> p) {
  __shared__ unsigned smem_hist[kMaxBins];
  __shared__ RowState<U> shared_state;
  __shared__ typename BinScan::TempStorage scan_storage;
  const std::size_t r = blockIdx.y;
  RowState<U> t = p.dstate[r];
  if (t.mode != kDelegates) return;
  const Source<U> src = delegate_source(p, r, 1);
  const std::uint64_t idx_mask = low_mask(p.IB);
  if (threadIdx.x == 0) shared_state = t;
  __syncthreads();
  t = block_passes<U>(t, src.count, p.W, p.IB, p.digit_bits, smem_hist, shared_state, scan_storage,
                      [&](std::uint64_t i, U& rank, std::uint64_t& nidx) {
                        std::uint64_t idx;
                        src.load(i, rank, idx);
                        nidx = ~idx & idx_mask;
                        return true;
                      });
  if (threadIdx.x == 0) p.dstate[r] = t;
  list_row_qualifying<U, false>(p, r, t);
}

}  // namespace radixmesh::detail::topk_gpu
