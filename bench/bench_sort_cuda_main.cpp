// bench_sort_cuda: the GPU sort benchmark (bench/cuda_sort_benchmark.cu) from the command line.
//
//   bench_sort_cuda [--n N] [--type u32] [--values 0|4|8] [--order asc|desc] [--dist uniform]
//                   [--reps R] [--no-verify] [--device-only]
//   bench_sort_cuda --suite [--n N]   the issue-3 cases: u32 keys, u32/u32 pairs, f32 keys,
//                                     f32/u32 pairs, f64 keys, f16 keys, u64 keys, u64/u64 pairs,
//                                     u32 keys Zipf(1.0)
//   --device-only: device-resident input only (skips the host->GPU->host case, which takes most
//   of the run time).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/driver_main.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/sort.hpp"  // Order, before sort_benchmark.hpp, which uses it
#include "sort_benchmark.hpp"

namespace rxm = radixmesh;

namespace {

const char* usage =
    "usage: bench_sort_cuda [--n N] [--type u32] [--values 0|4|8] [--order asc|desc] [--dist uniform]\n"
    "                       [--reps R] [--no-verify] [--device-only]\n"
    "       bench_sort_cuda --suite [--n N]   the issue-3 cases (u32, f32, f64, f16, u64 keys and pairs)\n";

[[noreturn]] void bad_argument(const std::string& problem) {
  rxm::bench::driver_argument_error("bench_sort_cuda", problem);
}

int run(int argc, char** argv) {
  rxm::bench::SortBenchOptions base;
  base.n = std::size_t(1) << 28;
  base.reps = 10;
  base.warmup = 2;
  bool suite = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) bad_argument(a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() { return rxm::bench::driver_number("bench_sort_cuda", a, next().c_str()); };
    if (a == "--n") base.n = std::size_t(number());
    else if (a == "--type") {
      auto t = rxm::key_type_from_name(next());
      if (!t) bad_argument("unknown key type; use u8..u64, i8..i64, f16, bf16, f32, f64");
      base.type = *t;
    } else if (a == "--values") base.value_bytes = std::size_t(number());
    else if (a == "--order") base.order = next() == "desc" ? rxm::Order::descending : rxm::Order::ascending;
    else if (a == "--dist") {
      auto d = rxm::distribution_from_name(next());
      if (!d) bad_argument("unknown distribution; use uniform, zipf, sorted, ...");
      base.distribution = *d;
    } else if (a == "--reps") base.reps = int(number());
    else if (a == "--no-verify") base.verify = false;
    else if (a == "--suite") suite = true;
    else if (a == "--device-only") setenv("RXM_BENCH_SORT_INPUTS", "device", 1);  // read by cuda_sort_benchmark.cu
    else bad_argument("unknown argument " + a);
  }
  auto ctx = rxm::Context::local({}, rxm::Backend::cuda);
  const auto info = rxm::bench::run_info(argc, argv, ctx.devices().at(0).name);

  std::vector<rxm::bench::SortBenchOptions> cases{base};
  if (suite) {
    cases.clear();
    auto with = [&](rxm::KeyType t, std::size_t values, rxm::Distribution d = rxm::Distribution::uniform) {
      auto o = base;
      o.type = t;
      o.value_bytes = values;
      o.distribution = d;
      cases.push_back(o);
    };
    with(rxm::KeyType::u32, 0);
    with(rxm::KeyType::u32, 4);
    with(rxm::KeyType::f32, 0);
    with(rxm::KeyType::f32, 4);
    with(rxm::KeyType::f64, 0);
    with(rxm::KeyType::f16, 0);
    with(rxm::KeyType::u64, 0);
    with(rxm::KeyType::u64, 8);
    with(rxm::KeyType::u32, 0, rxm::Distribution::zipf);
  }
  bool all_verified = true;
  for (const auto& o : cases) {
    auto r = rxm::bench::run_cuda_sort_benchmark(o, info, ctx);
    all_verified &= r.verified || !o.verify;
    std::printf("  => %s %s values=%zu: ours %.3f ms, best peer %s %.3f ms, ours %.2fx\n", r.device.c_str(),
                std::string(rxm::name_of(o.type)).c_str(), o.value_bytes, r.ours_median_ms, r.best_peer.c_str(),
                r.best_peer_median_ms, r.speedup_over_best_peer);
    std::fflush(stdout);
  }
  return all_verified ? rxm::bench::driver_ok : rxm::bench::driver_wrong_result;
}

}  // namespace

int main(int argc, char** argv) { return rxm::bench::driver_main("bench_sort_cuda", usage, argc, argv, run); }
