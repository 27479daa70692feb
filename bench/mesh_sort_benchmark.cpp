// bench_mesh_sort: rxm::sort_shards of device-resident keys over GPU mesh devices (logical devices
// of one GPU by default), beside one device sorting all of them with rxm::sort (the issue's
// yardstick: ≤ 1.25x on four logical devices of one GPU, where the mesh can only add the cost of
// partition, exchange and merge) and every device sorting its own shard alone (the local sort
// step's yardstick). The line marked ours runs --strategy (MeshSortStrategy, automatic by default);
// both strategies also run as diagnostic lines, each result compared byte for byte (keys and
// values) with the one device's sort. Every step prints its time and its floor.
//
//   bench_mesh_sort [--devices 0,0,0,0] [--keys 2^30] [--type u32|u64] [--values 0|4|8]
//                   [--distribution uniform|zipf|...] [--digit-bits 8] [--strategy automatic|partition|merge]
//                   [--reps 5] [--explain] [--host] [--out-of-core BYTES | --large]
//
// --host: the keys in pinned host memory instead, uploaded, sorted and downloaded by the call
// (RMG's setting: pinned host -> GPUs -> host), beside one GPU sorting all of them from pinned host
// memory (bench/mesh_sort_host_benchmark.cpp). --host --large: an input larger than the GPUs, in
// pageable memory, sorted out of core beside the CPU backend (the same file).
//
// The input is restored (a device-to-device copy, outside the timing) before every repetition:
// sort_shards sorts in place. Floors (bytes over the device-to-device copy traffic measured in this
// run, reads plus writes): the partition split reads every key twice and writes it once, the
// exchange reads and writes it once, the local sort moves it at least once per 8-bit pass (read
// and write) plus a histogram read; the merge strategy's local sort the same, then each of its
// ceil(log2 devices) merge rounds reads and writes every key once; on logical devices of one GPU
// every step shares that GPU's memory, so the floors add up.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "mesh_benchmarks.hpp"
#include "mesh_sort_benchmark.hpp"
#include "radixmesh/radixmesh.hpp"

namespace rxm = radixmesh;

