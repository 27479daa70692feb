// radixmesh/channel.hpp — a channel: the user's own kernels push tuples, the owners of their
// buckets receive them grouped by bucket.
//
//   #include "radixmesh/device/channel.cuh"              // push() and close() are compiled by nvcc
//   rxm::Context ctx = rxm::Context::local({0, 0, 0, 0});  // four devices (here: logical, on GPU 0)
//   std::vector<int> owner(256);                          // owner[b]: the context device of bucket b
//   auto ch = rxm::make_channel<std::uint32_t, std::uint32_t>(ctx, rxm::buckets::radix_digit{24, 8},
//                                                             owner, capacity);
//   my_kernel<<<grid, block, 0, static_cast<cudaStream_t>(ch.stream(s))>>>(ch.view(s), ...);
//   //   inside: view.push(key, value);
//   ch.close();
//   ch.keys(d), ch.values(d), ch.bucket_offsets(d)        // device d's buckets, grouped
//
// Design (the channel form of MGI's sorters and movers, docs: ../shared/MESH.md):
// - Every context device that owns a bucket has an inbox: `capacity` keys (and values) in its own
//   memory, and a 64-bit reservation counter beside it. Devices that own no bucket get none.
// - view(s) is a trivially copyable handle for kernels on source device s: the bucket function,
//   the owner table and the inbox table (copies in s's memory, so lookups stay local), m and the
//   capacity. view.push(key[, value]) computes the bucket, its owner, reserves a slot in the
//   owner's inbox and writes the tuple there: same GPU for logical devices, peer memory over
//   NVLink for distinct GPUs. Reservations are warp-aggregated: the lanes that push to one owner
//   together take one atomicAdd (radixmesh/device/channel.cuh), so a push costs about one
//   coalesced write.
// - A full inbox drops the tuple, never writes past it: the reservation counter keeps counting,
//   so at close the counter is the number of tuples that were sent there. close() then throws
//   rxm::Error naming each overfull device, its capacity and the count needed, and no result is
//   kept. The fix: a larger capacity.
// - A bucket id >= m is not delivered either; it is counted on the source device and close()
//   throws naming how many there were.
// - close() waits for the pushes, checks the counters, then groups every inbox by bucket with
//   the stable device-level multisplit (radixmesh/device/multisplit.cuh, with the channel's own
//   bucket function) on the owner's context stream, into result buffers of exactly the count
//   that arrived. Tuples of one bucket from one source keep no order (warps race for slots), so
//   the order within a bucket is unspecified; the grouping is by bucket id, ascending.
// - Memory per receiving device: 2 x capacity x (key + value bytes) (inbox and result; the
//   result is allocated at close), checked against the free device memory when the channel is
//   made, plus the multisplit's temporary memory during close.
//
// Ordering rule. close() reads the counters after the pushes have finished:
// - close(): the push kernels were launched on the channel's streams (stream(d) = the context's
//   stream of device d), or have already finished (e.g. after cudaDeviceSynchronize).
// - close(push_streams): the cudaStream_t of every stream that carries push kernels (any
//   device); close() waits for the work queued on them when it is called.
// Pushes must not run after close() is called; view() after close() throws.
#pragma once
#include "radixmesh/export.hpp"
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

template <class K, class V, class F> struct ChannelView;  // radixmesh/device/channel.cuh

namespace detail {

// One receiving device's inbox, as the push side sees it (an entry of the table in device memory).
struct ChannelTarget {
  void* keys = nullptr;
  void* values = nullptr;                  // null without values
  unsigned long long* reserved = nullptr;  // slots taken (and asked for past the capacity)
};

struct ChannelLayout {
  std::size_t key_bytes = 4;
  std::size_t value_bytes = 0;  // 0 (keys only), 4 or 8
  std::uint32_t m = 1;
  std::size_t capacity = 0;     // tuples per receiving device
};

// One context device's part of a channel.
struct ChannelDevice {
  int ordinal = -1;        // CUDA ordinal
  void* stream = nullptr;  // the context's cudaStream_t of this device
  bool receives = false;   // owns at least one bucket
  // Device memory: [reserved, invalid | owners (m x u16) | targets (one per context device) |
  // offsets (m + 1 x u32)]; pointers below point into it.
  DeviceBuffer control;
  unsigned long long* reserved = nullptr;  // this device's inbox counter
  unsigned long long* invalid = nullptr;   // pushes from this device with a bucket id >= m
  const std::uint16_t* owners = nullptr;
  const ChannelTarget* targets = nullptr;
  std::uint32_t* offsets = nullptr;
  DeviceBuffer inbox_keys, inbox_values;   // `capacity` tuples, receivers only
  DeviceBuffer result_keys, result_values; // `arrived` tuples, from close()
  std::size_t arrived = 0;
  std::vector<std::size_t> bucket_offsets; // host copy, m + 1, from close()
};

struct ChannelState {
  enum class Phase { open, closed, failed };
  ChannelLayout layout;
  std::vector<ChannelDevice> devices;  // one per context device, in context order
  Phase phase = Phase::open;
};

// src/core/channel_checks.cpp: everything about the arguments that needs no device call (the
// backend, widths, m, the owner map, the capacity's range, peer access between the GPUs).
RXM_API void validate_channel(const Context& ctx, const ChannelLayout& layout, std::span<const int> owners);
// src/cuda/channel/channel_state.cpp: validates (the above, then the free device memory) and
// allocates the inboxes and tables; nothing is allocated when a check fails.
RXM_API ChannelState make_channel_state(const Context& ctx, const ChannelLayout& layout, std::span<const int> owners);
// Waits for the pushes (the context's streams when push_streams is empty), reads the counters,
// throws on overflow or bad bucket ids (phase -> failed), else allocates the result buffers.
RXM_API void receive_pushes(ChannelState& state, std::span<void* const> push_streams);
// After the grouping was queued on the devices' streams: waits for it, copies the offsets to the
// host, phase -> closed.
RXM_API void finish_channel(ChannelState& state);
// Throws unless the channel is closed with results (`call` names the accessor).
RXM_API void require_closed(const ChannelState& state, const char* call);
RXM_API void require_device(const ChannelState& state, int device, const char* call);

template <class T, class = void> struct has_bucket_count : std::false_type {};
template <class T>
struct has_bucket_count<T, std::void_t<decltype(std::declval<const T&>().num_buckets())>> : std::true_type {};

template <class V> constexpr std::size_t value_width() {
  if constexpr (std::is_void_v<V>) return 0; else return sizeof(V);
}

}  // namespace detail

