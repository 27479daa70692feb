// A probe, not a variant: how fast a block per row can take the k best of 16-bit logits when the
// row never sits in shared memory (docs/design/topk.md, "Open leads": 4096 rows of 32000 at
// k = 1024). bf16 rows of at most 65536 values (16-bit positions), n a multiple of 8, k <= 1024,
// largest first, ties by lowest index. A block of 256 threads a row, ~26 KB of shared memory:
//  1. a bound from 2048 sampled values: the m-th best of them, m = k f + 3 sqrt(k f) + 1 for the
//     sampled fraction f (two 8-bit histogram passes), so ~1.4 k of 32000 values pass at k = 1024;
//  2. the row streamed once, each warp over its own contiguous eighth, 4 or 8 vectors of 8 values
//     in flight a lane (both timed), the passing values appended as 32-bit (rank, position) to the warp's own
//     region by a warp scan (no atomics), so every region is in position order;
//  3. the k-th rank among the survivors (two 8-bit histogram passes);
//  4. the winners compacted in position order (one block scan of packed counts);
//  5. sorted on the rank bits alone by the block's stable LSD radix sort (two 8-bit passes), so
//     equal ranks stay by position; 6. written.
// A row whose bound admits fewer than k values or overflows a warp's region of survivors takes an exact
// fallback in the same block (exact_winners: four reads of the row; counted). Checks every row
// against a host reference, on normal logits and on mixed rows that defeat the bound (ascending,
// all equal, descending), then times the kernel alone (back-to-back launches) beside the floor:
// one read of the logits at the D2D copy rate measured here.
//   row_compact32_probe [ROWS N K]...   (default: 4096 32000 1024, 4096 32000 256, 4096 32000 50;
//   each normal with 4 and 8 vectors in flight, and mixed with 4)
// Built here by nvcc -I include -I src -I bench/phases -O3 -arch=sm_90 --expt-relaxed-constexpr
// -std=c++20 -Xptxas -v -o build-gpu/phases/row_compact32_probe bench/phases/row_compact32_probe.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/topk/topk_block_radix_sort.cuh"
#include "radixmesh/device/block_scan.cuh"
#include "phase_logits.hpp"

using radixmesh::detail::topk_gpu::block_radix_sort_descending;
using radixmesh::detail::topk_gpu::block_radix_sort_scratch_bytes;
using radixmesh::device::block_scan::block_exclusive_scan;
using radixmesh::device::block_scan::warp_inclusive_scan;

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
// A warp's region of survivors: 384 slots, where 256 overflowed in 4.8 % of rows of 50264 values at
// k = 1024 (call IA; row_compact32_bound_sim.py: 384 overflow in none up to 65536 values).
constexpr unsigned kKMax = 1024, kRegion = 384, kSamples = 2048;

__device__ __forceinline__ unsigned rank_of(unsigned bits) { return bits ^ ((bits & 0x8000u) ? 0xffffu : 0x8000u); }
__device__ __forceinline__ unsigned bits_of(unsigned rank) { return rank ^ ((rank & 0x8000u) ? 0x8000u : 0xffffu); }

// Given hist[256] of a digit, the digit holding the `need`-th best (counting from the top digit)
// and how many of that digit are still needed: thread t looks at digit 255 - t.
__device__ void find_digit(const unsigned* hist, unsigned need, unsigned* warp_sums, unsigned* digit,
                           unsigned* left) {
  const unsigned d = 255 - threadIdx.x, c = hist[d];
  unsigned total;
  const unsigned above = block_exclusive_scan<unsigned, true, kWarps>(c, warp_sums, total);
  if (above < need && above + c >= need) *digit = d, *left = need - above;
  __syncthreads();
}

struct Shared {
  unsigned hist[256];
  unsigned warp_sums[kWarps];
  unsigned warp_count[kWarps];
  unsigned warp_ties[kWarps];
  unsigned digit, left, overflow;
};

