// The row-filter top-k kernels' phase times (block 0, %globaltimer) on normal logits: row_filter's
// seed, stream, raises on the way (how many, the keys appended at each) and final raise;
// row_filter_finish's load, sort and write; each launch's time by events; and over every row, from
// the temporary storage, the keys appended, the keys above the final threshold (what the finish
// selects from) and the rows listed for the row-stream blocks. One row alone, then a full device
// (4096 rows). Built by bench/phases/marked_kernel.sh row_filter against a marked copy of the
// kernels; not a benchmark (no peer): it says where a call's time goes.
#include "row_filter_marked.cuh"
#include "phase_logits.hpp"
#include <algorithm>
#include <bit>
#include <cstdio>
#include <vector>
using namespace radixmesh;
using namespace radixmesh::detail::topk_gpu;

// The median and the largest of v.
static void print_spread(const char* what, std::vector<unsigned> v) {
  if (v.empty()) return void(printf(" %s -", what));
  std::sort(v.begin(), v.end());
  printf(" %s median %u max %u", what, v[v.size() / 2], v.back());
}

template <class T> void run(std::size_t rows, std::size_t n, unsigned k) {
  using U = key_bits_t<T>;
  const std::vector<U> h = phase_logits<U>(rows * n);
  U* dv; cudaMalloc(&dv, h.size() * sizeof(U)); cudaMemcpy(dv, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice);
  U* ov; void* oi; cudaMalloc(&ov, rows * k * sizeof(U)); cudaMalloc(&oi, rows * k * 8);
  FilterBuffers f{};
  f.slots_per_row = filter_slots_per_row(k), f.raise_after = filter_raise_after(k);
  cudaMalloc(&f.slots, rows * f.slots_per_row * 8); cudaMalloc(&f.states, rows * sizeof(FilterState));
  cudaMalloc(&f.listed, rows * 4); cudaMalloc(&f.listed_count, 4);
  StreamParams<T> p{};
  p.values = dv; p.rows = {nullptr, n, n}; p.k = k; p.k_pad = std::bit_ceil(k);  // as row_filter_plan sets them
  p.capacity = kFinishLoad; p.segments = 1;
  p.index_bits = int(std::bit_width(n));
  p.options = {.largest = true, .sorted = true}; p.out_values = ov; p.out_indices = oi; p.index64 = false;
  const std::size_t finish_shared = std::size_t(kFinishSharedKeys) * 8;
  cudaFuncSetAttribute(row_filter_finish<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(finish_shared));
  int filter_per_sm = 0, finish_per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&filter_per_sm, row_filter<T>, kStreamThreads, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&finish_per_sm, row_filter_finish<T>, kStreamThreads, finish_shared);
  for (int rep = 0; rep < 3; ++rep) {
    unsigned long long z[64] = {}; cudaMemcpyToSymbol(prof_t, z, sizeof z);
    cudaMemset(f.listed_count, 0, 4);
    cudaEvent_t e0, e1, e2; cudaEventCreate(&e0); cudaEventCreate(&e1); cudaEventCreate(&e2);
    cudaEventRecord(e0);
    row_filter<T><<<unsigned(rows), kStreamThreads>>>(p, f);
    cudaEventRecord(e1);
    row_filter_finish<T><<<unsigned(rows), kStreamThreads, finish_shared>>>(p, f);
    cudaEventRecord(e2); cudaDeviceSynchronize();
    float filter_ms, finish_ms; cudaEventElapsedTime(&filter_ms, e0, e1); cudaEventElapsedTime(&finish_ms, e1, e2);
    unsigned long long t[64]; cudaMemcpyFromSymbol(t, prof_t, sizeof t);
    if (rep < 2) continue;
    std::vector<FilterState> states(rows);
    std::vector<unsigned long long> slots(rows * f.slots_per_row);
    unsigned listed = 0;
    cudaMemcpy(states.data(), f.states, rows * sizeof(FilterState), cudaMemcpyDeviceToHost);
    cudaMemcpy(slots.data(), f.slots, slots.size() * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(&listed, f.listed_count, 4, cudaMemcpyDeviceToHost);
    std::vector<unsigned> appended, above;
    for (std::size_t r = 0; r < rows; ++r) {
      if (states[r].count == kFilterListed) continue;
      appended.push_back(states[r].count);
      const unsigned long long* s = slots.data() + r * f.slots_per_row;
      above.push_back(unsigned(std::count_if(s, s + states[r].count, [&](unsigned long long key) { return key > states[r].threshold; })));
    }
    printf("%s rows=%zu n=%zu k=%u err=%d | row_filter %.1f us (%d blocks/SM): seed %.2f stream %.2f (raises on the way %llu"
           " at %llu keys: %.2f) final raise %.2f, block 0 %.2f | row_filter_finish %.1f us (%d blocks/SM): load %.2f"
           " (%llu keys) sort and write %.2f, block 0 %.2f |", sizeof(U) == 2 ? "bf16" : "f32", rows, n, k,
           int(cudaGetLastError()), filter_ms * 1000, filter_per_sm, (t[1] - t[0]) / 1e3, (t[2] - t[1] - t[3]) / 1e3, t[4],
           t[5], t[3] / 1e3, (t[7] - t[2]) / 1e3, (t[7] - t[0]) / 1e3, finish_ms * 1000, finish_per_sm,
           (t[11] - t[10]) / 1e3, t[15], (t[13] - t[11]) / 1e3,
           (t[13] - t[10]) / 1e3);
    print_spread("appended", appended);
    print_spread("above the final threshold", above);
    printf(" listed %u\n", listed);
  }
  cudaFree(dv); cudaFree(ov); cudaFree(oi);
  cudaFree(f.slots); cudaFree(f.states); cudaFree(f.listed); cudaFree(f.listed_count);
}
int main() {
  for (std::size_t rows : {std::size_t(1), std::size_t(4096)}) {
    run<bfloat16_t>(rows, 32000, 1024);
    run<bfloat16_t>(rows, 32000, 256);
    run<bfloat16_t>(rows, 128256, 1024);
    run<float>(rows, 32000, 1024);
    run<float>(rows, 128256, 1024);
  }
  return 0;
}
