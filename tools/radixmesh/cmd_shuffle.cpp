// radixmesh shuffle: split an input array over the devices of a mesh, shuffle it (every key goes to
// the device that owns its bucket), and write each device's result: keys grouped by bucket,
// stable, with the m + 1 bucket offsets.
//   --devices cpu:N (N CPU devices) | 0,1,2,3 (GPUs) | 0,0,0,0 (logical devices on GPU 0)
//   --buckets hash:M | radix:SHIFT:BITS | delta:LO:HI:M | splitters:FILE | identity:M
//   --owners round-robin (bucket b to device b mod P) | block (contiguous ranges) | FILE (m i32)
// Outputs: <out-prefix>.<d>.npy keys, <out-prefix>.<d>.offsets.npy (u64), and with --values the
// values as <values-out-prefix>.<d>.npy; all written only when every one is complete.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "bucket_spec.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/shuffle.hpp"

#if defined(RXM_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace radixmesh::cli {

namespace {

struct ShuffleFlags {
  std::string in, out_prefix, type, buckets, owners = "round-robin", devices, values, values_out_prefix, values_type;
  OutputFlags output;
};

std::vector<int> make_owners(const std::string& spec, std::uint32_t m, int devices) {
  std::vector<int> owner(m);
  if (spec == "round-robin") {
    for (std::uint32_t b = 0; b < m; ++b) owner[b] = int(b % std::uint32_t(devices));
  } else if (spec == "block") {
    for (std::uint32_t b = 0; b < m; ++b) owner[b] = int(std::uint64_t(b) * std::uint64_t(devices) / m);
  } else {
    require_readable_file(spec, "--owners");
    HostArray file = read_array(spec, KeyType::i32);
    require(file.size() == m,
            "--owners " + spec + " holds " + std::to_string(file.size()) + " owners for " + std::to_string(m) + " buckets",
            "give one i32 owner per bucket");
    std::copy(file.as<std::int32_t>(), file.as<std::int32_t>() + m, owner.begin());
  }
  return owner;
}

std::string part_path(const std::string& prefix, int d, const char* what) {
  return prefix + "." + std::to_string(d) + what + ".npy";
}

// One device's result, in host memory.
struct HostShard {
  HostArray keys, values;
  std::vector<std::uint64_t> offsets;
};

#if defined(RXM_HAS_CUDA)
template <class T> DeviceArray<T> upload(const T* data, std::size_t n, int device) {
  DeviceArray<T> d(device, n);
  if (n && cudaMemcpy(d.data(), data, n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
    throw_error(ErrorCode::device, "shuffle: uploading a shard failed", "check the GPU with `radixmesh info`");
  return d;
}
template <class T> void download(const DeviceArray<T>& d, void* to) {
  if (d.size() && cudaMemcpy(to, d.data(), d.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw_error(ErrorCode::device, "shuffle: downloading a result failed", "check the GPU with `radixmesh info`");
}
#endif

// Shuffles keys (and values of type V, or none) for key type K; the shards are equal slices.
template <class K, class V>
std::vector<HostShard> shuffle_slices(Context& ctx, const std::string& spec, const std::string& owners_spec,
                                      const HostArray& keys, const HostArray* values, std::uint32_t& m_out) {
  const int p = ctx.mesh_size();
  const std::size_t n = keys.size();
  auto slice = [&](int d) { return std::pair<std::size_t, std::size_t>{n * std::size_t(d) / std::size_t(p),
                                                                         n * std::size_t(d + 1) / std::size_t(p)}; };
  return with_bucket_function<K>(spec, [&](const auto& fn, std::uint32_t m) {
    m_out = m;
    const std::vector<int> owner = make_owners(owners_spec, m, p);
    std::vector<HostShard> out(static_cast<std::size_t>(p));
    if (ctx.backend() == Backend::cpu) {
      std::vector<std::span<const K>> ks;
      std::vector<std::span<const V>> vs;
      for (int d = 0; d < p; ++d) {
        const auto [b, e] = slice(d);
        ks.emplace_back(keys.as<K>() + b, e - b);
        if (values) vs.emplace_back(values->as<V>() + b, e - b);
      }
      auto finish = [&](auto& result) {
        for (int d = 0; d < p; ++d) {
          auto& s = result.shards[std::size_t(d)];
          out[std::size_t(d)].keys = HostArray(key_type_v<K>, s.keys.size());
          std::copy(s.keys.begin(), s.keys.end(), out[std::size_t(d)].keys.template as<K>());
          if (values) {
            out[std::size_t(d)].values = HostArray(values->type(), s.values.size());
            std::copy(s.values.begin(), s.values.end(), out[std::size_t(d)].values.template as<V>());
          }
          out[std::size_t(d)].offsets = s.bucket_offsets;
        }
      };
      if constexpr (!std::is_same_v<V, no_values>) {
        auto r = shuffle(ctx, ks, vs, fn, std::span<const int>(owner));
        finish(r);
      } else {
        auto r = shuffle(ctx, ks, fn, std::span<const int>(owner));
        finish(r);
      }
      return out;
    }
#if defined(RXM_HAS_CUDA)
    std::vector<DeviceArray<K>> dk;
    std::vector<DeviceArray<V>> dv;
    std::vector<device_span<const K>> ks;
    std::vector<device_span<const V>> vs;
    for (int d = 0; d < p; ++d) {
      const auto [b, e] = slice(d);
      const int device = ctx.devices()[std::size_t(d)].id;
      dk.push_back(upload(keys.as<K>() + b, e - b, device));
      if (values) dv.push_back(upload(values->as<V>() + b, e - b, device));
    }
    for (auto& a : dk) ks.emplace_back(a);
    for (auto& a : dv) vs.emplace_back(a);
    auto finish = [&](auto& result) {
      for (int d = 0; d < p; ++d) {
        auto& s = result.shards[std::size_t(d)];
        out[std::size_t(d)].keys = HostArray(key_type_v<K>, s.keys.size());
        download(s.keys, out[std::size_t(d)].keys.data());
        if (values) {
          out[std::size_t(d)].values = HostArray(values->type(), s.values.size());
          download(s.values, out[std::size_t(d)].values.data());
        }
        out[std::size_t(d)].offsets = s.bucket_offsets;
      }
    };
    if constexpr (!std::is_same_v<V, no_values>) {
      auto r = shuffle(ctx, std::span<const device_span<const K>>(ks), std::span<const device_span<const V>>(vs), fn,
                       std::span<const int>(owner));
      finish(r);
    } else {
      auto r = shuffle(ctx, std::span<const device_span<const K>>(ks), fn, std::span<const int>(owner));
      finish(r);
    }
#endif
    return out;
  });
}

void run_shuffle_command(const ShuffleFlags& flags) {
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  const ArrayFileInfo keys_info = inspect_keys_input(flags.in, type);
  const bool with_values = !flags.values.empty();
  require(!with_values || !flags.values_out_prefix.empty(), "--values was given without --values-out-prefix",
          "name where the shuffled values go with --values-out-prefix");
  std::optional<ArrayFileInfo> values_info;
  if (with_values) values_info = inspect_values(flags.values, flags.values_type, flags.in, keys_info.count, "shuffle");
  Context ctx = make_mesh_context("auto", flags.devices);
  const int p = ctx.mesh_size();
  for (int d = 0; d < p; ++d) {
    StagedOutputs::check_destination(part_path(flags.out_prefix, d, ""), 0, "--out-prefix");
    if (with_values) StagedOutputs::check_destination(part_path(flags.values_out_prefix, d, ""), 0, "--values-out-prefix");
  }

  auto start = std::chrono::steady_clock::now();
  HostArray keys = read_array(flags.in, keys_info.type);
  HostArray values;
  if (with_values) values = read_array(flags.values, values_info->type);
  const double read_s = seconds_since(start);
  start = std::chrono::steady_clock::now();
  std::uint32_t m = 0;
  const std::vector<HostShard> shards = visit_key_type(keys.type(), [&](auto tag) {
    using K = decltype(tag);
    if (!with_values) return shuffle_slices<K, no_values>(ctx, flags.buckets, flags.owners, keys, nullptr, m);
    if (size_of(values.type()) == 4) return shuffle_slices<K, std::uint32_t>(ctx, flags.buckets, flags.owners, keys, &values, m);
    return shuffle_slices<K, std::uint64_t>(ctx, flags.buckets, flags.owners, keys, &values, m);
  });
  const double shuffle_s = seconds_since(start);

  StagedOutputs outputs;
  nlohmann::json per_device = nlohmann::json::array();
  for (int d = 0; d < p; ++d) {
    const HostShard& s = shards[std::size_t(d)];
    outputs.write(part_path(flags.out_prefix, d, ""), s.keys.type(), s.keys.data(), s.keys.size());
    outputs.write(part_path(flags.out_prefix, d, ".offsets"), KeyType::u64, s.offsets.data(), s.offsets.size());
    if (with_values)
      outputs.write(part_path(flags.values_out_prefix, d, ""), s.values.type(), s.values.data(), s.values.size());
    per_device.push_back(s.keys.size());
  }
  outputs.commit();
  if (flags.output.json) {
    print_json({{"command", "shuffle"}, {"in", flags.in}, {"n", keys.size()}, {"type", name_of(keys.type())},
                {"buckets", flags.buckets}, {"m", m}, {"devices", p}, {"backend", name_of(ctx.backend())},
                {"keys_per_device", per_device}, {"seconds", {{"read", read_s}, {"shuffle", shuffle_s}}}});
    return;
  }
  std::printf("shuffled %zu %s keys into %u buckets over %d %s devices in %.3f s (read %.3f s); keys per device:",
              keys.size(), std::string(name_of(keys.type())).c_str(), m, p, name_of(ctx.backend()), shuffle_s, read_s);
  for (int d = 0; d < p; ++d) std::printf(" %zu", shards[std::size_t(d)].keys.size());
  std::printf("\n");
}

}  // namespace

std::vector<Command> register_shuffle(CLI::App& root, const Invocation&) {
  auto flags = std::make_shared<ShuffleFlags>();
  CLI::App* cmd = root.add_subcommand("shuffle", "Send every key to the mesh device that owns its bucket");
  cmd->add_option("--in", flags->in, "Input keys (.npy gives its dtype; raw needs --type), split evenly over the devices")
      ->required();
  cmd->add_option("--out-prefix", flags->out_prefix, "Each device's keys go to PREFIX.<d>.npy, offsets to PREFIX.<d>.offsets.npy")
      ->required();
  cmd->add_option("--type", flags->type, "Key type of a raw --in");
  cmd->add_option("--buckets", flags->buckets, "hash:M | radix:SHIFT:BITS | delta:LO:HI:M | splitters:FILE | identity:M")
      ->required();
  cmd->add_option("--owners", flags->owners, "round-robin | block | FILE (one i32 device per bucket)")->capture_default_str();
  cmd->add_option("--devices", flags->devices, "cpu:N, or CUDA ids such as 0,1,2,3 (repeat an id for logical devices)");
  cmd->add_option("--values", flags->values, "Values that travel with their keys (4- or 8-byte elements)");
  cmd->add_option("--values-out-prefix", flags->values_out_prefix, "Each device's values go to PREFIX.<d>.npy");
  cmd->add_option("--values-type", flags->values_type, "Element type of a raw --values");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_shuffle_command(*flags); }}};
}

}  // namespace radixmesh::cli
