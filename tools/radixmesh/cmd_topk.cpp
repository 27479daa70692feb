// radixmesh topk: the k largest (or smallest) values of a file, or of each row of it, with their
// indices. Arguments are checked before anything is read; the two outputs appear together or not
// at all (StagedOutputs). Semantics: include/radixmesh/topk.hpp (NaN policy, ties, padding).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "commands.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::cli {

namespace {

struct TopkFlags {
  std::string in, type, out_values, out_indices, rows, row_offsets;
  std::string k;
  std::string index_type = "i64";
  bool smallest = false, sorted = false, include_nan = false;
  std::string backend = "auto";
  std::string devices;
  OutputFlags output;
};

void run_topk(const TopkFlags& flags) {
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  const std::size_t k = parse_count(flags.k, "-k");
  require(flags.index_type == "i32" || flags.index_type == "i64",
          "--index-type '" + flags.index_type + "' is not an index type", "use i32 or i64");
  parse_backend(flags.backend);
  parse_device_list(flags.devices);
  require_readable_file(flags.in, "--in");
  require(type || format_from_path(flags.in) == FileFormat::npy,
          "--in '" + flags.in + "' is a raw file, so its element type is unknown",
          "pass --type (f16 bf16 f32 f64 i16 u16 i32 u32 i64 u64), or use a .npy file");
  const ArrayFileInfo info = inspect_array_file(flags.in, type);
  Rows rows = Rows::uniform(1, info.count);
  HostArray offsets;
  if (!flags.rows.empty()) {
    const std::size_t count = parse_count(flags.rows, "--rows");
    require(count > 0 && info.count % count == 0,
            "--rows " + std::to_string(count) + " does not divide the " + std::to_string(info.count) +
                " values of --in",
            "pass a row count that divides the values, or --row-offsets");
    rows = Rows::uniform(count, info.count / count);
  } else if (!flags.row_offsets.empty()) {
    require_readable_file(flags.row_offsets, "--row-offsets");
    offsets = read_array(flags.row_offsets, KeyType::u64);
    require(offsets.size() >= 2, "--row-offsets holds fewer than 2 offsets", "give rows + 1 offsets (u64)");
    rows = Rows::from_offsets(std::span<const std::uint64_t>(offsets.as<std::uint64_t>(), offsets.size()));
  }
  const std::size_t places = rows.count * k;
  const KeyType index_type = flags.index_type == "i32" ? KeyType::i32 : KeyType::i64;
  StagedOutputs::check_destination(flags.out_values, places * size_of(info.type), "--out-values");
  StagedOutputs::check_destination(flags.out_indices, places * size_of(index_type), "--out-indices");
  Context ctx = make_context(flags.backend, flags.devices);

  ProgressLine progress(flags.output.progress);
  progress.phase("reading " + flags.in);
  HostArray values = read_array(flags.in, info.type);
  HostArray out_values(info.type, places), out_indices(index_type, places);
  progress.phase("top-k");
  const auto start = std::chrono::steady_clock::now();
  detail::TopkRequest rq;
  rq.type = values.type();
  rq.values = values.data();
  rq.total = values.size();
  rq.rows = rows;
  rq.k = k;
  rq.options = {.largest = !flags.smallest, .sorted = flags.sorted, .include_nan = flags.include_nan};
  rq.index_bytes = size_of(index_type);
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  detail::topk_host(ctx, rq);
  const double topk_s = seconds_since(start);
  progress.phase("writing " + flags.out_values);
  StagedOutputs outputs;
  outputs.write(flags.out_values, out_values.type(), out_values.data(), places);
  outputs.write(flags.out_indices, out_indices.type(), out_indices.data(), places);
  outputs.commit();
  progress.finish();
  if (flags.output.json) {
    print_json({{"command", "topk"}, {"in", flags.in}, {"n", values.size()}, {"rows", rows.count}, {"k", k},
                {"type", name_of(values.type())}, {"largest", !flags.smallest}, {"sorted", flags.sorted},
                {"backend", name_of(ctx.backend())}, {"seconds", topk_s}});
  } else {
    std::printf("top-%zu of %zu row(s) of %s (%zu values) on %s in %.3f s\n", k, rows.count,
                std::string(name_of(values.type())).c_str(), values.size(), name_of(ctx.backend()), topk_s);
  }
}

}  // namespace

std::vector<Command> register_topk(CLI::App& root, const Invocation&) {
  auto flags = std::make_shared<TopkFlags>();
  CLI::App* cmd = root.add_subcommand("topk", "The k largest (or smallest) values of a file or of each row, with indices");
  cmd->add_option("--in", flags->in, "Input values (.npy gives its dtype; raw needs --type)")->required();
  cmd->add_option("--type", flags->type, "Element type of a raw --in");
  cmd->add_option("-k,--k", flags->k, "How many per row (1 <= k <= n)")->required();
  cmd->add_flag("--smallest", flags->smallest, "The k smallest instead of the largest");
  cmd->add_flag("--sorted", flags->sorted, "Best first (default: ascending input index)");
  cmd->add_flag("--include-nan", flags->include_nan, "NaN counts as above +inf (default: below every number)");
  auto* rows = cmd->add_option("--rows", flags->rows, "Split --in into this many equal rows");
  auto* offsets = cmd->add_option("--row-offsets", flags->row_offsets, "Row offsets file (u64, rows + 1 entries)");
  rows->excludes(offsets);
  cmd->add_option("--out-values", flags->out_values, "Output values (rows * k)")->required();
  cmd->add_option("--out-indices", flags->out_indices, "Output indices (rows * k; -1 pads short rows)")->required();
  cmd->add_option("--index-type", flags->index_type, "i32 or i64")->capture_default_str();
  cmd->add_option("--backend", flags->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
      ->capture_default_str();
  cmd->add_option("--devices", flags->devices, "CUDA device ids (default: all visible)");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_topk(*flags); }}};
}

}  // namespace radixmesh::cli
