// The host side of rxm::Channel (radixmesh/channel.hpp): inboxes and tables when a channel is
// made, the counters read back at close, the grouped offsets copied out after it. The kernels
// (push, and the grouping with the user's bucket function) are compiled in the user's .cu file
// from radixmesh/device/channel.cuh.
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/byte_size.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/channel.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {

constexpr std::size_t align256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Byte offsets of the parts of a device's control buffer.
struct ControlLayout {
  std::size_t counters = 0, owners = 0, targets = 0, offsets = 0, bytes = 0;
  ControlLayout(std::uint32_t m, std::size_t devices) {
    owners = align256(2 * sizeof(unsigned long long));
    targets = owners + align256(std::size_t(m) * sizeof(std::uint16_t));
    offsets = targets + align256(devices * sizeof(ChannelTarget));
    bytes = offsets + align256((std::size_t(m) + 1) * sizeof(std::uint32_t));
  }
};

// Inbox and result of every receiver, plus every device's control buffer, per GPU: refused
// before anything is allocated when a GPU lacks the free memory.
void check_free_memory(const Context& ctx, const ChannelLayout& layout, const std::vector<bool>& receives,
                       std::size_t control_bytes) {
  std::map<int, std::size_t> needed;  // by CUDA ordinal
  const std::size_t tuple = layout.key_bytes + layout.value_bytes;
  for (std::size_t d = 0; d < receives.size(); ++d) {
    std::size_t& n = needed[ctx.devices()[d].id];
    n += control_bytes;
    if (receives[d]) n += 2 * layout.capacity * tuple;
  }
  for (const auto& [ordinal, bytes] : needed) {
    std::size_t free_bytes = 0, total_bytes = 0;
    {
      DeviceGuard guard(ordinal);
      RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    }
    if (bytes > free_bytes)
      throw_error(ErrorCode::out_of_memory,
                  "channel: GPU " + std::to_string(ordinal) + " needs " + format_bytes(bytes) +
                      " for its devices' inboxes and results (capacity " + std::to_string(layout.capacity) +
                      " tuples of " + std::to_string(tuple) + " bytes, twice per receiving device), and only " +
                      format_bytes(free_bytes) + " of " + format_bytes(total_bytes) + " is free",
                  "use a smaller capacity, spread the buckets over more GPUs, or free device memory");
  }
}

}  // namespace

