// A device-resident split queued on one device's stream, and waited for later: the mesh queues
// every local device's split before it waits for any, so the devices split at the same time; the
// host API queues one and waits at once. The offsets and the checked mode's word come back in one
// copy: into pinned memory when the split is queued for later (so queuing never blocks the host),
// into pageable memory when the caller waits at once (a pinned allocation per call would cost
// about 1 ms: H100, bench_multisplit's host API line at m <= 256, 2.12 against 1.18 ms).
#pragma once
#include <cstdint>
#include <memory>

#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::detail {

// Where a split's function's ids go: id b < function_m (0: the split's m) to bucket table[b] of
// the split (host memory, function_m entries; null: no remap). Ids >= function_m are reported in
// the checked mode and go where id function_m - 1 goes otherwise.
struct SplitRemap {
  const std::uint32_t* table = nullptr;
  std::uint32_t function_m = 0;
};

class QueuedSplit {
 public:
  // Queues the split of `args` (keys and values in memory of device.device; args.offsets, host
  // memory of m + 1 entries, is written by finish()) by the built-in function `spec`, its ids
  // remapped by `remap`. n must be below 2^32 - 2^16.
  // wait_at_once: the caller calls finish() right away (the host API): the results come back
  // into pageable memory, and this call returns once the split is done.
  static QueuedSplit start(const CudaResources::PerDevice& device, const MultisplitArgs& args, const BucketSpec& spec,
                           SplitRemap remap = {}, bool wait_at_once = false);
  // Waits for this split alone (not for work queued on the stream after it); fills args.offsets,
  // or returns the first key whose id is >= m (checked mode; the outputs are then untouched).
  BadBucket finish();
  // An event completed when the split and its results' copy are (cudaEvent_t), for streams that
  // must wait for it.
  void* done() const;

  QueuedSplit();
  QueuedSplit(QueuedSplit&&) noexcept;
  QueuedSplit& operator=(QueuedSplit&&) noexcept;
  ~QueuedSplit();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace radixmesh::detail
