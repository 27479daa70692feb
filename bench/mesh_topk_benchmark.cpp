// bench_mesh_topk: rxm::topk over device-resident f32 shards on GPU mesh devices (logical devices
// of one GPU by default), and rxm::topk_batched over vocabulary-parallel logits.
//
//   bench_mesh_topk [--devices 0,0,0,0] [--n 2^28] [--k 1024,2^20] [--rows 4096] [--columns 32768]
//                   [--rows-k 50] [--only array|rows] [--reps 10]
//
// Array: P shards of n uniform f32 values, beside our single-device top-k of the same P x n values
// on the first device (the yardstick: <= 1.15x at k = 1024, <= 1.3x at k = 2^20 on four
// logical devices of one GPU). Rows: P shards of rows x columns normal logits, k per row, beside
// the naive way in our own library (copy every shard into one rows x (P x columns) matrix on the
// first device, then our single-device topk_batched) and the way servers do it today (the same
// gather with torch.cat, then torch.topk: bench/peers/torch_gather_topk.py, its own process).
// Floor: every value read once, over the device-to-device copy traffic measured in this run (reads
// plus writes per second: a read-only stream moves about as many bytes), divided over the GPUs when
// they are distinct. Each line's phases
// (local top-k, candidate gather, final merge) come from one more call with TopkPhases.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "mesh_benchmarks.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;

