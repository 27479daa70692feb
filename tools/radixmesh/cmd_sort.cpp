// radixmesh sort: read keys (and optionally values) from files, sort them, write them back.
// Everything that can be checked is checked before the first byte is read or written, and the
// outputs appear only when both are complete (StagedOutputs).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "commands.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::cli {

namespace {

namespace fs = std::filesystem;

struct SortFlags {
  std::string in, out, type, values, values_out, values_type;
  std::string order = "asc";
  std::string backend = "auto";
  std::string devices;
  OutputFlags output;
};

std::string describe_backend(const Context& ctx) {
  if (ctx.backend() == Backend::cpu) return "cpu (" + std::to_string(ctx.cpu_threads()) + " threads)";
  std::string names;
  for (const auto& d : ctx.devices()) names += (names.empty() ? "" : ", ") + std::to_string(d.id) + ": " + d.name;
  return "cuda (" + names + ")";
}

void run_sort(const SortFlags& flags) {
  // ---- check everything before reading or writing anything
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  SortOptions options;
  options.order = parse_order(flags.order);
  parse_backend(flags.backend);  // bad flag values fail before any file is touched
  parse_device_list(flags.devices);

  const ArrayFileInfo keys_info = inspect_keys_input(flags.in, type);
  const bool with_values = !flags.values.empty();
  std::optional<ArrayFileInfo> values_info;
  if (with_values) values_info = inspect_values(flags.values, flags.values_type, flags.in, keys_info.count, "sort");
  const std::size_t key_bytes = keys_info.count * size_of(keys_info.type);
  const std::size_t value_bytes = with_values ? values_info->count * size_of(values_info->type) : 0;
  // The arrays plus the sort's scratch copy of them (radix passes ping-pong between two buffers).
  require_host_memory(2 * (key_bytes + value_bytes),
                      "sorting the " + std::to_string(keys_info.count) + " keys of --in '" + flags.in + "'");
  StagedOutputs::check_destination(flags.out, key_bytes, "--out");
  if (with_values) StagedOutputs::check_destination(flags.values_out, value_bytes, "--values-out");
  Context ctx = make_context(flags.backend, flags.devices);

  // ---- read, sort, write
  ProgressLine progress(flags.output.progress);
  auto start = std::chrono::steady_clock::now();
  progress.phase("reading " + flags.in);
  HostArray keys = read_array(flags.in, keys_info.type);
  HostArray values;
  if (with_values) values = read_array(flags.values, values_info->type);
  require(keys.size() == keys_info.count && (!with_values || values.size() == keys.size()),
          "--in or --values changed while being read", "do not modify the inputs while radixmesh runs");
  const double read_s = seconds_since(start);

  const std::size_t n = keys.size();
  progress.phase("sorting " + std::to_string(n) + " " + std::string(name_of(keys.type())) + " keys");
  start = std::chrono::steady_clock::now();
  detail::sort_host(ctx, keys.type(), keys.data(), n, with_values ? values.data() : nullptr,
                    with_values ? size_of(values.type()) : 0, options);
  const double sort_s = seconds_since(start);

  progress.phase("writing " + flags.out);
  start = std::chrono::steady_clock::now();
  StagedOutputs outputs;
  outputs.write(flags.out, keys.type(), keys.data(), n);
  if (with_values) outputs.write(flags.values_out, values.type(), values.data(), n);
  outputs.commit();
  progress.finish();
  const double write_s = seconds_since(start);

  const double mkeys_per_s = sort_s > 0 ? double(n) / sort_s / 1e6 : 0.0;
  const std::string order = options.order == Order::ascending ? "ascending" : "descending";
  if (flags.output.json) {
    nlohmann::json device_ids = nlohmann::json::array();
    for (const auto& d : ctx.devices()) device_ids.push_back(d.id);
    print_json({{"command", "sort"},
                {"in", flags.in},
                {"out", flags.out},
                {"n", n},
                {"type", name_of(keys.type())},
                {"values_type", with_values ? nlohmann::json(name_of(values.type())) : nlohmann::json(nullptr)},
                {"order", order},
                {"backend", name_of(ctx.backend())},
                {"devices", device_ids},
                {"cpu_fallback_reason", ctx.cpu_fallback_reason()},
                {"seconds", {{"read", read_s}, {"sort", sort_s}, {"write", write_s}}},
                {"mkeys_per_s", mkeys_per_s}});
  } else {
    std::string what = std::to_string(n) + " " + std::string(name_of(keys.type())) + " keys";
    if (with_values) what += " with " + std::string(name_of(values.type())) + " values";
    std::printf("sorted %s %s on %s in %.3f s (%.1f Mkeys/s); read %.3f s, write %.3f s\n", what.c_str(),
                order.c_str(), describe_backend(ctx).c_str(), sort_s, mkeys_per_s, read_s, write_s);
  }
}

}  // namespace

std::vector<Command> register_sort(CLI::App& root, const Invocation&) {
  auto flags = std::make_shared<SortFlags>();
  CLI::App* cmd = root.add_subcommand("sort", "Sort a file of keys (and optionally values carried alongside)");
  cmd->add_option("--in", flags->in, "Input keys (.npy gives its dtype; raw needs --type)")->required();
  cmd->add_option("--out", flags->out, "Output keys, written only when complete")->required();
  cmd->add_option("--type", flags->type, "Key type of a raw --in: u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64");
  cmd->add_option("--order", flags->order, "asc or desc")->capture_default_str();
  add_values_flags(*cmd, flags->values, flags->values_out, flags->values_type);
  cmd->add_option("--backend", flags->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
      ->capture_default_str();
  cmd->add_option("--devices", flags->devices, "CUDA device ids, e.g. 0,1 (default: all visible)");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_sort(*flags); }}};
}

}  // namespace radixmesh::cli
