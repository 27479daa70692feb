// bench_exchange: the mesh's all-to-all-v against NCCL's grouped send/recv (where NCCL can run:
// one GPU per mesh device), the naive all-at-once copy-engine exchange (every pair's
// cudaMemcpyPeerAsync issued at once on one stream) and the device-to-device copy of the same
// bytes, in the same run, on logical devices of one GPU or on distinct GPUs.
//
//   bench_exchange [--devices 0,0,0,0] [--bytes-per-device 2G] [--skew uniform|zipf:S] [--reps N]
//                  [--transport auto|peer|peer-sm|nccl] [--explain] [--unaligned]
//
// --unaligned moves a few elements between neighbouring pieces, so pieces start at any 4-byte
// offset (as a sort's pieces do) instead of at multiples of 16 bytes and more.
// --explain prints the exchange planner's plan for these counts over the machine's link graph
// (routes per pair: direct, relayed or staged through host memory; rounds; modelled time).
//
// Ours is the transport --transport names (auto: the one the context picks, printed); the other
// one-process transports (peer, peer-sm) are timed beside it as diagnostics, and NCCL as the peer.
// Every participant sends --bytes-per-device bytes (4-byte elements), split over the destinations
// evenly (uniform) or by Zipf(S) over the destination's rank (destination 0 hottest). Printed: the
// time, the bytes sent per device per second, and the floor: on logical devices, every byte is
// read and written once in the one GPU's memory, so the floor is the bytes sent over the measured
// device-to-device copy rate; on distinct GPUs, the busiest device's off-device bytes (in or out)
// over the rate one GPU measured sending to all the others at once.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "mesh_benchmarks.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/links.hpp"

namespace rxm = radixmesh;
using rxm::comm::AllToAllV;

namespace {

struct Options {
  std::vector<int> devices{0, 0, 0, 0};
  std::uint64_t bytes_per_device = std::uint64_t(2) << 30;
  double zipf_s = 0;  // 0: uniform
  int reps = 10;
  rxm::comm::Transport transport = rxm::comm::Transport::automatic;
  bool explain = false;  // print the exchange planner's routes and schedule for this exchange
  bool unaligned = false;  // pieces at 4-byte offsets
};

std::uint64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double v = std::stod(text, &used);
  const std::string unit = text.substr(used);
  const double scale = unit.empty() ? 1 : unit == "K" ? 1024.0 : unit == "M" ? 1024.0 * 1024 : unit == "G" ? 1024.0 * 1024 * 1024 : -1;
  rxm::require(scale > 0 && v > 0, "--bytes-per-device " + text + " is not a size", "write e.g. 64M, 512M or 2G");
  return std::uint64_t(v * scale);
}

Options parse(int argc, char** argv) {
  Options o;
  rxm::bench::DriverArgs args("bench_exchange", argc, argv);
  while (args.next()) {
    auto value = [&] { return args.value(); };
    if (args.is("--devices")) {
      o.devices = rxm::bench::driver_device_list("bench_exchange", value());
    } else if (args.is("--bytes-per-device")) {
      o.bytes_per_device = parse_bytes(value());
    } else if (args.is("--skew")) {
      const std::string s = value();
      if (s.rfind("zipf:", 0) == 0)
        o.zipf_s = std::stod(s.substr(5));
      else
        rxm::require(s == "uniform", "--skew " + s + " is not known", "use uniform or zipf:S");
    } else if (args.is("--reps")) {
      o.reps = std::stoi(value());
    } else if (args.is("--explain")) {
      o.explain = true;
    } else if (args.is("--unaligned")) {
      o.unaligned = true;
    } else if (args.is("--transport")) {
      o.transport = rxm::comm::transport_from_name(value());
    } else {
      args.unknown();
    }
  }
  rxm::require(!o.devices.empty() && o.reps > 0, "no devices or no repetitions", "see --help");
  return o;
}

// Elements participant i sends to j: the device's share split evenly or by Zipf(s) over j;
// unaligned, 1 to 3 elements fewer for every destination but the last (which takes them).
std::vector<std::vector<std::uint64_t>> send_counts(std::size_t p, std::uint64_t elems, double s, bool unaligned) {
  std::vector<double> w(p);
  double total = 0;
  for (std::size_t j = 0; j < p; ++j) total += w[j] = s == 0 ? 1.0 : 1.0 / std::pow(double(j + 1), s);
  std::vector<std::vector<std::uint64_t>> c(p, std::vector<std::uint64_t>(p));
  for (std::size_t i = 0; i < p; ++i) {
    std::uint64_t given = 0;
    for (std::size_t j = 0; j + 1 < p; ++j) {
      c[i][j] = std::uint64_t(double(elems) * w[j] / total);
      if (unaligned) c[i][j] -= std::min<std::uint64_t>(c[i][j], 1 + (i + j) % 3);
      given += c[i][j];
    }
    c[i][p - 1] = elems - given;
  }
  return c;
}

