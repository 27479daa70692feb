// A validated top-k request: row bounds resolved, every argument checked. Both backends run a plan,
// never a raw request, so a bad argument fails in one place and before any output is touched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "radixmesh/topk.hpp"

namespace radixmesh::detail {

struct TopkPlan {
  KeyType type = KeyType::f32;
  std::size_t total = 0;                // input values
  std::size_t rows = 0;
  std::size_t k = 0;
  TopkOptions options;
  std::size_t index_bytes = 8;
  std::size_t uniform_length = 0;       // row length when `offsets` is empty
  std::vector<std::uint64_t> offsets;   // rows + 1 entries for a batch given by offsets
  std::size_t max_row_length = 0;

  std::uint64_t row_begin(std::size_t r) const { return offsets.empty() ? r * uniform_length : offsets[r]; }
  std::uint64_t row_end(std::size_t r) const { return offsets.empty() ? (r + 1) * uniform_length : offsets[r + 1]; }
};

// Checks the request (offsets already on the host) and resolves it; throws rxm::Error naming the
// problem and the fix.
TopkPlan validate_topk(const TopkRequest& request, const std::uint64_t* host_offsets);

// The backends' entry points (validated plans only; src/core/topk_dispatch.cpp calls them).
// src/cpu: the reference. values/indices/outputs in host memory.
void cpu_topk(const TopkPlan& plan, const void* values, const void* input_indices, void* out_values,
              void* out_indices, unsigned threads);
// src/cuda/topk: values on `device` (or the host, staged through the context's first device).
void cuda_topk_host(Context& ctx, const TopkPlan& plan, const TopkRequest& request);
// src/cuda/topk/topk_host.cpp: topk_rows_device on the CUDA backend.
void cuda_topk_rows_device(Context& ctx, const DeviceRowsTopk& request);

}  // namespace radixmesh::detail

namespace radixmesh::detail {
// Copies `count` row offsets from device memory (src/cuda/topk), to validate them on the host.
std::vector<std::uint64_t> copy_offsets_to_host(const std::uint64_t* device_offsets, std::size_t count);
}  // namespace radixmesh::detail
