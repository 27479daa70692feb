#include "bench_common.hpp"

#include <cstdio>
#include <utility>

namespace radixmesh::cli {

void add_bench_flags(CLI::App& command, BenchFlags& flags, const std::string& verified_against) {
  command.add_option("--n", flags.n, "Elements: 100000000, 1e8, 2^28, 100M, 256Mi")->capture_default_str();
  command.add_option("--type", flags.type, "Element type: u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64")
      ->capture_default_str();
  command.add_option("--dist", flags.distribution, "Input distribution (see 'radixmesh generate --help')")
      ->capture_default_str();
  command.add_option("--zipf-s", flags.zipf_s, "Zipf exponent s (--dist zipf)")->capture_default_str();
  command.add_option("--warmup", flags.warmup, "Untimed runs first")->capture_default_str();
  command.add_option("--reps", flags.reps, "Timed runs (the median is reported)")->capture_default_str();
  command.add_option("--seed", flags.seed, "Input seed")->capture_default_str();
  command.add_option("--backend", flags.backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
      ->capture_default_str();
  command.add_option("--devices", flags.devices, "CUDA device ids (CUDA backend; the first one runs)");
  command.add_option("--threads", flags.threads, "CPU backend threads (0: all)")->capture_default_str();
  command.add_flag("--no-results", flags.no_results, "Do not append JSON lines under bench/results/");
  command.add_option("--results-file", flags.results_file, "File under bench/results/ (or $RXM_RESULTS_DIR)")
      ->capture_default_str();
  command.add_flag("--no-verify", flags.no_verify, "Skip checking our output against " + verified_against);
  add_output_flags(command, flags.output);
}

void check_bench_flags(const BenchFlags& flags, Backend backend) {
  require(flags.reps >= 1 && flags.warmup >= 0, "--reps must be at least 1 and --warmup at least 0",
          "e.g. --reps 5 --warmup 1");
  require(flags.devices.empty() || backend == Backend::cuda, "--devices was given with the CPU backend",
          "drop --devices, or use --backend cuda");
}

std::size_t parse_value_width(int value_bytes) {
  require(value_bytes == 0 || value_bytes == 4 || value_bytes == 8,
          "--values " + std::to_string(value_bytes) + " is not a value width", "use 0 (keys only), 4 or 8");
  return std::size_t(value_bytes);
}

BenchTarget make_bench_target(Backend backend, const BenchFlags& flags) {
  if (backend != Backend::cuda) return {Context::cpu(flags.threads), ""};
  Context ctx = make_context("cuda", flags.devices);
  std::string device = ctx.devices().front().name;
  return {std::move(ctx), std::move(device)};
}

Backend choose_bench_backend(const std::string& asked_name, bool cuda_built, const std::string& benchmark) {
  const Backend asked = parse_backend(asked_name);
  if (asked != Backend::automatic) return asked;
  CudaDiscovery cuda = discover_cuda();
  if (cuda.topology.devices.empty()) return Backend::cpu;
  if (!cuda_built) {
    std::fprintf(stderr, "radixmesh: note: a GPU is visible but this radixmesh has no CUDA %s benchmark; "
                         "benchmarking the CPU backend\n", benchmark.c_str());
    return Backend::cpu;
  }
  return Backend::cuda;
}

BenchOutcome outcome_of(const bench::Case& c, double floor_ms) {
  BenchOutcome r;
  r.best_peer = c.best_peer();
  r.speedup_over_best_peer = c.speedup_over_best_peer();
  r.floor_ms = floor_ms;
  for (const auto& e : c.entries()) {
    if (e.ours) r.ours_median_ms = e.stats.median_ms;
    else if (e.implementation == r.best_peer) r.best_peer_median_ms = e.stats.median_ms;
  }
  r.entries = c.json_lines();
  return r;
}

void report_bench(const std::string& command, Backend backend, const BenchFlags& flags, const BenchOutcome& r,
                  double items, const std::string& unit, nlohmann::json parameters) {
  const bool verify = !flags.no_verify;
  if (flags.output.json) {
    parameters["command"] = command;
    parameters["backend"] = name_of(backend);
    parameters["verified"] = r.verified;
    parameters["verified_against"] = verify ? r.verified_how : "not checked (--no-verify)";
    parameters["device"] = r.device;
    parameters["ours_median_ms"] = r.ours_median_ms;
    parameters["best_peer"] = r.best_peer;
    parameters["best_peer_median_ms"] = r.best_peer_median_ms;
    parameters["speedup_over_best_peer"] = r.speedup_over_best_peer;
    parameters["floor_ms"] = r.floor_ms;
    parameters["entries"] = r.entries;
    print_json(parameters);
  } else {
    const double rate = r.ours_median_ms > 0 ? items / (r.ours_median_ms * 1e3) : 0.0;
    std::printf("result: %s; radixmesh on %s: median %.3f ms (%.1f M%s/s)",
                verify ? (r.verified ? ("verified against " + r.verified_how).c_str() : "NOT verified")
                       : "not verified (--no-verify)",
                r.device.c_str(), r.ours_median_ms, rate, unit.c_str());
    if (!r.best_peer.empty()) {
      std::printf("; best peer %s: %.3f ms; ", r.best_peer.c_str(), r.best_peer_median_ms);
      const double s = r.speedup_over_best_peer;
      // Within 1% is noise between medians, not a win or a loss.
      if (s > 1.01) std::printf("radixmesh is %.2fx faster", s);
      else if (s > 0 && s < 0.99) std::printf("radixmesh is %.2fx slower", 1.0 / s);
      else std::printf("radixmesh is on par (%.3fx)", s);
    }
    if (r.floor_ms > 0) std::printf("; floor %.3f ms", r.floor_ms);
    std::printf("\n");
  }
  if (verify && !r.verified)
    throw_error(ErrorCode::internal, "radixmesh's " + command.substr(command.find(' ') + 1) +
                                         " gave a wrong result in the benchmark",
                "this is a bug in radixmesh; please report it with the command line");
}

}  // namespace radixmesh::cli
