// radixmesh bench sort | topk | multisplit: the verified benchmarks, ours beside the peers measured in the same
// run on the same input. The flags, the backend choice and the report are shared (bench_common);
// each subcommand adds its own flags and calls its benchmark:
//   sort: bench/sort_benchmark.hpp (CPU: std::sort, boost; CUDA: CUB, torch.sort)
//   topk: bench_topk.hpp (CPU: std::nth_element, std::partial_sort; CUDA: torch.topk, sort-then-take)
//   multisplit: bench_multisplit.hpp (CPU: counting sort, RB-sort; CUDA: sort on the digit's bits)
// exchange and shuffle (the mesh, GPUs only) take their drivers' flags and run
// bench/mesh_benchmarks.hpp: all_to_all_v vs NCCL and the naive copy exchange; the shuffle vs its
// multisplit and all_to_all_v alone.
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"

#if RXM_CLI_HAS_BENCH
#include "bench_common.hpp"
#include "bench_multisplit.hpp"
#include "bench_topk.hpp"
#include "radixmesh/keys.hpp"  // Order, used by sort_benchmark.hpp
#include "sort_benchmark.hpp"
#endif
#if defined(RXM_BENCH_HAS_MESH) && RXM_BENCH_HAS_MESH
#include <string>
#include <vector>

#include "mesh_benchmarks.hpp"
#define RXM_CLI_HAS_MESH_BENCH 1
#else
#define RXM_CLI_HAS_MESH_BENCH 0
#endif

// rxm_bench_sort defines RXM_BENCH_HAS_CUDA_SORT when it holds run_cuda_sort_benchmark.
#if RXM_CLI_HAS_CPU_SORT_BENCH && defined(RXM_BENCH_HAS_CUDA_SORT) && RXM_BENCH_HAS_CUDA_SORT
#define RXM_CLI_HAS_CUDA_SORT_BENCH 1
#else
#define RXM_CLI_HAS_CUDA_SORT_BENCH 0
#endif

