// The row-filter variant's plan and launch (topk_row_filter.cuh): many rows with a large k, 16- and
// 32-bit keys, 2 <= k <= 1024.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

struct RowFilterPlan {
  unsigned k_pad = 2;
  int index_bits = 1;                   // StreamKey's position bits
  std::uint32_t slots_per_row = 0;      // appended keys a row holds (filter_slots_per_row)
  std::uint32_t raise_after = 0;        // appends before the first raise on the way (filter_raise_after)
  std::size_t finish_shared_bytes = 0;  // a finishing block's dynamic shared memory
  std::uint32_t left_capacity = 0, left_compact_above = 0;  // the row-stream block of the listed rows
  std::size_t left_shared_bytes = 0;
  unsigned left_blocks = 1;             // one wave of them
  // Temporary storage: the slots at its start, then these.
  std::size_t states_offset = 0, listed_offset = 0, listed_count_offset = 0;
  std::size_t temp_bytes = 0;
};

// The plan when the problem takes the row-filter variant (TopkTuning::row_filter), else none.
std::optional<RowFilterPlan> row_filter_plan(const device::TopkProblem& problem, int device);
void launch_row_filter(const RowFilterPlan& plan, void* temp, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
