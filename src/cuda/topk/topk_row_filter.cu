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

}  // namespace

std::optional<RowFilterPlan> row_filter_plan(const device::TopkProblem& pr, int device) {
  const int choice = pr.tuning.row_filter;
  const std::size_t width = size_of(pr.type);
  // Forced only: where it won (128 < k <= 384, many rows of 32000: call HT), the row-stream blocks
  // now win with their compactions by radix passes (call HY, one H100, 4096 x 32000 bf16 k = 192
  // 0.227 against the filter's 0.267 ms, k = 384 0.265 against 0.330; docs/design/topk.md).
  if (choice != 1 || pr.k < 2 || pr.k > kRowStreamMaxK || (width != 2 && width != 4)) return std::nullopt;
  const std::uint64_t longest = longest_row(pr);
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
