// radixmesh sort: read keys (and optionally values) from files, sort them, write them back.
// Everything that can be checked is checked before the first byte is read or written, and the
// outputs appear only when both are complete (StagedOutputs).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "commands.hpp"
#include "mpi_launch.hpp"
#include "radixmesh/io.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::cli {

namespace {

namespace fs = std::filesystem;

struct SortFlags {
  std::string in, out, type, values, values_out, values_type;
  std::string order = "asc";
  std::string backend = "auto";
  std::string devices;
  bool explain = false, flatten = false;
  int digit_bits = 0;
  std::string strategy = "auto";
  std::string out_of_core = "auto";
  std::string device_memory;  // --device-memory: bytes per device (0 or empty: what is free)
  std::string host_memory;    // --host-memory: the out-of-core sort's second array at most (empty: what is available)
  OutputFlags output;
};

std::string describe_backend(const Context& ctx) {
  if (ctx.backend() == Backend::cpu) return "cpu (" + std::to_string(ctx.cpu_threads()) + " threads)";
  std::string names;
  for (const auto& d : ctx.devices()) names += (names.empty() ? "" : ", ") + std::to_string(d.id) + ": " + d.name;
  return "cuda (" + names + ")";
}

// The mesh sort's plan and steps (SortPhases), for --json.
nlohmann::json mesh_json(const SortPhases& p) {
  if (p.out_of_core) {
    nlohmann::json j = {{"out_of_core", true},
                        {"levels", p.passes},
                        {"digit_bits", p.digit_bits},
                        {"chunks", p.out_of_core_chunks},
                        {"groups", p.out_of_core_groups},
                        {"level_plan", p.plan_text},
                        {"ms", {{"partition", p.partition_ms}, {"local_sort", p.local_sort_ms}}}};
    if (!p.counts.empty()) {  // across MPI ranks: this rank's own sort, then the ranks' steps
      j["counts"] = p.counts;
      j["moved"] = p.moved;
      j["ms"]["splitters"] = p.splitters_ms;
      j["ms"]["exchange"] = p.exchange_ms;
      j["ms"]["merge"] = p.merge_ms;
    }
    return j;
  }
  // What both strategies report; exchange_ms is the merge's first round, which reads the other devices.
  nlohmann::json j = {{"strategy", p.merged ? "merge" : "partition"},
                      {"sorted_across_devices", p.sorted_across_devices},
                      {"counts", p.counts},
                      {"moved", p.moved},
                      {"ms",
                       {{"upload", p.upload_ms},
                        {"exchange", p.exchange_ms},
                        {"local_sort", p.local_sort_ms},
                        {"download", p.download_ms}}}};
  if (p.merged) {
    j["ms"]["splitters"] = p.splitters_ms;
    j["ms"]["merge"] = p.merge_ms;
    return j;
  }
  j["passes"] = p.passes;
  j["digit_bits"] = p.digit_bits;
  j["ms"]["partition"] = p.partition_ms;
  j["ms"]["refine"] = p.refine_ms;
  j["plan"] = nlohmann::json::parse(p.plan_json);
  return j;
}

// One GPU's sort of host-resident keys (sort_host.cpp): each step's time. The sorts run beside the
// download, and "download" is what is left of it after them.
nlohmann::json gpu_steps_json(const SortPhases& p) {
  return {{"setup", p.setup_ms}, {"upload", p.upload_ms}, {"split", p.partition_ms}, {"sorts", p.local_sort_ms},
          {"download", p.download_ms}};
}

void print_gpu_steps(const SortPhases& p) {
  std::printf("steps (ms): setup %.3f, upload %.3f, split %.3f, sorts %.3f (beside the download), download after "
              "them %.3f\n",
              p.setup_ms, p.upload_ms, p.partition_ms, p.local_sort_ms, p.download_ms);
}

// --explain: every pass's partition plan, the keys each device holds and moved, each step's time.
void print_mesh_steps(const SortPhases& p) {
  if (p.out_of_core) {
    std::printf("out of core: %d level(s) of %d-bit digits; %llu chunks partitioned in %.3f ms, %llu "
                "groups sorted in %.3f ms (transfers included)\n",
                p.passes, p.digit_bits, static_cast<unsigned long long>(p.out_of_core_chunks), p.partition_ms,
                static_cast<unsigned long long>(p.out_of_core_groups), p.local_sort_ms);
    std::printf("%s", p.plan_text.c_str());  // each level: resident on the device or through the extra host array
    if (!p.counts.empty()) {
      std::uint64_t moved = 0;
      const std::size_t size = p.counts.size();
      for (std::size_t i = 0; i < size; ++i)
        for (std::size_t j = 0; j < size; ++j) moved += i == j ? 0 : p.moved[i * size + j];
      std::printf("across %zu ranks: %llu keys changed rank; steps (ms): splitters %.3f, exchange %.3f, merge %.3f\n",
                  size, static_cast<unsigned long long>(moved), p.splitters_ms, p.exchange_ms, p.merge_ms);
    }
    return;
  }
  std::printf("%s", p.plan_text.c_str());
  if (p.sorted_across_devices)
    std::printf("sorted across devices already: each device sorted its own keys, none moved\n");
  std::string counts;
  for (auto c : p.counts) counts += (counts.empty() ? "" : ", ") + std::to_string(c);
  std::uint64_t moved = 0, total = 0;
  const std::size_t size = p.counts.size();
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t j = 0; j < size; ++j) {
      total += p.moved[i * size + j];
      if (i != j) moved += p.moved[i * size + j];
    }
  if (p.merged) {
    std::printf("mesh: %zu devices hold %s keys; %llu of %llu keys changed device (merge strategy)\n", size,
                counts.c_str(), static_cast<unsigned long long>(moved), static_cast<unsigned long long>(total));
    std::printf("steps (ms): upload %.3f, local sort %.3f, splitters %.3f, first merge round (reads the other devices) "
                "%.3f, later rounds %.3f, download %.3f\n",
                p.upload_ms, p.local_sort_ms, p.splitters_ms, p.exchange_ms, p.merge_ms, p.download_ms);
    return;
  }
  std::printf("mesh: %zu devices hold %s keys; %llu of %llu keys changed device; %d partition passes of %d-bit "
              "digits\n",
              size, counts.c_str(), static_cast<unsigned long long>(moved), static_cast<unsigned long long>(total),
              p.passes, p.digit_bits);
  std::printf("steps (ms): upload %.3f, partition %.3f, refine %.3f, exchange %.3f, local sort %.3f, download %.3f\n",
              p.upload_ms, p.partition_ms, p.refine_ms, p.exchange_ms, p.local_sort_ms, p.download_ms);
}