// K: key type (1, 2, 4 or 8 bytes). V: value type (4 or 8 bytes; void for keys only; any other
// width is refused with rxm::Error when the channel is made). F: the bucket function, a trivially
// copyable functor with a __device__ (or RXM_HOST_DEVICE) `std::uint32_t operator()(K) const`
// whose data lives where the pushing kernels can read it (buckets::splitters: device memory).
template <class K, class V, class F> class Channel {
 public:
  using key_type = K;
  using value_type = V;

  // m from bucket_fn.num_buckets(). owners: one context device (index into ctx.devices()) per
  // bucket. capacity: tuples each receiving device can take.
  Channel(const Context& ctx, F bucket_fn, std::span<const int> owners, std::size_t capacity)
    requires detail::has_bucket_count<F>::value
      : Channel(ctx, bucket_fn, bucket_fn.num_buckets(), owners, capacity) {}
  // An explicit m, for functors without num_buckets() (checked against it where there is one).
  Channel(const Context& ctx, F bucket_fn, std::uint32_t m, std::span<const int> owners, std::size_t capacity)
      : ctx_(ctx), bucket_fn_(bucket_fn) {
    if constexpr (detail::has_bucket_count<F>::value)
      require(std::uint32_t(bucket_fn.num_buckets()) == m,
              "channel: the bucket function has " + std::to_string(bucket_fn.num_buckets()) + " buckets, not m = " +
                  std::to_string(m),
              "pass m = bucket_fn.num_buckets(), or leave m out");
    state_ = detail::make_channel_state(ctx, {sizeof(K), detail::value_width<V>(), m, capacity}, owners);
  }

  // The handle for kernels on context device `source` (radixmesh/device/channel.cuh).
  ChannelView<K, V, F> view(int source) const;
  // The context's stream of device d (a cudaStream_t): launch the pushes there and close() needs
  // no arguments.
  void* stream(int device) const {
    detail::require_device(state_, device, "stream");
    return state_.devices[std::size_t(device)].stream;
  }

  // Waits for the pushes (see the ordering rule above), then groups what every device received
  // by bucket. Throws rxm::Error on overflow or bad bucket ids, and then keeps no result.
  // Defined in radixmesh/device/channel.cuh (it runs the bucket function on the GPU).
  void close();
  void close(std::span<void* const> push_streams);

  // Device d's tuples grouped by bucket (ascending id; unspecified order within a bucket), on
  // d's GPU; valid until the channel is destroyed.
  device_span<const K> keys(int device) const {
    const auto& d = closed_device(device, "keys");
    return {static_cast<const K*>(d.result_keys.data()), d.arrived, d.ordinal};
  }
  device_span<const V> values(int device) const
    requires(!std::is_void_v<V>)
  {
    const auto& d = closed_device(device, "values");
    return {static_cast<const V*>(d.result_values.data()), d.arrived, d.ordinal};
  }
  // m + 1 host entries: bucket b of device d is [offsets[b], offsets[b + 1]); empty for buckets
  // that d does not own.
  std::span<const std::size_t> bucket_offsets(int device) const {
    return closed_device(device, "bucket_offsets").bucket_offsets;
  }

  std::uint32_t num_buckets() const { return state_.layout.m; }
  std::size_t capacity() const { return state_.layout.capacity; }
  const Context& context() const { return ctx_; }
  const detail::ChannelState& state() const { return state_; }  // the implementation's view; tests

 private:
  const detail::ChannelDevice& closed_device(int device, const char* call) const {
    detail::require_device(state_, device, call);
    detail::require_closed(state_, call);
    return state_.devices[std::size_t(device)];
  }

  Context ctx_;  // keeps the streams alive
  F bucket_fn_;
  detail::ChannelState state_;
};

// The channel with F deduced: make_channel<K>(...) keys only, make_channel<K, V>(...) pairs.
template <class K, class V = void, class F>
Channel<K, V, F> make_channel(const Context& ctx, F bucket_fn, std::span<const int> owners, std::size_t capacity) {
  return Channel<K, V, F>(ctx, bucket_fn, owners, capacity);
}
template <class K, class V = void, class F>
Channel<K, V, F> make_channel(const Context& ctx, F bucket_fn, std::uint32_t m, std::span<const int> owners,
                              std::size_t capacity) {
  return Channel<K, V, F>(ctx, bucket_fn, m, owners, capacity);
}

}  // namespace radixmesh
