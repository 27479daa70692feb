// The row-compact top-k kernel's phase times (block 0, %globaltimer) on normal bf16 logits: the
// sampled bound, the stream, the select among the survivors, their compaction, the sort and the
// output, for one row alone, five rows an SM (one wave) and 4096 rows. Built by
// bench/phases/marked_kernel.sh row_compact against a marked copy of the kernel; not a benchmark
// (no peer): it says where a call's time goes.
//   row_compact_phases [N...]   (default 32000 65536)
#include "row_compact_marked.cuh"
#include "marked_run.cuh"
#include <cstdio>
#include <random>
#include <string>
#include <vector>
using namespace radixmesh;
using namespace radixmesh::detail::topk_gpu;
void run(std::size_t rows, std::size_t n, unsigned k) {
  std::vector<std::uint16_t> h(rows * n);
  std::mt19937 g(1);
  std::normal_distribution<float> d(0, 1);
  for (auto& x : h) { float f = d(g); unsigned b; memcpy(&b, &f, 4); x = std::uint16_t(b >> 16); }
  std::uint16_t* dv; cudaMalloc(&dv, h.size() * 2); cudaMemcpy(dv, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  std::uint16_t* ov; void* oi; cudaMalloc(&ov, rows * k * 2); cudaMalloc(&oi, rows * k * 8);
  StreamParams<bfloat16_t> p{};
  p.values = dv; p.rows = {nullptr, n, n}; p.k = k;
  int ib = 0; while ((1ull << ib) <= n) ++ib; p.index_bits = ib;
  p.options = {.largest = true, .sorted = true}; p.out_values = ov; p.out_indices = oi; p.index64 = false;
  {
    unsigned long long t[64];
    const MarkedRun run = run_marked([&] { row_compact<bfloat16_t><<<unsigned(rows), kCompactThreads, kCompactSharedBytes>>>(p); return cudaGetLastError(); }, t);
    auto us = [&](int a, int b) { return t[a] && t[b] ? (t[b] - t[a]) / 1e3 : -1.0; };
    printf("bf16 rows=%zu n=%zu k=%u err=%d event %.1f us | bound %.2f stream %.2f select %.2f compact %.2f "
           "(fallback: %s) | sort %.2f | write %.2f | block 0 total %.2f\n",
           rows, n, k, int(run.error), run.us, us(0, 1), us(1, 2), us(2, 3), us(3, 4), t[3] ? "no" : "yes",
           us(5, 6), us(6, 7), us(0, 7));
  }
  cudaFree(dv); cudaFree(ov); cudaFree(oi);
}
int main(int argc, char** argv) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::vector<std::size_t> ns;
  for (int a = 1; a < argc; ++a) ns.push_back(std::stoull(argv[a]));
  if (ns.empty()) ns = {32000, 65536};
  for (std::size_t n : ns)
    for (std::size_t rows : {std::size_t(1), std::size_t(5 * sms), std::size_t(4096)})
      for (unsigned k : {129u, 256u, 1024u}) run(rows, n, k);
  return 0;
}
