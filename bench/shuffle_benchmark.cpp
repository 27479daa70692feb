// bench_shuffle: rxm::shuffle of device-resident u32 keys over GPU mesh devices (logical devices
// of one GPU by default), beside its parts measured alone in the same run: every device's local
// multisplit (rxm::multisplit on its shard, the same bucket function) and an all_to_all_v of the
// same number of keys (the Communicator alone). The target compares the shuffle with the
// larger of the two. Every step prints its time and its floor.
//
//   bench_shuffle [--devices 0,0,0,0] [--keys 2^30] [--buckets 1024] [--owners round-robin|block] [--tiles N] [--reps 5]
//
// Ours runs with --tiles (default 0: the automatic count); the other order of operations (not
// streamed when ours streams, 4 tiles when it does not) is timed beside it.
//
// Floors (bytes over the device-to-device copy traffic measured in this run, reads plus writes):
// each of the two splits (the senders' by owner, the receivers' by bucket) reads every key twice
// and writes it once (12 bytes a key), the exchange reads and writes every key once (8 bytes a
// key); on logical devices of one GPU every step shares that GPU's memory, so the floors add up.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "radixmesh/communicator.hpp"
#include "core/context_state.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "mesh_benchmarks.hpp"
#include "radixmesh/radixmesh.hpp"
#include "radixmesh/shuffle.hpp"

namespace rxm = radixmesh;

namespace {

struct Options {
  std::vector<int> devices{0, 0, 0, 0};
  std::uint64_t keys = std::uint64_t(1) << 30;
  std::uint32_t buckets = 1024;
  bool block_owners = false;  // contiguous bucket ranges per device instead of round-robin
  int tiles = 0;              // ShuffleOptions::tiles of ours (0: automatic)
  int reps = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  rxm::bench::DriverArgs args("bench_shuffle", argc, argv);
  while (args.next()) {
    auto value = [&] { return args.value(); };
    if (args.is("--devices")) {
      o.devices = rxm::bench::driver_device_list("bench_shuffle", value());
    } else if (args.is("--keys")) {
      o.keys = rxm::bench::driver_count("bench_shuffle", "--keys", value());
    } else if (args.is("--buckets")) {
      o.buckets = std::uint32_t(std::stoul(value()));
    } else if (args.is("--owners")) {
      const std::string v = value();
      if (v != "block" && v != "round-robin") rxm::bench::driver_argument_error("bench_shuffle", "--owners " + v + " is not block or round-robin");
      o.block_owners = v == "block";
    } else if (args.is("--tiles")) {
      o.tiles = std::stoi(value());
    } else if (args.is("--reps")) {
      o.reps = std::stoi(value());
    } else {
      args.unknown();
    }
  }
  return o;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void sync_devices(const rxm::Context& ctx) {
  for (const auto& d : rxm::detail::cuda_resources(ctx).devices) {
    rxm::detail::DeviceGuard guard(d.device);
    RXM_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

rxm::bench::Stats time_ms(const std::function<void()>& run, int reps) {
  run();  // warm-up: module load, pools, peer mappings
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double start = now_ms();
    run();
    t.push_back(now_ms() - start);
  }
  return rxm::bench::summarize(t);
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto ctx = rxm::Context::local(o.devices, rxm::Backend::cuda);
  const int p = ctx.mesh_size();
  const std::uint64_t per_device = o.keys / std::uint64_t(p);
  const std::uint64_t total = per_device * std::uint64_t(p);

  // Inputs: random u32 keys, one shard per device.
  std::vector<rxm::DeviceArray<std::uint32_t>> shards;
  std::vector<rxm::device_span<const std::uint32_t>> spans;
  {
    std::vector<std::uint32_t> host(per_device);
    for (int d = 0; d < p; ++d) {
      rxm::generate(std::span(host), {.distribution = rxm::Distribution::uniform, .seed = std::uint64_t(d + 1)});
      shards.emplace_back(ctx.devices()[std::size_t(d)].id, per_device);
      RXM_CUDA_CHECK(cudaMemcpy(shards.back().data(), host.data(), per_device * 4, cudaMemcpyHostToDevice));
    }
  }
  for (const auto& s : shards) spans.emplace_back(s);
  std::vector<int> owner(o.buckets);
  for (std::uint32_t b = 0; b < o.buckets; ++b)
    owner[b] = o.block_owners ? int(std::uint64_t(b) * std::uint64_t(p) / o.buckets) : int(b % std::uint32_t(p));
  const rxm::buckets::hash fn{.m = o.buckets};

  // The shuffle, whole, then once more with its steps timed.
  auto shuffle_with = [&](int tiles) {
    return time_ms([&] {
      auto r = rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(spans), fn,
                            std::span<const int>(owner), {.tiles = tiles});
    }, o.reps);
  };
  auto ours = shuffle_with(o.tiles);
  rxm::ShufflePhases phases;
  {
    auto r = rxm::shuffle(ctx, std::span<const rxm::device_span<const std::uint32_t>>(spans), fn,
                          std::span<const int>(owner), {.phases = &phases, .tiles = o.tiles});
    std::uint64_t received = 0;
    for (const auto& s : r.shards) received += s.keys.size();
    rxm::require(received == total, "bench_shuffle: the shuffle returned " + std::to_string(received) + " keys of " +
                                        std::to_string(total),
                 "report this as a bug");
  }

  // The other order of operations, beside ours: not streamed when ours streams, else streamed.
  const int other_tiles = phases.tiles > 1 ? 1 : 4;
  const auto other = shuffle_with(other_tiles);

  // The local multisplit alone: every shard split by the same function at the same time, each
  // device by its own host thread on a context of its own (its own stream, also for logical
  // devices), as a user splits shards on several GPUs today.
  std::vector<rxm::DeviceArray<std::uint32_t>> outs;
  std::vector<rxm::Context> solo;
  for (int d = 0; d < p; ++d) {
    outs.emplace_back(ctx.devices()[std::size_t(d)].id, per_device);
    solo.push_back(rxm::Context::local({ctx.devices()[std::size_t(d)].id}, rxm::Backend::cuda));
  }
  std::vector<std::vector<std::size_t>> offsets(static_cast<std::size_t>(p), std::vector<std::size_t>(o.buckets + 1));
  auto split = time_ms([&] {
    std::vector<std::thread> threads;
    for (int d = 0; d < p; ++d)
      threads.emplace_back([&, d] {
        rxm::multisplit(solo[std::size_t(d)], std::span<const std::uint32_t>(shards[std::size_t(d)].data(), per_device),
                        outs[std::size_t(d)].span(), fn, std::span<std::size_t>(offsets[std::size_t(d)]),
                        {.checked = false});
      });
    for (auto& t : threads) t.join();
  }, o.reps);

  // The all_to_all_v alone: every device sends an equal share to every device (what a hash split
  // sends, to within its statistics).
  auto& comm = rxm::communicator(ctx);
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) {
    counts[std::size_t(j)] = per_device / std::uint64_t(p) + (j < int(per_device % std::uint64_t(p)) ? 1 : 0);
    displs[std::size_t(j)] = j == 0 ? 0 : displs[std::size_t(j - 1)] + counts[std::size_t(j - 1)];
  }
  std::vector<rxm::comm::AllToAllV> entries;
  const auto& res = rxm::detail::cuda_resources(ctx).devices;
  for (int d = 0; d < p; ++d)
    entries.push_back({{res[std::size_t(d)].device, res[std::size_t(d)].stream}, shards[std::size_t(d)].data(),
                       outs[std::size_t(d)].data(), per_device, counts, displs, counts, displs});
  auto exchange = time_ms([&] {
    comm.all_to_all_v(entries, 4);
    sync_devices(ctx);
  }, o.reps);

