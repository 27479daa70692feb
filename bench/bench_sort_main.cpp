// bench_sort: the sort benchmark from the command line (bench/sort_benchmark.hpp).
//   bench_sort --n 100000000 --type u32 --dist zipf --zipf-s 1.0 --values 0 --reps 5
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "harness/driver_main.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/keys.hpp"  // Order, which sort_benchmark.hpp uses without including
#include "sort_benchmark.hpp"

namespace rxm = radixmesh;

namespace {

const char* usage =
    "usage: bench_sort [--n N] [--type u32] [--dist uniform] [--zipf-s 1.0] [--special-fraction 0] [--values 0|4|8]\n"
    "                  [--order asc|desc] [--reps 5] [--warmup 1] [--seed 42] [--threads T]\n"
    "                  [--backend cpu] [--no-verify] [--no-results] [--results-file sort.jsonl]\n"
    "                  [--peers std::sort,spreadsort,block_indirect_sort|none] [--previous]   (CPU)\n";

[[noreturn]] void bad_flag(const std::string& problem) { rxm::bench::driver_argument_error("bench_sort", problem); }

double parse_number(std::string_view flag, const char* text) {
  return rxm::bench::driver_number("bench_sort", std::string(flag), text);
}

int run(int argc, char** argv) {
  rxm::bench::SortBenchOptions options;
  std::string backend = "cpu";
  unsigned threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad_flag(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (flag == "--n") options.n = std::size_t(parse_number(flag, value()));
    else if (flag == "--type") {
      const char* name = value();
      auto type = rxm::key_type_from_name(name);
      if (!type) bad_flag(std::string("unknown key type '") + name + "'");
      options.type = *type;
    } else if (flag == "--dist") {
      const char* name = value();
      auto distribution = rxm::distribution_from_name(name);
      if (!distribution) bad_flag(std::string("unknown distribution '") + name + "'");
      options.distribution = *distribution;
    } else if (flag == "--zipf-s") options.zipf_s = parse_number(flag, value());
    else if (flag == "--special-fraction") options.special_fraction = parse_number(flag, value());
    else if (flag == "--values") {
      const double bytes = parse_number(flag, value());
      if (bytes != 0 && bytes != 4 && bytes != 8) bad_flag("--values must be 0, 4 or 8");
      options.value_bytes = std::size_t(bytes);
    } else if (flag == "--order") {
      const std::string_view order = value();
      if (order != "asc" && order != "desc") bad_flag("--order must be asc or desc");
      options.order = order == "asc" ? rxm::Order::ascending : rxm::Order::descending;
    } else if (flag == "--reps") options.reps = int(parse_number(flag, value()));
    else if (flag == "--warmup") options.warmup = int(parse_number(flag, value()));
    else if (flag == "--seed") options.seed = std::uint64_t(parse_number(flag, value()));
    else if (flag == "--threads") threads = unsigned(parse_number(flag, value()));
    else if (flag == "--backend") backend = value();
    else if (flag == "--no-verify") options.verify = false;
    else if (flag == "--previous") options.previous = true;
    else if (flag == "--peers") {
      options.cpu_peers.clear();
      std::string list = value();
      for (std::size_t at = 0; list != "none" && at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        options.cpu_peers.push_back(list.substr(at, comma - at));
        at = comma + 1;
        const std::string& wanted = options.cpu_peers.back();
        if (wanted != "std::sort" && wanted != "spreadsort" && wanted != "block_indirect_sort")
          bad_flag("--peers takes std::sort, spreadsort, block_indirect_sort (comma-separated) or none");
      }
    }
    else if (flag == "--no-results") options.write_results = false;
    else if (flag == "--results-file") options.results_file = value();
    else bad_flag("unknown flag '" + std::string(flag) + "'");
  }
  if (options.reps < 1 || options.warmup < 0) bad_flag("--reps must be at least 1 and --warmup at least 0");

  rxm::bench::SortBenchResult result;
  if (backend == "cpu") {
    const unsigned cpu_threads = rxm::Context::cpu(threads).cpu_threads();
    result = rxm::bench::run_cpu_sort_benchmark(options, rxm::bench::run_info(argc, argv, ""), cpu_threads);
  } else if (backend == "cuda") {
    // ---- GPU variant: run_cuda_sort_benchmark (bench/cuda_sort_benchmark.cu), in CUDA builds.
#if RXM_BENCH_HAS_CUDA_SORT
    auto ctx = rxm::Context::local({}, rxm::Backend::cuda);
    result = rxm::bench::run_cuda_sort_benchmark(options, rxm::bench::run_info(argc, argv, ctx.devices().at(0).name),
                                                 ctx);
#else
    bad_flag("--backend cuda: this build has no CUDA sort benchmark (configure with RXM_ENABLE_CUDA=ON)");
#endif
  } else {
    bad_flag("--backend must be cpu or cuda");
  }
  return result.verified || !options.verify ? rxm::bench::driver_ok : rxm::bench::driver_wrong_result;
}

}  // namespace

int main(int argc, char** argv) { return rxm::bench::driver_main("bench_sort", usage, argc, argv, run); }
