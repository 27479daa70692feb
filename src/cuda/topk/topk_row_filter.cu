// The row-filter variant of the GPU top-k: which problems take it, its temporary storage and
// shared memory, and its launches (kernels in topk_row_filter.cuh).
#include "cuda/topk/topk_row_filter.hpp"

#include <algorithm>
#include <bit>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/topk/topk_row_filter.cuh"
#include "cuda/topk/topk_row_stream.hpp"

namespace radixmesh::detail::topk_gpu {

namespace {

constexpr std::size_t kMaxGridRows = 2147483647;  // grid.x

// The automatic rule: floating-point rows of kFilterMinRow to kFilterMaxRow values (shorter rows
// guess no seed: every one would be listed for row_filter_left), kFilterMinK < k <=
// kFilterMaxK, from kFilterMinRowsPerSm rows an SM, while the slots take at most kFilterMaxSlotBytes.
// One H100, call HT (bench_topk_llm --rows 4096,2048,1024 --vocab 32000 --k 128,...,1024 --dtype
// bf16,f32 --no-torch; bench/results/gpu-check/h100-ht-*), ms, the filter against the best other
// path: 4096 x 32000 bf16 k = 192 0.267 / 0.286 (row-stream), k = 256 0.282 / 0.345, k = 384
// 0.330 / 0.382, k = 512 0.413 / 0.344 (lost); f32 k = 256 0.362 / 0.462, k = 384 0.418 / 0.496,
// k = 512 0.444 / 0.401 (lost); 1024 rows bf16 k = 256 0.093 / 0.106, f32 0.114 / 0.135, but
// bf16 k = 192 0.087 / 0.085; k = 128 lost to the row-warp blocks (4096 rows 0.256 / 0.158). Longer
// rows: 4096 x 128256 bf16 k = 256 0.629 / 0.649, f32 1.006 / 0.872 (lost), 256000 lost. 256 rows
// lost at every shape (call HQ: 1.10-2.03x). 1024 rows are 7.75 an SM of the H100's 132.
constexpr unsigned kFilterMinK = 128, kFilterMaxK = 384;
constexpr std::uint64_t kFilterMinRow = 16384, kFilterMaxRow = 65536;
constexpr std::size_t kFilterMinRowsPerSm = 7;
constexpr std::size_t kFilterMaxSlotBytes = std::size_t(256) << 20;

// Lets the kernels of key type T use up to their most dynamic shared memory, once per device
// (always the same value: a launch in flight on another thread never sees it lowered). A listed
// row's block takes what a row-stream block takes.
template <class T> void allow_shared(int device) {
  once_per_device(device, [] {
    const int finish = int(kFinishSharedKeys * sizeof(unsigned long long));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_filter_finish<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, finish));
    RXM_CUDA_CHECK(cudaFuncSetAttribute(row_filter_left<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxStreamShared)));
  });
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// The automatic rule (above), only where every other knob of the family is automatic too, so that
// a benchmark's variant lines time the path they name.
bool automatic_choice(const device::TopkProblem& pr, std::uint64_t longest, int device) {
  const device::TopkTuning& t = pr.tuning;
  if (!row_family_automatic(t) || t.row_warp >= 0 || t.row_smem >= 0 || t.row_stream_estimate == 0) return false;
  const std::size_t slot_bytes = pr.rows * filter_slots_per_row(unsigned(pr.k)) * sizeof(unsigned long long);
  return floating(pr.type) && pr.k > kFilterMinK && pr.k <= kFilterMaxK && longest >= kFilterMinRow &&
         longest <= kFilterMaxRow && pr.rows >= kFilterMinRowsPerSm * std::size_t(multiprocessors(device)) &&
         slot_bytes <= kFilterMaxSlotBytes;
}

}  // namespace

