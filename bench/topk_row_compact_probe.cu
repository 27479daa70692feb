// A probe, not a variant: how fast a block per row can take the k best of 16-bit logits when the
// row never sits in shared memory (docs/design/topk.md, "Open leads": 4096 rows of 32000 at
// k = 1024). bf16 rows of at most 65536 values (16-bit positions), n a multiple of 8, k <= 1024,
// largest first, ties by lowest index. A block of 256 threads a row, ~25 KB of shared memory:
//  1. a bound from 2048 sampled values: the m-th best of them, m = k f + 3 sqrt(k f) + 1 for the
//     sampled fraction f (the row-stream family's radix-select passes, two of 8 bits), so ~1.4 k
//     of 32000 values pass at k = 1024;
//  2. the row streamed once, each warp over its own contiguous eighth, 4 or 8 vectors of 8 values
//     in flight a lane (both timed), the passing values appended as 32-bit (rank, position) to
//     the warp's own region by a warp scan (no atomics), so every region is in position order;
//  3. the k-th rank among the survivors (the same two passes);
//  4. the winners compacted in position order (one block scan of packed counts);
//  5. sorted on the rank bits alone by the block's stable LSD radix sort (two 8-bit passes), so
//     equal ranks stay by position; 6. written.
// A row whose bound admits fewer than k values or overflows a warp's region of survivors takes an
// exact fallback in the same block (exact_winners: four reads of the row; counted). Checks every
// row against a host reference (std::partial_sort over the library's rank transform), on normal
// logits and on mixed rows that defeat the bound (ascending, all equal, descending), and against
// ours (rxm::device::topk, sorted, byte for byte), then times both in the same run, with CUDA
// events around back-to-back calls, beside the floor: one read of the logits at the D2D copy rate
// measured here (the harness's).
//   bench_topk_probe [ROWS N K]...   (default: 4096 32000 1024, 4096 32000 256, 4096 32000 50;
//   each normal with 4 and 8 vectors in flight, and mixed with 4)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/topk/topk_block_radix_sort.cuh"
#include "cuda/topk/topk_stream_common.cuh"
#include "harness/device_timing.cuh"
#include "phases/phase_logits.hpp"
#include "radixmesh/device/block_scan.cuh"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;
using radixmesh::detail::topk_gpu::block_radix_sort_descending;
using radixmesh::detail::topk_gpu::block_radix_sort_scratch_bytes;
using radixmesh::detail::topk_gpu::radix_select_pass;
using radixmesh::detail::topk_gpu::StreamRank;
using radixmesh::detail::topk_gpu::StreamShared;
using radixmesh::device::block_scan::block_exclusive_scan;
using radixmesh::device::block_scan::warp_inclusive_scan;

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
// A warp's region of survivors: 384 slots, where 256 overflowed in 4.8 % of rows of 50264 values at
// k = 1024 (call IA; row_compact32_bound_sim.py: 384 overflow in none up to 65536 values).
constexpr unsigned kKMax = 1024, kRegion = 384, kSamples = 2048;

// The library's rank of bf16 bits for largest-first (stream_warp applies the same to two packed
// values at once: StreamRank::pair).
__host__ __device__ inline rxm::TopkRankTransform<rxm::bfloat16_t> bf16_rank() {
  return rxm::TopkRankTransform<rxm::bfloat16_t>(rxm::TopkOptions{.largest = true, .include_nan = true});
}

struct ProbeShared {
  StreamShared stream;  // the radix-select passes' histogram and decision
  unsigned warp_sums[kWarps];
  unsigned warp_count[kWarps];
  unsigned warp_ties[kWarps];
  unsigned overflow;
};

// The need-th best 16-bit rank among the keys counted(i, key) names (i < count), by two of the
// row-stream family's radix-select passes: `kth`, and `take`, how many of rank kth are among the
// best need. Every thread calls it; it ends with a barrier.
template <class Counted>
__device__ void select_rank(ProbeShared& sh, unsigned count, Counted counted, unsigned need, unsigned& kth,
                            unsigned& take) {
  int high = 16;
  unsigned long long prefix = 0;
  radix_select_pass(sh.stream, count, counted, 0, high, prefix, need);
  __syncthreads();
  radix_select_pass(sh.stream, count, counted, 0, high, prefix, need);
  kth = unsigned(prefix), take = need;
  __syncthreads();
}

