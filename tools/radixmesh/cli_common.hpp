// What every `radixmesh` command shares: the command registry, flag parsing (--type, --backend,
// --devices, --n, ...), the exit-code mapping, output files written all-or-nothing, and --json.
#pragma once
#include <cstddef>
#include <filesystem>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/io.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::cli {

// ---- registry: a command is one file with one function that adds its subcommand.

// How the process was started (the benchmark records the command line with its results).
struct Invocation {
  int argc = 0;
  char** argv = nullptr;
};

// A registered subcommand and what to run when the command line chose it. `run` throws
// rxm::Error on bad input; main() turns that into one stderr line and an exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<void()> run;
};
using CommandRegistrar = std::vector<Command> (*)(CLI::App& root, const Invocation& invocation);

// Flags every command has: --json (machine-readable result on stdout) and --progress.
struct OutputFlags {
  bool json = false;
  bool progress = false;  // force the progress line even when stderr is not a terminal
};
void add_output_flags(CLI::App& command, OutputFlags& flags);
void print_json(const nlohmann::json& result);  // one line on stdout

// ---- exit codes (docs/cli.md): 0 ok, then rxm::ErrorCode's values.
enum ExitCode : int {
  exit_ok = 0,
  exit_usage = 1,
  exit_io = 2,
  exit_out_of_memory = 3,
  exit_unsupported = 4,
  exit_device = 5,
  exit_internal = 6,
};
int exit_code_of(ErrorCode code);
extern const char* const exit_codes_footer;  // the --help footer

// ---- flag values: each throws rxm::Error naming the flag and the accepted values.

KeyType parse_key_type(const std::string& name, const std::string& flag = "--type");
Backend parse_backend(const std::string& name);
Order parse_order(const std::string& name);
Distribution parse_distribution(const std::string& name);
// "0,1,3" -> {0, 1, 3}; "" -> {} (every visible device).
std::vector<int> parse_device_list(const std::string& text);
// "cpu:N" (N CPU mesh devices in this process): N; anything else: nullopt.
std::optional<unsigned> parse_cpu_mesh(const std::string& devices_text);
// make_context, or Context::cpu_mesh(N) for --devices cpu:N (the mesh commands: sort, shuffle).
Context make_mesh_context(const std::string& backend_name, const std::string& devices_text);
// The Context for --backend and --devices. Asking for devices on a machine without a usable
// GPU says that CUDA is unavailable and why, naming --devices.
Context make_context(const std::string& backend, const std::string& devices);
// Counts as people write them: 100000000, 1e8, 2^28, 100M, 1.5G, 256Mi (K/M/G/T powers of ten,
// Ki/Mi/Gi/Ti powers of two).
std::size_t parse_count(const std::string& text, const std::string& flag = "--n");

// "1.50 GiB", for messages.
std::string format_bytes(std::size_t bytes);

// ---- files

// Fails (ErrorCode::io) unless `path` is an existing regular file this process can read.
void require_readable_file(const std::filesystem::path& path, const std::string& flag);

// ---- values carried with the keys (sort, multisplit): --values, --values-out, --values-type.
void add_values_flags(CLI::App& command, std::string& values, std::string& values_out, std::string& values_type);
// The values file's element type and count, validated against the keys (`keys_path`, `key_count`)
// before anything is read: one 4- or 8-byte value per key. A raw file without --values-type takes
// its width from its size. `purpose` names the command in the message ("sort", "multisplit").
// The keys file --in of a command, checked before anything is read: readable, and a .npy or a raw
// file with --type (`type`, when given).
ArrayFileInfo inspect_keys_input(const std::string& in, std::optional<KeyType> type);
ArrayFileInfo inspect_values(const std::string& values_path, const std::string& values_type,
                             const std::string& keys_path, std::size_t key_count, const std::string& purpose);

// Output files that appear together or not at all. Each array is written in full and flushed by
// an rxm::ArrayFileWriter (an unnamed file until published: radixmesh/io.hpp); commit() then puts
// them all in place. Destroying an uncommitted set removes them, so an error on any path leaves
// neither outputs nor temporaries behind.
class StagedOutputs {
 public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  // Checks up front (before any expensive work) that the target's directory exists and is
  // writable, and has room for `bytes`; call once per output, then write() later.
  static void check_destination(const std::filesystem::path& target, std::size_t bytes, const std::string& flag);

  void write(const std::filesystem::path& target, KeyType type, const void* data, std::size_t count,
             const std::vector<std::size_t>& shape = {});  // shape: of a .npy target (default {count})
  void commit();

 private:
  std::vector<ArrayFileWriter> staged_;
};

// ---- progress: a "\r"-updated line on stderr for phases (reading, sorting, writing) that run
// longer than ~2 s, so short runs and pipelines stay quiet.
class ProgressLine {
 public:
  // Shown when `forced` (--progress) or when stderr is a terminal, and never where `shown` is
  // false (the ranks of an MPI job other than 0, whose terminals are often rank 0's).
  explicit ProgressLine(bool forced, bool shown = true);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  void phase(const std::string& what);  // ends the previous phase, starts timing this one
  void finish();                        // ends the current phase
  void detail(const std::string& what);  // shown after the phase's name, e.g. how far it is

 private:
  void tick_until_stopped();
  void end_phase_locked();

  bool enabled_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string what_;  // empty: no phase running
  std::string detail_;
  std::chrono::steady_clock::time_point started_;
  bool shown_ = false;  // this phase has printed its line
  long shown_second_ = -1;
  bool stopping_ = false;
  std::thread ticker_;
};

// Seconds on the steady clock since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace radixmesh::cli
