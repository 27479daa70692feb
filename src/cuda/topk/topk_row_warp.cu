// The row-warp path of the GPU top-k: which problems take it, and its launch (the kernel is in
// topk_row_warp.cuh).
#include "cuda/topk/topk_row_warp.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_warp.cuh"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxGridBlocks = 2147483647;  // grid.x
// Automatic where a warp per row fills the GPU and its rows are short enough that one warp's read
// of a row does not outlast the row-stream blocks' split of it: rows of at most 256 KiB from 4
// rows a multiprocessor, of at most 512 KiB from 8 (one H200, call EF: 1024 x 32000 bf16 k = 50
// 57 against 81 us, 1024 x 128256 f32 208 against 154, 4096 x 256000 f32 1017 against 979;
// docs/design/topk.md, "The row-warp variant").
constexpr std::size_t kRowWarpRowsPerSm = 4, kRowWarpBytes = 256 * 1024;

}  // namespace

std::optional<RowWarpPlan> row_warp_plan(const device::TopkProblem& pr, int device) {
  const int choice = pr.tuning.row_warp;
  const std::size_t width = size_of(pr.type);
  if (choice == 0 || pr.k < 2 || pr.k > kRowWarpMaxK || (width != 2 && width != 4)) return std::nullopt;
  const std::uint64_t longest = longest_row(pr);
  RowWarpPlan g;
  g.slots = int(std::bit_ceil((pr.k + 31) / 32));
  g.index_bits = int(std::bit_width(longest));
  if (choice == 1) return g;
  // Automatic: floating-point keys (integer keys skip no vector: every value is ranked), when the
  // row-stream family's other knobs are automatic too.
  if (!row_family_automatic(pr.tuning) || pr.tuning.row_smem >= 0 || !floating(pr.type)) return std::nullopt;
  const std::size_t sms = std::size_t(multiprocessors(device)), row_bytes = longest * width;
  if ((pr.rows >= kRowWarpRowsPerSm * sms && row_bytes <= kRowWarpBytes) ||
      (pr.rows >= 2 * kRowWarpRowsPerSm * sms && row_bytes <= 2 * kRowWarpBytes))
    return g;
  return std::nullopt;
}

namespace {

// All of the SM's memory as shared memory, once per device: four blocks of 43 KiB (their rings
// and buffers) fit only so. The same value every time, so a launch in flight never sees less.
template <class T, int L, class Word> void prefer_shared(int device) {
  constexpr int kMaxDevices = 64;
  static std::atomic<bool> done[kMaxDevices] = {};
  if (device >= 0 && device < kMaxDevices && done[device].load(std::memory_order_acquire)) return;
  RXM_CUDA_CHECK(cudaFuncSetAttribute(row_warp<T, L, Word>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
  if (device >= 0 && device < kMaxDevices) done[device].store(true, std::memory_order_release);
}

template <class T, int L, class Word>
void launch_slots(StreamParams<T> p, std::size_t rows, int device, cudaStream_t stream) {
  prefer_shared<T, L, Word>(device);
  const std::size_t blocks = (rows + kWarpRowWarps - 1) / kWarpRowWarps;
  for (std::size_t b0 = 0; b0 < blocks; b0 += kMaxGridBlocks) {
    p.row0 = b0 * kWarpRowWarps;
    const unsigned chunk = unsigned(std::min(kMaxGridBlocks, blocks - b0));
    row_warp<T, L, Word><<<chunk, kWarpRowThreads, 0, stream>>>(p, rows);
    RXM_CUDA_CHECK(cudaGetLastError());
  }
}
}  // namespace

void launch_row_warp(const RowWarpPlan& g, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int device) {
    p.index_bits = g.index_bits;
    auto launch = [&]<class Word>(Word) {
      switch (g.slots) {
        case 1: launch_slots<T, 1, Word>(p, pr.rows, device, stream); break;
        case 2: launch_slots<T, 2, Word>(p, pr.rows, device, stream); break;
        default: launch_slots<T, 4, Word>(p, pr.rows, device, stream); break;
      }
    };
    // 32-bit queue keys where a 16-bit rank and the position fit (rows below 2^16): half the
    // shuffles and compares of every merge.
    if constexpr (sizeof(key_bits_t<T>) == 2) {
      if (8 * int(sizeof(key_bits_t<T>)) + g.index_bits <= 32) launch(0u);
      else launch(0ull);
    } else {
      launch(0ull);
    }
    if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

}  // namespace radixmesh::detail::topk_gpu
