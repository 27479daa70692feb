// The device-level top-k (radixmesh/device/topk.cuh): plan the temporary storage, choose the path
// (delegates + radix select, or radix select alone) and launch it, stream-ordered. One explicit
// instantiation per key width (u16, u32, u64) keeps the build small.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <string>
#include <type_traits>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_debug.hpp"
#include "cuda/topk/topk_kernels.cuh"
#include "cuda/topk/topk_plan_gpu.hpp"
#include "cuda/topk/topk_planned.hpp"
#include "cuda/topk/topk_row_cluster.hpp"
#include "cuda/topk/topk_row_stream.hpp"
#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

namespace {

std::size_t align_up(std::size_t x) { return (x + 255) & ~std::size_t(255); }

// Blocks of 256 threads for a 1-D grid-stride kernel over `count` items.
unsigned grid_1d(std::uint64_t count) {
  return unsigned(std::clamp<std::uint64_t>((count + 255) / 256, 1, kMaxGrid1d));
}

// The view of rows [r0, r0 + 65535) that one launch chunk works on: per-row arrays start at row
// r0; equal-length rows start their values there (offsets stay absolute positions in the values,
// so delegate slots, (begin >> alpha) + row, stay distinct within the chunk).
template <class U> Params<U> chunk_params(const Params<U>& p, std::size_t r0, const std::uint64_t* offsets) {
  Params<U> c = p;
  if (offsets) c.rows.offsets = offsets + r0;
  else c.values = p.values + r0 * p.rows.stride;
  c.state += r0;
  c.dstate += r0;
  c.row_max += r0;
  if (c.row_min) c.row_min += r0;  // only TopkStart::range_adaptive has them
  if (c.sstate) c.sstate += r0;    // only TopkStart::radik_scaling
  c.cand_rank += r0 * p.cand_cap;
  c.cand_idx += r0 * p.cand_cap;
  c.cand_count += r0;
  c.qual_list += r0 * p.k;
  c.qual_count += r0;
  c.win_rank += r0 * p.k;
  c.win_idx += r0 * p.k;
  c.win_count += r0;
  return c;
}

// Dr. Top-k's subrange size, re-derived for this pipeline. The delegates cost about c1 * n / S
// element-reads (written once, then the delegate select's passes, each over (rank, offset)
// pairs), the rescan about c2 * k * S (k qualifying subranges of S, plus their candidates' select
// passes): least at S = sqrt(c1/c2 * n/k), i.e. alpha = log2(n)/2 - log2(k)/2 + const. A sweep of
// alpha in {4, 6, 8, 10, 12} at n = 2^28 on an H200 (bench_topk --sweep, bench/results/topk.jsonl)
// put the best at 12, 10, 8, 6 for k = 16, 2^10, 2^16, 2^20: alpha falls by ~1/3 per doubling of
// k, not 1/2 (a larger k also means more delegate ties and longer candidate selects), so the rule
// is the fit alpha = log2(n)/2 - log2(k)/3 - 2/3.
int choose_alpha(std::uint64_t row_length, std::uint64_t k) {
  if (row_length < kMinDelegateRow || k == 0) return 0;
  const double fit = 0.5 * std::log2(double(row_length)) - std::log2(double(k)) / 3.0 - 2.0 / 3.0;
  int alpha = std::clamp(int(std::lround(fit)), 3, 12);
  // Delegates pay only when the rescan is a small part of the row.
  while (alpha > 3 && (k << alpha) * 4 > row_length) --alpha;
  if ((k << alpha) * 4 > row_length) return 0;
  return alpha;
}

// Calls f(U{}) with the unsigned type of a W-bit key: kernels are instantiated per width.
template <class F> decltype(auto) with_width(int W, F&& f) {
  if (W == 16) return f(std::uint16_t{});
  if (W == 32) return f(std::uint32_t{});
  return f(std::uint64_t{});
}

// Resident blocks per SM of `kernel` at `threads` (occupancy API: registers and shared memory).
template <class Kernel> int blocks_per_sm(Kernel kernel, int threads) {
  int blocks = 0;
  RXM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return std::max(1, blocks);
}

// `device`'s SM count times blocks_per_sm() of the kernel that `query` names at key width W,
// asked once per (query, width, device): the host work of every call counts.
enum class GridQuery { delegate_pass, delegate_pass_bounded, stable_filter, compact_read };
std::uint64_t resident_grid(int device, int W, GridQuery query) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[4][3][kMaxDevices] = {};
  const int width = W == 16 ? 0 : W == 32 ? 1 : 2;
  std::atomic<int>* slot =
      device >= 0 && device < kMaxDevices ? &cache[int(query)][width][device] : nullptr;
  if (slot && slot->load(std::memory_order_relaxed) > 0) return std::uint64_t(slot->load(std::memory_order_relaxed));
  int sm_count = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  // compact_read's occupancy from its unsigned-key instantiation (the other types of a width
  // differ only in a few instructions of the rank transform).
  const int per_sm = with_width(W, [&](auto tag) {
    using U = decltype(tag);
    switch (query) {
      case GridQuery::delegate_pass: return blocks_per_sm(delegate_pass<U>, kThreads);
      case GridQuery::delegate_pass_bounded: return blocks_per_sm(delegate_pass_bounded<U>, kThreads);
      case GridQuery::stable_filter: return blocks_per_sm(stable_filter<U, ListSink<U>>, kFilterThreads);
      case GridQuery::compact_read: return blocks_per_sm(compact_read<U, U>, kCompactThreads);
    }
    return 1;
  });
  const int blocks = std::max(1, sm_count) * per_sm;
  if (slot) slot->store(blocks, std::memory_order_relaxed);
  return std::uint64_t(blocks);
}

