// radixmesh multisplit: read keys (and optionally values), split them stably into buckets, write
// the permuted keys/values and (optionally) the m + 1 bucket offsets as u64.
//   --buckets radix:SHIFT:BITS | delta:LO:HI:M | splitters:FILE (m - 1 sorted keys of --in's type)
//             | identity:M (integer keys: the key is its bucket id; a key >= M is an error naming it)
// Everything that can be checked is checked before the outputs are written (StagedOutputs).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "cli_common.hpp"
#include "bucket_spec.hpp"
#include "commands.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::cli {

namespace {

struct MultisplitFlags {
  std::string in, out, type, buckets, values, values_out, values_type, offsets_out;
  std::string backend = "auto";
  std::string devices;
  OutputFlags output;
};

// Runs the split for key type K with the bucket function the flag names; returns m.
template <class K>
std::uint32_t split(Context& ctx, const std::string& spec, const HostArray& keys, HostArray& keys_out,
                    const HostArray* values, HostArray* values_out, std::vector<std::size_t>& offsets) {
  const std::span<const K> in(keys.as<K>(), keys.size());
  const std::span<K> out(keys_out.as<K>(), keys_out.size());
  auto run = [&](const auto& fn, std::uint32_t m) {
    offsets.assign(std::size_t(m) + 1, 0);
    if (values == nullptr) {
      multisplit(ctx, in, out, fn, std::span<std::size_t>(offsets));
    } else if (size_of(values->type()) == 4) {
      multisplit(ctx, in, out, std::span<const std::uint32_t>(values->as<std::uint32_t>(), values->size()),
                 std::span<std::uint32_t>(values_out->as<std::uint32_t>(), values_out->size()), fn,
                 std::span<std::size_t>(offsets));
    } else {
      multisplit(ctx, in, out, std::span<const std::uint64_t>(values->as<std::uint64_t>(), values->size()),
                 std::span<std::uint64_t>(values_out->as<std::uint64_t>(), values_out->size()), fn,
                 std::span<std::size_t>(offsets));
    }
    return m;
  };
  return with_bucket_function<K>(spec, run);
}

void run_multisplit(const MultisplitFlags& flags) {
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  parse_backend(flags.backend);
  parse_device_list(flags.devices);
  const ArrayFileInfo keys_info = inspect_keys_input(flags.in, type);
  const bool with_values = !flags.values.empty();
  std::optional<ArrayFileInfo> values_info;
  if (with_values)
    values_info = inspect_values(flags.values, flags.values_type, flags.in, keys_info.count, "multisplit");

  const std::size_t key_bytes = keys_info.count * size_of(keys_info.type);
  StagedOutputs::check_destination(flags.out, key_bytes, "--out");
  if (with_values) StagedOutputs::check_destination(flags.values_out, values_info->count * size_of(values_info->type), "--values-out");
  // The offsets' size is known only once m is; a directory check with no size is what can be done up front.
  if (!flags.offsets_out.empty()) StagedOutputs::check_destination(flags.offsets_out, 0, "--offsets-out");
  Context ctx = make_context(flags.backend, flags.devices);

  auto start = std::chrono::steady_clock::now();
  HostArray keys = read_array(flags.in, keys_info.type);
  HostArray keys_out(keys.type(), keys.size());
  HostArray values, values_out;
  if (with_values) {
    values = read_array(flags.values, values_info->type);
    values_out = HostArray(values.type(), values.size());
  }
  const double read_s = seconds_since(start);
  std::vector<std::size_t> offsets;
  start = std::chrono::steady_clock::now();
  const std::uint32_t m = visit_key_type(keys.type(), [&](auto tag) {
    using K = decltype(tag);
    return split<K>(ctx, flags.buckets, keys, keys_out, with_values ? &values : nullptr,
                    with_values ? &values_out : nullptr, offsets);
  });
  const double split_s = seconds_since(start);

  StagedOutputs outputs;
  outputs.write(flags.out, keys_out.type(), keys_out.data(), keys_out.size());
  if (with_values) outputs.write(flags.values_out, values_out.type(), values_out.data(), values_out.size());
  if (!flags.offsets_out.empty()) {
    std::vector<std::uint64_t> wide(offsets.begin(), offsets.end());
    outputs.write(flags.offsets_out, KeyType::u64, wide.data(), wide.size());
  }
  outputs.commit();
  if (flags.output.json) {
    print_json({{"command", "multisplit"}, {"in", flags.in}, {"out", flags.out}, {"n", keys.size()},
                {"type", name_of(keys.type())}, {"buckets", flags.buckets}, {"m", m},
                {"backend", name_of(ctx.backend())}, {"seconds", {{"read", read_s}, {"split", split_s}}}});
  } else {
    std::printf("split %zu %s keys into %u buckets on %s in %.3f s (read %.3f s)\n", keys.size(),
                std::string(name_of(keys.type())).c_str(), m, name_of(ctx.backend()), split_s, read_s);
  }
}

}  // namespace

std::vector<Command> register_multisplit(CLI::App& root, const Invocation&) {
  auto flags = std::make_shared<MultisplitFlags>();
  CLI::App* cmd = root.add_subcommand("multisplit", "Split keys (and values) stably into buckets");
  cmd->add_option("--in", flags->in, "Input keys (.npy gives its dtype; raw needs --type)")->required();
  cmd->add_option("--out", flags->out, "Output keys, grouped by bucket")->required();
  cmd->add_option("--type", flags->type, "Key type of a raw --in");
  cmd->add_option("--buckets", flags->buckets, "radix:SHIFT:BITS | delta:LO:HI:M | splitters:FILE | identity:M")->required();
  add_values_flags(*cmd, flags->values, flags->values_out, flags->values_type);
  cmd->add_option("--offsets-out", flags->offsets_out, "The m + 1 bucket offsets, as u64");
  cmd->add_option("--backend", flags->backend, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--devices", flags->devices, "CUDA device ids, e.g. 0");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_multisplit(*flags); }}};
}

}  // namespace radixmesh::cli
