// What the mesh algorithms need from one mesh device, whatever it is: memory, a stable local
// multisplit, a stable local sort, and chunked copies. src/cpu implements it on host threads; a GPU backend
// implements it with kernels and copies on the device's stream. The algorithms in src/mesh see
// only this and the Communicator.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/backends.hpp"
#include "core/topk_select.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::mesh {

// A local multisplit whose bucket ids are remapped: key k goes to bucket remap[f(k)] of the
// split's args.m buckets, where f's own ids run below function_m (0: args.m; the remap may merge
// ids, as the shuffle's split by owner does). A key whose id f(k) >= function_m is reported in
// the checked mode; unchecked, it goes where id function_m - 1 goes.
struct LocalSplit {
  detail::MultisplitArgs args;  // args.m buckets, offsets m + 1 entries (host memory)
  detail::BucketSource source;  // f on the host
  detail::BucketSpec spec;      // f as plain data, for backends that run it elsewhere
  const std::uint32_t* remap = nullptr;  // function_m entries below args.m, host memory
  std::uint32_t function_m = 0;          // f's m; 0: args.m
  std::uint32_t ids() const { return function_m ? function_m : args.m; }
};

// One contiguous copy of `count` elements.
struct Chunk {
  std::uint64_t from = 0, to = 0, count = 0;  // in elements
};

// A 2-D copy from one local device's memory to another's (or the same): `rows` rows of `width`
// bytes, the source rows `src_pitch` bytes apart, the destination rows `dst_pitch` apart.
struct RowCopy {
  int from = 0, to = 0;  // local devices
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t src_pitch = 0, dst_pitch = 0, width = 0, rows = 0;
};

using detail::SortedRun;