// Blocks of the delegate pass resident on `device` at once.
std::uint64_t resident_blocks(int device, int W, bool bounded) {
  return resident_grid(device, W, bounded ? GridQuery::delegate_pass_bounded : GridQuery::delegate_pass);
}

// SMs and resident blocks of the stable filter (sample select's persistent grid) and of one wave
// of compact_read on `device`.
struct FilterGrid {
  int sms = 0, blocks = 0, compact_blocks = 0;
};
FilterGrid filter_grid(int device, int W) {
  int sm_count = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return {std::max(1, sm_count), int(resident_grid(device, W, GridQuery::stable_filter)),
          int(resident_grid(device, W, GridQuery::compact_read))};
}

// Whether a problem takes the sample-select path (TopkTuning::sample_select).
bool takes_sample_select(const device::TopkProblem& pr) {
  const device::TopkTuning& tuning = pr.tuning;
  const bool single = pr.rows == 1 && !pr.row_offsets &&
                      (tuning.start == device::TopkStart::automatic || tuning.start == device::TopkStart::none);
  if (!single || tuning.sample_select == 0) return false;
  const bool any_width = pr.k >= kSampleSelectMinK && pr.row_length >= kSampleSelectMinRow;
  const bool wide_32 = size_of(pr.type) == 4 && pr.k >= kSampleSelectMinK32 && pr.row_length >= kSampleSelectMinRow32;
  return tuning.sample_select == 1 || any_width || wide_32;
}

}  // namespace