namespace {

struct Options {
  std::vector<int> devices{0, 0, 0, 0};
  std::uint64_t n = std::uint64_t(1) << 28;
  std::vector<std::uint64_t> ks{1024, std::uint64_t(1) << 20};
  std::uint64_t rows = 4096, columns = 32768, rows_k = 50;
  std::string only;
  int reps = 10;
};

Options parse(int argc, char** argv) {
  Options o;
  rxm::bench::DriverArgs args("bench_mesh_topk", argc, argv);
  while (args.next()) {
    auto value = [&] { return args.value(); };
    auto count = [&](const char* flag) { return rxm::bench::driver_count("bench_mesh_topk", flag, value()); };
    if (args.is("--devices")) {
      o.devices = rxm::bench::driver_device_list("bench_mesh_topk", value());
    } else if (args.is("--n")) {
      o.n = count("--n");
    } else if (args.is("--k")) {
      o.ks.clear();
      std::string list = value();
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        o.ks.push_back(rxm::bench::driver_count("bench_mesh_topk", "--k", list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (args.is("--rows")) {
      o.rows = count("--rows");
    } else if (args.is("--columns")) {
      o.columns = count("--columns");
    } else if (args.is("--rows-k")) {
      o.rows_k = count("--rows-k");
    } else if (args.is("--only")) {
      o.only = value();
      if (o.only != "array" && o.only != "rows")
        rxm::bench::driver_argument_error("bench_mesh_topk", "--only " + o.only + " is not array or rows");
    } else if (args.is("--reps")) {
      o.reps = int(std::min<std::uint64_t>(count("--reps"), 1000));
    } else {
      args.unknown();
    }
  }
  return o;
}

void sync_all(const rxm::Context& ctx) {
  for (const auto& d : ctx.devices()) {
    rxm::detail::DeviceGuard guard(d.id);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

rxm::bench::Stats timed(const rxm::Context& ctx, const std::function<void()>& run, int reps) {
  return rxm::bench::time_host([&] { sync_all(ctx); }, [&] {
    run();
    sync_all(ctx);
  }, 1, reps);
}

// Device-to-device copy traffic of the first device (reads + writes per second).
double copy_traffic(int device, void* a, const void* b, std::size_t bytes, int reps) {
  rxm::detail::DeviceGuard guard(device);
  const auto copy = rxm::bench::time_host(nullptr, [&] {
    RXM_CUDA_CHECK(cudaMemcpy(a, b, bytes, cudaMemcpyDeviceToDevice));
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }, 1, reps);
  return 2.0 * double(bytes) / (copy.median_ms / 1e3);
}

bool distinct_gpus(const std::vector<int>& devices) {
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (devices[i] == devices[j]) return false;
  return devices.size() > 1;
}

std::string device_list(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

void print_phases(const rxm::TopkPhases& ph, double read_floor_ms) {
  std::printf("steps: local top-k %.3f ms (floor %.3f: every value read once), candidate gather %.3f ms, merge "
              "%.3f ms of %zu candidates per row\n",
              ph.local_ms, read_floor_ms, ph.gather_ms, ph.merge_ms, ph.candidates_per_row);
}

void run_array(rxm::Context& ctx, const Options& o, int argc, char** argv, const std::string& device_name) {
  const int p = ctx.mesh_size(), home = ctx.devices()[0].id;
  const std::size_t n = o.n, total = n * std::size_t(p);
  std::vector<rxm::DeviceArray<float>> shards;
  rxm::DeviceArray<float> whole(home, total);
  {
    std::vector<float> host(total);
    rxm::GenerateOptions g;
    g.seed = 11;
    rxm::generate(std::span(host), g);
    RXM_CUDA_CHECK(cudaMemcpy(whole.data(), host.data(), total * sizeof(float), cudaMemcpyHostToDevice));
    for (int d = 0; d < p; ++d) {
      auto& s = shards.emplace_back(ctx.devices()[std::size_t(d)].id, n);
      RXM_CUDA_CHECK(cudaMemcpy(s.data(), host.data() + std::size_t(d) * n, n * sizeof(float), cudaMemcpyHostToDevice));
    }
  }
  std::vector<rxm::device_span<const float>> spans;
  for (auto& s : shards) spans.emplace_back(s.data(), s.size(), s.device());
  using S = std::span<const rxm::device_span<const float>>;
  auto solo = rxm::Context::local({home}, rxm::Backend::cuda);
  double traffic = 0;
  {
    rxm::DeviceArray<float> scratch(home, n);
    traffic = copy_traffic(home, scratch.data(), whole.data(), n * sizeof(float), 5);
  }
  const double share = distinct_gpus(o.devices) ? 1.0 / double(p) : 1.0;
  const double read_bytes = double(total) * sizeof(float), read_floor_ms = read_bytes * share / traffic * 1e3;
  for (std::uint64_t k : o.ks) {
    if (k > total) continue;
    const auto ours = timed(ctx, [&] { rxm::topk(ctx, S(spans), k); }, o.reps);
    const auto single = timed(solo, [&] { rxm::topk(solo, rxm::device_span<const float>(whole), k); }, o.reps);
    rxm::TopkPhases phases;
    const auto got = rxm::topk(ctx, S(spans), k, {}, {.phases = &phases});
    const auto want = rxm::topk(solo, rxm::device_span<const float>(whole), k);
    rxm::require(got.indices == want.indices, "bench_mesh_topk: the mesh's top-k differs from one device's",
                 "report this as a bug");
    // Each path forced (the automatic choice's evidence), checked against one device too.
    std::vector<std::pair<std::string, rxm::bench::Stats>> paths;
    for (auto [path, name] : {std::pair(rxm::TopkShardPath::candidates, "candidates"),
                              std::pair(rxm::TopkShardPath::radix_select, "radix select")}) {
      rxm::require(rxm::topk(ctx, S(spans), k, {}, {.path = path}).indices == want.indices,
                   std::string("bench_mesh_topk: the ") + name + " path differs from one device's", "report this as a bug");
      paths.emplace_back(name, timed(ctx, [&] { rxm::topk(ctx, S(spans), k, {}, {.path = path}); }, o.reps));
    }
    rxm::bench::Case c("mesh_topk",
                       {{"devices", device_list(o.devices)}, {"n", total}, {"k", k}, {"type", "f32"}, {"rows", 1}},
                       double(total), "values");
    c.add("radixmesh topk over shards", ours, true);
    c.add("rxm::topk on one device, all values", single);
    for (const auto& [name, stats] : paths) c.add_diagnostic("radixmesh topk over shards, the " + name + " path", stats);
    c.set_floor(read_bytes, traffic / share,
                "every value read once, over the device-to-device copy traffic (reads + writes) measured in this run" +
                    std::string(share < 1 ? ", divided over the GPUs" : ""));
    c.print();
    print_phases(phases, read_floor_ms);
    std::printf("automatic path: %s\n", phases.path == rxm::TopkShardPath::radix_select ? "radix select" : "candidates");
    std::printf("mesh / one device = %.3f / %.3f = %.2fx (target on 4 logical devices: <= %s)\n", ours.median_ms,
                single.median_ms, ours.median_ms / single.median_ms, k <= 1024 ? "1.15x" : "1.3x");
    rxm::bench::append_results("mesh_topk.jsonl", rxm::bench::run_info(argc, argv, device_name), c);
  }
}

void run_rows(rxm::Context& ctx, const Options& o, int argc, char** argv, const std::string& device_name) {
  const int p = ctx.mesh_size(), home = ctx.devices()[0].id;
  const std::size_t rows = o.rows, cols = o.columns, wide = cols * std::size_t(p), k = o.rows_k;
  std::vector<rxm::DeviceArray<float>> shards;
  rxm::DeviceArray<float> gathered(home, rows * wide);
  {
    std::vector<float> host(rows * cols);
    rxm::GenerateOptions g;
    g.distribution = rxm::Distribution::normal;
    for (int d = 0; d < p; ++d) {
      g.seed = 100 + std::uint64_t(d);
      rxm::generate(std::span(host), g);
      auto& s = shards.emplace_back(ctx.devices()[std::size_t(d)].id, rows * cols);
      RXM_CUDA_CHECK(cudaMemcpy(s.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
  }
  std::vector<rxm::device_span<const float>> spans;
  for (auto& s : shards) spans.emplace_back(s.data(), s.size(), s.device());
  using S = std::span<const rxm::device_span<const float>>;
  auto solo = rxm::Context::local({home}, rxm::Backend::cuda);
  const rxm::TopkOptions sorted{.sorted = true};
  // The naive way: gather the columns into one matrix on the first device, then one top-k.
  auto gather_then_topk = [&] {
    rxm::detail::DeviceGuard guard(home);
    for (int d = 0; d < p; ++d)
      RXM_CUDA_CHECK(cudaMemcpy2DAsync(gathered.data() + std::size_t(d) * cols, wide * sizeof(float),
                                       shards[std::size_t(d)].data(), cols * sizeof(float), cols * sizeof(float), rows,
                                       cudaMemcpyDefault, 0));
    return rxm::topk_batched(solo, rxm::device_span<const float>(gathered), rxm::Rows::uniform(rows, wide), k, sorted);
  };
  const auto ours = timed(ctx, [&] { rxm::topk_batched(ctx, S(spans), rows, k, sorted); }, o.reps);
  const auto naive = timed(ctx, [&] { gather_then_topk(); }, o.reps);
  rxm::TopkPhases phases;
  const auto got = rxm::topk_batched(ctx, S(spans), rows, k, sorted, {.phases = &phases});
  rxm::require(got.indices == gather_then_topk().indices,
               "bench_mesh_topk: the mesh's batched top-k differs from one device's", "report this as a bug");
  const double traffic = copy_traffic(home, gathered.data(), shards[0].data(), rows * cols * sizeof(float), 5);
  const double share = distinct_gpus(o.devices) ? 1.0 / double(p) : 1.0;
  const double read_bytes = double(rows * wide) * sizeof(float);
  rxm::bench::Case c("mesh_topk",
                     {{"devices", device_list(o.devices)}, {"rows", rows}, {"columns", wide}, {"k", k}, {"type", "f32"}},
                     double(rows * wide), "values");
  c.add("radixmesh topk_batched over vocabulary shards", ours, true);
  c.add("gather the shards (cudaMemcpy2D) + rxm::topk_batched on one device", naive);
  std::string what;
  const std::string args = "--rows " + std::to_string(rows) + " --columns " + std::to_string(cols) + " --devices " +
                           device_list(o.devices) + " --k " + std::to_string(k) + " --reps " + std::to_string(o.reps);
  if (auto peer = rxm::bench::run_python_peer("torch_gather_topk.py", args))
    c.add(std::string(peer->value("what", "torch")) + " (torch " + peer->value("torch", "?") + ")",
          rxm::bench::stats_from_json(*peer));
  c.set_floor(read_bytes, traffic / share,
              "every logit read once, over the device-to-device copy traffic (reads + writes) measured in this run" +
                  std::string(share < 1 ? ", divided over the GPUs" : ""));
  c.print();
  print_phases(phases, read_bytes * share / traffic * 1e3);
  rxm::bench::append_results("mesh_topk.jsonl", rxm::bench::run_info(argc, argv, device_name), c);
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto ctx = rxm::Context::local(o.devices, rxm::Backend::cuda);
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.devices()[0].id));
  if (o.only != "rows") run_array(ctx, o, argc, argv, prop.name);
  if (o.only != "array") run_rows(ctx, o, argc, argv, prop.name);
  return 0;
}

}  // namespace

namespace radixmesh::bench {

const char* const mesh_topk_usage =
    "usage: bench_mesh_topk [--devices 0,0,0,0] [--n 2^28] [--k 1024,2^20] [--rows 4096] [--columns 32768] "
    "[--rows-k 50] [--only array|rows] [--reps 10]\n";

int run_mesh_topk_benchmark(int argc, char** argv) { return run(argc, argv); }

}  // namespace radixmesh::bench
