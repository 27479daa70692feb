// The row-cluster top-k kernel's phase times (block 0 of row 0's cluster, %globaltimer), on
// normal logits: load, each pass (pass 0 split into count / push / cluster barrier / scan /
// decision), the winners' listing and sort, and the exchange, ranking and writes; gathered (the
// second line of a shape), the lists' gather into block 0 and its select, sort and writes. Built by
// bench/phases/marked_kernel.sh row_cluster against a marked copy of the kernel; not a benchmark (one launch,
// no peer): it says where a call's time goes.
#include "row_cluster_marked.cuh"
#include <cstdio>
#include <vector>
#include <random>
#include <cuda_bf16.h>
using namespace radixmesh;
using namespace radixmesh::detail::topk_gpu;
template <class T> void run(std::size_t rows, std::size_t n, unsigned k, unsigned blocks, bool gather) {
  using U = key_bits_t<T>;
  std::vector<U> h(rows * n);
  std::mt19937 g(1); std::normal_distribution<float> d(0, 1);
  for (auto& x : h) { float f = d(g); unsigned b; memcpy(&b, &f, 4); x = sizeof(U) == 2 ? U(b >> 16) : U(b); }
  U* dv; cudaMalloc(&dv, h.size() * sizeof(U)); cudaMemcpy(dv, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice);
  U* ov; void* oi; cudaMalloc(&ov, rows * k * sizeof(U)); cudaMalloc(&oi, rows * k * 8);
  StreamParams<T> p{};
  p.values = dv; p.rows = {nullptr, n, n}; p.k = k; p.k_pad = 1; while (p.k_pad < k) p.k_pad *= 2;
  p.capacity = (p.k_pad + 1) / 2 * 2; p.segments = blocks; p.segment_length = ((n + blocks - 1) / blocks + 15) / 16 * 16;
  int ib = 0; while ((1ull << ib) <= n) ++ib; p.index_bits = ib;
  p.options = {.largest = true, .sorted = true}; p.out_values = ov; p.out_indices = oi; p.index64 = false;
  const std::size_t shared = cluster_shared_bytes(p.capacity, p.segment_length, sizeof(U));
  cudaFuncSetAttribute(row_cluster<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000);
  cudaFuncSetAttribute(row_cluster<T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchAttribute a{}; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = blocks; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
  cudaLaunchConfig_t c{}; c.gridDim = dim3(blocks, rows); c.blockDim = dim3(kClusterThreads); c.dynamicSmemBytes = shared; c.attrs = &a; c.numAttrs = 1;
  for (int rep = 0; rep < 3; ++rep) {
    unsigned long long z[64] = {}; cudaMemcpyToSymbol(prof_t, z, sizeof z);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0);
    cudaError_t err = cudaLaunchKernelEx(&c, row_cluster<T>, p, gather);
    cudaEventRecord(e1); cudaDeviceSynchronize();
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    unsigned long long t[64]; cudaMemcpyFromSymbol(t, prof_t, sizeof t);
    if (rep < 2) continue;
    printf("%s rows=%zu n=%zu k=%u blocks=%u gather=%d err=%d event %.1f us | load %.2f", sizeof(U) == 2 ? "bf16" : "f32", rows, n, k,
           blocks, int(gather), int(err), ms * 1000, (t[1] - t[0]) / 1e3);
    // The bound (slices of 4096+ values): its exchange, then the list of keys reaching it.
    const unsigned long long listed = t[25] ? t[25] : t[24] ? t[24] : t[1];
    if (t[24]) printf(" | bound %.2f, list %.2f", (t[24] - t[1]) / 1e3, t[25] ? (t[25] - t[24]) / 1e3 : 0.0);
    if (t[26]) {  // gathered: block 0 selected, sorted and wrote the row alone
      printf(" | gathered %.2f, selected, sorted and written %.2f | total %.2f\n", (t[26] - listed) / 1e3,
             (t[27] - t[26]) / 1e3, (t[27] - t[0]) / 1e3);
      continue;
    }
    unsigned long long prev = listed;
    for (int i = 2; i < 20; ++i) if (t[i]) { printf(" pass%d %.2f", i - 2, (t[i] - prev) / 1e3); prev = t[i]; }
    printf(" | ties by position %.2f", (t[21] - t[20]) / 1e3);
    printf(" | winners listed %.2f, sorted %.2f, counts' barrier %.2f, runs exchanged, ranked and written %.2f | total %.2f"
           " | pass 0: count %.2f, push %.2f, cluster barrier %.2f, scan %.2f, decision %.2f\n",
           (t[28] - t[21]) / 1e3, (t[23] - t[28]) / 1e3, (t[29] - t[23]) / 1e3, (t[22] - t[29]) / 1e3,
           (t[22] - t[0]) / 1e3, (t[30] - listed) / 1e3,
           (t[31] - t[30]) / 1e3, (t[32] - t[31]) / 1e3, (t[33] - t[32]) / 1e3, (t[2] - t[33]) / 1e3);
  }
  cudaFree(dv); cudaFree(ov); cudaFree(oi);
}
int main() {
  for (bool gather : {false, true}) {
    for (unsigned k : {64u, 256u, 1024u}) run<bfloat16_t>(1, 32000, k, 16, gather);
    for (unsigned k : {64u, 1024u}) run<float>(1, 128256, k, 16, gather);
    for (unsigned k : {256u, 1024u}) run<bfloat16_t>(1, 128256, k, 16, gather);
    for (unsigned k : {1024u}) run<bfloat16_t>(1, 256000, k, 16, gather);
    for (unsigned k : {1024u}) run<bfloat16_t>(8, 128256, k, 16, gather);
    for (unsigned k : {1024u}) run<bfloat16_t>(8, 256000, k, 8, gather);
  }
  return 0;
}