GpuPlan plan_gpu(const device::TopkProblem& pr, int device) {
  const device::TopkTuning& tuning = pr.tuning;
  GpuPlan g;
  const int width = int(size_of(pr.type));
  g.key_bytes = std::size_t(width);
  g.W = width * 8;
  g.rows = pr.rows;
  g.k = pr.k;
  g.max_len = pr.row_offsets ? pr.max_row_length : pr.row_length;
  g.IB = g.max_len > 1 ? int(std::bit_width(std::uint64_t(g.max_len - 1))) : 0;
  g.alpha = tuning.delegate_log2 < 0 ? choose_alpha(g.max_len, pr.k) : std::min(tuning.delegate_log2, 20);
  g.digit_bits = pr.rows > 64 ? 8 : kMaxDigitBits;
  g.beta = g.alpha >= 5 ? tuning.delegate_beta : 1;  // delegate_pass_top_beta: a warp per subrange
  // The one-block select: where every row's source is small (a delegate row's candidates, or a
  // short raw row; rows shorter than kMinDelegateRow are raw in a delegate plan too).
  const bool block_select_pays =
      g.alpha > 0 ? g.max_len >= kBlockSelectMinDelegateRow : g.max_len <= kBlockSelectMaxRow;
  g.block_select = pr.k <= std::size_t(kBlockSelectMaxK) &&
                   (tuning.block_select == 1 || (tuning.block_select < 0 && block_select_pays));
  const std::uint64_t delegates_per_row = g.alpha ? (g.max_len >> g.alpha) + 1 : 0;
  g.block_delegate_select = g.alpha && g.beta == 1 &&
                            (tuning.delegate_block_select == 1 ||
                             (tuning.delegate_block_select < 0 && delegates_per_row <= kBlockDelegateSelectMax));
  // One wave of the delegate pass (the kernel that reads everything): as many blocks as fit on the
  // device at once, split evenly over the rows, rounded DOWN. (Rounded up per row, 64 rows would
  // get 17 x 64 = 1088 blocks for 1056 places: a second wave of 32 blocks, each with a full
  // block's share of the row; 64x2^22 k = 512 took 0.729 ms that way against 0.596, H200,
  // bench_topk.)
  g.five_blocks = g.beta == 1 && (tuning.delegate_pass_five_blocks == 1 ||
                                  (tuning.delegate_pass_five_blocks < 0 && g.W <= 32));
  const std::uint64_t target_blocks = resident_blocks(device, g.W, g.five_blocks);
  const std::uint64_t per_row = std::max<std::uint64_t>(1, target_blocks / pr.rows);
  g.grid_x = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(per_row, (g.max_len + 4095) / 4096)));
  g.cand_cap = g.alpha ? std::min<std::uint64_t>(g.max_len, std::uint64_t(pr.k) << g.alpha) : 0;
  g.sample = takes_sample_select(pr);
  if (g.sample) {
    // No delegates; the select over the candidates, then a stable filter (no block_select).
    g.alpha = 0, g.beta = 1, g.block_select = false, g.block_delegate_select = false;
    const std::uint64_t n = g.max_len;
    g.sample_count = std::min<std::uint64_t>(n, std::uint64_t(1) << kSampleLog2);
    // mu = the expected number of samples in the top k; the bound's sample rank r = mu + 5 sqrt(mu)
    // + 4 keeps count(rank >= L) >= k unless the top k hold more than r samples (a 5-sigma event
    // of a binomial, before the + 4), so the fallback is for inputs built against the stride.
    const double mu = double(pr.k) * double(g.sample_count) / double(n);
    g.sample_r = std::min<std::uint64_t>(g.sample_count, std::uint64_t(std::ceil(mu + 5.0 * std::sqrt(mu) + 4.0)));
    g.sample_slack = g.sample_r / 8;
    // Expected candidates ~(r + slack / 2) n / s; the capacity is twice the most (relative
    // spread ~1 / sqrt(r)), at least k, at most n, and at least n / 16: ties at the bound (16-bit
    // keys, U[128.6,128.7]) put far more than r samples at L when its bucket cannot be split
    // (H200, bench_topk --ab-sample: f16/bf16 and U[128.6,128.7] at k = 1024 overflow 2 r n / s
    // and fall back to the raw select, 13-21 ms). n / 16 is what the delegate path took at k = 65536 (k 2^8).
    const std::uint64_t per_sample = (n + g.sample_count - 1) / g.sample_count;
    const std::uint64_t expected = (g.sample_r + g.sample_slack) * per_sample;
    g.cand_cap = std::min<std::uint64_t>(n, std::max({std::uint64_t(pr.k), 2 * expected + 4096, n / 16}));
    // Status words for the finest tiles (one round: the output filter after a fallback reads the row).
    const std::uint64_t tile = 16 / g.key_bytes * kFilterThreads * kFilterLoads;
    g.filter_tiles = (n + tile - 1) / tile;
    const FilterGrid f = filter_grid(device, g.W);
    g.filter_grid = unsigned(f.blocks);
    // The candidates' select passes: ~16 per thread, at least one block per SM (so that the
    // fallback over a whole row is not starved), at most the delegate pass's grid.
    g.sample_select_grid = unsigned(std::clamp<std::uint64_t>(expected / (kThreads * 16), std::uint64_t(f.sms),
                                                              std::max<std::uint64_t>(f.sms, g.grid_x)));
    const std::uint64_t compact_tile = std::uint64_t(kCompactThreads) * kCompactLoads * (16 / g.key_bytes);
    g.compact_tiles = (n + compact_tile - 1) / compact_tile;
    g.compact_grid = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(f.compact_blocks, g.compact_tiles)));
  }
  const int bins = 1 << g.digit_bits;
  const std::size_t places = pr.rows * pr.k;
  const std::size_t state_bytes = g.W == 16 ? sizeof(RowState<std::uint16_t>)
                                  : g.W == 32 ? sizeof(RowState<std::uint32_t>)
                                              : sizeof(RowState<std::uint64_t>);
  // CUB's scratch for ordering the winners.
  std::size_t cub_bytes = 0, b1 = 0, b2 = 0;
  auto query = [&](auto rank_tag) {
    using U = decltype(rank_tag);
    if (pr.rows == 1) {
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b1, (std::uint64_t*)nullptr, (std::uint64_t*)nullptr,
                                                     (U*)nullptr, (U*)nullptr, places));
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, b2, (U*)nullptr, (U*)nullptr,
                                                               (std::uint64_t*)nullptr, (std::uint64_t*)nullptr,
                                                               places));
    } else {
      RXM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
          nullptr, b1, (std::uint64_t*)nullptr, (std::uint64_t*)nullptr, (U*)nullptr, (U*)nullptr,
          std::int64_t(places), std::int64_t(pr.rows), (std::uint64_t*)nullptr, (std::uint64_t*)nullptr));
      RXM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairsDescending(
          nullptr, b2, (U*)nullptr, (U*)nullptr, (std::uint64_t*)nullptr, (std::uint64_t*)nullptr,
          std::int64_t(places), std::int64_t(pr.rows), (std::uint64_t*)nullptr, (std::uint64_t*)nullptr));
    }
  };
  // Only the multi-block path sorts (block_select orders in shared memory): CUB's queries run
  // its occupancy calculations, host time on every call that the one-block path need not spend.
  if (!g.block_select) {
    if (g.W == 16) query(std::uint16_t{});
    else if (g.W == 32) query(std::uint32_t{});
    else query(std::uint64_t{});
  }
  cub_bytes = std::max(b1, b2);
  if (g.sample) {  // the scan of compact_read's tile counts shares CUB's scratch (it runs before the sort)
    std::size_t scan_bytes = 0;
    RXM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (unsigned long long*)nullptr,
                                                 (unsigned long long*)nullptr, g.compact_tiles));
    cub_bytes = std::max(cub_bytes, scan_bytes);
  }

  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t offset = at;
    at += align_up(bytes);
    return offset;
  };
  g.off_state = take(pr.rows * state_bytes);
  g.off_dstate = take(pr.rows * state_bytes);
  // Histograms and pass counters serve one launch chunk of rows at a time (a grid's y extent).
  g.chunk_rows = std::min<std::size_t>(pr.rows, kMaxChunkRows);
  g.hist_bytes = g.chunk_rows * bins * sizeof(unsigned long long);
  g.off_hist = take(g.hist_bytes);
  g.off_counters = take(g.chunk_rows * sizeof(unsigned));
  const std::size_t delegate_count = g.alpha ? ((pr.total >> g.alpha) + pr.rows + 1) * std::size_t(g.beta) : 0;
  g.off_delegates = take(delegate_count * g.key_bytes);
  // Offsets within the subrange: beta > 1 only (a beta = 1 delegate stands for its subrange's start).
  g.off_delegate_off = take(g.beta > 1 ? delegate_count * sizeof(std::uint32_t) : 0);
  g.off_row_max = take(pr.rows * sizeof(unsigned long long));
  g.off_row_min = take(tuning.start == device::TopkStart::range_adaptive ? pr.rows * sizeof(unsigned long long) : 0);
  g.off_sstate = take(tuning.start == device::TopkStart::radik_scaling ? pr.rows * state_bytes : 0);
  g.off_cand_rank = take(pr.rows * g.cand_cap * g.key_bytes);
  g.off_cand_idx = take(pr.rows * g.cand_cap * sizeof(std::uint64_t));
  g.off_cand_count = take(pr.rows * sizeof(unsigned long long));
  g.off_qual_list = take(g.alpha ? pr.rows * pr.k * sizeof(std::uint64_t) : 0);
  g.off_qual_count = take(pr.rows * sizeof(unsigned long long));
  g.off_win_count = take(pr.rows * sizeof(unsigned long long));
  g.off_win_rank = take(places * g.key_bytes);
  g.off_win_idx = take(places * sizeof(std::uint64_t));
  g.off_alt_rank = take(places * g.key_bytes);
  g.off_alt_idx = take(places * sizeof(std::uint64_t));
  g.off_segments = take((pr.rows + 1) * sizeof(std::uint64_t));
  g.off_cub = take(cub_bytes);
  g.off_sample = take(g.sample_count * g.key_bytes);
  g.off_status = take(g.filter_tiles * sizeof(unsigned long long));
  g.off_tickets = take(g.sample ? sizeof(unsigned) : 0);
  g.off_tile_count = take(g.compact_tiles * sizeof(unsigned long long));
  g.off_tile_offset = take(g.compact_tiles * sizeof(unsigned long long));
  g.off_tile_place = take(g.compact_tiles * sizeof(unsigned long long));
  g.off_stage_rank = take(g.sample ? g.cand_cap * g.key_bytes : 0);
  g.off_stage_idx = take(g.sample ? g.cand_cap * sizeof(std::uint64_t) : 0);
  g.cub_bytes = cub_bytes;
  g.temp_bytes = at;
  return g;
}