namespace radixmesh::cli {

namespace {

#if RXM_CLI_HAS_BENCH

struct BenchSortFlags {
  BenchFlags common;
  int value_bytes = 0;
  std::string order = "asc";
  double special_fraction = 0;
};

struct BenchTopkFlags {
  BenchFlags common;
  std::string k = "1024";
  std::string rows = "1";
  bool smallest = false, sorted = false, include_nan = false;
  double lo = 0.0, hi = 1.0;
};

struct BenchMultisplitFlags {
  BenchFlags common;
  std::string buckets = "radix:24:8";
  int value_bytes = 0;
};

bench::SortBenchResult run_sort_on_cpu(const bench::SortBenchOptions& options, const BenchFlags& flags,
                                       const Invocation& invocation) {
#if RXM_CLI_HAS_CPU_SORT_BENCH
  unsigned threads = Context::cpu(flags.threads).cpu_threads();
  return bench::run_cpu_sort_benchmark(options, bench::run_info(invocation.argc, invocation.argv, ""), threads);
#else
  (void)options, (void)flags, (void)invocation;
  throw_error(ErrorCode::unsupported, "the CPU sort benchmark is not built into this radixmesh",
              "build the rxm_bench_sort target (configure with -DRXM_BUILD_BENCH=ON)");
#endif
}

bench::SortBenchResult run_sort_on_cuda(const bench::SortBenchOptions& options, const BenchFlags& flags,
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

void run_bench_sort(const BenchSortFlags& flags, const Invocation& invocation) {
  const BenchFlags& common = flags.common;
  bench::SortBenchOptions options;
  options.n = parse_count(common.n);
  options.type = parse_key_type(common.type);
  options.distribution = parse_distribution(common.distribution);
  options.zipf_s = common.zipf_s;
  options.value_bytes = parse_value_width(flags.value_bytes);
  options.order = parse_order(flags.order);
  require(flags.special_fraction >= 0 && flags.special_fraction <= 1 &&
              (flags.special_fraction == 0 || is_floating(options.type)),
          "--special-fraction " + std::to_string(flags.special_fraction) + " with " + std::string(name_of(options.type)) +
              " keys",
          "use a fraction in [0, 1], with a floating-point --type (f16, bf16, f32, f64)");
  options.special_fraction = flags.special_fraction;
  const Backend backend = choose_bench_backend(common.backend, RXM_CLI_HAS_CUDA_SORT_BENCH != 0, "sort");
  check_bench_flags(common, backend);
  options.seed = common.seed;
  apply_run_flags(options, common, "sort.jsonl");

  // The input, a working copy for each run and the verification reference, plus scratch.
  const std::size_t bytes = options.n * (size_of(options.type) + options.value_bytes);
  require_host_memory(4 * bytes, "bench sort --n " + common.n);

  ProgressLine progress(common.output.progress);
  progress.phase("benchmarking sort of " + std::to_string(options.n) + " " + std::string(name_of(options.type)) +
                 " keys on " + name_of(backend));
  bench::SortBenchResult result = backend == Backend::cuda ? run_sort_on_cuda(options, common, invocation)
                                                           : run_sort_on_cpu(options, common, invocation);
  progress.finish();

  BenchOutcome outcome;
  outcome.verified = result.verified;
  outcome.verified_how = "std::stable_sort (every element)";
  outcome.device = result.device;
  outcome.ours_median_ms = result.ours_median_ms;
  outcome.best_peer = result.best_peer;
  outcome.best_peer_median_ms = result.best_peer_median_ms;
  outcome.speedup_over_best_peer = result.speedup_over_best_peer;
  outcome.entries = result.table.json_lines();
  if (!outcome.entries.empty()) outcome.floor_ms = outcome.entries.front().value("floor_ms", 0.0);
  report_bench("bench sort", backend, common, outcome, double(options.n), "keys",
               {{"n", options.n},
                {"type", name_of(options.type)},
                {"distribution", name_of(options.distribution)},
                {"value_bytes", options.value_bytes}});
}

void run_bench_topk(const BenchTopkFlags& flags, const Invocation& invocation) {
  const BenchFlags& common = flags.common;
  TopkBenchOptions options;
  options.n = parse_count(common.n);
  options.rows = parse_count(flags.rows, "--rows");
  options.k = parse_count(flags.k, "-k");
  options.type = parse_key_type(common.type);
  options.input.distribution = parse_distribution(common.distribution);
  options.input.zipf_s = common.zipf_s;
  options.input.seed = common.seed;
  options.input.lo = flags.lo;
  options.input.hi = flags.hi;
  options.topk = {.largest = !flags.smallest, .sorted = flags.sorted, .include_nan = flags.include_nan};
  const Backend backend = choose_bench_backend(common.backend, cuda_topk_bench_built(), "top-k");
  check_bench_flags(common, backend);
  apply_run_flags(options, common, "topk.jsonl");
  auto [ctx, device] = make_bench_target(backend, common);
  ProgressLine progress(common.output.progress);
  progress.phase("benchmarking top-" + std::to_string(options.k) + " of " + std::to_string(options.n) + " " +
                 std::string(name_of(options.type)) + " values on " + name_of(backend));
  const BenchOutcome outcome =
      run_topk_benchmark(options, ctx, bench::run_info(invocation.argc, invocation.argv, device));
  progress.finish();
  report_bench("bench topk", backend, common, outcome, double(options.n), "values",
               {{"n", options.n / options.rows},
                {"rows", options.rows},
                {"k", options.k},
                {"type", name_of(options.type)},
                {"distribution", name_of(options.input.distribution)},
                {"largest", options.topk.largest},
                {"sorted", options.topk.sorted}});
}

void run_bench_multisplit(const BenchMultisplitFlags& flags, const Invocation& invocation) {
  const BenchFlags& common = flags.common;
  MultisplitBenchOptions options;
  options.n = parse_count(common.n);
  options.type = parse_key_type(common.type);
  options.input.distribution = parse_distribution(common.distribution);
  options.input.zipf_s = common.zipf_s;
  options.input.seed = common.seed;
  options.buckets = flags.buckets;
  options.value_bytes = parse_value_width(flags.value_bytes);
  const Backend backend = choose_bench_backend(common.backend, cuda_topk_bench_built(), "multisplit");
  check_bench_flags(common, backend);
  apply_run_flags(options, common, "multisplit.jsonl");
  auto [ctx, device] = make_bench_target(backend, common);
  ProgressLine progress(common.output.progress);
  progress.phase("benchmarking multisplit of " + std::to_string(options.n) + " " + std::string(name_of(options.type)) +
                 " keys on " + name_of(backend));
  const BenchOutcome outcome =
      run_multisplit_benchmark(options, ctx, bench::run_info(invocation.argc, invocation.argv, device));
  progress.finish();
  report_bench("bench multisplit", backend, common, outcome, double(options.n), "keys",
               {{"n", options.n},
                {"type", name_of(options.type)},
                {"distribution", name_of(options.input.distribution)},
                {"buckets", options.buckets},
                {"value_bytes", options.value_bytes}});
}

#else  // !RXM_CLI_HAS_BENCH

struct BenchSortFlags {};
struct BenchTopkFlags {};
struct BenchMultisplitFlags {};

[[noreturn]] void no_benchmarks() {
  throw_error(ErrorCode::unsupported, "this radixmesh was built without the benchmarks",
              "configure with -DRXM_BUILD_BENCH=ON and rebuild");
}
void run_bench_sort(const BenchSortFlags&, const Invocation&) { no_benchmarks(); }
void run_bench_topk(const BenchTopkFlags&, const Invocation&) { no_benchmarks(); }
void run_bench_multisplit(const BenchMultisplitFlags&, const Invocation&) { no_benchmarks(); }

#endif

// `radixmesh bench exchange|shuffle|mesh-sort|mesh-topk ARGS`: the driver's own flags, forwarded as they are.
void run_mesh_bench(const char* name, const std::vector<std::string>& args) {
#if RXM_CLI_HAS_MESH_BENCH
  std::vector<std::string> words{std::string("radixmesh bench ") + name};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int argc = int(words.size());
  const std::string which = name;
  const int status = which == "exchange"  ? bench::run_exchange_benchmark(argc, argv.data())
                     : which == "shuffle" ? bench::run_shuffle_benchmark(argc, argv.data())
                     : which == "mesh-topk" ? bench::run_mesh_topk_benchmark(argc, argv.data())
                                          : bench::run_mesh_sort_benchmark(argc, argv.data());
  if (status != 0) throw_error(ErrorCode::internal, std::string("bench ") + name + " failed", "see the lines above");
#else
  (void)args;
  throw_error(ErrorCode::unsupported, std::string("this radixmesh has no mesh benchmarks (bench ") + name + ")",
              "rebuild with -DRXM_ENABLE_CUDA=ON -DRXM_BUILD_BENCH=ON on a machine with nvcc");
#endif
}

}  // namespace

std::vector<Command> register_bench(CLI::App& root, const Invocation& invocation) {
  CLI::App* bench = root.add_subcommand("bench", "Benchmark radixmesh against the peers, verified, on this machine");
  bench->require_subcommand(1);

  auto sort_flags = std::make_shared<BenchSortFlags>();
  CLI::App* sort = bench->add_subcommand(
      "sort", "Sort benchmark: radixmesh vs the peers on the same input (CPU: std::sort, boost spreadsort and "
              "block_indirect_sort; CUDA: CUB DeviceRadixSort, torch.sort)");
  auto topk_flags = std::make_shared<BenchTopkFlags>();
  CLI::App* topk = bench->add_subcommand(
      "topk", "Top-k benchmark: radixmesh vs the peers on the same input (CPU: std::nth_element, "
              "std::partial_sort; CUDA: torch.topk, device sort then take k)");
  auto multisplit_flags = std::make_shared<BenchMultisplitFlags>();
  CLI::App* multisplit = bench->add_subcommand(
      "multisplit", "Multisplit benchmark: radixmesh vs the peers on the same input (CPU: counting sort, "
                    "labels + std::stable_sort; CUDA: sort on the digit's bits)");
#if RXM_CLI_HAS_BENCH
  add_bench_flags(*sort, sort_flags->common, "std::stable_sort");
  sort->add_option("--values", sort_flags->value_bytes, "Value bytes per key: 0 (keys only), 4 or 8")
      ->capture_default_str();
  sort->add_option("--order", sort_flags->order, "asc or desc")->capture_default_str();
  sort->add_option("--special-fraction", sort_flags->special_fraction,
                   "Floating-point keys: this share are NaN, infinities, +-0 and denormals")
      ->capture_default_str();

  topk_flags->common.n = "2^24";
  topk_flags->common.type = "f32";
  add_bench_flags(*topk, topk_flags->common, "std::nth_element (CPU) or the CPU backend (CUDA)");
  topk->add_option("-k,--k", topk_flags->k, "How many per row (1 <= k <= n / rows)")->capture_default_str();
  topk->add_option("--rows", topk_flags->rows, "Rows of n / rows values each (--n is the total)")
      ->capture_default_str();
  topk->add_flag("--smallest", topk_flags->smallest, "The k smallest instead of the largest");
  topk->add_flag("--sorted", topk_flags->sorted, "Best first (default: ascending input index)");
  topk->add_flag("--include-nan", topk_flags->include_nan, "NaN counts as above +inf");
  topk->add_option("--lo", topk_flags->lo, "Uniform floats: lowest value (e.g. 128.6)")->capture_default_str();
  topk->add_option("--hi", topk_flags->hi, "Uniform floats: values below this (e.g. 128.7)")->capture_default_str();

  multisplit_flags->common.n = "2^24";
  add_bench_flags(*multisplit, multisplit_flags->common, "a counting sort by bucket id");
  multisplit->add_option("--buckets", multisplit_flags->buckets,
                         "radix:SHIFT:BITS | delta:LO:HI:M | splitters:FILE | identity:M (as for 'radixmesh multisplit')")
      ->capture_default_str();
  multisplit->add_option("--values", multisplit_flags->value_bytes, "Value bytes per key: 0 (keys only), 4 or 8")
      ->capture_default_str();
#endif
#if RXM_CLI_HAS_MESH_BENCH
  const std::string exchange_help = std::string("The mesh's all_to_all_v vs NCCL grouped send/recv and the naive "
                                                "copy-engine exchange, on GPUs or logical devices. Flags: ") +
                                    bench::exchange_usage;
  const std::string shuffle_help =
      std::string("rxm::shuffle on GPUs or logical devices vs its multisplit and all_to_all_v alone. Flags: ") +
      bench::shuffle_usage;
  const std::string mesh_sort_help =
      std::string("rxm::sort_shards on GPUs or logical devices vs one device's rxm::sort. Flags: ") +
      bench::mesh_sort_usage;
  const std::string mesh_topk_help =
      std::string("rxm::topk over shards on GPUs or logical devices vs one device's top-k and the gather-then-top-k "
                  "of today. Flags: ") +
      bench::mesh_topk_usage;
#else
  const std::string exchange_help = "The mesh's all_to_all_v (needs a CUDA build)";
  const std::string shuffle_help = "rxm::shuffle on GPU mesh devices (needs a CUDA build)";
  const std::string mesh_sort_help = "rxm::sort_shards on GPU mesh devices (needs a CUDA build)";
  const std::string mesh_topk_help = "rxm::topk over shards on GPU mesh devices (needs a CUDA build)";
#endif
  CLI::App* exchange = bench->add_subcommand("exchange", exchange_help);
  CLI::App* shuffle = bench->add_subcommand("shuffle", shuffle_help);
  CLI::App* mesh_sort = bench->add_subcommand("mesh-sort", mesh_sort_help);
  CLI::App* mesh_topk = bench->add_subcommand("mesh-topk", mesh_topk_help);
  for (CLI::App* mesh : {exchange, shuffle, mesh_sort, mesh_topk}) mesh->prefix_command();  // every flag goes to the benchmark
  return {{exchange, [exchange] { run_mesh_bench("exchange", exchange->remaining()); }},
          {shuffle, [shuffle] { run_mesh_bench("shuffle", shuffle->remaining()); }},
          {mesh_sort, [mesh_sort] { run_mesh_bench("mesh-sort", mesh_sort->remaining()); }},
          {mesh_topk, [mesh_topk] { run_mesh_bench("mesh-topk", mesh_topk->remaining()); }},
          {sort, [sort_flags, invocation] { run_bench_sort(*sort_flags, invocation); }},
          {topk, [topk_flags, invocation] { run_bench_topk(*topk_flags, invocation); }},
          {multisplit, [multisplit_flags, invocation] { run_bench_multisplit(*multisplit_flags, invocation); }}};
}

}  // namespace radixmesh::cli
