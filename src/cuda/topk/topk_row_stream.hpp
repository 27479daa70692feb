// The row-stream path's plan and launch (topk_row_stream.cuh): batched rows of up to
// kRowStreamMaxRow values with k <= 1024, for 16- and 32-bit keys.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "radixmesh/device/topk.cuh"

namespace radixmesh::detail::topk_gpu {

// Rows up to this long take the path automatically (vocabularies up to 262,144 entries).
constexpr std::uint64_t kRowStreamMaxRow = std::uint64_t(1) << 18;

struct RowStreamPlan {
  unsigned segments = 1;             // blocks per row
  std::uint64_t segment_length = 0;  // values per segment
  unsigned k_pad = 1, capacity = 1, compact_above = 0;
  int index_bits = 1;                // StreamKey's position bits
  unsigned segment_slots = 1;        // keys a segment passes to the merge
  // The kernels with the guessed seed (TopkTuning::row_stream_estimate), for the segments and for
  // their merge: only where a segment, or a row's segment keys, are long enough to guess from.
  bool guess_segments = false, guess_merge = false;
  std::size_t shared_bytes = 0;      // dynamic shared memory per block
  std::size_t temp_bytes = 0;        // the segment keys (several segments)
};

// Calls set() the first time it is asked for `device` (every time for devices past the 64 it
// tracks): the family's cudaFuncSetAttribute calls, which must not be lowered under a launch in
// flight on another thread and would cost a driver call a launch. F's type names the call site.
template <class F> void once_per_device(int device, F&& set) {
  constexpr int kMaxDevices = 64;
  static std::atomic<bool> done[kMaxDevices] = {};
  if (device >= 0 && device < kMaxDevices && done[device].load(std::memory_order_acquire)) return;
  set();
  if (device >= 0 && device < kMaxDevices) done[device].store(true, std::memory_order_release);
}

// The longest row (at least 1): what the family's plans size positions and slices by.
inline std::uint64_t longest_row(const device::TopkProblem& pr) {
  return std::max<std::uint64_t>(1, pr.row_offsets ? pr.max_row_length : pr.row_length);
}
// The device's multiprocessors: what the family's rules count rows and blocks against.
int multiprocessors(int device);

// Whether the row-stream family's shape knobs are automatic (the cluster and the row-stream
// blocks' segment and compaction mark): a variant's automatic rule applies only then, so that a
// benchmark or test that sets one of them gets the path it asked for.
inline bool row_family_automatic(const device::TopkTuning& t) {
  return t.row_cluster < 0 && t.row_stream_segment <= 0 && t.row_stream_compact <= 0;
}
// Floating-point keys: the types whose rules were measured (integer keys are forced only).
inline bool floating(KeyType t) { return t == KeyType::f32 || t == KeyType::f16 || t == KeyType::bf16; }

// Whether the problem takes the row-stream path (TopkTuning::row_stream).
bool takes_row_stream(const device::TopkProblem& problem);
RowStreamPlan plan_row_stream(const device::TopkProblem& problem, int device);
void launch_row_stream(const RowStreamPlan& plan, void* temp, const device::TopkProblem& problem, cudaStream_t stream);

}  // namespace radixmesh::detail::topk_gpu