// The progress line's detail for one out-of-core round.
std::string out_of_core_detail(const SortProgress& p) {
  return std::string("out of core, ") + p.step + (p.level ? " (level " + std::to_string(p.level) + ")" : "") + " " +
         std::to_string(p.done) + "/" + std::to_string(p.total);
}

// What a sort run checks before it reads or writes anything: the flags, the inputs' headers, the
// host memory for `share` of the arrays, the outputs' directories and room.
struct SortInputs {
  SortOptions options;
  ArrayFileInfo keys;
  std::optional<ArrayFileInfo> values;
  bool with_values = false;
  // An n-d .npy --in is sorted along its last axis, as numpy.sort does, and written with its shape;
  // --flatten sorts it as one array (written 1-D). row_length 0: one array.
  std::size_t row_length = 0;
  std::vector<std::size_t> shape;
};

SortInputs check_sort(const SortFlags& flags, double share) {
  SortInputs in;
  std::optional<KeyType> type;
  if (!flags.type.empty()) type = parse_key_type(flags.type);
  in.options.order = parse_order(flags.order);
  in.options.mesh_digit_bits = flags.digit_bits;
  require(flags.digit_bits >= 0 && flags.digit_bits <= 16, "--digit-bits " + std::to_string(flags.digit_bits),
          "use 1 to 16 bits per partition digit, or 0 (automatic)");
  require(flags.strategy == "auto" || flags.strategy == "partition" || flags.strategy == "merge",
          "--strategy " + flags.strategy, "use auto, partition or merge");
  in.options.mesh_strategy = flags.strategy == "partition" ? MeshSortStrategy::partition
                             : flags.strategy == "merge"   ? MeshSortStrategy::merge
                                                           : MeshSortStrategy::automatic;
  require(flags.out_of_core == "auto" || flags.out_of_core == "always" || flags.out_of_core == "never",
          "--out-of-core " + flags.out_of_core, "use auto, always or never");
  in.options.out_of_core = flags.out_of_core == "always"  ? OutOfCoreMode::always
                           : flags.out_of_core == "never" ? OutOfCoreMode::never
                                                          : OutOfCoreMode::automatic;
  if (!flags.device_memory.empty()) in.options.device_memory_limit = parse_count(flags.device_memory, "--device-memory");
  if (!flags.host_memory.empty()) in.options.host_memory_limit = parse_count(flags.host_memory, "--host-memory");
  parse_backend(flags.backend);  // bad flag values fail before any file is touched
  if (!parse_cpu_mesh(flags.devices)) parse_device_list(flags.devices);
  in.keys = inspect_keys_input(flags.in, type);
  if (in.keys.shape.size() >= 2 && !flags.flatten) {
    require(!in.keys.fortran_order,
            "--in '" + flags.in + "' is a Fortran-order array: its last axis is not contiguous",
            "save it in C order (numpy.ascontiguousarray), or pass --flatten to sort it as one array");
    in.shape = in.keys.shape;
    in.row_length = in.shape.back();
  }
  in.with_values = !flags.values.empty();
  if (in.with_values) in.values = inspect_values(flags.values, flags.values_type, flags.in, in.keys.count, "sort");
  const std::size_t key_bytes = in.keys.count * size_of(in.keys.type);
  const std::size_t value_bytes = in.with_values ? in.values->count * size_of(in.values->type) : 0;
  // The arrays plus the sort's scratch copy of them (radix passes ping-pong between two buffers).
  require_host_memory(std::size_t(2 * share * double(key_bytes + value_bytes)),
                      "sorting the " + std::to_string(in.keys.count) + " keys of --in '" + flags.in + "'");
  StagedOutputs::check_destination(flags.out, key_bytes, "--out");
  if (in.with_values) StagedOutputs::check_destination(flags.values_out, value_bytes, "--values-out");
  return in;
}

