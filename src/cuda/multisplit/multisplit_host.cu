// Host API on a CUDA context: rxm::multisplit with a built-in bucket function on device-resident
// spans (run in place on the owning device) or host-resident spans (staged through pinned memory
// on the context's first device). The split itself runs in runtime_split_*.cu with the functor
// shape that fits the function and key width (runtime_buckets.cuh says why shapes). Checked mode
// passes the device multisplit its bad-index word: the counting pass finds the first id >= m and
// the scatter passes then write nothing, so the outputs stay untouched on error at the cost of
// nothing but one word read back with the offsets (a second count behind a host synchronization
// would cost ~1.1 ms at 2^28 u32 keys, H200, bench_multisplit). Radix digits of the raw bits go through the digit split instead
// (CUB's pass for wide digits; splits_raw_digit), where no id can be out of range.
// Every device buffer of a call (temp, the bad-index word, the offsets, the splitter table, the
// staging copies of host-resident data) comes from the context's scratch pool for the device
// (cuda/runtime/scratch.hpp): reused from call to call and stream-ordered, where cudaMalloc and
// cudaFree (which synchronizes the device) cost every call. Hence every copy into them is queued
// on the context's stream too.
#include <cuda_runtime.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/backends.hpp"
#include "cuda/multisplit/multisplit_digit.hpp"
#include "cuda/multisplit/queued_split.hpp"
#include "cuda/multisplit/runtime_buckets.cuh"
#include "cuda/multisplit/runtime_split.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "cuda/runtime/pinned_pool.hpp"
#include "cuda/runtime/scratch.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::detail {

bool is_device_pointer(const void* ptr) { return ptr != nullptr && device_of_pointer(ptr) >= 0; }

namespace {

// Where the data lives: -1 for host memory, else the device ordinal (checked against the context).
int residence(const Context& ctx, const void* ptr, const char* name) {
  const int device = device_of_pointer(ptr);
  if (device < 0) return -1;
  for (const auto& d : ctx.devices())
    if (d.id == device) return device;
  throw_error(ErrorCode::invalid_argument,
              std::string("multisplit: ") + name + " is memory of CUDA device " + std::to_string(device) +
                  ", which is not in the context",
              "make the context with that device (Context::local({" + std::to_string(device) +
                  "})) or copy the data to a context device");
}

// Radix digits that are digits of the raw bits (unsigned keys; signed keys when the digit leaves
// out the sign bit, the only bit their encoding flips), with m = 2^bits: the digit split, which
// runs CUB's onesweep pass for wide digits (cuda/multisplit/multisplit_digit.hpp). Such an id is
// never out of range, so the checked mode has nothing to look for.
template <class U> bool splits_raw_digit(const MultisplitArgs& args, const cuda::RuntimeBucketParams<U>& buckets) {
  const int width = int(sizeof(U)) * 8, shift = buckets.digit.shift, bits = buckets.digit.bits;
  if (buckets.kind != BucketSpec::Kind::radix_digit || is_floating(args.type) || args.keys_out == nullptr ||
      bits > 16 || shift < 0 || shift + bits > width || args.m != buckets.digit.num_buckets())
    return false;
  return !is_signed_integer(args.type) || shift + bits < width;
}

// Queues the split on the device's stream with the functor shape that fits (see
// runtime_buckets.cuh): nothing is synchronized here.
template <class U>
void run_on_device(const CudaResources::PerDevice& device, const MultisplitArgs& args,
                   const cuda::RuntimeBucketParams<U>& buckets, const RuntimeSplitArgs& split) {
  using cuda::RuntimeShape;
  if (buckets.remap == nullptr && splits_raw_digit(args, buckets)) {
    with_value_bytes(split.value_bytes, [&](auto value_bytes) {
      std::size_t temp_bytes = 0;
      auto run = [&](void* temp) {
        RXM_CUDA_CHECK((cuda::multisplit_digit<int(sizeof(U)) * 8, decltype(value_bytes)::value>(
            temp, temp_bytes, static_cast<const U*>(split.keys_in), static_cast<U*>(split.keys_out), split.values_in,
            split.values_out, split.n, buckets.digit.shift, buckets.digit.bits, split.offsets, device.stream,
            cuda::DigitEngine::automatic, split.tuning)));
      };
      run(nullptr);
      ScratchBuffer temp(device, temp_bytes);
      run(temp.data());
    });
    if (split.bad_index != nullptr)  // no digit of m = 2^bits buckets is out of range
      RXM_CUDA_CHECK(cudaMemsetAsync(split.bad_index, 0xFF, sizeof *split.bad_index, device.stream));
    return;
  }
  if constexpr (sizeof(U) >= 4) {
    if (buckets.kind == BucketSpec::Kind::delta && !is_floating(args.type))
      return run_runtime_split(device, cuda::RuntimeBuckets<U, RuntimeShape::delta_integer>(buckets), split);
    if (buckets.kind == BucketSpec::Kind::splitters)
      return run_runtime_split(device, cuda::RuntimeBuckets<U, RuntimeShape::splitters>(buckets), split);
    if (buckets.kind == BucketSpec::Kind::hash)
      return run_runtime_split(device, cuda::RuntimeBuckets<U, RuntimeShape::hash>(buckets), split);
  }
  run_runtime_split(device, cuda::RuntimeBuckets<U, RuntimeShape::any>(buckets), split);
}

// The function's parameters; m is the function's own (the split's args.m, unless remapped).
template <class U>
cuda::RuntimeBucketParams<U> runtime_params(const MultisplitArgs& args, const BucketSpec& spec, std::uint32_t m) {
  cuda::RuntimeBucketParams<U> buckets;
  buckets.encoding = cuda::RuntimeEncoding<U>::of(args.type);
  buckets.type = args.type;
  buckets.kind = spec.kind;
  buckets.digit = {spec.shift, spec.bits};
  buckets.m = m;
  buckets.delta_lo_encoded = spec.delta_lo_encoded;
  buckets.delta_width = spec.delta_width;
  buckets.delta_reciprocal = buckets::detail::delta_reciprocal(spec.delta_width);
  buckets.delta_lo_value = spec.delta_lo_value;
  buckets.delta_scale = spec.delta_scale;
  buckets.hash = cuda::HashBuckets::of(m);
  return buckets;
}

template <class U>
void start_width(QueuedSplit::State& q, const MultisplitArgs& args, const BucketSpec& spec, SplitRemap remap,
                 bool wait_at_once);

}  // namespace

