// bench_mesh_topk_cpu: rxm::topk over the shards of a CPU mesh (Context::cpu_mesh), by the
// candidate path and by the radix-select path, beside one CPU device's top-k of the same values.
//
//   bench_mesh_topk_cpu [--n 1e8] [--devices 2] [--threads-per-device 1] [--k 1024,2^20] [--reps 3]
//
// n uniform f32 values cut into even shards. The one-device peer runs with devices x threads
// threads. Floor: every value read once over the host copy bandwidth measured in this run.
#include <cstdio>
#include <string>
#include <vector>

#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;

namespace {

int run(int argc, char** argv) {
  std::uint64_t n = 100000000, devices = 2, per_device = 1;
  std::vector<std::uint64_t> ks{1024, std::uint64_t(1) << 20};
  int reps = 3;
  rxm::bench::DriverArgs args("bench_mesh_topk_cpu", argc, argv);
  while (args.next()) {
    auto count = [&](const char* flag) { return rxm::bench::driver_count("bench_mesh_topk_cpu", flag, args.value()); };
    if (args.is("--n")) {
      n = count("--n");
    } else if (args.is("--devices")) {
      devices = std::clamp<std::uint64_t>(count("--devices"), 1, 64);
    } else if (args.is("--threads-per-device")) {
      per_device = std::clamp<std::uint64_t>(count("--threads-per-device"), 1, 256);
    } else if (args.is("--k")) {
      ks.clear();
      const std::string list = args.value();
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        ks.push_back(rxm::bench::driver_count("bench_mesh_topk_cpu", "--k", list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (args.is("--reps")) {
      reps = int(std::clamp<std::uint64_t>(count("--reps"), 1, 100));
    } else {
      args.unknown();
    }
  }
  std::vector<float> values(n);
  rxm::GenerateOptions g;
  g.seed = 3;
  rxm::generate(std::span(values), g);
  auto mesh = rxm::Context::cpu_mesh(unsigned(devices), unsigned(per_device));
  auto one = rxm::Context::cpu(unsigned(devices * per_device));
  std::vector<std::span<const float>> shards;
  for (std::uint64_t d = 0; d < devices; ++d)
    shards.push_back(std::span<const float>(values).subspan(n * d / devices, n * (d + 1) / devices - n * d / devices));
  using S = std::span<const std::span<const float>>;
  for (std::uint64_t k : ks) {
    if (k > n) continue;
    rxm::TopkPhases candidates_steps, select_steps;
    auto mesh_topk = [&](rxm::TopkShardPath path, rxm::TopkPhases* steps) {
      return rxm::topk(mesh, S(shards), k, {}, {path, steps});
    };
    const auto want = rxm::topk(one, std::span<const float>(values), k);
    rxm::require(mesh_topk(rxm::TopkShardPath::candidates, nullptr).indices == want.indices &&
                     mesh_topk(rxm::TopkShardPath::radix_select, nullptr).indices == want.indices,
                 "bench_mesh_topk_cpu: the mesh's top-k differs from one device's", "report this as a bug");
    rxm::bench::Case c("mesh_topk",
                       {{"devices", "cpu:" + std::to_string(devices)}, {"threads_per_device", per_device}, {"n", n},
                        {"k", k}, {"type", "f32"}, {"rows", 1}},
                       double(n), "values");
    c.add("radixmesh topk over shards (candidates)",
          rxm::bench::time_host(nullptr, [&] { mesh_topk(rxm::TopkShardPath::candidates, &candidates_steps); }, 1, reps),
          true);
    c.add_diagnostic("radixmesh topk over shards (radix select)",
                     rxm::bench::time_host(nullptr, [&] { mesh_topk(rxm::TopkShardPath::radix_select, &select_steps); },
                                           1, reps));
    c.add("rxm::topk on one CPU device, all values",
          rxm::bench::time_host(nullptr, [&] { rxm::topk(one, std::span<const float>(values), k); }, 1, reps));
    c.set_floor(double(n) * sizeof(float), rxm::bench::measured_host_copy_bandwidth(),
                "every value read once, over the host copy bandwidth (reads + writes) measured in this run");
    c.print();
    std::printf("steps: candidates: local %.1f, merge %.1f ms; radix select: %d passes %.1f, take %.1f, order %.1f ms\n",
                candidates_steps.local_ms, candidates_steps.merge_ms, select_steps.select_passes, select_steps.local_ms,
                select_steps.gather_ms, select_steps.merge_ms);
    rxm::bench::append_results("mesh_topk.jsonl", rxm::bench::run_info(argc, argv, "CPU"), c);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return radixmesh::bench::driver_main(
      "bench_mesh_topk_cpu",
      "usage: bench_mesh_topk_cpu [--n 1e8] [--devices 2] [--threads-per-device 1] [--k 1024,2^20] [--reps 3]\n", argc,
      argv, run);
}
