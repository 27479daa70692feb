// The row-smem path of the GPU top-k: which problems take it, its shared memory, and its launch
// (the kernel is in topk_row_smem.cuh).
#include "cuda/topk/topk_row_smem.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_smem.cuh"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxGridRows = 2147483647;  // grid.x
constexpr std::size_t kRowSmemMinRows = 32;
// 16-bit rows over more than one wave take a block each from k above this; below, the row-stream
// blocks cost less. One H100, call HT (bench_topk_llm --rows 4096,2048,1024 --vocab 32000
// --k 128,...,1024 --dtype bf16,f32 --no-torch, bench/results/gpu-check/h100-ht-*):
// 4096 x 32000 bf16 k = 768 row-smem 0.458 against row-stream 0.393 ms, k = 1024 0.466 against
// 0.490; 1024 rows k = 768 0.128 against 0.112, k = 1024 0.130 against 0.136.
constexpr unsigned kRowSmemManyWavesMinK = 768;

// The dynamic shared memory a block may take on `device`: the opt-in limit less the kernel's
// static shared memory. Every kernel of the path is allowed that much once per device (always the
// same value, so a launch in flight on another thread never sees it lowered).
template <class T> std::size_t allowed_shared(int device) {
  constexpr int kMaxDevices = 64;
  static std::atomic<long long> allowed[kMaxDevices] = {};
  if (device >= 0 && device < kMaxDevices)
    if (const long long a = allowed[device].load(std::memory_order_acquire)) return std::size_t(a);
  int optin = 0;
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  RXM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, row_smem<T>));
  const long long a = std::max<long long>(1, optin - (long long)attributes.sharedSizeBytes);
  RXM_CUDA_CHECK(cudaFuncSetAttribute(row_smem<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(a)));
  // All of the SM's memory as shared memory: three blocks of 32000 16-bit values fit only so.
  RXM_CUDA_CHECK(cudaFuncSetAttribute(row_smem<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
  if (device >= 0 && device < kMaxDevices) allowed[device].store(a, std::memory_order_release);
  return std::size_t(a);
}

}  // namespace

std::optional<RowSmemPlan> row_smem_plan(const device::TopkProblem& pr, int device) {
  const int choice = pr.tuning.row_smem;
  const std::size_t width = size_of(pr.type);
  if (choice == 0 || pr.k < 2 || pr.k > kRowStreamMaxK || (width != 2 && width != 4)) return std::nullopt;
  const std::uint64_t longest = longest_row(pr);
  RowSmemPlan g;
  g.k_pad = unsigned(std::bit_ceil(pr.k));
  g.index_bits = int(std::bit_width(longest));
  g.keys = std::max(g.k_pad, kSmemHistKeys);
  g.shared_bytes = row_smem_shared_bytes(g.keys, g.k_pad, longest, width);
  std::size_t allowed = 0;
  with_stream_type(pr.type, [&](auto tag) { allowed = allowed_shared<decltype(tag)>(device); });
  if (g.shared_bytes > allowed) return std::nullopt;
  if (choice == 1) return g;
  // Automatic: from kRowSmemMinRows rows (fewer rows take a cluster or several blocks a row, whose
  // steps are shorter), while the rows fill the SMs at most once (32-bit keys: a block an SM) or
  // three times (16-bit: three blocks an SM); beyond, for 16-bit keys with k > kRowSmemManyWavesMinK.
  const std::size_t sms = std::size_t(multiprocessors(device));
  const bool one_wave = width == 2 ? pr.rows <= kSmemBlocksPerSm * sms : pr.rows <= sms;
  if (row_family_automatic(pr.tuning) && pr.rows >= kRowSmemMinRows &&
      (one_wave || (width == 2 && pr.k > kRowSmemManyWavesMinK)))
    return g;
  return std::nullopt;
}

void launch_row_smem(const RowSmemPlan& g, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int device) {
    allowed_shared<T>(device);
    p.k_pad = g.k_pad, p.capacity = g.keys, p.index_bits = g.index_bits;
    for (std::size_t r0 = 0; r0 < pr.rows; r0 += kMaxGridRows) {
      p.row0 = r0;
      const unsigned chunk = unsigned(std::min(kMaxGridRows, pr.rows - r0));
      row_smem<T><<<chunk, kSmemThreads, g.shared_bytes, stream>>>(p);
      RXM_CUDA_CHECK(cudaGetLastError());
    }
    if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

}  // namespace radixmesh::detail::topk_gpu