// The sample-select path (topk_sample_select.cuh, steps 1-6), one row.
template <class U>
void launch_sample_select(const GpuPlan& g, const Params<U>& p, char* base, const device::TopkProblem& pr,
                          cudaStream_t stream, const DebugChecks& debug) {
  const SampleView<U> sv{reinterpret_cast<U*>(base + g.off_sample),
                         g.sample_count,
                         g.sample_r,
                         g.sample_slack,
                         reinterpret_cast<unsigned long long*>(base + g.off_status),
                         reinterpret_cast<unsigned*>(base + g.off_tickets),
                         g.filter_tiles};
  const std::uint64_t hist_words = g.hist_bytes / 8;
  sample_start<U><<<grid_1d(std::max({g.sample_count, g.filter_tiles, hist_words})), 256, 0, stream>>>(p, sv,
                                                                                                      hist_words);
  debug.after_launch("sample_start");
  sample_bound<U><<<1, kSampleBoundThreads, 0, stream>>>(p, sv);
  debug.after_launch("sample_bound");
  // Phase 1, the only full read: rank >= L into the candidates, in index order, with the key
  // type compiled into the read.
  const CompactLists<U> cl{reinterpret_cast<unsigned long long*>(base + g.off_tile_count),
                           reinterpret_cast<unsigned long long*>(base + g.off_tile_offset),
                           reinterpret_cast<unsigned long long*>(base + g.off_tile_place),
                           reinterpret_cast<U*>(base + g.off_stage_rank),
                           reinterpret_cast<std::uint64_t*>(base + g.off_stage_idx), g.compact_tiles};
  visit_key_type(pr.type, [&](auto key) {
    if constexpr (sizeof(key) == sizeof(U)) {  // other widths never reach this U
      compact_read<U, decltype(key)><<<g.compact_grid, kCompactThreads, 0, stream>>>(p, cl);
      debug.after_launch("compact_read (rank >= L)");
    }
  });
  std::size_t scan_bytes = g.cub_bytes;
  RXM_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(base + g.off_cub, scan_bytes, cl.count, cl.place, g.compact_tiles, stream));
  debug.after_launch("cub::DeviceScan::ExclusiveSum (tile counts)");
  place_tiles<U><<<grid_1d(g.compact_tiles * 32), 256, 0, stream>>>(p, cl);
  debug.after_launch("place_tiles");
  sample_check<U><<<1, 32, 0, stream>>>(p);
  debug.after_launch("sample_check");
  const int passes = (g.W + g.IB + g.digit_bits - 1) / g.digit_bits;  // at most; a done row skips
  for (int pass = 0; pass < passes; ++pass) {
    select_pass<U, Stage::main><<<dim3(g.sample_select_grid, 1), kThreads, 0, stream>>>(p);
    debug.after_launch("select_pass (candidates)");
  }
  // Phase 2: the winners, a stable filter of the list (or of the row, after a fallback).
  const FilterLane winners{sv.status, sv.ticket, p.win_count, pr.k};
  auto per_index = [&](auto index_tag) {
    using Index = decltype(index_tag);
    const auto* input_indices = static_cast<const Index*>(pr.input_indices);
    auto* out_values = static_cast<U*>(pr.out_values);
    auto* out_indices = static_cast<Index*>(pr.out_indices);
    if (!pr.options.sorted) {  // index order is the output order
      stable_filter<U, OutputSink<U, Index>><<<g.filter_grid, kFilterThreads, 0, stream>>>(
          p, p.state, winners, OutputSink<U, Index>{out_values, out_indices, input_indices});
      debug.after_launch("stable_filter (winners)");
      return;
    }
    // Sorted: best first, ties by index: a stable sort by rank of the index-ordered winners.
    U* alt_rank = reinterpret_cast<U*>(base + g.off_alt_rank);
    auto* alt_idx = reinterpret_cast<std::uint64_t*>(base + g.off_alt_idx);
    stable_filter<U, ListSink<U>><<<g.filter_grid, kFilterThreads, 0, stream>>>(
        p, p.state, winners, ListSink<U>{p.win_rank, p.win_idx});
    debug.after_launch("stable_filter (winners)");
    std::size_t cub_bytes = g.cub_bytes;
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(base + g.off_cub, cub_bytes, p.win_rank, alt_rank,
                                                             p.win_idx, alt_idx, pr.k, 0, g.W, stream));
    debug.after_launch("cub::DeviceRadixSort::SortPairsDescending (by rank)");
    write_output<U, Index><<<grid_1d(pr.k), 256, 0, stream>>>(p, 1, alt_rank, alt_idx, std::uint64_t(1) << g.IB,
                                                             input_indices, out_values, out_indices);
    debug.after_launch("write_output");
  };
  if (pr.index_bytes == 4) per_index(std::int32_t{});
  else per_index(std::int64_t{});
  debug.check_winner_counts(p.win_count, pr);
}