// What a queued split keeps until finish(): its scratch (splitter table, remap table, results),
// the pinned copy of the results, and how to describe a bad key (by key width).
struct QueuedSplit::State {
  const CudaResources::PerDevice* device = nullptr;
  MultisplitArgs args;
  ScratchBuffer splitters, remap, results_d;
  PooledPinned results_pinned;              // the results, when the split is waited for later
  std::vector<unsigned char> results_pageable, tables;  // the results when waited for at once; the tables' upload
  const unsigned char* results() const {
    return results_pinned.data() ? static_cast<const unsigned char*>(results_pinned.data()) : results_pageable.data();
  }
  std::function<std::uint32_t(std::uint64_t)> id_of;    // f's id of a key's bits (without the remap)
  cudaEvent_t done = nullptr;                           // recorded after the results' copy
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (done) cudaEventDestroy(done);
  }
};

QueuedSplit::QueuedSplit() = default;
QueuedSplit::QueuedSplit(QueuedSplit&&) noexcept = default;
QueuedSplit& QueuedSplit::operator=(QueuedSplit&&) noexcept = default;
QueuedSplit::~QueuedSplit() = default;

QueuedSplit QueuedSplit::start(const CudaResources::PerDevice& device, const MultisplitArgs& args,
                               const BucketSpec& spec, SplitRemap remap, bool wait_at_once) {
  QueuedSplit q;
  q.state_ = std::make_unique<State>();
  State& st = *q.state_;
  st.device = &device;
  st.args = args;
  DeviceGuard guard(device.device);
  switch (size_of(args.type)) {
    case 1: start_width<std::uint8_t>(st, args, spec, remap, wait_at_once); break;
    case 2: start_width<std::uint16_t>(st, args, spec, remap, wait_at_once); break;
    case 4: start_width<std::uint32_t>(st, args, spec, remap, wait_at_once); break;
    default: start_width<std::uint64_t>(st, args, spec, remap, wait_at_once); break;
  }
  return q;
}

void* QueuedSplit::done() const { return state_->done; }

BadBucket QueuedSplit::finish() {
  State& st = *state_;
  DeviceGuard guard(st.device->device);
  RXM_CUDA_CHECK(cudaEventSynchronize(st.done));
  unsigned long long first_bad = ~0ull;
  const unsigned char* results = st.results();
  if (st.args.checked) std::memcpy(&first_bad, results, sizeof first_bad);
  if (first_bad != ~0ull) {  // the scatter passes wrote nothing
    BadBucket report;
    report.index = std::size_t(first_bad);
    const std::size_t key_bytes = size_of(st.args.type);
    std::uint64_t key = 0;  // little-endian: the key's bits in the low bytes
    RXM_CUDA_CHECK(cudaMemcpy(&key, static_cast<const unsigned char*>(st.args.keys_in) + first_bad * key_bytes, key_bytes,
                              cudaMemcpyDeviceToHost));
    report.key_bits = key;
    report.id = st.id_of(key);
    return report;
  }
  for (std::size_t b = 0; b <= st.args.m; ++b) {
    std::uint32_t o = 0;
    std::memcpy(&o, results + sizeof(unsigned long long) + b * 4, 4);
    st.args.offsets[b] = o;
  }
  return {};
}