// The need-th best of the 16-bit ranks this block's threads visit (each(f) calls f(rank) for each
// of the thread's items), by two 8-bit histogram passes: `kth`, and `take`, how many of rank kth
// are among the best need. Every thread calls it; it ends with a barrier.
template <class Each>
__device__ void select_rank(Shared& sh, Each each, unsigned need, unsigned& kth, unsigned& take) {
  sh.hist[threadIdx.x] = 0;
  __syncthreads();
  each([&](unsigned rank) { atomicAdd(&sh.hist[rank >> 8], 1u); });
  __syncthreads();
  find_digit(sh.hist, need, sh.warp_sums, &sh.digit, &sh.left);
  const unsigned top = sh.digit, left = sh.left;
  sh.hist[threadIdx.x] = 0;
  __syncthreads();
  each([&](unsigned rank) {
    if ((rank >> 8) == top) atomicAdd(&sh.hist[rank & 255], 1u);
  });
  __syncthreads();
  find_digit(sh.hist, left, sh.warp_sums, &sh.digit, &sh.left);
  kth = (top << 8) | sh.digit, take = sh.left;
  __syncthreads();  // sh.digit and sh.left are read
}

// The warp's vectors [first, last) of 8 values, kInFlight loads in flight a lane: visit(at, r, valid)
// for each of the lane's vectors in order (r: its 4 words of two packed 16-bit ranks), by every lane
// at once (the loop is the warp's, so visit may use warp collectives).
template <int kInFlight, class Visit>
__device__ void stream_warp(const uint4* vec, unsigned first, unsigned last, Visit visit) {
  const unsigned lane = threadIdx.x & 31;
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
      for (int h = 0; h < 4; ++h) r[h] = w[h] ^ (0x80008000u | (((w[h] >> 15) & 0x00010001u) * 0x7fffu));
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
// histogram passes), each warp's count of values above it and equal to it, then the winners (all
// above, the first `take` equal by position) put straight into keys[0, k) in position order. Four
// reads of the row. Every thread calls it; it ends with a barrier.
template <int kInFlight>
__device__ __noinline__ void exact_winners(Shared& sh, const uint4* vec, unsigned first, unsigned last, unsigned k,
                              unsigned long long* keys) {
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned kth, take;
  select_rank(sh, [&](auto f) {
    stream_warp<kInFlight>(vec, first, last, [&](unsigned, const unsigned (&r)[4], bool valid) {
      if (!valid) return;
#pragma unroll
      for (int h = 0; h < 4; ++h) f(r[h] & 0xffffu), f(r[h] >> 16);
    });
  }, k, kth, take);
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
  __shared__ Shared sh;
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::uint16_t* row = values + std::size_t(blockIdx.x) * n;

  // 1. The bound from the samples.
  const float kf = float(k) * kSamples / float(n);
  const unsigned m = min(unsigned(kSamples), unsigned(kf + 3.0f * sqrtf(kf)) + 1);
  if (t == 0) sh.overflow = 0;
  unsigned sample[kSamples / kThreads];
#pragma unroll
  for (unsigned j = 0; j < kSamples / kThreads; ++j)
    sample[j] = rank_of(__ldg(row + (std::uint64_t(t * (kSamples / kThreads) + j) * n) / kSamples));
  unsigned bound, unused;
  select_rank(sh, [&](auto f) {
#pragma unroll
    for (unsigned j = 0; j < kSamples / kThreads; ++j) f(sample[j]);
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
    exact_winners<kInFlight>(sh, vec, first, last, k, keys);
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
    select_rank(sh, [&](auto f) {
#pragma unroll
      for (unsigned j = 0; j < kItems; ++j)
        if (my_first + j < my_count) f(item[j] >> 16);
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
    out_values[std::size_t(blockIdx.x) * k + q] = std::uint16_t(bits_of(unsigned(key >> 32)));
    out_indices[std::size_t(blockIdx.x) * k + q] = std::int32_t(key & 0xffffu);
  }
}

unsigned host_rank(std::uint16_t b) { return b ^ ((b & 0x8000u) ? 0xffffu : 0x8000u); }

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

template <int kInFlight> void run(std::size_t rows, unsigned n, unsigned k, float copy_gbs, bool mixed) {
  if (n % 8 || n > 65536 || k > kKMax || k > n) {
    std::printf("skipped rows=%zu n=%u k=%u: the probe takes n a multiple of 8 up to 65536, k <= 1024\n", rows, n, k);
    return;
  }
  const std::vector<std::uint16_t> h = probe_rows(rows, n, mixed);
  std::uint16_t *dv, *ov;
  std::int32_t* oi;
  unsigned *failed, *surv;
  cudaMalloc(&dv, h.size() * 2), cudaMalloc(&ov, rows * k * 2), cudaMalloc(&oi, rows * k * 4);
  cudaMalloc(&failed, 4), cudaMalloc(&surv, rows * 4);
  cudaMemcpy(dv, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(ov, 0xff, rows * k * 2), cudaMemset(oi, 0xff, rows * k * 4), cudaMemset(failed, 0, 4);  // poisoned
  const std::size_t shared = kKMax * 8 + block_radix_sort_scratch_bytes<kWarps>(kKMax);
  cudaFuncSetAttribute(probe<kInFlight>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe<kInFlight>, kThreads, shared);
  probe<kInFlight><<<unsigned(rows), kThreads, shared>>>(dv, n, k, ov, oi, failed, surv);
  cudaError_t err = cudaDeviceSynchronize();
  unsigned nfailed = 0;
  cudaMemcpy(&nfailed, failed, 4, cudaMemcpyDeviceToHost);
  std::vector<std::uint16_t> gv(rows * k);
  std::vector<std::int32_t> gi(rows * k);
  std::vector<unsigned> gs(rows);
  cudaMemcpy(gv.data(), ov, gv.size() * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(gi.data(), oi, gi.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(gs.data(), surv, gs.size() * 4, cudaMemcpyDeviceToHost);
  // The host reference: (rank desc, position asc), the first k, on every row.
  std::size_t wrong = 0, checked = 0;
  std::vector<std::pair<unsigned, unsigned>> ref(n);
  for (std::size_t r = 0; r < rows; ++r) {
    for (unsigned i = 0; i < n; ++i) ref[i] = {~host_rank(h[r * n + i]) & 0xffffu, i};
    std::partial_sort(ref.begin(), ref.begin() + k, ref.end());
    bool ok = true;
    for (unsigned q = 0; q < k && ok; ++q)
      ok = gi[r * k + q] == std::int32_t(ref[q].second) && gv[r * k + q] == h[r * n + ref[q].second];
    wrong += !ok, ++checked;
  }
  const auto [smin, smax] = std::minmax_element(gs.begin(), gs.end());
  // Timing: back-to-back launches.
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  constexpr int kCalls = 20;
  std::vector<float> times;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(e0);
    for (int c = 0; c < kCalls; ++c) probe<kInFlight><<<unsigned(rows), kThreads, shared>>>(dv, n, k, ov, oi, failed, surv);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    times.push_back(ms / kCalls);
  }
  std::sort(times.begin(), times.end());
  const double floor_ms = double(rows) * n * 2 / (copy_gbs * 1e9) * 1e3;
  std::printf("probe (%d vectors in flight a lane) bf16 %s rows=%zu n=%u k=%u: %.3f ms (median of 5 x %d calls), floor %.3f ms (%.2fx); %d blocks/SM, "
              "%zu B shared; rows by the exact fallback %u, survivors %u-%u; checked %zu rows, wrong %zu; err=%d\n",
              kInFlight, mixed ? "mixed" : "normal", rows, n, k, times[2], kCalls, floor_ms, times[2] / floor_ms, per_sm, shared, nfailed, *smin, *smax,
              checked, wrong, int(err));
  cudaFree(dv), cudaFree(ov), cudaFree(oi), cudaFree(failed), cudaFree(surv);
}

// The D2D copy rate (bytes read + written over time, as bench_topk_llm's floor takes it).
float copy_rate_gbs() {
  const std::size_t bytes = std::size_t(1) << 30;
  void *a, *b;
  cudaMalloc(&a, bytes), cudaMalloc(&b, bytes);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int i = 0; i < 5; ++i) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaFree(a), cudaFree(b);
  return float(2.0 * bytes * 5 / (ms * 1e-3) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  const float gbs = copy_rate_gbs();
  std::printf("D2D copy rate %.1f GB/s\n", gbs);
  if (argc >= 4) {
    for (int a = 1; a + 2 < argc; a += 3) {
      const std::size_t rows = std::stoull(argv[a]);
      const unsigned n = unsigned(std::stoul(argv[a + 1])), k = unsigned(std::stoul(argv[a + 2]));
      run<4>(rows, n, k, gbs, false), run<8>(rows, n, k, gbs, false), run<4>(rows, n, k, gbs, true);
    }
    return 0;
  }
  for (unsigned k : {1024u, 256u, 50u})
    run<4>(4096, 32000, k, gbs, false), run<8>(4096, 32000, k, gbs, false), run<4>(4096, 32000, k, gbs, true);
  return 0;
}