// `mpirun -np R radixmesh sort`: rank r reads elements [n r / R, n (r + 1) / R) of the inputs with
// positioned reads, the ranks sort together (Context::mpi: each keeps its count, so the slices stay
// where they are), and each writes its slice into one temporary file per output, which rank 0
// publishes only after every rank has written and flushed its slice. A failure on any rank at any
// step stops every rank at that step, and no output remains.
void run_sort_ranks(const SortFlags& flags) {
  const int rank = mpi_rank(), ranks = mpi_size();
  require(flags.devices.empty(), "--devices with mpirun", "drop --devices: each rank takes its own GPU (or the CPU)");
  SortInputs in;
  on_every_rank("checking the flags and the inputs", [&] {
    in = check_sort(flags, 1.0 / ranks);
    require(in.row_length == 0,
            "--in '" + flags.in + "' has " + std::to_string(in.shape.size()) +
                " dimensions: under mpirun the ranks sort one array",
            "pass --flatten to sort all its values as one array, or sort its rows without mpirun");
  });
  const std::size_t n = in.keys.count;
  const std::size_t first = n * std::size_t(rank) / std::size_t(ranks);
  const std::size_t count = n * std::size_t(rank + 1) / std::size_t(ranks) - first;
  std::optional<Context> ctx;
  on_every_rank("joining the mesh", [&] { ctx = mpi_world_context(parse_backend(flags.backend)); });

  ProgressLine progress(flags.output.progress, rank == 0);
  auto start = std::chrono::steady_clock::now();
  progress.phase("reading " + flags.in);
  HostArray keys, values;
  on_every_rank("reading its slice of the inputs", [&] {
    keys = read_array_slice(flags.in, in.keys.type, first, count);
    if (in.with_values) values = read_array_slice(flags.values, in.values->type, first, count);
  });
  const double read_s = seconds_since(start);

  progress.phase("sorting " + std::to_string(n) + " " + std::string(name_of(keys.type())) + " keys on " +
                 std::to_string(ranks) + " ranks");
  SortPhases phases;
  in.options.phases = &phases;
  // This rank's own out-of-core rounds (rank 0 prints).
  in.options.progress = [&](const SortProgress& p) { progress.detail(out_of_core_detail(p)); };
  start = std::chrono::steady_clock::now();
  detail::sort_host(*ctx, keys.type(), keys.data(), count, in.with_values ? values.data() : nullptr,
                    in.with_values ? size_of(values.type()) : 0, in.options);  // collective: fails on every rank
  const double sort_s = seconds_since(start);

  progress.phase("writing " + flags.out);
  start = std::chrono::steady_clock::now();
  std::optional<SharedArrayFile> keys_out, values_out;
  on_every_rank("creating the outputs", [&] {
    if (rank != 0) return;
    keys_out = SharedArrayFile::create(flags.out, keys.type(), n);
    if (in.with_values) values_out = SharedArrayFile::create(flags.values_out, values.type(), n);
  });
  const std::string keys_temporary = broadcast_from_rank0(rank == 0 ? keys_out->temporary_path().string() : "");
  const std::string values_temporary =
      broadcast_from_rank0(rank == 0 && values_out ? values_out->temporary_path().string() : "");
  on_every_rank("writing its slice of the outputs", [&] {
    if (rank != 0) {
      keys_out = SharedArrayFile::join(keys_temporary, flags.out, keys.type(), n);
      if (in.with_values) values_out = SharedArrayFile::join(values_temporary, flags.values_out, values.type(), n);
    }
    keys_out->write_at(first, keys.data(), count);
    keys_out->finish();
    if (values_out) {
      values_out->write_at(first, values.data(), count);
      values_out->finish();
    }
  });
  on_every_rank("publishing the outputs", [&] {
    if (rank != 0) return;
    keys_out->publish();
    if (values_out) values_out->publish();
  });
  progress.finish();
  const double write_s = seconds_since(start);
  if (rank != 0) return;
  const double mkeys_per_s = sort_s > 0 ? double(n) / sort_s / 1e6 : 0.0;
  const std::string order = in.options.order == Order::ascending ? "ascending" : "descending";
  if (flags.output.json) {
    print_json({{"command", "sort"},
                {"in", flags.in},
                {"out", flags.out},
                {"n", n},
                {"type", name_of(keys.type())},
                {"order", order},
                {"ranks", ranks},
                {"backend", name_of(ctx->mesh_backend(0))},
                {"seconds", {{"read", read_s}, {"sort", sort_s}, {"write", write_s}}},
                {"mkeys_per_s", mkeys_per_s},
                {"mesh", mesh_json(phases)}});
  } else {
    std::printf("sorted %zu %s keys %s on %d ranks (%s) in %.3f s (%.1f Mkeys/s); read %.3f s, write %.3f s\n", n,
                std::string(name_of(keys.type())).c_str(), order.c_str(), ranks,
                std::string(name_of(ctx->mesh_backend(0))).c_str(), sort_s, mkeys_per_s, read_s, write_s);
    if (flags.explain) print_mesh_steps(phases);
  }
}

