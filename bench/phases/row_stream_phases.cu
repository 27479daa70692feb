// The row-stream top-k kernel's phase times (block (0, 0), %globaltimer) on normal logits, one
// segment a row: the seed, the tiles streamed, the compactions on the way (how many, the keys they
// took), and the row's output (last compaction, sort, write), for one row alone and for a full
// device (4096 rows), at the plan's compaction mark and at larger ones, and with the seed guessed
// (TopkTuning::row_stream_estimate) and not; or one shape named on the command line. Built by
// bench/phases/marked_kernel.sh row_stream against a marked copy of the kernel; not a benchmark
// (no peer): it says where a call's time goes.
#include "row_stream_marked.cuh"
#include "marked_run.cuh"
#include "phase_logits.hpp"
#include <cstdio>
#include <string>
#include <vector>
using namespace radixmesh;
using namespace radixmesh::detail::topk_gpu;
template <class T> void run(std::size_t rows, std::size_t n, unsigned k, unsigned compact_above, bool guess = false) {
  using U = key_bits_t<T>;
  const std::vector<U> h = phase_logits<U>(rows * n);
  U* dv; cudaMalloc(&dv, h.size() * sizeof(U)); cudaMemcpy(dv, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice);
  U* ov; void* oi; cudaMalloc(&ov, rows * k * sizeof(U)); cudaMalloc(&oi, rows * k * 8);
  StreamParams<T> p{};
  p.values = dv; p.rows = {nullptr, n, n}; p.k = k; p.k_pad = 1; while (p.k_pad < k) p.k_pad *= 2;
  p.compact_above = compact_above; p.capacity = unsigned(kStreamTile) + compact_above + unsigned(kStreamHeadTail);
  p.segments = 1; p.segment_length = (n + 15) / 16 * 16;
  int ib = 0; while ((1ull << ib) <= n) ++ib; p.index_bits = ib;
  p.options = {.largest = true, .sorted = true}; p.out_values = ov; p.out_indices = oi; p.index64 = false;
  const std::size_t shared = std::size_t(p.capacity + stream_keep_entries(p.k_pad)) * 8;
  const auto kernel = guess ? row_stream<T, false, true> : row_stream<T, false>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000);
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kStreamThreads, shared);
  {
    unsigned long long t[64];
    const MarkedRun run = run_marked([&] { kernel<<<dim3(1, unsigned(rows)), kStreamThreads, shared>>>(p); return cudaGetLastError(); }, t);
    printf("%s%s rows=%zu n=%zu k=%u compact_above=%u blocks/SM %d err=%d event %.1f us | seed %.2f stream %.2f (compactions %llu"
           " of %llu keys: %.2f) | left %llu: keep %.2f sort %.2f write %.2f | block 0 total %.2f\n",
           sizeof(U) == 2 ? "bf16" : "f32", guess ? " guessed seed" : "", rows, n, k, compact_above, per_sm, int(run.error), run.us,
           (t[1] - t[0]) / 1e3, (t[2] - t[1] - t[3]) / 1e3, t[4], t[5], t[3] / 1e3, t[6], (t[7] - t[2]) / 1e3,
           (t[8] - t[7]) / 1e3, (t[9] - t[8]) / 1e3, (t[9] - t[0]) / 1e3);
  }
  cudaFree(dv); cudaFree(ov); cudaFree(oi);
}
int main(int argc, char** argv) {
  // One shape: row_stream_phases ROWS N K bf16|f32 [COMPACT_ABOVE [GUESS 0|1]] (defaults 2 k, guessed).
  if (argc >= 5) {
    const std::size_t rows = std::stoull(argv[1]), n = std::stoull(argv[2]);
    const unsigned k = unsigned(std::stoul(argv[3]));
    const unsigned compact = argc >= 6 ? unsigned(std::stoul(argv[5])) : 2 * k;
    const bool guess = argc >= 7 ? std::stoi(argv[6]) != 0 : true;
    if (std::string(argv[4]) == "f32") run<float>(rows, n, k, compact, guess);
    else run<bfloat16_t>(rows, n, k, compact, guess);
    return 0;
  }
  // One row: the compaction mark swept, then the seed guessed and not (TopkTuning::row_stream_estimate).
  for (unsigned k : {50u, 1024u})
    for (unsigned compact : {std::max(2 * k, 64u), 4096u}) run<bfloat16_t>(1, 128256, k, compact);
  // One row and a full device (4096 rows; the host makes 0.5-1 G values, seconds each).
  for (std::size_t rows : {std::size_t(1), std::size_t(4096)})
    for (bool guess : {false, true}) {
      run<bfloat16_t>(rows, 128256, 1024, 2048, guess);
      run<float>(rows, 128256, 1024, 2048, guess);
      run<bfloat16_t>(rows, 128256, 50, 100, guess);
      if (rows == 1) run<bfloat16_t>(rows, 256000, 1024, 2048, guess), run<float>(rows, 32000, 1024, 2048, guess);
    }
  return 0;
}
