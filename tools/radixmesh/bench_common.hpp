// What every `radixmesh bench <primitive>` shares: the input, repetition, backend and result-file
// flags, the choice of backend for --backend auto, and the report (one summary line, or one JSON
// object with --json) that ends with exit code 6 when ours failed verification.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "harness/harness.hpp"

namespace radixmesh::cli {

struct BenchFlags {
  std::string n = "100M";
  std::string type = "u32";
  std::string distribution = "uniform";
  double zipf_s = 1.0;
  int warmup = 1;
  int reps = 5;
  std::uint64_t seed = 42;
  std::string backend = "auto";
  std::string devices;
  unsigned threads = 0;
  bool no_results = false;
  bool no_verify = false;
  std::string results_file;
  OutputFlags output;
};

// Adds --n --type --dist --zipf-s --warmup --reps --seed --backend --devices --threads
// --no-results --results-file --no-verify --json --progress. `verified_against` completes the
// --no-verify help ("Skip checking our output against <...>").
void add_bench_flags(CLI::App& command, BenchFlags& flags, const std::string& verified_against);
// --reps/--warmup in range, --devices only with a CUDA backend; throws rxm::Error naming the flag.
void check_bench_flags(const BenchFlags& flags, Backend backend);

// Copies the repetition, verification and result-file flags into a benchmark's options (every
// benchmark's options struct has these fields); `default_results_file` when --results-file is unset.
template <class Options>
void apply_run_flags(Options& options, const BenchFlags& flags, const char* default_results_file) {
  options.warmup = flags.warmup;
  options.reps = flags.reps;
  options.verify = !flags.no_verify;
  options.write_results = !flags.no_results;
  options.results_file = flags.results_file.empty() ? default_results_file : flags.results_file;
  options.quiet = flags.output.json;
}

// --values of `bench sort` and `bench multisplit`: 0 (keys only), 4 or 8 bytes; else rxm::Error.
std::size_t parse_value_width(int value_bytes);

// The context a benchmark runs on (the CUDA devices of --devices, or the CPU with --threads) and
// the name of the device that runs ours ("" for the CPU: the harness records the CPU model).
struct BenchTarget {
  Context ctx;
  std::string device;
};
BenchTarget make_bench_target(Backend backend, const BenchFlags& flags);

// --backend auto: CUDA when a GPU is visible and this binary has the CUDA half of `benchmark`
// (a note on stderr otherwise), else the CPU.
Backend choose_bench_backend(const std::string& asked, bool cuda_built, const std::string& benchmark);

// What a benchmark hands back to be reported.
struct BenchOutcome {
  bool verified = false;
  std::string verified_how;  // what ours was checked against, said in the summary
  std::string device;        // what ran ours: CPU model or GPU name
  double ours_median_ms = 0;
  std::string best_peer;
  double best_peer_median_ms = 0;
  double speedup_over_best_peer = 0;  // > 1: ours faster
  double floor_ms = 0;
  std::vector<nlohmann::json> entries;  // the harness's JSON lines
};

// The outcome of a measured case: ours, the best peer, the ratio, the floor and the JSON lines.
// `verified`, `verified_how` and `device` are left for the benchmark to fill.
BenchOutcome outcome_of(const bench::Case& measured, double floor_ms);

// Prints the summary line (or, with --json, one object: `parameters` plus the outcome), then
// throws ErrorCode::internal when verification was asked for and failed. `items` and `unit`
// ("keys", "values") give the throughput.
void report_bench(const std::string& command, Backend backend, const BenchFlags& flags, const BenchOutcome& outcome,
                  double items, const std::string& unit, nlohmann::json parameters);

}  // namespace radixmesh::cli
