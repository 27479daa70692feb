// radixmesh bench sort: the README's main command. Runs the sort benchmark (bench/sort_benchmark.hpp)
// on the CPU or CUDA backend: ours and the peers on identical inputs, ours verified element by
// element, the table printed, JSON lines appended under bench/results/.
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"

#if RXM_CLI_HAS_BENCH
#include "radixmesh/keys.hpp"  // Order, used by sort_benchmark.hpp
#include "sort_benchmark.hpp"
#endif

// rxm_bench_sort defines RXM_BENCH_HAS_CUDA_SORT when it holds run_cuda_sort_benchmark.
#if RXM_CLI_HAS_CPU_SORT_BENCH && defined(RXM_BENCH_HAS_CUDA_SORT) && RXM_BENCH_HAS_CUDA_SORT
#define RXM_CLI_HAS_CUDA_SORT_BENCH 1
#else
#define RXM_CLI_HAS_CUDA_SORT_BENCH 0
#endif

namespace radixmesh::cli {

namespace {

struct BenchSortFlags {
  std::string n = "100M";
  std::string type = "u32";
  std::string distribution = "uniform";
  double zipf_s = 1.0;
  int value_bytes = 0;
  std::string order = "asc";
  int warmup = 1;
  int reps = 5;
  std::uint64_t seed = 42;
  std::string backend = "auto";
  std::string devices;
  unsigned threads = 0;
  bool no_results = false;
  bool no_verify = false;
  std::string results_file = "sort.jsonl";
  OutputFlags output;
};

#if RXM_CLI_HAS_BENCH

// Built when bench/ provides them; see tools/radixmesh/CMakeLists.txt.
constexpr bool cuda_sort_bench_built = RXM_CLI_HAS_CUDA_SORT_BENCH != 0;

// auto: CUDA when a GPU is visible (and the CUDA benchmark is built), else the CPU.
Backend choose_backend(Backend asked) {
  if (asked != Backend::automatic) return asked;
  CudaDiscovery cuda = discover_cuda();
  if (cuda.topology.devices.empty()) return Backend::cpu;
  if (!cuda_sort_bench_built) {
    std::fprintf(stderr, "radixmesh: note: a GPU is visible but this radixmesh has no CUDA sort benchmark; "
                         "benchmarking the CPU backend\n");
    return Backend::cpu;
  }
  return Backend::cuda;
}

bench::SortBenchResult run_on_cpu(const bench::SortBenchOptions& options, const BenchSortFlags& flags,
                                  const Invocation& invocation) {
  require(flags.devices.empty(), "--devices was given with the CPU backend", "drop --devices, or use --backend cuda");
#if RXM_CLI_HAS_CPU_SORT_BENCH
  unsigned threads = Context::cpu(flags.threads).cpu_threads();
  return bench::run_cpu_sort_benchmark(options, bench::run_info(invocation.argc, invocation.argv, ""), threads);
#else
  (void)options, (void)invocation;
  throw_error(ErrorCode::unsupported, "the CPU sort benchmark is not built into this radixmesh",
              "build the rxm_bench_sort target (configure with -DRXM_BUILD_BENCH=ON)");
#endif
}

bench::SortBenchResult run_on_cuda(const bench::SortBenchOptions& options, const BenchSortFlags& flags,
                                   const Invocation& invocation) {
  Context ctx = make_context("cuda", flags.devices);
#if RXM_CLI_HAS_CUDA_SORT_BENCH
  return bench::run_cuda_sort_benchmark(options, bench::run_info(invocation.argc, invocation.argv, ctx.devices()[0].name),
                                        ctx);
#else
  (void)options, (void)invocation, (void)ctx;
  throw_error(ErrorCode::unsupported, "this radixmesh has no CUDA sort benchmark (built without CUDA or without rxm_bench_sort)",
              "rebuild with -DRXM_ENABLE_CUDA=ON -DRXM_BUILD_BENCH=ON, or use --backend cpu");
#endif
}

void print_summary(const bench::SortBenchResult& r, std::size_t n) {
  const double ours_mkeys = r.ours_median_ms > 0 ? double(n) / (r.ours_median_ms * 1e3) : 0.0;
  std::printf("result: %s; radixmesh on %s: median %.3f ms (%.1f Mkeys/s)", r.verified ? "verified" : "NOT verified",
              r.device.c_str(), r.ours_median_ms, ours_mkeys);
  if (!r.best_peer.empty()) {
    std::printf("; best peer %s: %.3f ms; ", r.best_peer.c_str(), r.best_peer_median_ms);
    const double s = r.speedup_over_best_peer;
    // Within 1% is noise between medians, not a win or a loss.
    if (s > 1.01) std::printf("radixmesh is %.2fx faster", s);
    else if (s > 0 && s < 0.99) std::printf("radixmesh is %.2fx slower", 1.0 / s);
    else std::printf("radixmesh is on par (%.3fx)", s);
  }
  std::printf("\n");
}

void run_bench_sort(const BenchSortFlags& flags, const Invocation& invocation) {
  bench::SortBenchOptions options;
  options.n = parse_count(flags.n);
  options.type = parse_key_type(flags.type);
  options.distribution = parse_distribution(flags.distribution);
  options.zipf_s = flags.zipf_s;
  require(flags.value_bytes == 0 || flags.value_bytes == 4 || flags.value_bytes == 8,
          "--values " + std::to_string(flags.value_bytes) + " is not a value width", "use 0 (keys only), 4 or 8");
  options.value_bytes = std::size_t(flags.value_bytes);
  options.order = parse_order(flags.order);
  require(flags.reps >= 1 && flags.warmup >= 0, "--reps must be at least 1 and --warmup at least 0",
          "e.g. --reps 5 --warmup 1");
  options.warmup = flags.warmup;
  options.reps = flags.reps;
  options.seed = flags.seed;
  options.verify = !flags.no_verify;
  options.write_results = !flags.no_results;
  options.results_file = flags.results_file;
  options.quiet = flags.output.json;

  // The input, a working copy for each run and the verification reference, plus scratch.
  const std::size_t bytes = options.n * (size_of(options.type) + options.value_bytes);
  require_host_memory(4 * bytes, "bench sort --n " + flags.n);

  const Backend backend = choose_backend(parse_backend(flags.backend));
  ProgressLine progress(flags.output.progress);
  progress.phase("benchmarking sort of " + std::to_string(options.n) + " " + std::string(name_of(options.type)) +
                 " keys on " + name_of(backend));
  bench::SortBenchResult result = backend == Backend::cuda ? run_on_cuda(options, flags, invocation)
                                                           : run_on_cpu(options, flags, invocation);
  progress.finish();

  if (flags.output.json) {
    print_json({{"command", "bench sort"},
                {"backend", name_of(backend)},
                {"verified", result.verified},
                {"device", result.device},
                {"n", options.n},
                {"type", name_of(options.type)},
                {"distribution", name_of(options.distribution)},
                {"value_bytes", options.value_bytes},
                {"ours_median_ms", result.ours_median_ms},
                {"best_peer", result.best_peer},
                {"best_peer_median_ms", result.best_peer_median_ms},
                {"speedup_over_best_peer", result.speedup_over_best_peer},
                {"entries", result.table.json_lines()}});
  } else {
    print_summary(result, options.n);
  }
  if (options.verify && !result.verified)
    throw_error(ErrorCode::internal, "radixmesh's sort gave a wrong result in the benchmark",
                "this is a bug in radixmesh; please report it with the command line");
}

#else  // !RXM_CLI_HAS_BENCH

void run_bench_sort(const BenchSortFlags&, const Invocation&) {
  throw_error(ErrorCode::unsupported, "this radixmesh was built without the benchmarks",
              "configure with -DRXM_BUILD_BENCH=ON and rebuild");
}

#endif

}  // namespace

std::vector<Command> register_bench(CLI::App& root, const Invocation& invocation) {
  CLI::App* bench = root.add_subcommand("bench", "Benchmark radixmesh against the peers, verified, on this machine");
  bench->require_subcommand(1);

  auto flags = std::make_shared<BenchSortFlags>();
  CLI::App* sort = bench->add_subcommand(
      "sort", "Sort benchmark: radixmesh vs the peers on the same input (CPU: std::sort, boost spreadsort and "
              "block_indirect_sort; CUDA: CUB DeviceRadixSort, torch.sort)");
  sort->add_option("--n", flags->n, "Keys: 100000000, 1e8, 2^28, 100M, 256Mi")->capture_default_str();
  sort->add_option("--type", flags->type, "Key type: u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64")
      ->capture_default_str();
  sort->add_option("--dist", flags->distribution, "Input distribution (see 'radixmesh generate --help')")
      ->capture_default_str();
  sort->add_option("--zipf-s", flags->zipf_s, "Zipf exponent s (--dist zipf)")->capture_default_str();
  sort->add_option("--values", flags->value_bytes, "Value bytes per key: 0 (keys only), 4 or 8")->capture_default_str();
  sort->add_option("--order", flags->order, "asc or desc")->capture_default_str();
  sort->add_option("--warmup", flags->warmup, "Untimed runs first")->capture_default_str();
  sort->add_option("--reps", flags->reps, "Timed runs (the median is reported)")->capture_default_str();
  sort->add_option("--seed", flags->seed, "Input seed")->capture_default_str();
  sort->add_option("--backend", flags->backend, "auto (CUDA if a GPU is visible, else CPU), cpu or cuda")
      ->capture_default_str();
  sort->add_option("--devices", flags->devices, "CUDA device ids (CUDA backend)");
  sort->add_option("--threads", flags->threads, "CPU backend threads (0: all)")->capture_default_str();
  sort->add_flag("--no-results", flags->no_results, "Do not append JSON lines under bench/results/");
  sort->add_option("--results-file", flags->results_file, "File under bench/results/ (or $RXM_RESULTS_DIR)")
      ->capture_default_str();
  sort->add_flag("--no-verify", flags->no_verify, "Skip checking our output against std::stable_sort");
  add_output_flags(*sort, flags->output);
  return {{sort, [flags, invocation] { run_bench_sort(*flags, invocation); }}};
}

}  // namespace radixmesh::cli