template <class U>
void launch(const GpuPlan& g, void* temp, const device::TopkProblem& pr, cudaStream_t stream) {
  char* base = static_cast<char*>(temp);
  Params<U> p{};
  p.values = static_cast<const U*>(pr.values);
  p.type = pr.type;
  p.options = pr.options;
  p.rows = {pr.row_offsets, pr.row_offsets ? 0 : pr.row_length,
            pr.row_offsets ? 0 : (pr.row_stride ? pr.row_stride : pr.row_length)};
  p.k = pr.k;
  p.W = g.W;
  p.IB = g.IB;
  p.digit_bits = g.digit_bits;
  p.alpha = g.alpha;
  p.beta = g.beta;
  p.state = reinterpret_cast<RowState<U>*>(base + g.off_state);
  p.dstate = reinterpret_cast<RowState<U>*>(base + g.off_dstate);
  p.hist = reinterpret_cast<unsigned long long*>(base + g.off_hist);
  p.counters = reinterpret_cast<unsigned*>(base + g.off_counters);
  p.delegates = reinterpret_cast<U*>(base + g.off_delegates);
  p.delegate_off = reinterpret_cast<std::uint32_t*>(base + g.off_delegate_off);
  p.row_max = reinterpret_cast<unsigned long long*>(base + g.off_row_max);
  const device::TopkStart start = pr.tuning.start;
  p.scaling = start == device::TopkStart::radik_scaling;
  p.row_min = start == device::TopkStart::range_adaptive ? reinterpret_cast<unsigned long long*>(base + g.off_row_min)
                                                         : nullptr;
  p.sstate = p.scaling ? reinterpret_cast<RowState<U>*>(base + g.off_sstate) : nullptr;
  p.range_start = start == device::TopkStart::automatic || start == device::TopkStart::range_adaptive;
  p.cand_rank = reinterpret_cast<U*>(base + g.off_cand_rank);
  p.cand_idx = reinterpret_cast<std::uint64_t*>(base + g.off_cand_idx);
  p.cand_count = reinterpret_cast<unsigned long long*>(base + g.off_cand_count);
  p.cand_cap = g.cand_cap;
  p.vector_loads = pr.tuning.delegate_vector_loads;
  p.qual_list = reinterpret_cast<std::uint64_t*>(base + g.off_qual_list);
  p.qual_count = reinterpret_cast<unsigned long long*>(base + g.off_qual_count);
  // gather_candidates_wide: as many steps per warp and round as spread a row's k x 2^alpha
  // positions over the grid's warps in one round, at most 8 (then the rounds repeat: for large k
  // the one atomic per block and round stays rare).
  {
    const std::uint64_t row_steps = g.alpha ? ((std::uint64_t(pr.k) << g.alpha) + kGatherStep - 1) / kGatherStep : 1;
    const std::uint64_t warps = std::uint64_t(g.grid_x) * (kThreads / 32);
    p.gather_steps = int(std::clamp<std::uint64_t>((row_steps + warps - 1) / warps, 1, 8));
  }
  p.win_rank = reinterpret_cast<U*>(base + g.off_win_rank);
  p.win_idx = reinterpret_cast<std::uint64_t*>(base + g.off_win_idx);
  p.win_count = reinterpret_cast<unsigned long long*>(base + g.off_win_count);
  U* alt_rank = reinterpret_cast<U*>(base + g.off_alt_rank);
  auto* alt_idx = reinterpret_cast<std::uint64_t*>(base + g.off_alt_idx);
  auto* segments = reinterpret_cast<std::uint64_t*>(base + g.off_segments);
  void* cub_temp = base + g.off_cub;

  const std::size_t rows = pr.rows, places = rows * pr.k;
  const DebugChecks debug(stream, pr.debug_checks);
  if (g.sample) {
    launch_sample_select<U>(g, p, base, pr, stream, debug);
    return;
  }
  init_rows<U><<<grid_1d(std::max<std::uint64_t>(rows, g.hist_bytes / 8)), 256, 0, stream>>>(
      p, rows, g.alpha ? kMinDelegateRow : ~0ull, g.hist_bytes / 8, g.chunk_rows);
  debug.after_launch("init_rows");
  const int passes = (g.W + g.IB + g.digit_bits - 1) / g.digit_bits;  // at most; done rows skip
  // The per-row kernels index rows by blockIdx.y (at most 65535): batches run in chunks of rows,
  // each with its own view of the per-row state (histograms and counters are shared: the last
  // block of every pass leaves them zero).
  for (std::size_t r0 = 0; r0 < rows; r0 += kMaxChunkRows) {
    const std::size_t chunk = std::min<std::size_t>(kMaxChunkRows, rows - r0);
    const Params<U> c = chunk_params(p, r0, pr.row_offsets);
    const dim3 grid(g.grid_x, unsigned(chunk));
    if (g.alpha) {
      if (g.beta > 1) delegate_pass_top_beta<U><<<grid, kThreads, 0, stream>>>(c);
      else if (g.five_blocks) delegate_pass_bounded<U><<<grid, kThreads, 0, stream>>>(c);
      else delegate_pass<U><<<grid, kThreads, 0, stream>>>(c);
      debug.after_launch("delegate_pass");
      // The delegates are beta n / 2^alpha: as many blocks as give each thread ~16 of them.
      const std::uint64_t delegates_per_row = ((g.max_len >> g.alpha) + 1) * std::uint64_t(g.beta);
      // Passes 2+ of the delegate select: on the pass's own grid by default (the delegates'
      // maxima share their top bits, so a few bins take every shared atomic; 8x the blocks spread
      // that over every SM), or on one block per ~4096 delegates (the A/B).
      const dim3 small_grid(pr.tuning.delegate_select_full_grid
                                ? g.grid_x
                                : unsigned(std::clamp<std::uint64_t>(delegates_per_row / (kThreads * 16), 1, g.grid_x)),
                            unsigned(chunk));
      if (g.block_delegate_select) {
        block_delegate_select<U><<<dim3(1, unsigned(chunk)), kThreads, 0, stream>>>(c);
        debug.after_launch("block_delegate_select");
      } else {
        for (int pass = 1; pass < passes; ++pass) {
          if (g.beta > 1) select_pass<U, Stage::delegate_groups><<<small_grid, kThreads, 0, stream>>>(c);
          else select_pass<U, Stage::delegates><<<small_grid, kThreads, 0, stream>>>(c);
          debug.after_launch("select_pass<delegates>");
        }
        if (g.beta > 1) list_qualifying<U, true><<<grid, kThreads, 0, stream>>>(c);
        else list_qualifying<U, false><<<grid, kThreads, 0, stream>>>(c);
        debug.after_launch("list_qualifying");
      }
      if (p.gather_steps == 1) gather_candidates_wide<U, true><<<grid, kThreads, 0, stream>>>(c);
      else gather_candidates_wide<U, false><<<grid, kThreads, 0, stream>>>(c);
      debug.after_launch("gather_candidates_wide");
    }
    if (start == device::TopkStart::range_adaptive) {  // rows without delegates: one extra read
      row_range<U><<<grid, kThreads, 0, stream>>>(c);
      debug.after_launch("row_range");
      start_from_range<U><<<grid_1d(chunk), 256, 0, stream>>>(c, chunk);
      debug.after_launch("start_from_range");
    }
    if (g.block_select) {
      const dim3 one_per_row(1, unsigned(chunk));
      // Outputs and caller indices of the chunk's rows (equal-length rows: the chunk's values
      // start at row r0, and so do its caller indices; offsets stay absolute).
      const std::size_t first_place = r0 * pr.k, first_value = pr.row_offsets ? 0 : r0 * p.rows.stride;
      // Per index width, and with RadiK's scaling compiled in only where asked (the default kernel
      // stays the one measured).
      auto one_block = [&](auto index_tag, auto scaled) {
        using Index = decltype(index_tag);
        block_select<U, Index, decltype(scaled)::value><<<one_per_row, kThreads, 0, stream>>>(
            c, pr.input_indices ? static_cast<const Index*>(pr.input_indices) + first_value : nullptr,
            static_cast<U*>(pr.out_values) + first_place, static_cast<Index*>(pr.out_indices) + first_place);
      };
      auto per_index = [&](auto scaled) {
        if (pr.index_bytes == 4) one_block(std::int32_t{}, scaled);
        else one_block(std::int64_t{}, scaled);
      };
      if (p.scaling) per_index(std::true_type{});
      else per_index(std::false_type{});
      debug.after_launch("block_select");
      continue;
    }
    // Rows with delegates select among ~k candidates (at most k * 2^alpha): fewer blocks. A row
    // without them (offsets can mix both) needs the whole grid.
    const bool all_delegate_rows = g.alpha && !pr.row_offsets && g.max_len >= kMinDelegateRow;
    const std::uint64_t expected = std::min<std::uint64_t>(g.cand_cap, 16 * std::uint64_t(pr.k));
    const dim3 select_grid(
        all_delegate_rows ? unsigned(std::clamp<std::uint64_t>(expected / (kThreads * 16), 1, g.grid_x)) : g.grid_x,
        unsigned(chunk));
    if (p.scaling) {  // RadiK's scaling: the W bits of the scaled ranks first, then inside their group
      for (int pass = 0; pass < (g.W + g.digit_bits - 1) / g.digit_bits; ++pass) {
        select_pass<U, Stage::scaled><<<select_grid, kThreads, 0, stream>>>(c);
        debug.after_launch("select_pass<scaled>");
      }
      begin_after_scaling<U><<<grid_1d(chunk), 256, 0, stream>>>(c, chunk);
      debug.after_launch("begin_after_scaling");
    }
    for (int pass = 0; pass < passes; ++pass) {
      if (p.scaling) select_pass<U, Stage::grouped><<<select_grid, kThreads, 0, stream>>>(c);
      else select_pass<U, Stage::main><<<select_grid, kThreads, 0, stream>>>(c);
      debug.after_launch("select_pass");
    }
    if (p.scaling) gather_winners<U, true><<<grid, kThreads, 0, stream>>>(c);
    else gather_winners<U, false><<<grid, kThreads, 0, stream>>>(c);
    debug.after_launch("gather_winners");
  }
  debug.check_winner_counts(p.win_count, pr);
  if (g.block_select) return;  // ordered and written by block_select
  const std::uint64_t pad = std::uint64_t(1) << g.IB;  // after every real index
  const unsigned place_blocks = grid_1d(places);
  if (pr.row_offsets) {
    pad_winners<U><<<place_blocks, 256, 0, stream>>>(p, rows, pad);
    debug.after_launch("pad_winners");
  }
  // Deterministic order: by index (stable), then for sorted output stably by rank, best first.
  std::size_t cub_bytes = g.cub_bytes;
  const U* final_rank = alt_rank;
  const std::uint64_t* final_idx = alt_idx;
  if (rows == 1) {
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, p.win_idx, alt_idx, p.win_rank, alt_rank,
                                                   places, 0, g.IB + 1, stream));
    debug.after_launch("cub::DeviceRadixSort::SortPairs (by index)");
    if (pr.options.sorted) {
      RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(cub_temp, cub_bytes, alt_rank, p.win_rank, alt_idx,
                                                               p.win_idx, places, 0, g.W, stream));
      debug.after_launch("cub::DeviceRadixSort::SortPairsDescending (by rank)");
      final_rank = p.win_rank, final_idx = p.win_idx;
    }
  } else {
    segment_offsets<<<grid_1d(rows + 1), 256, 0, stream>>>(segments, rows, pr.k);
    debug.after_launch("segment_offsets");
    RXM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(cub_temp, cub_bytes, p.win_idx, alt_idx, p.win_rank,
                                                             alt_rank, std::int64_t(places), std::int64_t(rows),
                                                             segments, segments + 1, stream));
    debug.after_launch("cub::DeviceSegmentedSort::StableSortPairs (by index)");
    if (pr.options.sorted) {
      RXM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairsDescending(
          cub_temp, cub_bytes, alt_rank, p.win_rank, alt_idx, p.win_idx, std::int64_t(places), std::int64_t(rows),
          segments, segments + 1, stream));
      debug.after_launch("cub::DeviceSegmentedSort::StableSortPairsDescending (by rank)");
      final_rank = p.win_rank, final_idx = p.win_idx;
    }
  }
  if (pr.index_bytes == 4)
    write_output<U, std::int32_t><<<place_blocks, 256, 0, stream>>>(
        p, rows, final_rank, final_idx, pad, static_cast<const std::int32_t*>(pr.input_indices),
        static_cast<U*>(pr.out_values), static_cast<std::int32_t*>(pr.out_indices));
  else
    write_output<U, std::int64_t><<<place_blocks, 256, 0, stream>>>(
        p, rows, final_rank, final_idx, pad, static_cast<const std::int64_t*>(pr.input_indices),
        static_cast<U*>(pr.out_values), static_cast<std::int64_t*>(pr.out_indices));
  debug.after_launch("write_output");
}

