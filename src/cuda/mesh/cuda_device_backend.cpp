// The GPU mesh device: device memory from the participant's scratch pool, the GPU multisplit
// queued on a split stream of the participant (QueuedSplit: every device's split, and every tile
// of it, runs without the host waiting, and the participant's own stream stays free for the
// exchange), and chunk copies on the participant's stream. Logical devices of one GPU each have
// their own streams (the context's CudaResources entry of that participant) and their own buffers.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

#include "core/backends.hpp"
#include "core/topk_plan.hpp"
#include "cuda/topk/topk_on_device.hpp"
#include "cuda/topk/topk_select_gpu.hpp"
#include "cuda/mesh/copy_pieces.hpp"
#include "cuda/mesh/key_range.hpp"
#include "cuda/mesh/merge_runs.hpp"
#include "cuda/multisplit/queued_split.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/sort/host_staging.hpp"
#include "cuda/sort/sort_in_place.hpp"
#include "mesh/device_backend.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

std::vector<detail::CopyPiece> pieces_of(std::span<const Chunk> chunks, std::size_t elem_bytes) {
  std::vector<detail::CopyPiece> pieces;
  pieces.reserve(chunks.size());
  for (const Chunk& c : chunks)
    if (c.count) pieces.push_back({c.from * elem_bytes, c.to * elem_bytes, c.count * elem_bytes});
  return pieces;
}

class CudaDeviceBackend final : public DeviceBackend {
 public:
  explicit CudaDeviceBackend(const Context& ctx) : ctx_(ctx), resources_(detail::cuda_resources(ctx)) {}

  comm::Location location(int local) const override {
    const auto& d = device(local);
    return {d.device, d.stream};
  }