struct Participant {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  std::vector<std::uint64_t> send_counts, send_displs, recv_counts, recv_displs;
  std::uint64_t recv_elems = 0;
};

void sync_all(const std::vector<Participant>& parts) {
  for (const auto& p : parts) {
    rxm::detail::DeviceGuard guard(p.device);
    RXM_CUDA_CHECK(cudaStreamSynchronize(p.stream));
  }
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::size_t p = o.devices.size();
  const std::size_t elem = 4;
  const std::uint64_t elems = o.bytes_per_device / elem;
  const auto counts = send_counts(p, elems, o.zipf_s, o.unaligned);
  bool logical = true;
  for (int d : o.devices) logical = logical && d == o.devices[0];

  // The context's mesh devices (logical devices when an id repeats) and its communicator.
  auto ctx = rxm::Context::local(o.devices, rxm::Backend::cuda);
  const rxm::comm::Transport chosen = rxm::use_transport(ctx, o.transport).transport();
  std::printf("transport: %s%s\n", rxm::comm::name_of(chosen),
              o.transport == rxm::comm::Transport::automatic ? " (the automatic choice)" : "");
  std::vector<Participant> parts(p);
  for (std::size_t i = 0; i < p; ++i) {
    Participant& x = parts[i];
    x.device = o.devices[i];
    x.stream = rxm::detail::cuda_resources(ctx).devices[i].stream;
    rxm::detail::DeviceGuard guard(x.device);
    x.send_counts = counts[i];
    std::uint64_t at = 0;
    for (std::size_t j = 0; j < p; ++j) x.send_displs.push_back(std::exchange(at, at + counts[i][j]));
    for (std::size_t j = 0; j < p; ++j) {
      x.recv_counts.push_back(counts[j][i]);
      x.recv_displs.push_back(x.recv_elems);
      x.recv_elems += counts[j][i];
    }
    RXM_CUDA_CHECK(cudaMalloc(&x.send, elems * elem));
    RXM_CUDA_CHECK(cudaMalloc(&x.recv, x.recv_elems * elem));
    RXM_CUDA_CHECK(cudaMemset(x.send, int(i + 1), elems * elem));
  }
  if (o.explain) {
    std::vector<std::uint64_t> bytes;
    for (const auto& row : counts)
      for (std::uint64_t c : row) bytes.push_back(c * elem);
    const rxm::LinkReport plan = rxm::explain_exchange(ctx, bytes);
    std::printf("exchange plan (link rates: %s)\n%s", plan.source.c_str(), plan.text.c_str());
  }
  std::vector<AllToAllV> entries;
  for (const auto& x : parts)
    entries.push_back({{x.device, x.stream}, x.send, x.recv, x.recv_elems, x.send_counts, x.send_displs, x.recv_counts,
                       x.recv_displs});

  const int warmup = 2;
  auto time_transport = [&](rxm::comm::Transport t) {
    auto& transport = rxm::use_transport(ctx, t);
    return rxm::bench::time_host({}, [&] {
      transport.all_to_all_v(entries, elem);
      sync_all(parts);
    }, warmup, o.reps);
  };
  const auto ours = time_transport(chosen);
  // The other transports of one process, each where it can run here (NCCL: one GPU per device).
  std::vector<std::pair<rxm::comm::Transport, rxm::bench::Stats>> others;
  for (auto t : {rxm::comm::Transport::peer, rxm::comm::Transport::peer_sm, rxm::comm::Transport::nccl}) {
    if (t == chosen) continue;
    try {
      others.emplace_back(t, time_transport(t));
    } catch (const rxm::Error& e) {
      std::printf("%s transport: not run here (%s)\n", rxm::comm::name_of(t), e.what());
    }
  }

  // The naive exchange: every pair's copy issued at once, in pair order, on participant 0's stream.
  auto naive = rxm::bench::time_host({}, [&] {
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = 0; j < p; ++j) {
        const std::uint64_t bytes = counts[i][j] * elem;
        if (!bytes) continue;
        const auto* src = static_cast<const char*>(parts[i].send) + parts[i].send_displs[j] * elem;
        auto* dst = static_cast<char*>(parts[j].recv) + parts[j].recv_displs[i] * elem;
        RXM_CUDA_CHECK(cudaMemcpyPeerAsync(dst, parts[j].device, src, parts[i].device, bytes, parts[0].stream));
      }
    sync_all(parts);
  }, warmup, o.reps);

  // The floor's rate, measured in this run.
  double floor_bytes = 0, floor_rate = 0;
  std::string basis;
  if (logical) {
    rxm::detail::DeviceGuard guard(parts[0].device);
    auto copy = rxm::bench::time_host({}, [&] {
      RXM_CUDA_CHECK(cudaMemcpyAsync(parts[0].recv, parts[0].send, std::min(parts[0].recv_elems, elems) * elem,
                                     cudaMemcpyDeviceToDevice, parts[0].stream));
      RXM_CUDA_CHECK(cudaStreamSynchronize(parts[0].stream));
    }, warmup, o.reps);
    floor_rate = double(std::min(parts[0].recv_elems, elems) * elem) / (copy.median_ms / 1e3);
    floor_bytes = double(elems * elem * p);
    basis = "every byte sent is copied once within the one GPU: bytes sent by all participants over the "
            "device-to-device cudaMemcpyAsync rate (bytes copied / s) measured in this run";
    std::printf("device-to-device copy: %.1f GB/s (bytes copied per second)\n", floor_rate / 1e9);
  } else {
    // One GPU sending to every other at once: its outgoing capacity.
    std::vector<cudaStream_t> s(p);
    rxm::detail::DeviceGuard guard(parts[0].device);
    for (auto& x : s) RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    const std::uint64_t chunk = elems / p * elem;
    auto probe = rxm::bench::time_host({}, [&] {
      for (std::size_t j = 1; j < p; ++j)
        RXM_CUDA_CHECK(cudaMemcpyPeerAsync(parts[j].recv, parts[j].device, parts[0].send, parts[0].device, chunk, s[j]));
      for (std::size_t j = 1; j < p; ++j) RXM_CUDA_CHECK(cudaStreamSynchronize(s[j]));
    }, warmup, o.reps);
    for (auto& x : s) cudaStreamDestroy(x);
    floor_rate = double(chunk * (p - 1)) / (probe.median_ms / 1e3);
    for (std::size_t i = 0; i < p; ++i) {
      std::uint64_t out = 0, in = 0;
      for (std::size_t j = 0; j < p; ++j)
        if (j != i) out += counts[i][j] * elem, in += counts[j][i] * elem;
      floor_bytes = std::max(floor_bytes, double(std::max(out, in)));
    }
    basis = "the busiest device's off-device bytes (in or out) over the rate GPU 0 measured sending to every "
            "other GPU at once in this run";
  }

  std::string device_list;
  for (int d : o.devices) device_list += (device_list.empty() ? "" : ",") + std::to_string(d);
  rxm::bench::Case c("exchange",
                     {{"devices", device_list}, {"logical", logical}, {"bytes_per_device", o.bytes_per_device},
                      {"skew", o.zipf_s == 0 ? std::string("uniform") : "zipf:" + std::to_string(o.zipf_s)},
                      {"transport", rxm::comm::name_of(chosen)}, {"elem_bytes", elem}, {"unaligned", o.unaligned}},
                     double(elems * elem * p), "bytes");
  c.add(std::string("radixmesh all_to_all_v (") + rxm::comm::name_of(chosen) + " transport)", ours, true);
  c.add("naive all-at-once cudaMemcpyPeerAsync exchange", naive);
  for (const auto& [t, stats] : others) {
    if (t == rxm::comm::Transport::nccl)
      c.add("NCCL grouped ncclSend/ncclRecv (one communicator per GPU, ncclCommInitAll)", stats);
    else
      c.add_diagnostic(std::string("radixmesh all_to_all_v (") + rxm::comm::name_of(t) + " transport)", stats);
  }
  c.set_floor(floor_bytes, floor_rate, basis);
  c.print();
  const double per_device = double(o.bytes_per_device) / (ours.median_ms / 1e3);
  std::printf("sent per device: %.1f GB/s; ours at %.0f%% of the floor\n", per_device / 1e9,
              100.0 * (floor_bytes / floor_rate * 1e3) / ours.median_ms);
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, parts[0].device));
  rxm::bench::append_results("exchange.jsonl", rxm::bench::run_info(argc, argv, prop.name), c);
  for (auto& x : parts) {
    rxm::detail::DeviceGuard guard(x.device);
    cudaFree(x.send);
    cudaFree(x.recv);
  }
  return 0;
}

}  // namespace

namespace radixmesh::bench {

const char* const exchange_usage =
    "usage: bench_exchange [--devices 0,0,0,0] [--bytes-per-device 2G] [--skew uniform|zipf:S] [--reps N] [--transport auto|peer|peer-sm|nccl] [--explain] [--unaligned]\n";

int run_exchange_benchmark(int argc, char** argv) { return run(argc, argv); }

}  // namespace radixmesh::bench
