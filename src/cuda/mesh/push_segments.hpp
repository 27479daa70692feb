// One kernel that copies a sender's outgoing segments, wherever they go: into its own memory,
// another logical device's memory on the same GPU, or a peer GPU's memory over NVLink (a plain
// store to a peer pointer; peer access must be enabled). The peer transport's "peer-sm" method:
// the SMs move the bytes instead of the copy engines, which can fill more NVLinks at once.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace radixmesh::detail {

struct PushSegment {
  const void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
};

// Segments one launch takes (they travel as a kernel parameter: no table to stage).
constexpr std::size_t max_push_segments = 64;

// Copies every segment on `stream` of the current device (at most max_push_segments of them; the
// caller splits longer lists). Segments must not overlap each other's destinations. Empty lists
// launch nothing.
void push_segments(std::span<const PushSegment> segments, cudaStream_t stream);

}  // namespace radixmesh::detail