  std::size_t memory_budget(int local) const override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    std::size_t free = 0, total = 0;
    RXM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    // Plus what the GPU's scratch pools keep idle: mesh buffers come from them, so an earlier large
    // sort's reserve does not send a later input that fits out of core.
    std::size_t sharing = 0, idle = 0;
    for (const auto& other : resources_.devices)
      if (other.device == d.device) {
        ++sharing;
        idle += detail::scratch_idle_bytes(other);
      }
    return (free + idle) / sharing;
  }

  // From the device's scratch pool, stream-ordered on the device's stream: a shuffle's temporary
  // buffers then cost no cudaMalloc/cudaFree (cudaFree synchronizes the device) on repeated calls.
  // Copies on other streams (the transports') are ordered after the allocation and before the
  // release by events on the device's stream.
  std::shared_ptr<std::byte> allocate(int local, std::size_t bytes, const char* what) override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    std::shared_ptr<detail::ScratchBuffer> buffer;
    try {
      buffer = std::make_shared<detail::ScratchBuffer>(d, bytes ? bytes : 1);
    } catch (const Error& e) {
      throw Error(e.code(), std::string(what) + ": " + e.what());
    }
    auto* data = buffer->as<std::byte>();
    return std::shared_ptr<std::byte>(std::move(buffer), data);  // aliases the buffer's lifetime
  }

  void start_split(int local, int ticket, const LocalSplit& split) override {
    require(split.spec.kind != detail::BucketSpec::Kind::user,
            "a user bucket functor cannot run on GPU mesh devices through the host API",
            "use a built-in bucket function (radix_digit, identity, delta, splitters, hash) or a CPU mesh");
    const detail::MultisplitArgs& a = split.args;
    require(a.n <= (std::size_t(1) << 32) - (std::size_t(1) << 16),
            "shuffle: " + std::to_string(a.n) + " keys on one GPU mesh device",
            "spread the keys over more mesh devices: at most 2^32 - 2^16 per device");
    if (split.spec.kind == detail::BucketSpec::Kind::identity)
      require(!is_floating(a.type), "shuffle: identity buckets on floating-point keys",
              "use integer keys, or delta buckets for floats");
    // Ids go straight to their owner-major positions: the remap table rides in the bucket
    // functor (none when it is the identity, which lets radix digits take the digit split).
    const std::uint32_t ids = split.ids();
    bool identity = ids == a.m;
    for (std::uint32_t b = 0; b < ids && identity; ++b) identity = split.remap[b] == b;
    // The split stream starts after the device stream's earlier work (the input, the buffers).
    const SplitStream& side = split_stream(local);
    detail::DeviceGuard guard(side.on.device);
    RXM_CUDA_CHECK(cudaEventRecord(side.ready, device(local).stream));
    RXM_CUDA_CHECK(cudaStreamWaitEvent(side.on.stream, side.ready, 0));
    detail::QueuedSplit queued_split =
        detail::QueuedSplit::start(side.on, a, split.spec, {identity ? nullptr : split.remap, ids});
    std::lock_guard lock(maps_mutex_);
    pending_[{local, ticket}] = std::move(queued_split);
  }

  detail::BadBucket finish_split(int local, int ticket) override { return queued(local, ticket).finish(); }

  void after_split(int local, int ticket) override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    RXM_CUDA_CHECK(cudaStreamWaitEvent(d.stream, static_cast<cudaEvent_t>(queued(local, ticket).done()), 0));
  }

  void copy_chunks(int local, const void* src, void* dst, std::span<const Chunk> chunks,
                   std::size_t elem_bytes) override {
    const auto& d = device(local);
    detail::DeviceGuard guard(d.device);
    const std::vector<detail::CopyPiece> pieces = pieces_of(chunks, elem_bytes);
    detail::ScratchBuffer table;
    if (detail::copy_pieces_needs_table(pieces)) table = detail::ScratchBuffer(d, detail::pieces_table_bytes(pieces));
    detail::copy_pieces(src, dst, pieces, table.data(), d.stream);
  }

  void sort_local(int local, const detail::SortPlan& plan, void* keys, void* values) override {
    detail::sort_in_place_queued(device(local), plan, keys, values, SortOptions{});
  }

  void key_range(int local, const detail::SortPlan& plan, const void* keys, std::uint64_t range[2]) override {
    detail::device_key_range(device(local), plan, keys, range);
  }

  // Every pair of the context's GPUs has peer access (logical devices of one GPU need none): the
  // context enabled it where its topology says so (enable_peer_access), and its scratch pools grant it.
  bool reads_local_peers() const override {
    const Topology& t = ctx_.topology();
    for (std::size_t i = 0; i < t.devices.size(); ++i)
      for (std::size_t j = 0; j < t.devices.size(); ++j)
        if (t.devices[i].id != t.devices[j].id && !t.peers[i][j].access) return false;
    return true;
  }
  void cuts_of_runs(int local, const detail::SortPlan& plan, std::span<const SortedRun> runs,
                    std::span<const std::uint64_t> places, std::uint64_t* cuts) override {
    detail::device_cuts_of_runs(device(local), plan, runs, places, cuts);
  }
  void merge_two(int local, const detail::SortPlan& plan, const SortedRun& a, const SortedRun& b, void* keys_out,
                 void* values_out) override {
    detail::device_merge_two(device(local), plan, a, b, keys_out, values_out);
  }

  // The single-device top-k on this participant's stream, its memory from the participant's pool.
  void topk_local(int local, const detail::TopkRequest& rq) override {
    detail::cuda_topk_on(device(local), detail::validate_topk(rq, rq.rows.offsets), rq, true);
  }
  bool concurrent_local_calls() const override { return true; }
  // Over shards in the GPU's memory (the mesh top-k uploads host shards first).
  bool has_topk_select() const override { return true; }
  void topk_select_count(int local, const detail::TopkSelectScan& scan, std::uint64_t* counts) override {
    detail::cuda_topk_select_count(device(local), scan, counts);
  }
  void topk_select_take(int local, const detail::TopkSelectTake& take) override {
    detail::cuda_topk_select_take(device(local), take);
  }

  // On the destination's stream after an event of the source's; cudaMemcpyDefault reads peer
  // memory over NVLink (or the driver stages it where the GPUs have no peer access).
  void copy_rows(const RowCopy& c) override {
    if (c.rows == 0 || c.width == 0) return;
    const auto& from = device(c.from);
    const auto& to = device(c.to);
    if (c.from != c.to) {
      detail::DeviceGuard guard(from.device);
      cudaEvent_t written = nullptr;
      RXM_CUDA_CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
      const cudaError_t recorded = cudaEventRecord(written, from.stream);
      const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(to.stream, written, 0) : recorded;
      cudaEventDestroy(written);  // released once the wait no longer needs it
      RXM_CUDA_CHECK(waited);
    }
    detail::DeviceGuard guard(to.device);
    if (c.rows == 1)  // one row: no pitch limit (2-D copies take pitches below 2^31)
      RXM_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.width, cudaMemcpyDefault, to.stream));
    else
      RXM_CUDA_CHECK(cudaMemcpy2DAsync(c.dst, c.dst_pitch, c.src, c.src_pitch, c.width, c.rows, cudaMemcpyDefault,
                                       to.stream));
  }

  // Pinned host memory is copied by the copy engine straight away, queued; pageable memory goes
  // through the lane's pinned ring with host threads copying beside the DMA (HostStaging),
  // since the driver's own staging of pageable memory runs on one thread: the out-of-core sort's
  // rounds into a fresh host array measured 7.1 s against 0.7 for the transfers alone (2e9 u32,
  // one H200, bench_mesh_sort --host --devices 0 --out-of-core 4000000000).
  void upload(int local, const void* host, void* dev, std::size_t bytes, Lane lane) override {
    detail::DeviceGuard guard(device(local).device);
    if (bytes == 0) return;
    if (detail::is_pinned_host(host)) {
      RXM_CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream_of(local, lane)));
      return;
    }
    staging(local, lane).upload(dev, host, bytes, 1);
  }

  // Pageable memory: returns once the bytes are there.
  void download(int local, const void* dev, void* host, std::size_t bytes, Lane lane) override {
    detail::DeviceGuard guard(device(local).device);
    if (bytes == 0) return;
    if (detail::is_pinned_host(host)) {
      RXM_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream_of(local, lane)));
      return;
    }
    staging(local, lane).download(host, dev, bytes, 1);
  }

  LaneMark mark(int local, Lane lane) override {
    const int gpu = device(local).device;
    detail::DeviceGuard guard(gpu);
    cudaEvent_t event = nullptr;
    RXM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    LaneMark owned(event, [gpu](void* e) {
      detail::DeviceGuard guard(gpu);
      cudaEventDestroy(static_cast<cudaEvent_t>(e));
    });
    RXM_CUDA_CHECK(cudaEventRecord(event, stream_of(local, lane)));
    return owned;
  }

  void wait_for(int local, Lane lane, const LaneMark& mark) override {
    if (!mark) return;
    detail::DeviceGuard guard(device(local).device);
    RXM_CUDA_CHECK(cudaStreamWaitEvent(stream_of(local, lane), static_cast<cudaEvent_t>(mark.get()), 0));
  }

  bool reaches_directly(const void* host) const override { return detail::is_pinned_host(host); }

  // The copy lanes' rings are made again, after their copies, with teams for the new sharing.
  void copy_lanes_at_once(int local, int lanes) override {
    std::lock_guard lock(maps_mutex_);
    int& at_once = copy_lanes_at_once_[local];
    if (at_once == lanes) return;
    at_once = lanes;
    staging_.erase({local, Lane::up});  // each ring waits for its lane's copies first
    staging_.erase({local, Lane::down});
  }

  void synchronize(int local, Lane lane) override {
    detail::DeviceGuard guard(device(local).device);
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream_of(local, lane)));
  }

 private:
  const detail::CudaResources::PerDevice& device(int local) const {
    require(local >= 0 && std::size_t(local) < resources_.devices.size(),
            "mesh device " + std::to_string(local) + " is not a device of this context",
            "pass data on the context's devices");
    return resources_.devices[std::size_t(local)];
  }

  // A second stream per local device for its splits, sharing the device's scratch pool, so that
  // the device's own stream can run the exchange of a tile while later tiles split.
  struct SplitStream {
    detail::CudaResources::PerDevice on;  // the device's entry with the split stream
    cudaEvent_t ready = nullptr;          // the device stream's work before a split
  };
  const SplitStream& split_stream(int local) {
    std::lock_guard lock(maps_mutex_);
    auto it = split_streams_.find(local);
    if (it != split_streams_.end()) return it->second;
    SplitStream side;
    side.on = device(local);
    detail::DeviceGuard guard(side.on.device);
    RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&side.on.stream, cudaStreamNonBlocking));
    if (cudaEventCreateWithFlags(&side.ready, cudaEventDisableTiming) != cudaSuccess) {
      cudaStreamDestroy(side.on.stream);
      RXM_CUDA_CHECK(cudaGetLastError());
    }
    return split_streams_.emplace(local, side).first->second;
  }
  // A lane's stream: the device's own, or a copy lane's, made on first use.
  cudaStream_t stream_of(int local, Lane lane) {
    if (lane == Lane::device) return device(local).stream;
    std::lock_guard lock(maps_mutex_);
    cudaStream_t& stream = lane_streams_[{local, lane}];
    if (!stream) {
      detail::DeviceGuard guard(device(local).device);
      RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }
    return stream;
  }
  // The lane's pinned ring, made on first use. The host's threads are shared between the devices,
  // and between a device's copy lanes that copy at once (copy_lanes_at_once): a ring's copies wait
  // for its whole team of threads at a barrier, so teams larger than the cores stall on their
  // stragglers (two 16-thread teams on 16 cores moved 12e9 pageable u32 keys at 7-10 GB/s each
  // way, call BH).
  detail::HostStaging& staging(int local, Lane lane) {
    const cudaStream_t stream = stream_of(local, lane);
    std::lock_guard lock(maps_mutex_);
    auto& ring = staging_[{local, lane}];
    if (!ring) {
      const auto lanes = copy_lanes_at_once_.find(local);
      const unsigned at_once = lane == Lane::device ? 1u : lanes == copy_lanes_at_once_.end() ? 2u : unsigned(lanes->second);
      const unsigned sharing = unsigned(resources_.devices.size()) * at_once;
      ring = std::make_unique<detail::HostStaging>(stream, std::max(1u, ctx_.cpu_threads() / sharing));
    }
    return *ring;
  }

  detail::QueuedSplit& queued(int local, int ticket) {
    std::lock_guard lock(maps_mutex_);
    const auto it = pending_.find({local, ticket});
    require(it != pending_.end(), "split " + std::to_string(ticket) + " of mesh device " + std::to_string(local) +
                                      " was not started",
            "start the split first (a bug in radixmesh)");
    return it->second;
  }

  Context ctx_;
  detail::CudaResources& resources_;
  std::map<int, SplitStream> split_streams_;
  // Splits queued by start_split, by (device, ticket); kept until the backend goes, so their
  // events stay valid for after_split and their scratch is released after the split ran.
  std::map<std::pair<int, int>, detail::QueuedSplit> pending_;
  std::map<std::pair<int, Lane>, cudaStream_t> lane_streams_;  // the copy lanes', per local device
  std::map<std::pair<int, Lane>, std::unique_ptr<detail::HostStaging>> staging_;  // per local device and lane
  std::map<int, int> copy_lanes_at_once_;  // per local device; 2 where not set
  // Host threads driving different local devices at once (the out-of-core sort) share the maps;
  // entries are per device, so a found entry is used outside the lock.
  std::mutex maps_mutex_;

 public:
  ~CudaDeviceBackend() override {
    pending_.clear();  // releases the splits' scratch on the split streams, before they go
    staging_.clear();  // each ring waits for its lane's copies first
    for (auto& [key, stream] : lane_streams_) {
      detail::DeviceGuard guard(device(key.first).device);
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
    for (auto& [local, side] : split_streams_) {
      detail::DeviceGuard guard(side.on.device);
      cudaStreamSynchronize(side.on.stream);
      cudaStreamDestroy(side.on.stream);
      cudaEventDestroy(side.ready);
    }
  }
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_device_backend(const Context& ctx) {
  return std::make_unique<CudaDeviceBackend>(ctx);
}

}  // namespace radixmesh::mesh