void run_sort(const SortFlags& flags) {
  if (launched_by_mpi()) return run_sort_ranks(flags);
  // ---- check everything before reading or writing anything
  const SortInputs in = check_sort(flags, 1.0);
  const ArrayFileInfo& keys_info = in.keys;
  const bool with_values = in.with_values;
  const std::optional<ArrayFileInfo>& values_info = in.values;
  SortOptions options = in.options;
  Context ctx = make_mesh_context(flags.backend, flags.devices);
  require(in.row_length == 0 || ctx.mesh_size() == 1,
          "--in '" + flags.in + "' has " + std::to_string(in.shape.size()) + " dimensions, and its rows are sorted on one "
          "device; --devices gives " + std::to_string(ctx.mesh_size()),
          "drop --devices (or name one), or pass --flatten to sort all its values as one array over the devices");

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
  SortPhases phases;  // several mesh devices, or out of core: the plan and the time of each step
  options.phases = &phases;
  options.progress = [&](const SortProgress& p) { progress.detail(out_of_core_detail(p)); };
  start = std::chrono::steady_clock::now();
  if (in.row_length)  // every row along the last axis on its own
    detail::sort_rows_host(ctx, keys.type(), keys.data(), n, in.row_length, with_values ? values.data() : nullptr,
                           with_values ? size_of(values.type()) : 0, options);
  else
    detail::sort_host(ctx, keys.type(), keys.data(), n, with_values ? values.data() : nullptr,
                      with_values ? size_of(values.type()) : 0, options);
  const double sort_s = seconds_since(start);
  const bool mesh = ctx.mesh_size() > 1 || phases.out_of_core;
  const bool one_gpu = !mesh && !in.row_length && ctx.backend() == Backend::cuda;  // phases has its steps

  progress.phase("writing " + flags.out);
  start = std::chrono::steady_clock::now();
  StagedOutputs outputs;
  outputs.write(flags.out, keys.type(), keys.data(), n, in.shape);
  if (with_values) outputs.write(flags.values_out, values.type(), values.data(), n, in.shape);
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
                {"row_length", in.row_length ? nlohmann::json(in.row_length) : nlohmann::json(nullptr)},
                {"order", order},
                {"backend", name_of(ctx.backend())},
                {"devices", device_ids},
                {"cpu_fallback_reason", ctx.cpu_fallback_reason()},
                {"seconds", {{"read", read_s}, {"sort", sort_s}, {"write", write_s}}},
                {"mkeys_per_s", mkeys_per_s},
                {"mesh", mesh ? mesh_json(phases) : nlohmann::json(nullptr)},
                {"gpu_steps_ms", one_gpu ? gpu_steps_json(phases) : nlohmann::json(nullptr)}});
  } else {
    std::string what = std::to_string(n) + " " + std::string(name_of(keys.type())) + " keys";
    if (in.row_length) what += " in rows of " + std::to_string(in.row_length);
    if (with_values) what += " with " + std::string(name_of(values.type())) + " values";
    std::printf("sorted %s %s on %s in %.3f s (%.1f Mkeys/s); read %.3f s, write %.3f s\n", what.c_str(),
                order.c_str(), describe_backend(ctx).c_str(), sort_s, mkeys_per_s, read_s, write_s);
    if (flags.explain && mesh) print_mesh_steps(phases);
    if (flags.explain && one_gpu) print_gpu_steps(phases);
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
  cmd->add_option("--devices", flags->devices,
                  "CUDA device ids, e.g. 0,1 (default: all visible); several sort together, a repeated id gives "
                  "logical devices of one GPU (0,0,0,0), and cpu:N is N CPU devices");
  cmd->add_flag("--explain", flags->explain,
                "Print each step's time; on several devices also the partition plan of every pass and the keys "
                "that moved");
  cmd->add_flag("--flatten", flags->flatten,
                "Sort an n-d .npy as one array (written 1-D); without it each row along the last axis is sorted on "
                "its own, as numpy.sort does, and the output keeps the shape");
  cmd->add_option("--digit-bits", flags->digit_bits, "On several devices: bits per partition digit (0: automatic)")
      ->capture_default_str();
  cmd->add_option("--strategy", flags->strategy,
                  "On several devices: auto, partition (RMG: split by the top digits, exchange, sort what arrived) "
                  "or merge (each device sorts its own shard, then merges its share from all of them; devices of "
                  "one process that reach each other's memory)")
      ->capture_default_str();
  cmd->add_option("--out-of-core", flags->out_of_core,
                  "auto (in rounds through the devices when the input does not fit them, with one extra host "
                  "array), always, or never")
      ->capture_default_str();
  cmd->add_option("--device-memory", flags->device_memory,
                  "Device memory each device may use, e.g. 8G (default: what is free); less sends a large input "
                  "out of core");
  cmd->add_option("--host-memory", flags->host_memory,
                  "Host memory the out-of-core sort's second array may take, e.g. 16G (default: what is available); "
                  "a sort that needs more is refused before anything is written");
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_sort(*flags); }}};
}

}  // namespace radixmesh::cli