namespace {

using Options = rxm::bench::MeshSortOptions;

Options parse(int argc, char** argv) {
  Options o;
  rxm::bench::DriverArgs args("bench_mesh_sort", argc, argv);
  while (args.next()) {
    auto value = [&] { return args.value(); };
    if (args.is("--devices")) {
      o.devices = rxm::bench::driver_device_list("bench_mesh_sort", value());
    } else if (args.is("--keys")) {
      o.keys = rxm::bench::driver_count("bench_mesh_sort", "--keys", value());
    } else if (args.is("--type")) {
      o.type = value();
      if (o.type != "u32" && o.type != "u64") rxm::bench::driver_argument_error("bench_mesh_sort", "--type " + o.type + " is not u32 or u64");
    } else if (args.is("--values")) {
      const std::uint64_t v = rxm::bench::driver_count("bench_mesh_sort", "--values", value());
      if (v != 0 && v != 4 && v != 8)
        rxm::bench::driver_argument_error("bench_mesh_sort", "--values " + std::to_string(v) + " is not 0, 4 or 8");
      o.value_bytes = int(v);
    } else if (args.is("--distribution")) {
      o.distribution = value();
      if (!rxm::distribution_from_name(o.distribution))
        rxm::bench::driver_argument_error("bench_mesh_sort", "--distribution " + o.distribution + " is not known");
    } else if (args.is("--digit-bits")) {
      const std::uint64_t bits = rxm::bench::driver_count("bench_mesh_sort", "--digit-bits", value());
      if (bits > 16)
        rxm::bench::driver_argument_error("bench_mesh_sort", "--digit-bits " + std::to_string(bits) + " is not 0 to 16");
      o.digit_bits = int(bits);
    } else if (args.is("--strategy")) {
      o.strategy = value();
      if (o.strategy != "automatic" && o.strategy != "partition" && o.strategy != "merge")
        rxm::bench::driver_argument_error("bench_mesh_sort", "--strategy " + o.strategy + " is not automatic, partition or merge");
    } else if (args.is("--reps")) {
      o.reps = int(std::clamp<std::uint64_t>(rxm::bench::driver_count("bench_mesh_sort", "--reps", value()), 1, 1000));
    } else if (args.is("--explain")) {
      o.explain = true;
    } else if (args.is("--host")) {
      o.host = true;
    } else if (args.is("--large")) {
      o.large = true;
    } else if (args.is("--out-of-core")) {
      o.out_of_core = rxm::bench::driver_count("bench_mesh_sort", "--out-of-core", value());
    } else {
      args.unknown();
    }
  }
  return o;
}

using rxm::bench::sync_all_gpus;
using rxm::bench::time_ms;

template <class K> int run_typed(const Options& o, int argc, char** argv) {
  auto ctx = rxm::Context::local(o.devices, rxm::Backend::cuda);
  const int p = ctx.mesh_size();
  const std::uint64_t per_device = o.keys / std::uint64_t(p);
  const std::uint64_t total = per_device * std::uint64_t(p);
  const std::size_t vb = std::size_t(o.value_bytes);
  const int home = ctx.devices()[0].id;

  // The input: the shards, their pristine copies, and the whole array on the first device (the
  // single-device yardstick), with values (the global index) when asked.
  std::vector<rxm::DeviceArray<K>> shards, pristine;
  std::vector<rxm::DeviceArray<std::uint64_t>> values, pristine_values;  // 8-byte storage; 4-byte values use half
  rxm::DeviceArray<K> whole(home, total), whole_pristine(home, total);
  rxm::DeviceArray<std::uint64_t> whole_values(home, vb ? total : 0), whole_values_pristine(home, vb ? total : 0);
  {
    std::vector<K> host(total);
    rxm::GenerateOptions g;
    g.distribution = *rxm::distribution_from_name(o.distribution);
    g.seed = 7;
    rxm::generate(std::span(host), g);
    std::vector<std::uint64_t> index(vb ? total : 0);
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = vb == 8 ? i : (i & 0xFFFFFFFFu);
    RXM_CUDA_CHECK(cudaMemcpy(whole_pristine.data(), host.data(), total * sizeof(K), cudaMemcpyHostToDevice));
    if (vb) RXM_CUDA_CHECK(cudaMemcpy(whole_values_pristine.data(), index.data(), total * vb, cudaMemcpyHostToDevice));
    for (int d = 0; d < p; ++d) {
      const int dev = ctx.devices()[std::size_t(d)].id;
      shards.emplace_back(dev, per_device);
      pristine.emplace_back(dev, per_device);
      values.emplace_back(dev, vb ? per_device : 0);
      pristine_values.emplace_back(dev, vb ? per_device : 0);
      RXM_CUDA_CHECK(cudaMemcpy(pristine.back().data(), host.data() + std::size_t(d) * per_device,
                                per_device * sizeof(K), cudaMemcpyHostToDevice));
      if (vb)
        RXM_CUDA_CHECK(cudaMemcpy(pristine_values.back().data(),
                                  reinterpret_cast<const std::byte*>(index.data()) + std::size_t(d) * per_device * vb,
                                  per_device * vb, cudaMemcpyHostToDevice));
    }
  }
  auto restore_shards = [&] {
    for (int d = 0; d < p; ++d) {
      RXM_CUDA_CHECK(cudaMemcpy(shards[std::size_t(d)].data(), pristine[std::size_t(d)].data(), per_device * sizeof(K),
                                cudaMemcpyDefault));
      if (vb) RXM_CUDA_CHECK(cudaMemcpy(values[std::size_t(d)].data(), pristine_values[std::size_t(d)].data(),
                                        per_device * vb, cudaMemcpyDefault));
    }
  };
  std::vector<rxm::device_span<K>> key_spans(shards.begin(), shards.end());
  std::vector<rxm::device_span<std::uint32_t>> v4;
  std::vector<rxm::device_span<std::uint64_t>> v8(values.begin(), values.end());
  for (auto& v : values) v4.emplace_back(reinterpret_cast<std::uint32_t*>(v.data()), per_device, v.device());
  rxm::SortOptions options;
  options.mesh_digit_bits = o.digit_bits;
  auto mesh_sort = [&](const rxm::SortOptions& opt) {
    using KS = std::span<const rxm::device_span<K>>;
    if (vb == 0) rxm::sort_shards(ctx, KS(key_spans), opt);
    if (vb == 4) rxm::sort_shards(ctx, KS(key_spans), std::span<const rxm::device_span<std::uint32_t>>(v4), opt);
    if (vb == 8) rxm::sort_shards(ctx, KS(key_spans), std::span<const rxm::device_span<std::uint64_t>>(v8), opt);
  };

  // One device sorting everything (rxm::sort on a device_span): the yardstick, and the bytes every
  // mesh result must equal.
  auto solo = rxm::Context::local({home}, rxm::Backend::cuda);
  const auto single = time_ms(
      [&] {
        RXM_CUDA_CHECK(cudaMemcpy(whole.data(), whole_pristine.data(), total * sizeof(K), cudaMemcpyDefault));
        if (vb) RXM_CUDA_CHECK(cudaMemcpy(whole_values.data(), whole_values_pristine.data(), total * vb, cudaMemcpyDefault));
      },
      [&] {
        if (vb == 0) rxm::sort(solo, rxm::device_span<K>(whole));
        if (vb == 4)
          rxm::sort(solo, rxm::device_span<K>(whole),
                    rxm::device_span<std::uint32_t>(reinterpret_cast<std::uint32_t*>(whole_values.data()), total, home));
        if (vb == 8) rxm::sort(solo, rxm::device_span<K>(whole), rxm::device_span<std::uint64_t>(whole_values));
      },
      o.reps);
  std::vector<std::byte> want(total * (sizeof(K) + vb)), got(want.size());
  RXM_CUDA_CHECK(cudaMemcpy(want.data(), whole.data(), total * sizeof(K), cudaMemcpyDefault));
  if (vb) RXM_CUDA_CHECK(cudaMemcpy(want.data() + total * sizeof(K), whole_values.data(), total * vb, cudaMemcpyDefault));

  // Each strategy: timed, then run once more for its steps and compared with the one device's bytes.
  struct Run {
    rxm::bench::Stats stats;
    rxm::SortPhases phases;
  };
  auto run_strategy = [&](rxm::MeshSortStrategy strategy, const char* name) {
    Run r;
    rxm::SortOptions opt = options;
    opt.mesh_strategy = strategy;
    r.stats = time_ms(restore_shards, [&] { mesh_sort(opt); }, o.reps);
    restore_shards();
    sync_all_gpus();
    opt.phases = &r.phases;
    mesh_sort(opt);
    for (int d = 0; d < p; ++d) {
      RXM_CUDA_CHECK(cudaMemcpy(got.data() + std::size_t(d) * per_device * sizeof(K), shards[std::size_t(d)].data(),
                                per_device * sizeof(K), cudaMemcpyDefault));
      if (vb)
        RXM_CUDA_CHECK(cudaMemcpy(got.data() + total * sizeof(K) + std::size_t(d) * per_device * vb,
                                  values[std::size_t(d)].data(), per_device * vb, cudaMemcpyDefault));
    }
    rxm::require(got == want,
                 std::string("bench_mesh_sort: the ") + name + " strategy's keys or values differ from one device's sort",
                 "report this as a bug");
    return r;
  };
  const rxm::MeshSortStrategy asked = o.strategy == "merge"       ? rxm::MeshSortStrategy::merge
                                      : o.strategy == "partition" ? rxm::MeshSortStrategy::partition
                                                                  : rxm::MeshSortStrategy::automatic;
  const Run partition = run_strategy(rxm::MeshSortStrategy::partition, "partition");
  const Run merge = run_strategy(rxm::MeshSortStrategy::merge, "merge");
  const Run ours_run = asked == rxm::MeshSortStrategy::automatic ? run_strategy(asked, "automatic")
                       : asked == rxm::MeshSortStrategy::merge   ? merge
                                                                 : partition;
  const auto& ours = ours_run.stats;
  const rxm::SortPhases& phases = ours_run.phases;

  // Every device sorting its own shard alone.
  std::vector<rxm::Context> own;
  for (int d = 0; d < p; ++d) own.push_back(rxm::Context::local({ctx.devices()[std::size_t(d)].id}, rxm::Backend::cuda));
  const auto local_alone = time_ms(restore_shards, [&] {
    std::vector<std::thread> threads;
    for (int d = 0; d < p; ++d)
      threads.emplace_back([&, d] {
        if (vb == 0) rxm::sort(own[std::size_t(d)], key_spans[std::size_t(d)]);
        if (vb == 4) rxm::sort(own[std::size_t(d)], key_spans[std::size_t(d)], v4[std::size_t(d)]);
        if (vb == 8) rxm::sort(own[std::size_t(d)], key_spans[std::size_t(d)], v8[std::size_t(d)]);
      });
    for (auto& t : threads) t.join();
  }, o.reps);

  // The floors' yardstick: device-to-device copy traffic (read + write bytes per second).
  double traffic = 0;
  {
    rxm::detail::DeviceGuard guard(home);
    const auto copy = time_ms([] {}, [&] {
      RXM_CUDA_CHECK(cudaMemcpy(whole.data(), whole_pristine.data(), total * sizeof(K), cudaMemcpyDeviceToDevice));
      RXM_CUDA_CHECK(cudaDeviceSynchronize());
    }, o.reps);
    traffic = 2.0 * double(total * sizeof(K)) / (copy.median_ms / 1e3);
  }
  const double n = double(total), item = double(sizeof(K) + vb);
  const int passes = int((sizeof(K) * 8 + 7) / 8);
  const bool shared_memory = [&] {
    for (int d = 1; d < p; ++d)
      if (ctx.devices()[std::size_t(d)].id != home) return false;
    return true;
  }();
  // On distinct GPUs each device moves its own share at the same time.
  const double share = shared_memory ? 1.0 : 1.0 / double(p);
  auto floor_ms = [&](double bytes_per_item) { return bytes_per_item * n * share / traffic * 1e3; };
  const double split_floor = floor_ms(3 * item), exchange_floor = floor_ms(2 * item),
               sort_floor = floor_ms(2 * item * passes + double(sizeof(K)));
  int rounds = 0;
  while ((1 << rounds) < p) ++rounds;
  // In place, two devices copy their merged shares back from a buffer: one more read and write.
  if (p == 2) ++rounds;
  // Bytes per key each strategy must move at least.
  const double partition_bytes = 3 * item + 2 * item + (2 * item * passes + double(sizeof(K))),
               merge_bytes = (2 * item * passes + double(sizeof(K))) + 2 * item * rounds;

  std::string device_list;
  for (int d : o.devices) device_list += (device_list.empty() ? "" : ",") + std::to_string(d);
  rxm::bench::Case c("mesh_sort",
                     {{"devices", device_list}, {"keys", total}, {"type", o.type}, {"values", o.value_bytes},
                      {"distribution", o.distribution}, {"digit_bits", phases.digit_bits}, {"passes", phases.passes},
                      {"strategy", std::string(phases.merged ? "merge" : "partition")}},
                     n, "keys");
  c.add("radixmesh sort_shards", ours, true);
  c.add("rxm::sort on one device, all keys", single);
  c.add_diagnostic("every device sorting its own shard alone (diagnostic)", local_alone);
  c.add_diagnostic("sort_shards, partition strategy (diagnostic)", partition.stats);
  c.add_diagnostic("sort_shards, merge strategy (diagnostic)", merge.stats);
  if (phases.merged)
    c.set_floor(merge_bytes * n, traffic / share,
                "local LSD sort (read and written once per 8-bit digit, plus a histogram read) + " +
                    std::to_string(rounds) +
                    " merge rounds (read and written once each; two devices: one and the copy back), over the "
                    "device-to-device copy traffic (reads + writes) measured in this run" +
                    std::string(shared_memory ? "" : ", divided over the GPUs"));
  else
    c.set_floor(partition_bytes * n, traffic / share,
                "partition split (read twice, written once) + exchange (read and written once) + local LSD sort (read "
                "and written once per 8-bit digit, plus a histogram read), over the device-to-device copy traffic "
                "(reads + writes) measured in this run" + std::string(shared_memory ? "" : ", divided over the GPUs"));
  c.print();
  const rxm::SortPhases& pp = partition.phases;
  std::printf("partition steps: partition %.3f ms (floor %.3f), refine %.3f ms over %d passes, exchange %.3f ms (floor "
              "%.3f), local sort %.3f ms (floor %.3f)\n",
              pp.partition_ms, split_floor, pp.refine_ms, pp.passes, pp.exchange_ms, exchange_floor, pp.local_sort_ms,
              sort_floor);
  const rxm::SortPhases& mp = merge.phases;
  std::printf("merge steps: local sort %.3f ms (floor %.3f), splitters %.3f ms, first round (reads the other devices) "
              "%.3f ms (floor %.3f), %d later rounds %.3f ms (floor %.3f)\n",
              mp.local_sort_ms, sort_floor, mp.splitters_ms, mp.exchange_ms, exchange_floor,
              rounds - 1, mp.merge_ms, exchange_floor * (rounds - 1));
  std::printf("sort_shards / one device's rxm::sort = %.3f / %.3f = %.2fx (%s strategy; target <= 1.25x on 4 logical "
              "devices); partition %.2fx, merge %.2fx\n",
              ours.median_ms, single.median_ms, ours.median_ms / single.median_ms, phases.merged ? "merge" : "partition",
              partition.stats.median_ms / single.median_ms, merge.stats.median_ms / single.median_ms);
  if (o.explain) std::printf("%s", phases.plan_text.c_str());
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, home));
  auto info = rxm::bench::run_info(argc, argv, prop.name);
  rxm::bench::append_results("mesh_sort.jsonl", info, c);
  return 0;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.host && o.large)
    return o.type == "u64" ? rxm::bench::run_mesh_sort_large<std::uint64_t>(o, argc, argv)
                           : rxm::bench::run_mesh_sort_large<std::uint32_t>(o, argc, argv);
  if (o.host)
    return o.type == "u64" ? rxm::bench::run_mesh_sort_host<std::uint64_t>(o, argc, argv)
                           : rxm::bench::run_mesh_sort_host<std::uint32_t>(o, argc, argv);
  return o.type == "u64" ? run_typed<std::uint64_t>(o, argc, argv) : run_typed<std::uint32_t>(o, argc, argv);
}

}  // namespace

namespace radixmesh::bench {

const char* const mesh_sort_usage =
    "usage: bench_mesh_sort [--devices 0,0,0,0] [--keys 2^30] [--type u32|u64] [--values 0|4|8] "
    "[--distribution uniform] [--digit-bits 8] [--strategy automatic|partition|merge] [--reps 5] [--explain] "
    "[--host [--out-of-core BYTES | --large]]\n";

Stats time_ms(const std::function<void()>& restore, const std::function<void()>& run, int reps) {
  restore();
  run();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    restore();
    sync_all_gpus();
    const auto start = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return summarize(t);
}

void sync_all_gpus() {
  int count = 0;
  RXM_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    detail::DeviceGuard guard(d);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

int run_mesh_sort_benchmark(int argc, char** argv) { return run(argc, argv); }

}  // namespace radixmesh::bench