template void launch<std::uint16_t>(const GpuPlan&, void*, const device::TopkProblem&, cudaStream_t);
template void launch<std::uint32_t>(const GpuPlan&, void*, const device::TopkProblem&, cudaStream_t);
template void launch<std::uint64_t>(const GpuPlan&, void*, const device::TopkProblem&, cudaStream_t);

}  // namespace radixmesh::detail::topk_gpu

namespace radixmesh::device {

namespace {
void check_problem(const TopkProblem& pr) {
  require(size_of(pr.type) >= 2, "device::topk: key type " + std::string(name_of(pr.type)) + " is not supported",
          "use a 16-, 32- or 64-bit type");
  require(pr.rows > 0, "device::topk: no rows", "pass at least one row");
  require(pr.k > 0, "device::topk: k = 0 (n = " + std::to_string(pr.total) + ")", "ask for 1 <= k <= n");
  require(pr.index_bytes == 4 || pr.index_bytes == 8, "device::topk: indices must be 4 or 8 bytes",
          "set index_bytes to 4 or 8");
  if (pr.row_offsets) {
    require(pr.row_stride == 0,
            "device::topk: row_stride " + std::to_string(pr.row_stride) + " with row_offsets (offsets place every row)",
            "pass row_stride = 0 with row_offsets, or uniform rows (row_length, row_stride) without offsets");
    require(pr.max_row_length <= pr.total, "device::topk: max_row_length exceeds the values",
            "pass the longest row's length");
  } else {
    const std::size_t stride = pr.row_stride ? pr.row_stride : pr.row_length;
    require(stride >= pr.row_length,
            "device::topk: row_stride " + std::to_string(pr.row_stride) + " is shorter than row_length " +
                std::to_string(pr.row_length),
            "pass row_stride >= row_length (0 for rows without padding)");
    const std::size_t spanned = (pr.rows - 1) * stride + pr.row_length;
    require(pr.row_length > 0 && (pr.row_stride ? spanned <= pr.total : spanned == pr.total),
            "device::topk: " + std::to_string(pr.rows) + " rows of " + std::to_string(pr.row_length) + " values " +
                std::to_string(stride) + " apart span " + std::to_string(spanned) + " values, total is " +
                std::to_string(pr.total),
            pr.row_stride ? "pass total >= (rows - 1) * row_stride + row_length" : "pass rows * row_length == total");
    require(pr.k <= pr.row_length,
            "device::topk: k = " + std::to_string(pr.k) + " is larger than the row length " +
                std::to_string(pr.row_length),
            "ask for k <= row_length");
  }
  const std::size_t longest = pr.row_offsets ? pr.max_row_length : pr.row_length;
  require(pr.index_bytes == 8 || longest <= std::size_t(INT32_MAX),
          "device::topk: rows of up to " + std::to_string(longest) + " values need 64-bit indices",
          "use std::int64_t indices (index_bytes = 8)");
  const TopkTuning& tuning = pr.tuning;
  require(tuning.delegate_beta == 1 || tuning.delegate_beta == 2 || tuning.delegate_beta == 4,
          "device::topk: delegate_beta = " + std::to_string(tuning.delegate_beta), "use 1, 2 or 4 delegates per subrange");
  require(tuning.start != TopkStart::radik_scaling || pr.type == KeyType::f32 || pr.type == KeyType::f64,
          "device::topk: RadiK's scaling (TopkStart::radik_scaling) on " + std::string(name_of(pr.type)) + " keys",
          "use it with f32 or f64 keys, or another TopkStart");
  require(pr.values && pr.out_values && pr.out_indices, "device::topk: a pointer is null",
          "pass device memory for values and both outputs");
}

void require_temp(std::size_t given, std::size_t needed) {
  require(given >= needed,
          "device::topk: " + std::to_string(given) + " bytes of temporary storage, " + std::to_string(needed) +
              " needed",
          "size it with device::topk_temp_bytes");
}
}  // namespace

std::size_t topk_temp_bytes(const TopkProblem& problem, int device) {
  return detail::topk_gpu::plan_topk(problem, device).temp_bytes;
}

const char* topk_path_name(const TopkProblem& problem, int device) {
  using Path = detail::topk_gpu::PlannedTopk::Path;
  const auto planned = detail::topk_gpu::plan_topk(problem, device);
  if (planned.path == Path::row_compact) return "row-compact";
  if (planned.path == Path::row_warp) return "row-warp";
  if (planned.path == Path::row_smem) return "row-smem";
  if (planned.path == Path::row_cluster) return "row-cluster";
  if (planned.path == Path::row_stream) return "row-stream";
  return planned.select.sample ? "sample-select" : planned.select.alpha ? "delegates" : "raw";
}

void topk(void* temp, std::size_t temp_bytes, const TopkProblem& problem, cudaStream_t stream) {
  int device = 0;
  RXM_CUDA_CHECK(cudaGetDevice(&device));
  detail::topk_gpu::launch_planned(detail::topk_gpu::plan_topk(problem, device), temp, temp_bytes, problem, stream);
}

}  // namespace radixmesh::device

