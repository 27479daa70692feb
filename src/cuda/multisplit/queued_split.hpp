// A device-resident split queued on one device's stream, and waited for later: the mesh queues
// every local device's split before it waits for any, so the devices split at the same time; the
// host API queues one and waits at once. The offsets and the checked mode's word come back in one
// copy into pinned memory, so queuing never blocks the host.
#pragma once
#include <cstdint>
#include <memory>

#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::detail {

class QueuedSplit {
 public:
  // Queues the split of `args` (keys and values in memory of device.device; args.offsets, host
  // memory of m + 1 entries, is written by finish()) by the built-in function `spec`. remap
  // (host memory, m entries, or null) sends a key of id b < m to bucket remap[b]. n must be below
  // 2^32 - 2^16.
  static QueuedSplit start(const CudaResources::PerDevice& device, const MultisplitArgs& args, const BucketSpec& spec,
                           const std::uint32_t* remap = nullptr);
  // Waits for this split alone; fills args.offsets, or returns the first key whose id is >= m
  // (checked mode; the outputs are then untouched).
  BadBucket finish();

  QueuedSplit();
  QueuedSplit(QueuedSplit&&) noexcept;
  QueuedSplit& operator=(QueuedSplit&&) noexcept;
  ~QueuedSplit();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace radixmesh::detail