// A device's queues. Its steps (splits, sorts, copies between devices) run on Lane::device; its
// two copy lanes have queues of their own, so that a transfer up, the device's work and a
// transfer down run at once (the out-of-core sort's pipeline). CPU devices run everything at once
// on the calling thread, whatever the lane.
enum class Lane { device, up, down };
using LaneMark = std::shared_ptr<void>;

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // Where local device `local`'s buffers live, for the Communicator.
  virtual comm::Location location(int local) const = 0;
  // The bytes local device `local` can give one call: what is free on it and idle in its scratch
  // pools, shared evenly between logical devices of one GPU (CPU devices: unbounded, as far as the
  // mesh is concerned).
  virtual std::size_t memory_budget(int local) const = 0;
  // `bytes` of memory on local device `local`; throws out_of_memory naming needed and free.
  virtual std::shared_ptr<std::byte> allocate(int local, std::size_t bytes, const char* what) = 0;
  // Stable multisplit on local device `local`, in steps, so that every device splits at the same
  // time and a device's later splits overlap the exchange of its earlier ones: start_split queues
  // it (GPU devices: on a split stream of the device, after the device stream's earlier work) or
  // runs it (CPU devices); `ticket` names it (distinct per device among the splits not finished).
  // finish_split waits for it alone, leaves split.args.offsets filled (bucket positions, m + 1)
  // and returns the first bad bucket id (checked mode). after_split makes the device's later work
  // (its stream: the exchange) wait for it. The split's buffers must live until it is finished and
  // waited for.
  virtual void start_split(int local, int ticket, const LocalSplit& split) = 0;
  virtual detail::BadBucket finish_split(int local, int ticket) = 0;
  virtual void after_split(int local, int ticket) = 0;
  // dst[c.to + e] = src[c.from + e] for every chunk, elements of elem_bytes bytes.
  virtual void copy_chunks(int local, const void* src, void* dst, std::span<const Chunk> chunks,
                           std::size_t elem_bytes) = 0;
  // Stable in-place sort of plan.n keys (and values) on local device `local`, queued after its
  // earlier steps (GPU devices: on its stream, without waiting, so every device sorts at once).
  virtual void sort_local(int local, const detail::SortPlan& plan, void* keys, void* values) = 0;
  // Whether a device's steps read every local device's memory (cuts_of_runs, merge_two): host
  // memory on CPU devices; logical devices of one GPU, or GPUs with peer access between each pair.
  virtual bool reads_local_peers() const = 0;
  // Where each sorted run is cut for each place of their stable merge (ties go to the earlier
  // run): cuts[p * runs.size() + r] elements of run r come before place p (at most the runs'
  // total). Runs in any local device's memory, sorted by plan's sort key; after the device's
  // earlier steps; returns once the cuts are known.
  virtual void cuts_of_runs(int local, const detail::SortPlan& plan, std::span<const SortedRun> runs,
                            std::span<const std::uint64_t> places, std::uint64_t* cuts) = 0;
  // The stable merge of run a, then run b (ties: a first), into keys_out (and values_out, plan's
  // value bytes), queued after the device's earlier steps. The runs may be in any local device's
  // memory; the output does not overlap them.
  virtual void merge_two(int local, const detail::SortPlan& plan, const SortedRun& a, const SortedRun& b,
                         void* keys_out, void* values_out) = 0;
  // The smallest and largest sort key of plan.n keys on local device `local` (the encoding's bits
  // [begin_bit, end_bit), flipped for descending: keys.hpp's radix order) into range[0], range[1],
  // after its earlier steps; returns once they are known. n = 0 gives range[0] > range[1].
  virtual void key_range(int local, const detail::SortPlan& plan, const void* keys, std::uint64_t range[2]) = 0;
  // Top-k of one local shard (radixmesh/topk.hpp's request; values on the device, or on the host
  // for host shards), results in host memory when it returns, or in the device's memory
  // (request.outputs_device: GPU devices), every index plus request.index_base.
  virtual void topk_local(int local, const detail::TopkRequest& request) = 0;
  // The copy, queued on the destination device after both devices' earlier steps (CPU devices:
  // done when it returns).
  virtual void copy_rows(const RowCopy& copy) = 0;
  // The distributed radix select's steps on one shard (core/topk_select.hpp): a pass's digit
  // counts, then the shard's winners (results in host memory when they return). Devices whose
  // has_topk_select() is false do not have them (the mesh top-k then takes its candidate path).
  virtual bool has_topk_select() const = 0;
  virtual void topk_select_count(int local, const detail::TopkSelectScan& scan, std::uint64_t* counts) = 0;
  virtual void topk_select_take(int local, const detail::TopkSelectTake& take) = 0;
  // Whether calls that wait for their results (topk_local) on different local devices may run at
  // once from host threads: GPU devices, each on its own stream; not CPU devices, which share the
  // host's threads.
  virtual bool concurrent_local_calls() const = 0;
  // `bytes` between host memory and local device `local`'s memory, queued on `lane` after its
  // earlier work. A download into pageable memory returns once the bytes are there.
  virtual void upload(int local, const void* host, void* device, std::size_t bytes, Lane lane = Lane::device) = 0;
  virtual void download(int local, const void* device, void* host, std::size_t bytes, Lane lane = Lane::device) = 0;
  // A mark of the work queued on `lane` so far (GPU devices: an event; CPU devices: none), and
  // a wait that makes `lane`'s later work wait for a mark.
  virtual LaneMark mark(int local, Lane lane) = 0;
  virtual void wait_for(int local, Lane lane, const LaneMark& mark) = 0;
  // Waits until everything queued on `lane` of local device `local` is done (GPU devices queue
  // their steps; CPU devices run them at once).
  virtual void synchronize(int local, Lane lane = Lane::device) = 0;
  // Whether the devices' copies reach this host memory directly (GPU devices: pinned memory,
  // which needs no staging by host threads; CPU devices: all of it).
  virtual bool reaches_directly(const void* host) const = 0;
  // How many of local device `local`'s copy lanes move data at once from now on (1 or 2, the
  // default): GPU devices share the host threads that stage pageable memory between them.
  virtual void copy_lanes_at_once(int local, int lanes) = 0;
};

// The backend of ctx's local mesh devices.
std::unique_ptr<DeviceBackend> device_backend_for(const Context& ctx);

// src/cpu: host memory and host threads (threads per device).
std::unique_ptr<DeviceBackend> make_cpu_device_backend(unsigned threads);
// src/cuda/mesh: device memory, the GPU multisplit and copies on each device's stream (a build
// without CUDA throws unsupported: src/core/no_cuda.cpp).
std::unique_ptr<DeviceBackend> make_cuda_device_backend(const Context& ctx);

}  // namespace radixmesh::mesh
