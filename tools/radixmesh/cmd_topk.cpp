// radixmesh topk: the k largest (or smallest) values of a file, or of each row of it, with their
// indices, on one device, on several (--devices: each a block of columns) or on MPI ranks. Arguments
// are checked before anything is read; the two outputs appear together or not at all (StagedOutputs). Semantics: include/radixmesh/topk.hpp (NaN policy, ties, padding).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "commands.hpp"
#include "mpi_launch.hpp"
#include "radixmesh/topk.hpp"
#include "topk_mesh.hpp"

namespace radixmesh::cli {

namespace {

struct TopkFlags {
  std::string in, type, out_values, out_indices, rows, row_offsets;
  std::string k;
  std::string index_type = "i64";
  bool smallest = false, sorted = false, include_nan = false;
  std::string backend = "auto";
  std::string devices;
  std::string path = "auto";
  bool explain = false;
  OutputFlags output;
};

// Everything about the call that can be checked before reading: the flags, the input's header,
// the destinations. The same on every MPI rank.
struct TopkCall {
  ArrayFileInfo info;
  Rows rows;
  HostArray offsets;
  std::size_t k = 0;
  KeyType index_type = KeyType::i64;
  TopkOptions options;
};

TopkCall check_topk(const TopkFlags& flags) {
  TopkCall call;
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  call.k = parse_count(flags.k, "-k");
  require(flags.index_type == "i32" || flags.index_type == "i64",
          "--index-type '" + flags.index_type + "' is not an index type", "use i32 or i64");
  parse_backend(flags.backend);
  if (!parse_cpu_mesh(flags.devices)) parse_device_list(flags.devices);
  parse_topk_path(flags.path);
  require_readable_file(flags.in, "--in");
  require(type || format_from_path(flags.in) == FileFormat::npy,
          "--in '" + flags.in + "' is a raw file, so its element type is unknown",
          "pass --type (f16 bf16 f32 f64 i16 u16 i32 u32 i64 u64), or use a .npy file");
  call.info = inspect_array_file(flags.in, type);
  const ArrayFileInfo& info = call.info;
  call.rows = Rows::uniform(1, info.count);
  if (!flags.rows.empty()) {
    const std::size_t count = parse_count(flags.rows, "--rows");
    require(count > 0 && info.count % count == 0,
            "--rows " + std::to_string(count) + " does not divide the " + std::to_string(info.count) +
                " values of --in",
            "pass a row count that divides the values, or --row-offsets");
    call.rows = Rows::uniform(count, info.count / count);
  } else if (!flags.row_offsets.empty()) {
    require_readable_file(flags.row_offsets, "--row-offsets");
    call.offsets = read_array(flags.row_offsets, KeyType::u64);
    require(call.offsets.size() >= 2, "--row-offsets holds fewer than 2 offsets", "give rows + 1 offsets (u64)");
    call.rows = Rows::from_offsets(
        std::span<const std::uint64_t>(call.offsets.as<std::uint64_t>(), call.offsets.size()));
  }
  const std::size_t places = call.rows.count * call.k;
  call.index_type = flags.index_type == "i32" ? KeyType::i32 : KeyType::i64;
  call.options = {.largest = !flags.smallest, .sorted = flags.sorted, .include_nan = flags.include_nan};
  StagedOutputs::check_destination(flags.out_values, places * size_of(info.type), "--out-values");
  StagedOutputs::check_destination(flags.out_indices, places * size_of(call.index_type), "--out-indices");
  return call;
}

void write_outputs(const TopkFlags& flags, const HostArray& out_values, const HostArray& out_indices) {
  StagedOutputs outputs;
  outputs.write(flags.out_values, out_values.type(), out_values.data(), out_values.size());
  outputs.write(flags.out_indices, out_indices.type(), out_indices.data(), out_indices.size());
  outputs.commit();
}

void report(const TopkFlags& flags, const TopkCall& call, const std::string& where, double topk_s) {
  if (flags.output.json) {
    print_json({{"command", "topk"}, {"in", flags.in}, {"n", call.info.count}, {"rows", call.rows.count},
                {"k", call.k}, {"type", name_of(call.info.type)}, {"largest", !flags.smallest},
                {"sorted", flags.sorted}, {"backend", where}, {"seconds", topk_s}});
  } else {
    std::printf("top-%zu of %zu row(s) of %s (%zu values) on %s in %.3f s\n", call.k, call.rows.count,
                std::string(name_of(call.info.type)).c_str(), call.info.count, where.c_str(), topk_s);
  }
}

// `mpirun -np R radixmesh topk`: rank r reads its column block of every row (a plain array: its
// slice) with positioned reads, the ranks take the top-k together (each gets the whole result),
// and rank 0 writes the outputs. A failure on any rank stops every rank at that step.
void run_topk_ranks(const TopkFlags& flags) {
  const int rank = mpi_rank(), ranks = mpi_size();
  require(flags.devices.empty(), "--devices with mpirun", "drop --devices: each rank takes its own GPU (or the CPU)");
  TopkCall call;
  on_every_rank("checking the flags and the inputs", [&] {
    call = check_topk(flags);
    require(flags.row_offsets.empty(), "--row-offsets with mpirun", "use --rows (equal rows) under mpirun");
  });
  std::optional<Context> ctx;
  on_every_rank("joining the mesh", [&] { ctx = mpi_world_context(parse_backend(flags.backend)); });
  const std::size_t rows = call.rows.count, columns = call.rows.length;
  std::vector<HostArray> block(1);
  on_every_rank("reading its columns of the input", [&] {
    block[0] = read_column_block(flags.in, call.info.type, rows, columns, block_first(columns, ranks, rank),
                                 block_width(columns, ranks, rank));
  });
  HostArray out_values(call.info.type, rows * call.k), out_indices(call.index_type, rows * call.k);
  const auto start = std::chrono::steady_clock::now();
  TopkPhases phases;
  topk_over_blocks(*ctx, block, rows, !flags.rows.empty(), call.k, call.options, out_values, out_indices,
                   {parse_topk_path(flags.path), &phases});
  const double topk_s = seconds_since(start);
  if (rank == 0 && flags.explain) std::printf("%s", explain_topk(phases, ranks).c_str());
  on_every_rank("writing the outputs", [&] {
    if (rank == 0) write_outputs(flags, out_values, out_indices);
  });
  if (rank == 0) report(flags, call, std::to_string(ranks) + " ranks (" + name_of(ctx->mesh_backend(0)) + ")", topk_s);
}

void run_topk(const TopkFlags& flags) {
  if (launched_by_mpi()) return run_topk_ranks(flags);
  const TopkCall call = check_topk(flags);
  const std::size_t places = call.rows.count * call.k;
  Context ctx = make_mesh_context(flags.backend, flags.devices);
  const int devices = ctx.mesh_size();
  require(devices == 1 || flags.row_offsets.empty(), "--row-offsets on " + std::to_string(devices) + " devices",
          "use --rows (equal rows, split by columns over the devices), or one device");

  ProgressLine progress(flags.output.progress);
  progress.phase("reading " + flags.in);
  HostArray values = read_array(flags.in, call.info.type);
  HostArray out_values(call.info.type, places), out_indices(call.index_type, places);
  progress.phase("top-k");
  const auto start = std::chrono::steady_clock::now();
  if (devices > 1) {
    // Every device its block of columns (a plain array: its slice), as the vocabulary of a
    // tensor-parallel model is split.
    const std::size_t rows = call.rows.count, columns = call.rows.length;
    std::vector<HostArray> blocks;
    for (int d = 0; d < devices; ++d)
      blocks.push_back(column_block(values, rows, block_first(columns, devices, d), block_width(columns, devices, d)));
    TopkPhases phases;
    topk_over_blocks(ctx, blocks, rows, !flags.rows.empty(), call.k, call.options, out_values, out_indices,
                     {parse_topk_path(flags.path), &phases});
    if (flags.explain) std::printf("%s", explain_topk(phases, devices).c_str());
  } else {
    detail::TopkRequest rq;
    rq.type = values.type();
    rq.values = values.data();
    rq.total = values.size();
    rq.rows = call.rows;
    rq.k = call.k;
    rq.options = call.options;
    rq.index_bytes = size_of(call.index_type);
    rq.out_values = out_values.data();
    rq.out_indices = out_indices.data();
    detail::topk_host(ctx, rq);
  }
  const double topk_s = seconds_since(start);
  progress.phase("writing " + flags.out_values);
  write_outputs(flags, out_values, out_indices);
  progress.finish();
  report(flags, call,
         devices > 1 ? std::to_string(devices) + " " + name_of(ctx.mesh_backend(0)) + " devices"
                     : std::string(name_of(ctx.backend())),
         topk_s);
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
  cmd->add_option("--devices", flags->devices,
                  "Mesh devices: CUDA ids (0,1,2,3; 0,0,0,0 is four logical devices of GPU 0) or cpu:N; each takes "
                  "an even block of every row's columns (default: every visible GPU, or the CPU)");
  cmd->add_option("--path", flags->path,
                  "Over several devices: auto, candidates (local top-k's merged) or radix-select (one array: a "
                  "distributed radix select)")
      ->capture_default_str();
  cmd->add_flag("--explain", flags->explain, "Over several devices: print the path taken and each step's time");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_topk(*flags); }}};
}

}  // namespace radixmesh::cli
