// The row-smem top-k kernel's phase times (block 0, %globaltimer) on normal logits: the load, the
// bound, each select pass, the winners counted and placed in position order, their sort and the
// output, for one row alone, one row an SM and three rows an SM. Built by bench/phases/marked_kernel.sh row_smem
// against a marked copy of the kernel; not a benchmark (no peer): it says where a call's time goes.
#include "row_smem_marked.cuh"
#include "marked_run.cuh"
#include <cstdio>
#include <random>
#include <vector>
using namespace radixmesh;
using namespace radixmesh::detail::topk_gpu;
template <class T> void run(std::size_t rows, std::size_t n, unsigned k) {
  using U = key_bits_t<T>;
  std::vector<U> h(rows * n);
  std::mt19937 g(1);
  std::normal_distribution<float> d(0, 1);
  for (auto& x : h) { float f = d(g); unsigned b; memcpy(&b, &f, 4); x = sizeof(U) == 2 ? U(b >> 16) : U(b); }
  U* dv; cudaMalloc(&dv, h.size() * sizeof(U)); cudaMemcpy(dv, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice);
  U* ov; void* oi; cudaMalloc(&ov, rows * k * sizeof(U)); cudaMalloc(&oi, rows * k * 8);
  StreamParams<T> p{};
  p.values = dv; p.rows = {nullptr, n, n}; p.k = k; p.k_pad = 1; while (p.k_pad < k) p.k_pad *= 2;
  p.capacity = p.k_pad > kSmemHistKeys ? p.k_pad : kSmemHistKeys;
  int ib = 0; while ((1ull << ib) <= n) ++ib; p.index_bits = ib;
  p.options = {.largest = true, .sorted = true}; p.out_values = ov; p.out_indices = oi; p.index64 = false;
  const std::size_t shared = row_smem_shared_bytes(p.capacity, p.k_pad, n, sizeof(U));
  cudaFuncSetAttribute(row_smem<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000);
  cudaFuncSetAttribute(row_smem<T>, cudaFuncAttributePreferredSharedMemoryCarveout, int(cudaSharedmemCarveoutMaxShared));
  {
    unsigned long long t[64];
    const MarkedRun run = run_marked([&] { row_smem<T><<<unsigned(rows), kSmemThreads, shared>>>(p); return cudaGetLastError(); }, t);
    printf("%s rows=%zu n=%zu k=%u err=%d event %.1f us | load %.2f bound %.2f", sizeof(U) == 2 ? "bf16" : "f32", rows, n, k,
           int(run.error), run.us, (t[1] - t[0]) / 1e3, (t[2] - t[1]) / 1e3);
    unsigned long long prev = t[2];
    for (int i = 3; i < 10; ++i) if (t[i]) { printf(" pass%d %.2f", i - 3, (t[i] - prev) / 1e3); prev = t[i]; }
    printf(" | winners counted %.2f placed %.2f | sort %.2f | write %.2f | block 0 total %.2f\n", (t[10] - prev) / 1e3,
           (t[11] - t[10]) / 1e3, (t[12] - t[11]) / 1e3, (t[13] - t[12]) / 1e3, (t[13] - t[0]) / 1e3);
  }
  cudaFree(dv); cudaFree(ov); cudaFree(oi);
}
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (std::size_t rows : {std::size_t(1), std::size_t(sms), std::size_t(3 * sms)})
    for (unsigned k : {2u, 50u, 256u, 512u, 1024u}) run<bfloat16_t>(rows, 32000, k);
  for (unsigned k : {50u, 512u, 1024u}) run<float>(1, 32000, k);
  return 0;
}