std::optional<RowFilterPlan> row_filter_plan(const device::TopkProblem& pr, int device) {
  const int choice = pr.tuning.row_filter;
  const std::size_t width = size_of(pr.type);
  if (choice == 0 || pr.k < 2 || pr.k > kRowStreamMaxK || (width != 2 && width != 4)) return std::nullopt;
  const std::uint64_t longest = longest_row(pr);
  if (choice < 0 && !automatic_choice(pr, longest, device)) return std::nullopt;
  RowFilterPlan g;
  g.k_pad = unsigned(std::bit_ceil(pr.k));
  g.index_bits = int(std::bit_width(longest));
  g.slots_per_row = filter_slots_per_row(unsigned(pr.k)), g.raise_after = filter_raise_after(unsigned(pr.k));
  g.finish_shared_bytes = std::size_t(kFinishSharedKeys) * sizeof(unsigned long long);
  g.left_compact_above = std::max(2 * unsigned(pr.k), 64u);
  g.left_capacity = unsigned(kStreamTile) + g.left_compact_above + unsigned(kStreamHeadTail);
  g.left_shared_bytes = std::size_t(g.left_capacity + stream_keep_entries(g.k_pad)) * sizeof(unsigned long long);
  int per_sm = 0;
  with_stream_type(pr.type, [&](auto tag) {
    using T = decltype(tag);
    allow_shared<T>(device);
    RXM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_filter_left<T>, kStreamThreads,
                                                                 g.left_shared_bytes));
  });
  const std::uint64_t wave = std::uint64_t(std::max(1, per_sm)) * std::uint64_t(multiprocessors(device));
  g.left_blocks = unsigned(std::clamp<std::uint64_t>(pr.rows, 1, wave));
  g.states_offset = aligned(pr.rows * g.slots_per_row * sizeof(unsigned long long));
  g.listed_offset = g.states_offset + aligned(pr.rows * sizeof(FilterState));
  g.listed_count_offset = g.listed_offset + aligned(pr.rows * sizeof(unsigned));
  g.temp_bytes = g.listed_count_offset + sizeof(unsigned);
  return g;
}

void launch_row_filter(const RowFilterPlan& g, void* temp, const device::TopkProblem& pr, cudaStream_t stream) {
  with_stream_params(pr, [&]<class T>(StreamParams<T> p, int device) {
    allow_shared<T>(device);
    auto* base = static_cast<unsigned char*>(temp);
    FilterBuffers f;
    f.slots = reinterpret_cast<unsigned long long*>(base);
    f.states = reinterpret_cast<FilterState*>(base + g.states_offset);
    f.listed = reinterpret_cast<unsigned*>(base + g.listed_offset);
    f.listed_count = reinterpret_cast<unsigned*>(base + g.listed_count_offset);
    f.slots_per_row = g.slots_per_row, f.raise_after = g.raise_after;
    RXM_CUDA_CHECK(cudaMemsetAsync(f.listed_count, 0, sizeof(unsigned), stream));
    p.k_pad = g.k_pad, p.index_bits = g.index_bits, p.segments = 1;
    p.capacity = kFinishLoad;
    for (std::size_t r0 = 0; r0 < pr.rows; r0 += kMaxGridRows) {
      p.row0 = r0;
      const unsigned chunk = unsigned(std::min(kMaxGridRows, pr.rows - r0));
      row_filter<T><<<chunk, kStreamThreads, 0, stream>>>(p, f);
      RXM_CUDA_CHECK(cudaGetLastError());
      row_filter_finish<T><<<chunk, kStreamThreads, g.finish_shared_bytes, stream>>>(p, f);
      RXM_CUDA_CHECK(cudaGetLastError());
    }
    p.row0 = 0;
    p.capacity = g.left_capacity, p.compact_above = g.left_compact_above;
    row_filter_left<T><<<g.left_blocks, kStreamThreads, g.left_shared_bytes, stream>>>(p, f);
    RXM_CUDA_CHECK(cudaGetLastError());
    if (pr.debug_checks) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

}  // namespace radixmesh::detail::topk_gpu
