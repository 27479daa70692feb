// The steps both paths of the mesh top-k share (topk_shards.cpp: the candidates; topk_select.cpp:
// the radix select): per-device slots of (value, global index) entries, their gathering on every
// process, the final top-k of gathered entries, and the step clock of TopkPhases.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mesh/device_backend.hpp"
#include "mesh/every_local.hpp"
#include "mesh/local_errors.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::mesh {

// A slot of `entries` (value, int64 index) pairs in host memory: the values first, the indices from
// an 8-byte aligned offset (after 2- or 4-byte values). Every device's slot has the same size, as
// the all_gather needs.
struct EntrySlot {
  EntrySlot(std::size_t entries, std::size_t value_bytes)
      : values_bytes((entries * value_bytes + 7) / 8 * 8), bytes(values_bytes + entries * 8) {}
  std::int64_t* indices(std::byte* slot) const { return reinterpret_cast<std::int64_t*>(slot + values_bytes); }
  const std::int64_t* indices(const std::byte* slot) const {
    return reinterpret_cast<const std::int64_t*>(slot + values_bytes);
  }
  std::size_t values_bytes, bytes;
};

// Every mesh device's slot on every process (collective): an all_gather between processes; within
// one process the local slots themselves, where a barrier only carries a local failure.
class GatheredSlots {
 public:
  GatheredSlots(comm::Communicator& comm, LocalErrors& errors, const std::vector<std::vector<std::byte>>& local,
                std::size_t slot_bytes, const char* what);
  const std::byte* operator[](std::size_t device) const {
    return in_process_ ? local_[device].data() : gathered_.data() + device * slot_bytes_;
  }

 private:
  const std::vector<std::vector<std::byte>>& local_;
  std::vector<std::byte> gathered_;
  std::size_t slot_bytes_;
  bool in_process_;
};

// The top-k of each of `rows` rows of `per_row` entries (values of rq.type, global indices, in
// global index order) into rq's outputs, by rq's options: on the first local GPU (the entries
// uploaded) or on the host for CPU devices. Position order is index order, so ties and unsorted
// output come out as one device's.
void topk_of_entries(const Context& ctx, DeviceBackend& backend, const detail::ShardTopkRequest& rq, std::size_t rows,
                     std::size_t per_row, const std::byte* values, const std::int64_t* indices);

// Local device i's candidates: the top-min(k, columns) of each of its rows, unsorted (ascending
// index), indices shifted by the shard's global offset, into out_values and out_indices (of
// rq.index_bytes: a global index fits when the global column count does).
detail::TopkRequest local_candidates(const detail::ShardTopkRequest& rq, std::size_t i, std::uint64_t columns,
                                     std::uint64_t take, std::uint64_t offset, void* out_values, void* out_indices);

// Steps 2-4 of the candidate path when every mesh device is in this process: each device's
// candidates stay in its memory, are copied row by row into one array on the first device (the
// one holding the outputs, for a device-resident result; device order, so position order is
// global index order), and its top-k goes to rq's outputs. No host round trip: on GPU devices the
// candidates move device to device.
void topk_candidates_in_process(DeviceBackend& backend, LocalErrors& errors, const detail::ShardTopkRequest& rq,
                                std::span<const std::uint64_t> columns, std::span<const std::uint64_t> offset,
                                std::span<const std::uint64_t> take, class TopkStepClock& clock);

// Sets a TopkPhases field to the host time since the previous mark (the figures of this call).
class TopkStepClock {
 public:
  explicit TopkStepClock(TopkPhases* phases) : phases_(phases), last_(std::chrono::steady_clock::now()) {}
  void mark(double TopkPhases::*field) {
    const auto now = std::chrono::steady_clock::now();
    if (phases_) phases_->*field = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }

 private:
  TopkPhases* phases_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace radixmesh::mesh
