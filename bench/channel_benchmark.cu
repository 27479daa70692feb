// bench_channel: pushes through rxm::Channel against a plain write of the same bytes.
//
//   bench_channel [--devices 0,0,0,0] [--keys 67108864] [--m 256] [--reps 5]
//
// Every context device runs one kernel over --keys u32 keys (uniform), pushing (key, index) to
// the owner of the key's top-digit bucket (m buckets, owned round robin). The floor is the same
// kernel shape writing each (key, index) to slot i of a buffer on its own device: the same bytes
// read and written, with no bucket, no owner lookup and no reservation. Both are timed from the
// first launch to the last stream's end (host clock after synchronizing every stream), median of
// --reps; close() (the grouping by bucket on every receiver) is timed on its own. Prints tuples/s
// and GB/s (12 bytes per tuple: key read, key and value written) for both.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "radixmesh/channel.hpp"
#include "radixmesh/device/channel.cuh"

namespace rxm = radixmesh;
using Digit = rxm::buckets::radix_digit;

namespace {

__global__ void push_kernel(rxm::ChannelView<std::uint32_t, std::uint32_t, Digit> view, const std::uint32_t* keys,
                            std::size_t n, std::uint32_t first) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    view.push(keys[i], first + std::uint32_t(i));
}

__global__ void write_kernel(const std::uint32_t* keys, std::size_t n, std::uint32_t first, std::uint32_t* out_keys,
                             std::uint32_t* out_values) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out_keys[i] = keys[i];
    out_values[i] = first + std::uint32_t(i);
  }
}

std::vector<int> parse_devices(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    out.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> devices = {0, 0, 0, 0};
  std::size_t n = std::size_t(1) << 26;
  int bits = 8, reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--devices") devices = parse_devices(value);
    else if (flag == "--keys") n = std::stoull(value);
    else if (flag == "--m") bits = 31 - __builtin_clz(unsigned(std::stoul(value)));
    else if (flag == "--reps") reps = std::stoi(value);
    else {
      std::fprintf(stderr, "usage: bench_channel [--devices 0,0,0,0] [--keys N] [--m 2^b] [--reps R]\n");
      return 2;
    }
  }
  try {
    auto ctx = rxm::Context::local(devices, rxm::Backend::cuda);
    const std::size_t d = ctx.devices().size();
    const std::uint32_t m = 1u << bits;
    std::vector<int> owners(m);
    for (std::uint32_t b = 0; b < m; ++b) owners[b] = int(b % d);
    std::vector<rxm::DeviceArray<std::uint32_t>> keys, out_keys, out_values;
    std::mt19937_64 rng(42);
    std::vector<std::uint32_t> host(n);
    for (std::size_t s = 0; s < d; ++s) {
      for (auto& k : host) k = std::uint32_t(rng());
      const int ordinal = ctx.devices()[s].id;
      keys.emplace_back(ordinal, n);
      out_keys.emplace_back(ordinal, n);
      out_values.emplace_back(ordinal, n);
      RXM_CUDA_CHECK(cudaMemcpy(keys.back().data(), host.data(), n * 4, cudaMemcpyHostToDevice));
    }
    auto& streams = rxm::detail::cuda_resources(ctx).devices;
    auto sync_all = [&] {
      for (auto& r : streams) {
        rxm::detail::DeviceGuard guard(r.device);
        RXM_CUDA_CHECK(cudaDeviceSynchronize());
      }
    };
    sync_all();
    const unsigned blocks = unsigned(std::min<std::size_t>((n + 255) / 256, 4096));
    // Capacity: the expected share plus 1 % and 4096 slack (uniform keys, round-robin owners).
    const std::size_t per_receiver = n * d / std::min<std::size_t>(d, m);
    const std::size_t capacity = per_receiver + per_receiver / 100 + 4096;
    std::vector<double> push_s, write_s, close_s;
    for (int rep = 0; rep <= reps; ++rep) {  // rep 0 warms up
      auto ch = rxm::make_channel<std::uint32_t, std::uint32_t>(ctx, Digit{32 - bits, bits}, owners, capacity);
      sync_all();
      auto t0 = std::chrono::steady_clock::now();
      for (std::size_t s = 0; s < d; ++s) {
        rxm::detail::DeviceGuard guard(streams[s].device);
        push_kernel<<<blocks, 256, 0, streams[s].stream>>>(ch.view(int(s)), keys[s].data(), n,
                                                          std::uint32_t(s * n));
        RXM_CUDA_CHECK_LAUNCH();
      }
      sync_all();
      const double pushed = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      ch.close();
      const double closed = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      for (std::size_t s = 0; s < d; ++s) {
        rxm::detail::DeviceGuard guard(streams[s].device);
        write_kernel<<<blocks, 256, 0, streams[s].stream>>>(keys[s].data(), n, std::uint32_t(s * n),
                                                           out_keys[s].data(), out_values[s].data());
        RXM_CUDA_CHECK_LAUNCH();
      }
      sync_all();
      const double written = seconds_since(t0);
      if (rep == 0) continue;
      push_s.push_back(pushed);
      close_s.push_back(closed);
      write_s.push_back(written);
    }
    const double tuples = double(n) * double(d), bytes = tuples * 12;
    const double p = median(push_s), w = median(write_s), c = median(close_s);
    std::printf("bench_channel: %zu devices (GPUs", d);
    for (int o : devices) std::printf(" %d", o);
    std::printf("), %zu u32 keys + u32 values per device, m = %u, capacity %zu, median of %d\n", n, m, capacity, reps);
    std::printf("  push (channel)      %8.3f ms  %7.2f Gtuples/s  %7.1f GB/s\n", p * 1e3, tuples / p * 1e-9,
                bytes / p * 1e-9);
    std::printf("  plain write (floor) %8.3f ms  %7.2f Gtuples/s  %7.1f GB/s\n", w * 1e3, tuples / w * 1e-9,
                bytes / w * 1e-9);
    std::printf("  push / floor        %8.2fx\n", p / w);
    std::printf("  close (grouping)    %8.3f ms\n", c * 1e3);
  } catch (const rxm::Error& e) {
    std::fprintf(stderr, "bench_channel: %s\n", e.what());
    return 1;
  }
  return 0;
}
