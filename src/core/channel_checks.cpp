// detail::validate_channel (radixmesh/channel.hpp): the channel's arguments, checked before any
// device memory is asked for. Free device memory is checked by the CUDA side, which can ask.
#include <string>

#include "radixmesh/buckets.hpp"
#include "radixmesh/channel.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {
// device::multisplit takes n < 2^32 - 2^16 tuples: the grouping at close is one such call.
constexpr std::size_t max_channel_capacity = (std::size_t(1) << 32) - (std::size_t(1) << 16) - 1;
}  // namespace

void validate_channel(const Context& ctx, const ChannelLayout& layout, std::span<const int> owners) {
  if (ctx.backend() != Backend::cuda)
    throw_error(ErrorCode::unsupported,
                "channel: the context is on the CPU backend, and a channel's pushes run in CUDA kernels" +
                    (ctx.cpu_fallback_reason().empty() ? std::string() : " (" + ctx.cpu_fallback_reason() + ")"),
                "make the context with Context::local() on a machine with a GPU");
  const std::size_t k = layout.key_bytes, v = layout.value_bytes;
  require(k == 1 || k == 2 || k == 4 || k == 8,
          "channel: keys of " + std::to_string(k) + " bytes are not supported", "use keys of 1, 2, 4 or 8 bytes");
  require(v == 0 || v == 4 || v == 8, "channel: values of " + std::to_string(v) + " bytes are not supported",
          "use values of 4 or 8 bytes (or void for keys only)");
  require(layout.m >= 1 && layout.m <= buckets::max_buckets,
          "channel: m = " + std::to_string(layout.m) + " buckets is outside [1, " +
              std::to_string(buckets::max_buckets) + "]",
          "use a bucket function with 1 to " + std::to_string(buckets::max_buckets) + " buckets");
  require(owners.size() == layout.m,
          "channel: the owner map has " + std::to_string(owners.size()) + " entries for m = " +
              std::to_string(layout.m) + " buckets",
          "pass one owner (a context device) per bucket");
  const std::size_t devices = ctx.devices().size();
  for (std::size_t b = 0; b < owners.size(); ++b)
    require(owners[b] >= 0 && std::size_t(owners[b]) < devices,
            "channel: bucket " + std::to_string(b) + " is owned by device " + std::to_string(owners[b]) +
                ", and the context has devices 0 to " + std::to_string(devices - 1),
            "name owners by their index in the context's devices");
  require(layout.capacity >= 1, "channel: the capacity is 0 tuples per device",
          "give each receiving device room for the tuples it will receive");
  require(layout.capacity <= max_channel_capacity,
          "channel: a capacity of " + std::to_string(layout.capacity) + " tuples is above the " +
              std::to_string(max_channel_capacity) + " one device can group at close",
          "spread the buckets over more devices, or close the channel more often with fewer tuples");
  // Pushes write into the owners' memory from every device's kernels, with atomics on the counters.
  const Topology& topology = ctx.topology();
  std::vector<bool> receives(devices, false);
  for (int o : owners) receives[std::size_t(o)] = true;
  for (std::size_t s = 0; s < devices; ++s)
    for (std::size_t d = 0; d < devices; ++d) {
      if (!receives[d] || topology.devices[s].id == topology.devices[d].id) continue;
      const PeerLink& link = topology.peers[s][d];
      const std::string pair = "GPU " + std::to_string(topology.devices[s].id) + " (device " + std::to_string(s) +
                               ") and GPU " + std::to_string(topology.devices[d].id) + " (device " +
                               std::to_string(d) + ")";
      if (!link.access)
        throw_error(ErrorCode::unsupported, "channel: " + pair + " have no peer access, and pushes write into the " +
                                                "owner's memory directly",
                    "own the buckets by devices with peer access to every device (radixmesh info --links)");
      if (!link.native_atomics)
        throw_error(ErrorCode::unsupported,
                    "channel: " + pair + " have no native peer atomics, which reserving inbox slots needs",
                    "own the buckets by devices joined by NVLink to every device (radixmesh info --links)");
    }
}

void require_device(const ChannelState& state, int device, const char* call) {
  require(device >= 0 && std::size_t(device) < state.devices.size(),
          std::string("channel ") + call + ": device " + std::to_string(device) + " is not in the context (devices 0 to " +
              std::to_string(state.devices.size() - 1) + ")",
          "name a device by its index in the context's devices");
}

void require_closed(const ChannelState& state, const char* call) {
  if (state.phase == ChannelState::Phase::failed)
    throw_error(ErrorCode::invalid_argument,
                std::string("channel ") + call + ": close() failed, so the channel holds no result",
                "make a new channel with a larger capacity (close()'s error names it)");
  require(state.phase == ChannelState::Phase::closed, std::string("channel ") + call + ": the channel is still open",
          "call close() first");
}

}  // namespace radixmesh::detail