namespace radixmesh::detail::topk_gpu {

PlannedTopk plan_topk(const device::TopkProblem& problem, int device) {
  ::radixmesh::device::check_problem(problem);
  PlannedTopk planned;
  if (takes_row_stream(problem)) {
    if (const std::optional<RowCompactPlan> compact = row_compact_plan(problem, device)) {
      planned.path = PlannedTopk::Path::row_compact;
      planned.compact = *compact;  // no temporary storage
    } else if (const std::optional<RowWarpPlan> warp = row_warp_plan(problem, device)) {
      planned.path = PlannedTopk::Path::row_warp;
      planned.warp = *warp;  // no temporary storage
    } else if (const std::optional<RowSmemPlan> smem = row_smem_plan(problem, device)) {
      planned.path = PlannedTopk::Path::row_smem;
      planned.smem = *smem;  // no temporary storage
    } else if (const std::optional<RowClusterPlan> cluster = row_cluster_plan(problem, device)) {
      planned.path = PlannedTopk::Path::row_cluster;
      planned.cluster = *cluster;  // no temporary storage
    } else {
      planned.path = PlannedTopk::Path::row_stream;
      planned.stream = plan_row_stream(problem, device);
      planned.temp_bytes = std::max<std::size_t>(1, planned.stream.temp_bytes);
    }
    return planned;
  }
  planned.select = plan_gpu(problem, device);
  planned.temp_bytes = planned.select.temp_bytes;
  return planned;
}

void launch_planned(const PlannedTopk& planned, void* temp, std::size_t temp_bytes, const device::TopkProblem& problem,
                    cudaStream_t stream) {
  using Path = PlannedTopk::Path;
  if (planned.path == Path::row_compact) return launch_row_compact(planned.compact, problem, stream);
  if (planned.path == Path::row_warp) return launch_row_warp(planned.warp, problem, stream);
  if (planned.path == Path::row_smem) return launch_row_smem(planned.smem, problem, stream);
  if (planned.path == Path::row_cluster) return launch_row_cluster(planned.cluster, problem, stream);
  if (planned.path == Path::row_stream) {
    ::radixmesh::device::require_temp(temp_bytes, planned.stream.temp_bytes);
    return launch_row_stream(planned.stream, temp, problem, stream);
  }
  const GpuPlan& g = planned.select;
  ::radixmesh::device::require_temp(temp_bytes, g.temp_bytes);
  switch (g.W) {
    case 16: launch<std::uint16_t>(g, temp, problem, stream); break;
    case 32: launch<std::uint32_t>(g, temp, problem, stream); break;
    default: launch<std::uint64_t>(g, temp, problem, stream); break;
  }
}

}  // namespace radixmesh::detail::topk_gpu
