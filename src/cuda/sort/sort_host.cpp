// rxm::sort on host-resident keys with a CUDA context, on the context's first device.
//
// Keys (and values) go up through pinned chunks (host_staging.hpp), each chunk encoded as it
// lands. Then one of two plans:
//   whole: sort everything with the engine, then bring it back, decoding each chunk as it leaves.
//   split (large inputs): the top split_bits bits of the range are counted chunk by chunk behind
//     the upload, then one stable CUB pass on them cuts the keys into 16 buckets that are already in their final order relative to each other; each
//     bucket is then sorted on the remaining bits while the buckets before it travel back to the
//     host on a second stream. The download (as long as the upload, at PCIe speed) hides all
//     sorting but the split and the first bucket: the single-GPU form of RMG's "local sort
//     overlapped with the copy back" (Ilic et al., RMG sort, section 4).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/backends.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/scratch.hpp"
#include "cuda/sort/device_memory_check.hpp"
#include "cuda/sort/engine.hpp"
#include "cuda/sort/host_staging.hpp"
#include "cuda/sort/key_codec.hpp"
#include "cuda/sort/digit_histogram.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh::detail {

namespace {

constexpr int split_bits = 4;                                   // 16 buckets
constexpr std::size_t split_min_items = std::size_t(1) << 22;  // below this, transfers are too short to hide much

// The split pays when the sort left after it still takes a while (at least two digits).
// SortOptions::host_plan forces either plan, so that a benchmark can time both on the same input.
bool worth_splitting(const SortPlan& plan) {
  const bool possible = plan.end_bit - plan.begin_bit > split_bits;
  if (plan.host_plan == HostStagingPlan::whole) return false;
  if (plan.host_plan == HostStagingPlan::split) return possible;
  // Keys that need decoding stay whole: the decode kernels queued behind each downloaded chunk
  // then compete with the bucket sorts for the SMs and delay the copies (H200, 2^28 f32 keys:
  // split 57.3 / 59.2 ms, whole 54.1 / 56.6 ms in two runs; u32 keys: split 50.2, whole 53.3).
  return possible && plan.n >= split_min_items && plan.end_bit - plan.begin_bit > 16 &&
         encoding_is_identity(plan.type, plan.order);
}

std::string describe(const SortPlan& plan) {
  return "sorting " + std::to_string(plan.n) + " " + std::string(name_of(plan.type)) + " keys" +
         (plan.value_bytes ? " with " + std::to_string(plan.value_bytes) + "-byte values" : "") + " on the GPU";
}

// Encoding (or decoding) a chunk of keys at `base` in place, queued on `stream`; no work at all
// where the encoding is the identity.
ChunkWork transcode_chunks(const SortPlan& plan, bool encode, void* base, cudaStream_t stream) {
  if (encoding_is_identity(plan.type, plan.order)) return {};
  const std::size_t key_bytes = size_of(plan.type);
  const KeyType type = plan.type;
  const Order order = plan.order;
  return [=](std::size_t first, std::size_t count) {
    void* chunk = static_cast<char*>(base) + first * key_bytes;
    if (encode)
      launch_encode_keys(type, order, chunk, chunk, count, stream);
    else
      launch_decode_keys(type, order, chunk, chunk, count, stream);
  };
}

// Two buffers each for keys and values, plus the engines' temp, checked against free memory first.
// They come from the context's scratch pool (cuda/runtime/scratch.hpp), so that a sort in a loop
// does not allocate 2.2x its bytes of device memory each call (2e9 u32 keys on one H200: 4.7-7.8 ms
// of cudaMalloc before the upload, call DD). Their release is queued on the context's stream once
// the download (on a second stream) has ended on the host.
struct DeviceSortBuffers {
  ScratchBuffer keys[2], values[2], temp;
  DeviceSortBuffers(const CudaResources::PerDevice& device, const SortPlan& plan, std::size_t temp_bytes) {
    const std::size_t key_bytes = size_of(plan.type);
    const std::size_t bytes = 2 * plan.n * (key_bytes + plan.value_bytes) + temp_bytes + 8 * ScratchBuffer::alignment;
    make_room_for_scratch(device, bytes);  // memory the pool keeps idle counts as free
    require_device_memory(device.device, bytes, describe(plan));
    for (int i = 0; i < 2; ++i) {
      keys[i] = ScratchBuffer(device, plan.n * key_bytes);
      values[i] = ScratchBuffer(device, plan.n * plan.value_bytes);
    }
    temp = ScratchBuffer(device, temp_bytes);
  }
  char* key_ptr(int i) const { return static_cast<char*>(keys[i].data()); }
  char* value_ptr(int i) const { return static_cast<char*>(values[i].data()); }
};

class OwnedStream {
 public:
  OwnedStream() { RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~OwnedStream() { cudaStreamDestroy(stream_); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class OwnedEvents {
 public:
  explicit OwnedEvents(std::size_t count, unsigned flags = cudaEventDisableTiming) : events_(count, nullptr) {
    for (auto& e : events_) RXM_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
  }
  ~OwnedEvents() {
    for (auto e : events_)
      if (e) cudaEventDestroy(e);
  }
  OwnedEvents(const OwnedEvents&) = delete;
  OwnedEvents& operator=(const OwnedEvents&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// SortOptions::phases for this sort: each mark drains the stream, then adds the host time since the
// previous mark to one field. Without phases, marks cost nothing.
class StepClock {
 public:
  StepClock(SortPhases* phases, cudaStream_t stream) : phases_(phases), stream_(stream) {}
  bool on() const { return phases_ != nullptr; }
  void mark(double SortPhases::*field) {
    if (!phases_) return;
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    phases_->*field += since_last();
  }
  // Host milliseconds since the previous mark (or the clock's start), and a new mark.
  double since_last() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }
  SortPhases* phases() const { return phases_; }

 private:
  SortPhases* phases_;
  cudaStream_t stream_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void sort_whole(const SortPlan& plan, void* keys, void* values, const CudaResources::PerDevice& device,
                unsigned threads, StepClock& clock) {
  cudaStream_t stream = device.stream;
  const std::size_t key_bytes = size_of(plan.type);
  const EncodedSortShape shape{plan.n, int(key_bytes), int(plan.value_bytes), plan.begin_bit, plan.end_bit};
  const SortEngine engine = choose_engine(SortEngine::automatic, shape);
  EncodedDoubleBuffer buffers;
  std::size_t temp_bytes = 0;
  sort_encoded_double_buffer(engine, nullptr, temp_bytes, buffers, shape, stream);
  DeviceSortBuffers d(device, plan, temp_bytes);
  for (int i = 0; i < 2; ++i) {
    buffers.keys[i] = d.key_ptr(i);
    buffers.values[i] = d.value_ptr(i);
  }
  HostStaging staging(stream, threads);
  clock.mark(&SortPhases::setup_ms);
  staging.upload(d.key_ptr(0), keys, plan.n, key_bytes, transcode_chunks(plan, true, d.key_ptr(0), stream));
  if (plan.value_bytes) staging.upload(d.value_ptr(0), values, plan.n, plan.value_bytes);
  clock.mark(&SortPhases::upload_ms);
  sort_encoded_double_buffer(engine, d.temp.data(), temp_bytes, buffers, shape, stream);
  clock.mark(&SortPhases::local_sort_ms);
  void* sorted_keys = buffers.keys[buffers.selector];
  staging.download(keys, sorted_keys, plan.n, key_bytes, transcode_chunks(plan, false, sorted_keys, stream));
  if (plan.value_bytes) staging.download(values, buffers.values[buffers.selector], plan.n, plan.value_bytes);
  clock.mark(&SortPhases::download_ms);
}

void sort_split(const SortPlan& plan, void* keys, void* values, const CudaResources::PerDevice& device,
                unsigned threads, StepClock& clock) {
  cudaStream_t stream = device.stream;
  const std::size_t n = plan.n, key_bytes = size_of(plan.type), value_bytes = plan.value_bytes;
  constexpr std::size_t buckets = std::size_t(1) << split_bits;
  const int split_shift = plan.end_bit - split_bits;
  // The split is one CUB pass on the top digit; every bucket then sorts on the bits below it
  // (n bounds every bucket's size for the temp query).
  const EncodedSortShape top{n, int(key_bytes), int(value_bytes), split_shift, plan.end_bit};
  const EncodedSortShape rest{n, int(key_bytes), int(value_bytes), plan.begin_bit, split_shift};
  const SortEngine engine = choose_engine(SortEngine::automatic, rest);
  std::size_t split_temp = 0, sort_temp = 0;
  EncodedDoubleBuffer query;
  cub_sort_double_buffer(nullptr, split_temp, query, top, stream);
  sort_encoded_double_buffer(engine, nullptr, sort_temp, query, rest, stream);
  std::size_t temp_bytes = std::max(split_temp, sort_temp);
  DeviceSortBuffers d(device, plan, temp_bytes);
  DeviceArray<unsigned long long> device_counts(device.device, buckets);
  RXM_CUDA_CHECK(cudaMemsetAsync(device_counts.data(), 0, buckets * sizeof(unsigned long long), stream));
  clock.mark(&SortPhases::setup_ms);

  {
    // Bucket sizes are counted chunk by chunk behind the upload, so they are ready when it is.
    const ChunkWork encode = transcode_chunks(plan, true, d.key_ptr(0), stream);
    HostStaging up(stream, threads);
    up.upload(d.key_ptr(0), keys, n, key_bytes, [&](std::size_t first, std::size_t count) {
      if (encode) encode(first, count);
      launch_digit_histogram(d.key_ptr(0) + first * key_bytes, count, int(key_bytes), split_shift, split_bits,
                             device_counts.data(), stream);
    });
    if (value_bytes) up.upload(d.value_ptr(0), values, n, value_bytes);
  }
  clock.mark(&SortPhases::upload_ms);
  std::vector<unsigned long long> counts(buckets);
  RXM_CUDA_CHECK(cudaMemcpyAsync(counts.data(), device_counts.data(), buckets * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, stream));
  // Group keys (and values) by their top digit: one stable pass.
  EncodedDoubleBuffer grouped;
  for (int i = 0; i < 2; ++i) {
    grouped.keys[i] = d.key_ptr(i);
    grouped.values[i] = d.value_ptr(i);
  }
  std::size_t bytes = temp_bytes;
  cub_sort_double_buffer(d.temp.data(), bytes, grouped, top, stream);
  const int home = grouped.selector;  // where the grouped keys are; the other buffer is scratch
  RXM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the counts are on the host
  clock.mark(&SortPhases::partition_ms);
  std::vector<std::size_t> offsets(buckets + 1, 0);
  for (std::size_t b = 0; b < buckets; ++b) offsets[b + 1] = offsets[b] + counts[b];
  if (offsets[buckets] != n)
    throw_error(ErrorCode::internal, "the split's bucket counts add up to " + std::to_string(offsets[buckets]) +
                                         " keys, not " + std::to_string(n),
                "report this as a bug");

  // Each bucket sorts in place between `home` and the scratch buffer; `done[b]` marks the end of
  // its work on `stream`. With phases asked, two timing events bracket the sorts, which run beside
  // the download.
  OwnedEvents done(buckets), sorts(clock.on() ? 2 : 0, cudaEventDefault);
  if (clock.on()) RXM_CUDA_CHECK(cudaEventRecord(sorts[0], stream));
  std::vector<int> result_in(buckets, home);
  std::size_t keys_in_scratch = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t first = offsets[b], count = offsets[b + 1] - offsets[b];
    if (count > 1) {
      EncodedDoubleBuffer bucket;
      bucket.keys[0] = d.key_ptr(home) + first * key_bytes;
      bucket.keys[1] = d.key_ptr(home ^ 1) + first * key_bytes;
      bucket.values[0] = d.value_ptr(home) + first * value_bytes;
      bucket.values[1] = d.value_ptr(home ^ 1) + first * value_bytes;
      EncodedSortShape shape = rest;
      shape.n = count;
      bytes = temp_bytes;
      sort_encoded_double_buffer(engine, d.temp.data(), bytes, bucket, shape, stream);
      result_in[b] = bucket.selector == 0 ? home : home ^ 1;
      if (result_in[b] != home) keys_in_scratch += count;
    }
    RXM_CUDA_CHECK(cudaEventRecord(done[b], stream));
  }
  // The download reads one buffer: move the buckets that ended in the other one (few, or small).
  const int final_buffer = keys_in_scratch * 2 > n ? home ^ 1 : home;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t first = offsets[b], count = offsets[b + 1] - offsets[b];
    if (result_in[b] == final_buffer || count == 0) continue;
    RXM_CUDA_CHECK(cudaMemcpyAsync(d.key_ptr(final_buffer) + first * key_bytes, d.key_ptr(result_in[b]) + first * key_bytes,
                                   count * key_bytes, cudaMemcpyDeviceToDevice, stream));
    if (value_bytes)
      RXM_CUDA_CHECK(cudaMemcpyAsync(d.value_ptr(final_buffer) + first * value_bytes,
                                     d.value_ptr(result_in[b]) + first * value_bytes, count * value_bytes,
                                     cudaMemcpyDeviceToDevice, stream));
    RXM_CUDA_CHECK(cudaEventRecord(done[b], stream));
  }
  if (clock.on()) RXM_CUDA_CHECK(cudaEventRecord(sorts[1], stream));

  // Back to the host on a second stream: each chunk waits only for the buckets it overlaps.
  OwnedStream copy_stream;
  auto wait_for_buckets = [&](std::size_t first, std::size_t count) {
    for (std::size_t b = 0; b < buckets; ++b)
      if (offsets[b] < first + count && offsets[b + 1] > first)
        RXM_CUDA_CHECK(cudaStreamWaitEvent(copy_stream.get(), done[b], 0));
  };
  const ChunkWork decode = transcode_chunks(plan, false, d.key_ptr(final_buffer), copy_stream.get());
  HostStaging down(copy_stream.get(), threads);
  down.download(keys, d.key_ptr(final_buffer), n, key_bytes, [&](std::size_t first, std::size_t count) {
    wait_for_buckets(first, count);
    if (decode) decode(first, count);
  });
  if (value_bytes) down.download(values, d.value_ptr(final_buffer), n, value_bytes, wait_for_buckets);
  if (clock.on()) {
    // The sorts' own time, and the download's time left after them.
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    float sort_ms = 0;
    RXM_CUDA_CHECK(cudaEventElapsedTime(&sort_ms, sorts[0], sorts[1]));
    clock.phases()->local_sort_ms += sort_ms;
    clock.phases()->download_ms += clock.since_last() - sort_ms;
  }
}

}  // namespace

void cuda_sort_host(Context& ctx, const SortPlan& plan, void* keys, void* values, SortPhases* phases) {
  const auto& device = cuda_resources(ctx).devices.at(0);
  DeviceGuard guard(device.device);
  if (phases) *phases = SortPhases{};
  StepClock clock(phases, device.stream);
  if (worth_splitting(plan))
    sort_split(plan, keys, values, device, ctx.cpu_threads(), clock);
  else
    sort_whole(plan, keys, values, device, ctx.cpu_threads(), clock);
}

}  // namespace radixmesh::detail