  // The floors' yardstick: device-to-device copy traffic (read + write bytes per second).
  double traffic = 0;
  {
    rxm::detail::DeviceGuard guard(ctx.devices()[0].id);
    auto copy = time_ms([&] {
      RXM_CUDA_CHECK(cudaMemcpy(outs[0].data(), shards[0].data(), per_device * 4, cudaMemcpyDeviceToDevice));
      RXM_CUDA_CHECK(cudaDeviceSynchronize());  // a device-to-device cudaMemcpy does not wait for itself
    }, o.reps);
    traffic = 2.0 * double(per_device * 4) / (copy.median_ms / 1e3);
  }
  const double n = double(total);
  const double floor_split = 12 * n / traffic * 1e3, floor_move = 8 * n / traffic * 1e3;

  std::string device_list;
  for (int d : o.devices) device_list += (device_list.empty() ? "" : ",") + std::to_string(d);
  rxm::bench::Case c("shuffle",
                     {{"devices", device_list}, {"keys", total}, {"type", "u32"}, {"buckets", "hash"},
                      {"m", o.buckets}, {"owners", o.block_owners ? "block" : "round-robin"}, {"tiles", phases.tiles}},
                     n, "keys");
  const auto order_name = [](int tiles) {
    return tiles > 1 ? "streamed, " + std::to_string(tiles) + " tiles" : std::string("not streamed");
  };
  c.add("radixmesh shuffle (" + order_name(phases.tiles) + ")", ours, true);
  c.add_diagnostic("radixmesh shuffle (" + order_name(other_tiles) + ", diagnostic)", other);
  c.add_diagnostic("local multisplit alone, every device at once (diagnostic)", split);
  c.add_diagnostic("all_to_all_v alone, same keys (diagnostic)", exchange);
  c.set_floor(12 * n + 8 * n + 12 * n, traffic,
              "split by owner and split by bucket (keys read twice, written once, each) + exchange (read and "
              "written once) over the device-to-device copy traffic (reads + writes) measured in this run");
  c.print();
  if (phases.tiles > 1)
    std::printf("steps (%d tiles): counts %.3f ms, splits by owner and exchanges streamed %.3f ms (floors: split "
                "%.3f, exchange %.3f), split by bucket %.3f ms (floor %.3f)\n",
                phases.tiles, phases.counts_ms, phases.split_ms, floor_split, floor_move, phases.group_ms, floor_split);
  else
    std::printf("steps: split by owner %.3f ms (floor %.3f), counts %.3f ms, exchange %.3f ms (floor %.3f), split by "
                "bucket %.3f ms (floor %.3f)\n",
                phases.split_ms, floor_split, phases.counts_ms, phases.exchange_ms, floor_move, phases.group_ms,
                floor_split);
  const double larger = std::max(split.median_ms, exchange.median_ms);
  std::printf("shuffle / max(multisplit alone, all_to_all_v alone) = %.3f / %.3f = %.2fx (target <= 1.2x)\n",
              ours.median_ms, larger, ours.median_ms / larger);
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx.devices()[0].id));
  auto info = rxm::bench::run_info(argc, argv, prop.name);
  rxm::bench::append_results("shuffle.jsonl", info, c);
  return 0;
}

}  // namespace

namespace radixmesh::bench {

const char* const shuffle_usage =
    "usage: bench_shuffle [--devices 0,0,0,0] [--keys 2^30] [--buckets 1024] [--owners round-robin|block] [--tiles N] [--reps 5]\n";

int run_shuffle_benchmark(int argc, char** argv) { return run(argc, argv); }

}  // namespace radixmesh::bench