ChannelState make_channel_state(const Context& ctx, const ChannelLayout& layout, std::span<const int> owners) {
  validate_channel(ctx, layout, owners);
  CudaResources& resources = cuda_resources(ctx);
  const std::size_t n_devices = ctx.devices().size();
  std::vector<bool> receives(n_devices, false);
  for (int o : owners) receives[std::size_t(o)] = true;
  const ControlLayout control(layout.m, n_devices);
  check_free_memory(ctx, layout, receives, control.bytes);

  ChannelState state;
  state.layout = layout;
  state.devices.resize(n_devices);
  std::vector<ChannelTarget> targets(n_devices);
  for (std::size_t d = 0; d < n_devices; ++d) {
    ChannelDevice& dev = state.devices[d];
    dev.ordinal = resources.devices[d].device;
    dev.stream = resources.devices[d].stream;
    dev.receives = receives[d];
    dev.control = DeviceBuffer(dev.ordinal, control.bytes);
    auto* base = static_cast<unsigned char*>(dev.control.data());
    dev.reserved = reinterpret_cast<unsigned long long*>(base + control.counters);
    dev.invalid = dev.reserved + 1;
    dev.owners = reinterpret_cast<const std::uint16_t*>(base + control.owners);
    dev.targets = reinterpret_cast<const ChannelTarget*>(base + control.targets);
    dev.offsets = reinterpret_cast<std::uint32_t*>(base + control.offsets);
    if (dev.receives) {
      dev.inbox_keys = DeviceBuffer(dev.ordinal, layout.capacity * layout.key_bytes);
      dev.inbox_values = DeviceBuffer(dev.ordinal, layout.capacity * layout.value_bytes);
      targets[d] = {dev.inbox_keys.data(), dev.inbox_values.data(), dev.reserved};
    }
  }
  // Every device's control buffer: counters zero, the owner map and the inbox table.
  std::vector<unsigned char> host(control.offsets, 0);
  for (std::size_t b = 0; b < owners.size(); ++b) {
    const auto owner = std::uint16_t(owners[b]);
    std::memcpy(host.data() + control.owners + b * sizeof owner, &owner, sizeof owner);
  }
  std::memcpy(host.data() + control.targets, targets.data(), targets.size() * sizeof(ChannelTarget));
  for (ChannelDevice& dev : state.devices) {
    DeviceGuard guard(dev.ordinal);
    RXM_CUDA_CHECK(cudaMemcpy(dev.control.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  return state;
}

void receive_pushes(ChannelState& state, std::span<void* const> push_streams) {
  require(state.phase == ChannelState::Phase::open, "channel close: the channel was closed already",
          "close a channel once; make a new one for the next round of pushes");
  state.phase = ChannelState::Phase::failed;  // until finish_channel: no result unless all of close() runs
  if (push_streams.empty()) {
    for (ChannelDevice& dev : state.devices) {
      DeviceGuard guard(dev.ordinal);
      RXM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(dev.stream)));
    }
  } else {
    for (void* stream : push_streams) RXM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  }
  const ChannelLayout& layout = state.layout;
  std::string overfull;
  unsigned long long invalid = 0;
  for (std::size_t d = 0; d < state.devices.size(); ++d) {
    ChannelDevice& dev = state.devices[d];
    unsigned long long counters[2] = {0, 0};  // reserved, invalid
    {
      DeviceGuard guard(dev.ordinal);
      RXM_CUDA_CHECK(cudaMemcpy(counters, dev.reserved, sizeof counters, cudaMemcpyDeviceToHost));
    }
    invalid += counters[1];
    dev.arrived = std::size_t(counters[0]);
    if (counters[0] > layout.capacity)
      overfull += (overfull.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) + " (GPU " +
                  std::to_string(dev.ordinal) + ") was sent " + std::to_string(counters[0]) + " tuples, " +
                  std::to_string(counters[0] - layout.capacity) + " more than the capacity of " +
                  std::to_string(layout.capacity);
  }
  if (!overfull.empty())
    throw_error(ErrorCode::invalid_argument,
                "channel close: inboxes overflowed (" + overfull + "); the tuples past the capacity were dropped, "
                "so the channel keeps no result",
                "a larger capacity: at least the largest count named here");
  if (invalid != 0)
    throw_error(ErrorCode::invalid_argument,
                "channel close: " + std::to_string(invalid) + " pushed keys had bucket ids >= m = " +
                    std::to_string(layout.m) + " and were not delivered, so the channel keeps no result",
                "fix the bucket function or m");
  for (ChannelDevice& dev : state.devices) {
    dev.result_keys = DeviceBuffer(dev.ordinal, dev.arrived * layout.key_bytes);
    dev.result_values = DeviceBuffer(dev.ordinal, dev.arrived * layout.value_bytes);
  }
}

void finish_channel(ChannelState& state) {
  const std::uint32_t m = state.layout.m;
  std::vector<std::uint32_t> offsets(std::size_t(m) + 1);
  for (ChannelDevice& dev : state.devices) {
    DeviceGuard guard(dev.ordinal);
    auto stream = static_cast<cudaStream_t>(dev.stream);
    dev.bucket_offsets.assign(std::size_t(m) + 1, 0);
    if (dev.arrived == 0) continue;  // no grouping ran: every bucket is empty
    RXM_CUDA_CHECK(cudaMemcpyAsync(offsets.data(), dev.offsets, offsets.size() * sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToHost, stream));
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t b = 0; b <= m; ++b) dev.bucket_offsets[b] = offsets[b];
  }
  state.phase = ChannelState::Phase::closed;
}

}  // namespace radixmesh::detail