// The warp's vectors [first, last) of 8 values, kInFlight loads in flight a lane: visit(at, r, valid)
// for each of the lane's vectors in order (r: its 4 words of two packed 16-bit ranks), by every lane
// at once (the loop is the warp's, so visit may use warp collectives).
template <int kInFlight, class Visit>
__device__ void stream_warp(const uint4* vec, unsigned first, unsigned last, Visit visit) {
  const unsigned lane = threadIdx.x & 31;
  const StreamRank<rxm::bfloat16_t> rank(rxm::TopkOptions{.largest = true, .include_nan = true});
  for (unsigned base = first; base < last; base += 32 * kInFlight) {
    uint4 x[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const unsigned at = base + u * 32 + lane;
      x[u] = at < last ? __ldg(vec + at) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const unsigned w[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
      unsigned r[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) r[h] = rank.pair(w[h]);
      const unsigned at = base + u * 32 + lane;
      visit(at, r, at < last);
    }
  }
}

// The halves `pass` marks (0xffff a half) of the lane's vector `at`, put in position order across
// the warp at places base, base + 1, ... (put(place, rank, position)); returns how many the warp put.
template <class Put>
__device__ unsigned warp_append(unsigned at, const unsigned (&r)[4], const unsigned (&pass)[4], unsigned base, Put put) {
  unsigned c = 0;
#pragma unroll
  for (int h = 0; h < 4; ++h) c += __popc(pass[h]) / 16;
  const unsigned inclusive = warp_inclusive_scan(c);
  const unsigned total = __shfl_sync(0xffffffffu, inclusive, 31);
  unsigned place = base + inclusive - c;
  if (c) {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      if (pass[h] & 0xffffu) put(place++, r[h] & 0xffffu, at * 8 + 2 * h);
      if (pass[h] >> 16) put(place++, r[h] >> 16, at * 8 + 2 * h + 1);
    }
  }
  return total;
}

// The exact fallback for a row whose sampled bound failed: the k-th rank over the whole row (two
// radix-select passes), each warp's count of values above it and equal to it, then the winners (all
// above, the first `take` equal by position) put straight into keys[0, k) in position order. Four
// reads of the row. Every thread calls it; it ends with a barrier.
template <int kInFlight>
__device__ __noinline__ void exact_winners(ProbeShared& sh, const std::uint16_t* row, unsigned n, unsigned first,
                                           unsigned last, unsigned k, unsigned long long* keys) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint4* vec = reinterpret_cast<const uint4*>(row);
  unsigned kth, take;
  select_rank(sh, n, [&](unsigned i, unsigned long long& key) { return key = bf16_rank().rank_of_bits(row[i]), true; }, k,
              kth, take);
  const unsigned kth2 = kth | (kth << 16);
  unsigned above = 0, equal = 0;
  stream_warp<kInFlight>(vec, first, last, [&](unsigned, const unsigned (&r)[4], bool valid) {
#pragma unroll
    for (int h = 0; h < 4; ++h)
      above += valid ? __popc(__vcmpgtu2(r[h], kth2)) / 16 : 0, equal += valid ? __popc(__vcmpeq2(r[h], kth2)) / 16 : 0;
  });
  above = __shfl_sync(0xffffffffu, warp_inclusive_scan(above), 31);
  equal = __shfl_sync(0xffffffffu, warp_inclusive_scan(equal), 31);
  if (lane == 0) sh.warp_count[warp] = above, sh.warp_ties[warp] = equal;
  __syncthreads();
  unsigned ties_before = 0, out_before = 0;  // over the warps before this one
  for (unsigned w = 0; w < warp; ++w) {
    const unsigned e = sh.warp_ties[w], taken = ties_before < take ? min(e, take - ties_before) : 0u;
    out_before += sh.warp_count[w] + taken, ties_before += e;
  }
  unsigned out_run = 0, tie_run = 0;
  stream_warp<kInFlight>(vec, first, last, [&](unsigned at, const unsigned (&r)[4], bool valid) {
    unsigned gt[4], eq[4], e = 0;
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      gt[h] = valid ? __vcmpgtu2(r[h], kth2) : 0u, eq[h] = valid ? __vcmpeq2(r[h], kth2) : 0u;
      e += __popc(eq[h]) / 16;
    }
    const unsigned e_inclusive = warp_inclusive_scan(e), e_total = __shfl_sync(0xffffffffu, e_inclusive, 31);
    unsigned tie = ties_before + tie_run + e_inclusive - e;  // this lane's first equal value's index
    unsigned pass[4];
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      pass[h] = gt[h];
      if (eq[h] & 0xffffu) pass[h] |= tie++ < take ? 0xffffu : 0u;
      if (eq[h] >> 16) pass[h] |= tie++ < take ? 0xffff0000u : 0u;
    }
    out_run += warp_append(at, r, pass, out_before + out_run, [&](unsigned place, unsigned rank, unsigned pos) {
      keys[place] = (std::uint64_t(rank) << 32) | pos;
    });
    tie_run += e_total;
  });
  __syncthreads();
}