namespace {

template <class U>
void start_width(QueuedSplit::State& q, const MultisplitArgs& args, const BucketSpec& spec, SplitRemap remap,
                 bool wait_at_once) {
  const CudaResources::PerDevice& device = *q.device;
  cudaStream_t stream = device.stream;
  const std::uint32_t function_m = remap.table && remap.function_m ? remap.function_m : args.m;
  cuda::RuntimeBucketParams<U> buckets = runtime_params<U>(args, spec, function_m);
  // The tables' uploads come from pageable memory: cudaMemcpyAsync returns once it has staged
  // them, without waiting for the device.
  const std::size_t splitter_bytes =
      spec.kind == BucketSpec::Kind::splitters && function_m > 1 ? (std::size_t(function_m) - 1) * sizeof(U) : 0;
  const std::size_t remap_bytes = remap.table ? std::size_t(function_m) * 4 : 0;
  const std::size_t result_bytes = sizeof(unsigned long long) + (std::size_t(args.m) + 1) * 4;
  q.tables.resize(splitter_bytes + remap_bytes);
  unsigned char* staged = q.tables.data();
  if (splitter_bytes) {
    auto* encoded = reinterpret_cast<U*>(staged);
    std::memcpy(encoded, spec.splitters, splitter_bytes);  // the keys' bits
    for (std::size_t i = 0; i + 1 < function_m; ++i) encoded[i] = buckets.encoding(encoded[i]);
    q.splitters = ScratchBuffer(device, splitter_bytes);
    RXM_CUDA_CHECK(cudaMemcpyAsync(q.splitters.data(), encoded, splitter_bytes, cudaMemcpyHostToDevice, stream));
    buckets.encoded_splitters = static_cast<const U*>(q.splitters.data());
    buckets.splitter_count = function_m - 1;
  }
  if (remap_bytes) {
    std::memcpy(staged + splitter_bytes, remap.table, remap_bytes);
    q.remap = ScratchBuffer(device, remap_bytes);
    RXM_CUDA_CHECK(
        cudaMemcpyAsync(q.remap.data(), staged + splitter_bytes, remap_bytes, cudaMemcpyHostToDevice, stream));
    buckets.remap = static_cast<const std::uint32_t*>(q.remap.data());
    if (!args.checked) buckets.remap_out_of_range = remap.table[function_m - 1];
  }
  q.id_of = [plain = runtime_params<U>(args, spec, function_m), kind = spec.kind, m = function_m](std::uint64_t bits) {
    return kind == BucketSpec::Kind::splitters ? m : plain.any_kind(U(bits));  // splitters: found on the device
  };
  q.results_d = ScratchBuffer(device, result_bytes);
  RuntimeSplitArgs split;
  split.keys_in = args.keys_in;
  split.keys_out = args.keys_out;
  split.values_in = args.values_in;
  split.values_out = args.values_out;
  split.n = args.n;
  split.m = args.m;
  split.value_bytes = args.value_bytes;
  split.bad_index = args.checked ? q.results_d.as<unsigned long long>() : nullptr;
  split.tuning = args.tuning;
  split.offsets = reinterpret_cast<std::uint32_t*>(q.results_d.as<unsigned char>() + sizeof(unsigned long long));
  run_on_device<U>(device, args, buckets, split);
  void* results_h = nullptr;
  if (wait_at_once) {
    q.results_pageable.resize(result_bytes);
    results_h = q.results_pageable.data();  // the copy into pageable memory returns when it is done
  } else {
    q.results_pinned = PooledPinned(result_bytes);
    results_h = q.results_pinned.data();
  }
  RXM_CUDA_CHECK(cudaMemcpyAsync(results_h, q.results_d.data(), result_bytes, cudaMemcpyDeviceToHost, stream));
  RXM_CUDA_CHECK(cudaEventCreateWithFlags(&q.done, cudaEventDisableTiming));
  RXM_CUDA_CHECK(cudaEventRecord(q.done, stream));
}

template <class U>
BadBucket multisplit_width(Context& ctx, const MultisplitArgs& args, const BucketSpec& spec) {
  const int in_device = residence(ctx, args.keys_in, "keys_in");
  const bool histogram_only = args.keys_out == nullptr;
  const int device = in_device >= 0 ? in_device : ctx.devices().front().id;
  auto expect_same_residence = [&](const void* ptr, const char* name) {
    if (ptr == nullptr || args.n == 0) return;
    const int where = residence(ctx, ptr, name);
    require(where == in_device,
            std::string("multisplit: ") + name + " is " + (where < 0 ? "host memory" : "on device " + std::to_string(where)) +
                " but keys_in is " + (in_device < 0 ? "host memory" : "on device " + std::to_string(in_device)),
            "put every input and output on the same device (or all in host memory)");
  };
  expect_same_residence(args.keys_out, "keys_out");
  expect_same_residence(args.values_in, "values_in");
  expect_same_residence(args.values_out, "values_out");
  const int offsets_device = residence(ctx, args.offsets, "bucket_offsets");
  require(offsets_device < 0 || offsets_device == device, "multisplit: bucket_offsets is on another device",
          "put bucket_offsets in host memory or on the keys' device");

  const CudaResources::PerDevice& resources = cuda_resources(ctx).of_device(device);
  cudaStream_t stream = resources.stream;
  DeviceGuard guard(device);

  // Device copies of host-resident data (pinned staging at full PCIe speed).
  const std::size_t key_bytes = args.n * sizeof(U), value_bytes = args.n * args.value_bytes;
  ScratchBuffer keys_in_d, keys_out_d, values_in_d, values_out_d;
  PinnedBuffer staging;
  MultisplitArgs on_device = args;
  std::vector<std::size_t> offsets_wide(std::size_t(args.m) + 1);
  on_device.offsets = offsets_wide.data();
  if (in_device < 0 && args.n > 0) {
    staging = PinnedBuffer(key_bytes > value_bytes ? key_bytes : value_bytes);
    auto upload = [&](ScratchBuffer& to, const void* from, std::size_t bytes) {
      to = ScratchBuffer(resources, bytes);
      std::memcpy(staging.data(), from, bytes);
      RXM_CUDA_CHECK(cudaMemcpyAsync(to.data(), staging.data(), bytes, cudaMemcpyHostToDevice, stream));
      RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    upload(keys_in_d, args.keys_in, key_bytes);
    on_device.keys_in = keys_in_d.data();
    if (!histogram_only) {
      keys_out_d = ScratchBuffer(resources, key_bytes);
      on_device.keys_out = keys_out_d.data();
    }
    if (args.value_bytes != 0) {
      upload(values_in_d, args.values_in, value_bytes);
      values_out_d = ScratchBuffer(resources, value_bytes);
      on_device.values_in = values_in_d.data();
      on_device.values_out = values_out_d.data();
    }
  }
  const BadBucket bad = QueuedSplit::start(resources, on_device, spec, {}, true).finish();
  if (bad.found()) return bad;
  if (offsets_device >= 0)
    RXM_CUDA_CHECK(cudaMemcpy(args.offsets, offsets_wide.data(), offsets_wide.size() * sizeof(std::size_t),
                              cudaMemcpyHostToDevice));
  else
    std::memcpy(args.offsets, offsets_wide.data(), offsets_wide.size() * sizeof(std::size_t));

  if (in_device < 0 && args.n > 0 && !histogram_only) {
    auto download = [&](void* to, const ScratchBuffer& from, std::size_t bytes) {
      RXM_CUDA_CHECK(cudaMemcpyAsync(staging.data(), from.data(), bytes, cudaMemcpyDeviceToHost, stream));
      RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::memcpy(to, staging.data(), bytes);
    };
    download(args.keys_out, keys_out_d, key_bytes);
    if (args.value_bytes != 0) download(args.values_out, values_out_d, value_bytes);
  }
  return {};
}

}  // namespace

BadBucket cuda_multisplit(Context& ctx, const MultisplitArgs& args, const BucketSpec& spec) {
  require(args.value_bytes == 0 || args.value_bytes == 4 || args.value_bytes == 8,
          "multisplit: values are " + std::to_string(args.value_bytes) + " bytes wide", "use 4- or 8-byte values");
  require(args.n <= (std::size_t(1) << 32) - (std::size_t(1) << 16),
          "multisplit: " + std::to_string(args.n) + " keys on one GPU", "split the input below 2^32 - 2^16 keys per call");
  if (spec.kind == BucketSpec::Kind::identity)
    require(!is_floating(args.type), "multisplit: identity buckets on floating-point keys",
            "use integer keys, or delta buckets for floats");
  switch (size_of(args.type)) {
    case 1: return multisplit_width<std::uint8_t>(ctx, args, spec);
    case 2: return multisplit_width<std::uint16_t>(ctx, args, spec);
    case 4: return multisplit_width<std::uint32_t>(ctx, args, spec);
    default: return multisplit_width<std::uint64_t>(ctx, args, spec);
  }
}

}  // namespace radixmesh::detail
