// radixmesh/device/channel.cuh — the device side of rxm::Channel (radixmesh/channel.hpp): the
// view a user's kernel pushes through, and close(), which groups the inboxes with the channel's
// bucket function on the GPU. Include it in the .cu file that launches the pushes and closes.
//
//   __global__ void produce(rxm::ChannelView<std::uint32_t, std::uint32_t, F> out, ...) {
//     ...
//     out.push(key, value);   // any thread, any number of times, divergent or not
//   }
//
// A push, step by step (all lanes of the warp that push at the same time, whatever the mask):
//  1. id = bucket_fn(key); ids >= m are counted (one atomic per warp on the source device's
//     `invalid` counter) and dropped: close() throws naming the count.
//  2. owner = owners[id], from the owner table in the source device's memory (u16, cached).
//  3. __match_any_sync over the owner splits the pushing lanes into groups, one per owner; the
//     lowest lane of a group takes the group's slots with one 64-bit atomicAdd on the owner's
//     reservation counter, __shfl_sync hands every lane the group's base, and each lane writes
//     to base + (its rank among the group's lanes). Lanes of one group write consecutive slots:
//     one coalesced store per group (two with values), local on a logical device, over NVLink for
//     a peer GPU.
//  4. Slots at or past the capacity are not written; the counter has counted them, so close()
//     knows how many tuples the device was sent.
// The atomic is the only serialization: one per warp and owner, instead of one per tuple. Its
// latency (a round trip to the owner's memory for a peer GPU) is paid once per warp-push; the
// writes themselves are fire-and-forget stores.
// Visibility: the pushes' stores and atomics are complete when their kernel is (stream order),
// which is what close() waits for (the ordering rule in channel.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "radixmesh/channel.hpp"
#include "radixmesh/device/multisplit.cuh"
#include "radixmesh/error.hpp"
#include "radixmesh/memory.hpp"

namespace radixmesh {

namespace detail {
struct no_channel_value {};
}  // namespace detail

// The handle a kernel pushes through: trivially copyable (pass it by value as a kernel argument),
// valid on the GPU of the source device it was made for until the channel is closed.
template <class K, class V, class F> struct ChannelView {
  using value_arg = std::conditional_t<std::is_void_v<V>, detail::no_channel_value, V>;

  F bucket_fn;
  const std::uint16_t* owners = nullptr;          // m entries, source device memory
  const detail::ChannelTarget* targets = nullptr; // one per context device, source device memory
  unsigned long long* invalid = nullptr;          // pushes with an id >= m, source device memory
  std::uint32_t m = 1;
  unsigned long long capacity = 0;

  // Keys-only channels.
  __device__ __forceinline__ void push(K key) const {
    static_assert(std::is_void_v<V>, "this channel carries values: push(key, value)");
    deliver(key, value_arg{});
  }
  // Channels with values.
  __device__ __forceinline__ void push(K key, value_arg value) const {
    static_assert(!std::is_void_v<V>, "this channel carries keys only: push(key)");
    deliver(key, value);
  }

 private:
  __device__ __forceinline__ void deliver(K key, const value_arg& value) const {
    const std::uint32_t id = std::uint32_t(bucket_fn(key));
    const unsigned active = __activemask();
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    const unsigned valid = __ballot_sync(active, id < m);
    if (id >= m) {
      const unsigned bad = active & ~valid;
      if (lane == unsigned(__ffs(bad) - 1)) atomicAdd(invalid, static_cast<unsigned long long>(__popc(bad)));
      return;
    }
    const unsigned owner = __ldg(owners + id);
    const unsigned group = __match_any_sync(valid, owner);
    const unsigned leader = unsigned(__ffs(group) - 1);
    const unsigned rank = unsigned(__popc(group & ((1u << lane) - 1u)));
    const detail::ChannelTarget target = targets[owner];
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(target.reserved, static_cast<unsigned long long>(__popc(group)));
    base = __shfl_sync(valid, base, int(leader));
    const unsigned long long slot = base + rank;
    if (slot >= capacity) return;  // full: counted by the reservation, reported at close
    static_cast<K*>(target.keys)[slot] = key;
    if constexpr (!std::is_void_v<V>) static_cast<V*>(target.values)[slot] = value;
  }
};

template <class K, class V, class F> ChannelView<K, V, F> Channel<K, V, F>::view(int source) const {
  detail::require_device(state_, source, "view");
  require(state_.phase == detail::ChannelState::Phase::open, "channel view: the channel is closed",
          "take views before close(); make a new channel for more pushes");
  const detail::ChannelDevice& d = state_.devices[std::size_t(source)];
  ChannelView<K, V, F> v{bucket_fn_};
  v.owners = d.owners;
  v.targets = d.targets;
  v.invalid = d.invalid;
  v.m = state_.layout.m;
  v.capacity = state_.layout.capacity;
  return v;
}

namespace detail {
inline void check_channel_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw_error(ErrorCode::device, std::string("channel close: ") + call + " failed: " + cudaGetErrorName(status) +
                                       " (" + cudaGetErrorString(status) + ")",
                "check the GPU and driver with `radixmesh info` and nvidia-smi");
}
}  // namespace detail

template <class K, class V, class F> void Channel<K, V, F>::close() { close(std::span<void* const>{}); }

template <class K, class V, class F> void Channel<K, V, F>::close(std::span<void* const> push_streams) {
  detail::receive_pushes(state_, push_streams);
  // Every receiver's inbox grouped on its own stream (logical devices of one GPU run side by side).
  std::vector<DeviceBuffer> temps;
  temps.reserve(state_.devices.size());
  const std::uint32_t m = state_.layout.m;
  for (detail::ChannelDevice& d : state_.devices) {
    if (d.arrived == 0) continue;
    device::multisplit_detail::CurrentDevice current(d.ordinal);
    const auto stream = static_cast<cudaStream_t>(d.stream);
    const auto* keys_in = static_cast<const K*>(d.inbox_keys.data());
    auto* keys_out = static_cast<K*>(d.result_keys.data());
    auto run = [&](void* temp, std::size_t& temp_bytes) {
      if constexpr (std::is_void_v<V>)
        return device::multisplit(temp, temp_bytes, keys_in, keys_out, d.arrived, bucket_fn_, m, d.offsets, stream);
      else
        return device::multisplit(temp, temp_bytes, keys_in, keys_out, static_cast<const V*>(d.inbox_values.data()),
                                  static_cast<V*>(d.result_values.data()), d.arrived, bucket_fn_, m, d.offsets,
                                  stream);
    };
    std::size_t temp_bytes = 0;
    detail::check_channel_cuda(run(nullptr, temp_bytes), "the grouping's temp-size query");
    // At least one byte: a null temp would make the second call a size query again.
    DeviceBuffer& temp = temps.emplace_back(d.ordinal, temp_bytes == 0 ? 1 : temp_bytes);
    detail::check_channel_cuda(run(temp.data(), temp_bytes), "the grouping (device::multisplit)");
  }
  detail::finish_channel(state_);
}

}  // namespace radixmesh