template <int kInFlight>
__global__ void __launch_bounds__(kThreads, kInFlight == 4 ? 5 : 4) probe(const std::uint16_t* __restrict__ values, unsigned n, unsigned k,
                                                  std::uint16_t* out_values, std::int32_t* out_indices,
                                                  unsigned* failed, unsigned* survivors_of_row) {
  extern __shared__ unsigned long long dyn[];
  unsigned long long* keys = dyn;              // kKMax
  unsigned long long* other = dyn + kKMax;     // kKMax, then the sort's tables
  // kWarps x kRegion survivors (12 KB: `other` and the first third of the sort's tables), dead
  // before the sort zeroes its tables.
  unsigned* surv = reinterpret_cast<unsigned*>(other);
  static_assert(kWarps * kRegion * 4 <= kKMax * 8 + 2 * 256 * kWarps * 2, "the survivors fit other and the tables");
  __shared__ ProbeShared sh;
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::uint16_t* row = values + std::size_t(blockIdx.x) * n;

  // 1. The bound from the samples.
  const float kf = float(k) * kSamples / float(n);
  const unsigned m = min(unsigned(kSamples), unsigned(kf + 3.0f * sqrtf(kf)) + 1);
  if (t == 0) sh.overflow = 0;
  unsigned bound, unused;
  select_rank(sh, kSamples, [&](unsigned i, unsigned long long& key) {
    return key = bf16_rank().rank_of_bits(__ldg(row + std::uint64_t(i) * n / kSamples)), true;
  }, m, bound, unused);
  const unsigned bound2 = bound | (bound << 16);

  // 2. The stream: warp `warp` over vectors [first, last) of 8 values.
  const unsigned vectors = n / 8, first = vectors * warp / kWarps, last = vectors * (warp + 1) / kWarps;
  const uint4* vec = reinterpret_cast<const uint4*>(row);
  unsigned* region = surv + warp * kRegion;
  unsigned count = 0;
  stream_warp<kInFlight>(vec, first, last, [&](unsigned at, const unsigned (&r)[4], bool valid) {
    unsigned pass[4];
#pragma unroll
    for (int h = 0; h < 4; ++h) pass[h] = valid ? __vcmpgeu2(r[h], bound2) : 0u;
    count += warp_append(at, r, pass, count, [&](unsigned place, unsigned rank, unsigned pos) {
      if (place < kRegion) region[place] = (rank << 16) | pos;
    });
  });
  if (lane == 0) {
    sh.warp_count[warp] = count < kRegion ? count : kRegion;
    if (count > kRegion) sh.overflow = 1;
  }
  __syncthreads();
  unsigned survivors = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) survivors += sh.warp_count[w];
  if (t == 0) survivors_of_row[blockIdx.x] = sh.overflow ? 0u : survivors;  // 0: overflowed
  if (sh.overflow || survivors < k) {  // the whole block takes this branch
    if (t == 0) atomicAdd(failed, 1u);
    exact_winners<kInFlight>(sh, row, n, first, last, k, keys);
  } else {
    // 3. The k-th rank among the survivors: thread t's kItems consecutive slots (a warp's region
    // a 32 threads).
    constexpr unsigned kItems = kWarps * kRegion / kThreads;
    const unsigned my_region = t / (kRegion / kItems), my_first = (t % (kRegion / kItems)) * kItems;
    const unsigned my_count = sh.warp_count[my_region];
    unsigned item[kItems];
#pragma unroll
    for (unsigned j = 0; j < kItems; ++j)
      item[j] = my_first + j < my_count ? surv[my_region * kRegion + my_first + j] : 0u;  // rank 0: never counted
    unsigned kth, ties;  // ties: how many of rank kth win
    select_rank(sh, kWarps * kRegion, [&](unsigned i, unsigned long long& key) {
      return i % kRegion < sh.warp_count[i / kRegion] && (key = surv[i] >> 16, true);
    }, k, kth, ties);

    // 4. The winners in position order: above kth, and the first `ties` equal to it.
    unsigned above = 0, equal = 0;
#pragma unroll
    for (unsigned j = 0; j < kItems; ++j) {
      const unsigned r = item[j] >> 16;
      const bool valid = my_first + j < my_count;
      above += valid && r > kth, equal += valid && r == kth;
    }
    unsigned total;
    const unsigned before = block_exclusive_scan<unsigned, true, kWarps>(above | (equal << 16), sh.warp_sums, total);
    unsigned above_before = before & 0xffffu, equal_before = before >> 16;
#pragma unroll
    for (unsigned j = 0; j < kItems; ++j) {
      const unsigned r = item[j] >> 16;
      if (my_first + j >= my_count) continue;
      if (r > kth) {
        keys[above_before + min(equal_before, ties)] = (std::uint64_t(r) << 32) | (item[j] & 0xffffu);
        ++above_before;
      } else if (r == kth) {
        if (equal_before < ties) keys[above_before + equal_before] = (std::uint64_t(r) << 32) | (item[j] & 0xffffu);
        ++equal_before;
      }
    }
    __syncthreads();  // the survivors are read: `other` may be overwritten
  }

  // 5. Sorted on the rank bits (stable: equal ranks stay by position).
  const unsigned long long* sorted =
      block_radix_sort_descending<kWarps, kKMax / kThreads>(keys, other, kKMax, k, 32, 48, sh.warp_sums);

  // 6. Written.
  for (unsigned q = t; q < k; q += kThreads) {
    const unsigned long long key = sorted[q];
    out_values[std::size_t(blockIdx.x) * k + q] = bf16_rank().raw_of(std::uint16_t(key >> 32));
    out_indices[std::size_t(blockIdx.x) * k + q] = std::int32_t(key & 0xffffu);
  }
}

// Rows of normal logits, or (mixed) rows that defeat the sampled bound in turn: normal, ascending (bf16
// steps: long runs of ties), all equal, descending.
std::vector<std::uint16_t> probe_rows(std::size_t rows, unsigned n, bool mixed) {
  std::vector<std::uint16_t> h = phase_logits<std::uint16_t>(rows * n);
  if (!mixed) return h;
  auto bf16 = [](float f) { unsigned b; std::memcpy(&b, &f, 4); return std::uint16_t(b >> 16); };
  for (std::size_t r = 0; r < rows; ++r)
    for (unsigned i = 0; i < n && r % 4; ++i)
      h[r * n + i] = r % 4 == 1 ? bf16(4.0f * i / n - 2.0f) : r % 4 == 2 ? bf16(1.5f) : bf16(2.0f - 4.0f * i / n);
  return h;
}

template <class T> std::vector<T> to_host(const rxm::DeviceArray<T>& a, std::size_t count) {
  std::vector<T> h(count);
  RXM_CUDA_CHECK(cudaMemcpy(h.data(), a.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <int kInFlight> void run(std::size_t rows, unsigned n, unsigned k, double bandwidth, bool mixed) {
  if (n % 8 || n > 65536 || k > kKMax || k > n) {
    std::printf("skipped rows=%zu n=%u k=%u: the probe takes n a multiple of 8 up to 65536, k <= 1024\n", rows, n, k);
    return;
  }
  const std::vector<std::uint16_t> h = probe_rows(rows, n, mixed);
  const std::size_t places = rows * k;
  rxm::DeviceArray<std::uint16_t> dv(0, h.size()), ov(0, places), ours_v(0, places);
  rxm::DeviceArray<std::int32_t> oi(0, places), ours_i(0, places);
  rxm::DeviceArray<unsigned> fallbacks(0, 1), survivors(0, rows);
  RXM_CUDA_CHECK(cudaMemcpy(dv.data(), h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(ov.data(), 0xff, places * 2));  // poisoned: every place must be written
  RXM_CUDA_CHECK(cudaMemset(oi.data(), 0xff, places * 4));
  RXM_CUDA_CHECK(cudaMemset(fallbacks.data(), 0, 4));
  const std::size_t shared = kKMax * 8 + block_radix_sort_scratch_bytes<kWarps>(kKMax);
  RXM_CUDA_CHECK(cudaFuncSetAttribute(probe<kInFlight>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  int per_sm = 0;
  RXM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe<kInFlight>, kThreads, shared));
  auto launch = [&] {
    probe<kInFlight><<<unsigned(rows), kThreads, shared>>>(dv.data(), n, k, ov.data(), oi.data(), fallbacks.data(),
                                                            survivors.data());
  };
  launch();
  RXM_CUDA_CHECK_LAUNCH();
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  // Ours on the same rows: sorted, 32-bit indices.
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::bf16, p.values = dv.data(), p.total = h.size(), p.rows = rows, p.row_length = n;
  p.max_row_length = n, p.k = k, p.options = {.largest = true, .sorted = true}, p.index_bytes = 4;
  p.out_values = ours_v.data(), p.out_indices = ours_i.data();
  const rxm::DeviceBuffer temp(0, rxm::device::topk_temp_bytes(p, 0));
  auto ours = [&] { rxm::device::topk(temp.data(), temp.bytes(), p, nullptr); };
  ours();
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto gv = to_host(ov, places), ours_hv = to_host(ours_v, places);
  const auto gi = to_host(oi, places), ours_hi = to_host(ours_i, places);
  const auto gs = to_host(survivors, rows);
  const unsigned nfallback = to_host(fallbacks, 1)[0];
  // The host reference: (rank desc, position asc), the first k, on every row.
  std::size_t wrong = 0;
  std::vector<std::pair<unsigned, unsigned>> ref(n);
  for (std::size_t r = 0; r < rows; ++r) {
    for (unsigned i = 0; i < n; ++i) ref[i] = {0xffffu - bf16_rank().rank_of_bits(h[r * n + i]), i};
    std::partial_sort(ref.begin(), ref.begin() + k, ref.end());
    bool ok = true;
    for (unsigned q = 0; q < k && ok; ++q)
      ok = gi[r * k + q] == std::int32_t(ref[q].second) && gv[r * k + q] == h[r * n + ref[q].second];
    wrong += !ok;
  }
  const bool same_as_ours = gv == ours_hv && gi == ours_hi;
  const auto [smin, smax] = std::minmax_element(gs.begin(), gs.end());
  // Timing: 20 back-to-back calls a repetition, the probe and ours in the same run.
  constexpr int kCalls = 20;
  auto per_call = [](rxm::bench::Stats st) { return st.median_ms / kCalls; };
  const double probe_ms = per_call(rxm::bench::time_device(nullptr, [&] { for (int c = 0; c < kCalls; ++c) launch(); }, 1, 5));
  const double ours_ms = per_call(rxm::bench::time_device(nullptr, [&] { for (int c = 0; c < kCalls; ++c) ours(); }, 1, 5));
  const double floor_ms = double(h.size()) * 2 / bandwidth * 1e3;
  std::printf("probe (%d vectors in flight a lane) bf16 %s rows=%zu n=%u k=%u: %.3f ms, ours (%s) %.3f ms (%.2fx the "
              "probe's time), floor %.3f ms (probe %.2fx); %d blocks/SM, %zu B shared; rows by the exact fallback %u, "
              "survivors %u-%u (0: overflowed); rows wrong against the host %zu of %zu; equal to ours: %s\n",
              kInFlight, mixed ? "mixed" : "normal", rows, n, k, probe_ms, rxm::device::topk_path_name(p, 0), ours_ms,
              ours_ms / probe_ms, floor_ms, probe_ms / floor_ms, per_sm, shared, nfallback, *smin, *smax, wrong, rows,
              same_as_ours ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  double bandwidth = 0;
  {
    const std::size_t bytes = std::size_t(1) << 30;
    const rxm::DeviceBuffer a(0, bytes), b(0, bytes);
    bandwidth = rxm::bench::measure_d2d_bandwidth(b.data(), a.data(), bytes, nullptr);
  }
  std::printf("D2D copy rate %.1f GB/s\n", bandwidth / 1e9);
  if (argc >= 4) {
    for (int a = 1; a + 2 < argc; a += 3) {
      const std::size_t rows = std::stoull(argv[a]);
      const unsigned n = unsigned(std::stoul(argv[a + 1])), k = unsigned(std::stoul(argv[a + 2]));
      run<4>(rows, n, k, bandwidth, false), run<8>(rows, n, k, bandwidth, false), run<4>(rows, n, k, bandwidth, true);
    }
    return 0;
  }
  for (unsigned k : {1024u, 256u, 50u})
    run<4>(4096, 32000, k, bandwidth, false), run<8>(4096, 32000, k, bandwidth, false),
        run<4>(4096, 32000, k, bandwidth, true);
  return 0;
}
