// bench_multisplit: radixmesh's GPU multisplit against what users do today, measured in one run.
//
//  - radix-digit buckets (m = 2^bits, the top digit of u32 keys): ours (cuda::multisplit_digit)
//    vs CUB DeviceRadixSort restricted to the same bit range (a stable LSD pass: the same output).
//    From 6 bits up multisplit_digit itself runs CUB's pass (plus the offsets); our own engine is
//    then timed as the diagnostic "own multisplit engine", and every tuning diagnostic runs ours.
//  - delta buckets over [0, 2^32 - 1): ours (device::multisplit with buckets::delta) vs RB-sort
//    (paper §3: label kernel + CUB SortPairs on ceil(log2 m) bits of the label; pairs pack key and
//    value into 64 bits and unpack after), also stable, so again the same output.
// Keys-only and u32/u32 pairs, uniform and Zipf keys, m = 2, 32, 256, 4096. Every output of ours is
// compared with the peer's (bit for bit) before timing. Timing: CUDA events, warm-up, median of
// --reps runs; inputs of 2^28 keys (1 GiB) dwarf the 50 MB L2. Floor: 12 B/key (keys only: read
// for the counts, read and write for the scatter) or 20 B/pair over the device-to-device copy
// bandwidth measured in the same run (cudaMemcpyAsync of 1 GiB, bytes read + written / time).
// Also times our counting pass alone (histogram only), to split our time into its two passes, and,
// as diagnostics checked like ours, the other ranking method (ballots / __match_any_sync) and the
// other number of scatter tile buffers, and at m <= 32 the other scatter passes (block tiles /
// warp-owned parts / thread counters: the A/Bs behind docs/design/multisplit.md).
//  - splitter buckets (m - 1 evenly spaced boundaries, m = 32 and 256 when in --m): ours
//    (device::multisplit with buckets::splitters, the table searched in shared memory) vs RB-sort
//    labelling with the same functor, like the delta case.
//  - host API: every case also times rxm::multisplit (radixmesh/multisplit.hpp) on the same device
//    spans, as a diagnostic beside the device-level figure: what a default user gets (checked mode
//    on: the delta and splitter cases then count first and look for bad ids; radix digits of the
//    raw bits cannot be out of range), the wall-clock time of the call (it returns with the offsets
//    on the host), scratch from the context's pool (src/cuda/runtime/scratch.hpp). The delta and
//    splitter cases add the unchecked call. Checked against the peer's output like ours.
//  - skewed buckets (opt-in: --skewed, or --distribution binomial / 0.25-uniform): keys whose radix
//    digit follows the multisplit paper's §6.4 distributions, binomial B(m - 1, 1/2) (at m = 256
//    about 72 % of the buckets empty) and 0.25-uniform (a quarter of the keys uniform over the
//    buckets, the rest in one random bucket); radix-digit cases only.
// --m takes a comma-separated list (e.g. --m 2,3,4,17,32); --distribution takes a comma-separated
// list of uniform, zipf, binomial, 0.25-uniform (default uniform,zipf); --help says how to run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "cuda/multisplit/multisplit_digit.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "harness/device_timing.cuh"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device/multisplit.cuh"
#include "radixmesh/generate.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace rxm = radixmesh;
using rxm::bench::Case;
using rxm::bench::Stats;
using rxm::bench::time_device;

namespace {

// RB-sort's label pass (paper §3) for any bucket functor; pairs also pack key and value into 64 bits.
template <class F>
__global__ void label_kernel(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* labels,
                             std::uint64_t* packed, std::size_t n, F fn) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t k = keys[i];
    labels[i] = fn(k);
    if (packed != nullptr) packed[i] = (std::uint64_t(k) << 32) | values[i];
  }
}
__global__ void unpack_kernel(const std::uint64_t* packed, std::uint32_t* keys, std::uint32_t* values, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t p = packed[i];
    keys[i] = std::uint32_t(p >> 32);
    values[i] = std::uint32_t(p);
  }
}

__device__ std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Keys whose top `bits` bits (the case's radix digit) follow a skewed bucket distribution of the
// multisplit paper's §6.4, the bits below uniform: binomial B(m - 1, 1/2), drawn as the number of
// set bits among m - 1 random ones, or 0.25-uniform (a quarter of the keys uniform over the
// buckets, the rest in bucket `heavy`).
__global__ void skewed_keys_kernel(std::uint32_t* keys, std::size_t n, int bits, bool binomial, std::uint32_t heavy,
                                   std::uint64_t seed) {
  const std::uint32_t m = 1u << bits;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix64(seed ^ mix64(i));
    if (bits == 0) {
      keys[i] = std::uint32_t(h);
      continue;
    }
    std::uint32_t bucket = 0;
    if (binomial) {
      std::uint64_t word = 0;
      for (std::uint32_t left = m - 1; left > 0; left -= left < 64 ? left : 64) {
        const std::uint64_t r = mix64(h + ++word * 0x9e3779b97f4a7c15ull);
        bucket += std::uint32_t(__popcll(left >= 64 ? r : r & ((1ull << left) - 1)));
      }
    } else {
      bucket = (h >> 62) == 0 ? std::uint32_t(h >> 32) & (m - 1) : heavy;  // top two bits zero: 1 key in 4
    }
    keys[i] = (bucket << (32 - bits)) | (std::uint32_t(h) & ((1u << (32 - bits)) - 1));
  }
}

bool is_skewed(const std::string& distribution) { return distribution == "binomial" || distribution == "0.25-uniform"; }

const char* const usage =
    "usage: bench_multisplit [--n N] [--reps R] [--m M[,M...]] [--distribution D[,D...]] [--skewed]\n"
    "  D: uniform, zipf (the default pair), binomial, 0.25-uniform (skewed buckets, paper section 6.4:\n"
    "     radix-digit cases only, keys drawn per m)\n"
    "  --skewed adds binomial and 0.25-uniform to the distributions (opt-in: they lengthen the run)\n"
    "  default cases: radix digit vs CUB and delta vs RB-sort at every m, splitters vs RB-sort at\n"
    "  m = 32 and 256; each also times the host API rxm::multisplit on the same device spans\n"
    "  examples: bench_multisplit --m 2,32,64,256,4096 --reps 10        (the standard run)\n"
    "            bench_multisplit --m 32,256 --distribution binomial,0.25-uniform --reps 10\n";

__global__ void count_differences_kernel(const unsigned char* a, const unsigned char* b, std::size_t bytes,
                                         unsigned long long* differences) {
  const std::size_t words = bytes / 4, stride = std::size_t(gridDim.x) * blockDim.x;
  unsigned long long found = 0;
  const auto* wa = reinterpret_cast<const std::uint32_t*>(a);  // cudaMalloc'd arrays: 256-byte aligned
  const auto* wb = reinterpret_cast<const std::uint32_t*>(b);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += stride)
    found += wa[i] != wb[i];
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::size_t i = 4 * words; i < bytes; ++i) found += a[i] != b[i];
  if (found) atomicAdd(differences, found);
}

// Bit-for-bit comparison of two device arrays, on the device (a host copy of 2 x 1 GiB per check
// took about a second; the bench checks every output). Runs on the legacy default stream, which
// waits for the bench's blocking stream; the host API's calls have returned by then.
bool same_device_arrays(const void* a, const void* b, std::size_t bytes) {
  static rxm::DeviceArray<unsigned long long> differences(0, 1);
  RXM_CUDA_CHECK(cudaMemset(differences.data(), 0, sizeof(unsigned long long)));
  count_differences_kernel<<<1024, 256>>>(static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b),
                                          bytes, differences.data());
  RXM_CUDA_CHECK_LAUNCH();
  unsigned long long found = 0;
  RXM_CUDA_CHECK(cudaMemcpy(&found, differences.data(), sizeof found, cudaMemcpyDeviceToHost));
  return found == 0;
}

// The scatter passes of m <= 32 and their names in the diagnostics (JSON lines).
namespace ms = rxm::device::multisplit_detail;
using ScatterKernel = rxm::MultisplitScatterKernel;
constexpr ScatterKernel scatter_kernels[] = {ScatterKernel::block_tiles, ScatterKernel::warp_owned,
                                             ScatterKernel::thread_counters};
std::string scatter_kernel_name(ScatterKernel kernel) {
  return kernel == ScatterKernel::warp_owned        ? "warp-owned scatter pass"
         : kernel == ScatterKernel::thread_counters ? "thread-counter scatter pass"
                                                    : "block-tile scatter pass";
}

int log2_ceil(std::uint32_t m) {
  int bits = 0;
  while ((1u << bits) < m) ++bits;
  return bits;
}

}  // namespace

int run(int argc, char** argv) {
  std::size_t n = std::size_t(1) << 28;
  int reps = 20, warmup = 3;
  std::vector<std::uint32_t> bucket_counts = {2, 32, 256, 4096};
  std::vector<std::string> distributions = {"uniform", "zipf"};
  auto parse_distributions = [&](const std::string& list) {
    distributions.clear();
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      distributions.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
  };
  bool add_skewed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--n" && i + 1 < argc) n = std::size_t(rxm::bench::driver_number("bench_multisplit", arg, argv[++i]));
    else if (arg == "--reps" && i + 1 < argc) reps = int(rxm::bench::driver_number("bench_multisplit", arg, argv[++i]));
    else if (arg == "--m" && i + 1 < argc) {
      bucket_counts.clear();
      for (char* at = argv[++i]; *at != '\0';) {
        bucket_counts.push_back(std::uint32_t(std::strtoul(at, &at, 0)));
        if (*at == ',') ++at;
        else if (*at != '\0') bucket_counts.clear(), at += std::strlen(at);
      }
    } else if (arg == "--distribution" && i + 1 < argc) {
      parse_distributions(argv[++i]);
    } else if (arg == "--skewed") {
      add_skewed = true;
    } else {
      rxm::bench::driver_argument_error("bench_multisplit", "unknown argument '" + arg + "' (or one without its value)");
    }
    const bool known = std::all_of(distributions.begin(), distributions.end(), [](const std::string& d) {
      return d == "uniform" || d == "zipf" || is_skewed(d);
    });
    if (bucket_counts.empty() || distributions.empty() || !known)
      rxm::bench::driver_argument_error("bench_multisplit", "bad value '" + std::string(argv[i]) + "' for " +
                                                                std::string(i > 1 ? argv[i - 1] : "") +
                                                                ": --m takes counts like 2,32,256 and --distribution "
                                                                "uniform, zipf, binomial, 0.25-uniform");
  }
  if (add_skewed)
    for (const char* d : {"binomial", "0.25-uniform"})
      if (std::find(distributions.begin(), distributions.end(), d) == distributions.end()) distributions.push_back(d);
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const auto info = rxm::bench::run_info(argc, argv, prop.name);
  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaStreamCreate(&stream));
  rxm::Context ctx = rxm::Context::local({0}, rxm::Backend::cuda);  // for the host API lines

  rxm::DeviceArray<std::uint32_t> keys(0, n), values(0, n), keys_out(0, n), values_out(0, n), peer_keys(0, n),
      peer_values(0, n), labels(0, n), labels_out(0, n);
  rxm::DeviceArray<std::uint64_t> packed(0, n), packed_out(0, n);
  rxm::DeviceArray<std::uint32_t> offsets(0, 4097);
  rxm::DeviceArray<std::uint32_t> splitter_table(0, 4096);  // the splitter case's boundaries, device copy

  // The floor's yardstick: a 1 GiB device-to-device copy, bytes read + written per second.
  const std::size_t copy_bytes = std::size_t(1) << 30;
  rxm::DeviceBuffer copy_a(0, copy_bytes), copy_b(0, copy_bytes);
  RXM_CUDA_CHECK(cudaMemset(copy_b.data(), 1, copy_bytes));
  const double bandwidth = rxm::bench::measure_d2d_bandwidth(copy_a.data(), copy_b.data(), copy_bytes, stream);
  std::printf("device %s, n = %zu, D2D copy bandwidth %.1f GB/s (read + write)\n", prop.name, n, bandwidth / 1e9);
  copy_a = rxm::DeviceBuffer();
  copy_b = rxm::DeviceBuffer();

  std::vector<std::uint32_t> host(n), host_values(n);
  for (std::size_t i = 0; i < n; ++i) host_values[i] = std::uint32_t(i);
  RXM_CUDA_CHECK(cudaMemcpy(values.data(), host_values.data(), n * 4, cudaMemcpyHostToDevice));

  rxm::DeviceBuffer temp;
  auto ensure_temp = [&](std::size_t bytes) {
    if (temp.bytes() < bytes) temp = rxm::DeviceBuffer(0, bytes);
  };

  int failures = 0;
  const unsigned grid = unsigned(prop.multiProcessorCount * 8);
  auto outputs_match_peer = [&](bool pairs) {
    return same_device_arrays(keys_out.data(), peer_keys.data(), n * 4) &&
           (!pairs || same_device_arrays(values_out.data(), peer_values.data(), n * 4));
  };
  // The host API rxm::multisplit on the case's device spans (see the header), a diagnostic line of
  // case `c`; `fn` is the bucket function as the host API takes it, `m` the offsets' bucket count.
  auto host_api_line = [&](Case& c, const auto& fn, std::uint32_t m, bool pairs, bool checked, const char* what) {
    std::vector<std::size_t> host_offsets(std::size_t(m) + 1);
    const rxm::MultisplitOptions options{.checked = checked};
    const std::span<const std::uint32_t> in(keys.data(), n), values_in(values.data(), n);
    const std::span<std::uint32_t> out(keys_out.data(), n), values_out_span(values_out.data(), n);
    auto call = [&] {
      if (pairs)
        rxm::multisplit(ctx, in, out, values_in, values_out_span, fn, std::span<std::size_t>(host_offsets), options);
      else
        rxm::multisplit(ctx, in, out, fn, std::span<std::size_t>(host_offsets), options);
    };
    auto after_the_bench_stream = [&] { RXM_CUDA_CHECK(cudaStreamSynchronize(stream)); };  // ctx has its own stream
    after_the_bench_stream();
    call();
    if (!outputs_match_peer(pairs) || host_offsets.back() != n) {
      std::printf("MISMATCH host API %s m=%u pairs=%d checked=%d\n", what, m, int(pairs), int(checked));
      ++failures;
    }
    c.add_diagnostic(std::string("radixmesh rxm::multisplit host API on device spans, ") +
                         (checked ? "checked (the default)" : "unchecked") + " (diagnostic)",
                     rxm::bench::time_host(after_the_bench_stream, call, warmup, reps));
  };

  for (const std::string& distribution_name : distributions) {
    const char* distribution = distribution_name.c_str();
    const bool skewed = is_skewed(distribution_name);
    if (!skewed) {
      rxm::GenerateOptions gen;
      gen.distribution = distribution_name == "zipf" ? rxm::Distribution::zipf : rxm::Distribution::uniform;
      gen.seed = 2026;
      rxm::generate(std::span<std::uint32_t>(host), gen);
      RXM_CUDA_CHECK(cudaMemcpy(keys.data(), host.data(), n * 4, cudaMemcpyHostToDevice));
    }

    for (std::uint32_t m : bucket_counts) {
      const int bits = log2_ceil(m);
      if (skewed) {  // skewed over this m's digit: keys drawn per m
        const std::uint32_t heavy = std::uint32_t(std::mt19937(2026u + m)()) & ((1u << bits) - 1);
        skewed_keys_kernel<<<grid, 256, 0, stream>>>(keys.data(), n, bits, distribution_name == "binomial", heavy,
                                                     2026u + m);
        RXM_CUDA_CHECK_LAUNCH();
        RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
      for (int value_bytes : {0, 4}) {
        const bool pairs = value_bytes != 0;
        const double bytes_moved = double(n) * (pairs ? 20.0 : 12.0);
        // ---- radix digit: the top `bits` bits
        {
          const int shift = 32 - bits;
          nlohmann::json params = {{"n", n}, {"m", m}, {"buckets", "radix_digit"}, {"shift", shift}, {"bits", bits},
                                   {"value_bytes", value_bytes}, {"distribution", distribution}, {"key", "u32"}};
          Case c("multisplit", params, double(n), pairs ? "pairs" : "keys");
          std::size_t ours_bytes = 0, cub_bytes = 0;
          rxm::cuda::DigitEngine engine = rxm::cuda::DigitEngine::automatic;  // the diagnostics force ours
          rxm::MultisplitTuning tuning;  // the diagnostics set it
          auto run_ours = [&] {
            auto status = pairs ? rxm::cuda::multisplit_digit<32, 4>(temp.data(), ours_bytes, keys.data(), keys_out.data(),
                                                                     values.data(), values_out.data(), n, shift, bits,
                                                                     offsets.data(), stream, engine, tuning)
                                : rxm::cuda::multisplit_digit<32, 0>(temp.data(), ours_bytes, keys.data(), keys_out.data(),
                                                                     nullptr, nullptr, n, shift, bits, offsets.data(),
                                                                     stream, engine, tuning);
            RXM_CUDA_CHECK(status);
          };
          auto run_cub = [&] {
            auto status = pairs ? cub::DeviceRadixSort::SortPairs(temp.data(), cub_bytes, keys.data(), peer_keys.data(),
                                                                  values.data(), peer_values.data(), n, shift, 32, stream)
                                : cub::DeviceRadixSort::SortKeys(temp.data(), cub_bytes, keys.data(), peer_keys.data(),
                                                                 n, shift, 32, stream);
            RXM_CUDA_CHECK(status);
          };
          for (auto e : {rxm::cuda::DigitEngine::own, rxm::cuda::DigitEngine::cub_onesweep}) {  // the larger temp
            std::size_t bytes = 0;
            RXM_CUDA_CHECK((rxm::cuda::multisplit_digit<32, 4>(nullptr, bytes, keys.data(), keys_out.data(),
                                                               values.data(), values_out.data(), n, shift, bits,
                                                               offsets.data(), stream, e)));
            ours_bytes = std::max(ours_bytes, bytes);
          }
          RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, keys.data(), peer_keys.data(), values.data(),
                                                         peer_values.data(), n, shift, 32, stream));
          ensure_temp(std::max(ours_bytes, cub_bytes));
          ours_bytes = cub_bytes = temp.bytes();
          run_ours();
          run_cub();
          RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
          const bool same = same_device_arrays(keys_out.data(), peer_keys.data(), n * 4) &&
                            (!pairs || same_device_arrays(values_out.data(), peer_values.data(), n * 4));
          if (!same) { std::printf("MISMATCH radix m=%u pairs=%d %s\n", m, int(pairs), distribution); ++failures; }
          c.add("radixmesh multisplit_digit", time_device(stream, run_ours, warmup, reps), true);
          c.add(std::string("cub::DeviceRadixSort::") + (pairs ? "SortPairs" : "SortKeys") + " bits [" +
                    std::to_string(shift) + ",32)",
                time_device(stream, run_cub, warmup, reps));
          host_api_line(c, rxm::buckets::radix_digit{shift, bits}, 1u << bits, pairs, true, "radix");
          // A variant of our own engine as a diagnostic (also where the default runs CUB's pass),
          // run with `variant` as its tuning; its output is checked against the peer's like ours.
          auto diagnostic = [&](const std::string& name, const rxm::MultisplitTuning& variant) {
            engine = rxm::cuda::DigitEngine::own;
            tuning = variant;
            run_ours();
            RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
            if (!same_device_arrays(keys_out.data(), peer_keys.data(), n * 4) ||
                (pairs && !same_device_arrays(values_out.data(), peer_values.data(), n * 4))) {
              std::printf("MISMATCH radix %s m=%u pairs=%d %s\n", name.c_str(), m, int(pairs), distribution);
              ++failures;
            }
            c.add_diagnostic("radixmesh, " + name + " (diagnostic)", time_device(stream, run_ours, warmup, reps));
            tuning = {};
            engine = rxm::cuda::DigitEngine::automatic;
          };
          // Where the default is CUB's pass (multisplit_digit.hpp), our own engine as it is: the
          // A/B behind that choice.
          if (rxm::cuda::chosen_digit_engine(rxm::cuda::DigitEngine::automatic, 32, bits, value_bytes) != rxm::cuda::DigitEngine::own)
            diagnostic("own multisplit engine", {});
          // The scatter pass the default runs; the rank-method and tile-buffer knobs act on the
          // block-tile pass only.
          const ScatterKernel default_pass = ms::chosen_scatter_kernel(ScatterKernel::automatic, m, value_bytes);
          if (default_pass == ScatterKernel::block_tiles) {  // the other ranking method
            using Method = rxm::MultisplitRankMethod;
            const bool default_match_any = ms::ranks_with_match_any(Method::automatic, m);
            diagnostic(default_match_any ? "ballot ranking" : "__match_any_sync ranking",
                       {.rank_method = default_match_any ? Method::ballot : Method::match_any});
          }
          if (default_pass == ScatterKernel::block_tiles) {  // the other number of tile buffers
            const int other = ms::default_scatter_stages == 2 ? 1 : 2;
            diagnostic(std::to_string(other) + " scatter tile buffer(s)", {.scatter_stages = other});
          }
          if (m <= ms::max_warp_scatter_buckets) {  // the other scatter passes than the default (A/B)
            for (auto kernel : scatter_kernels)
              if (kernel != default_pass) diagnostic(scatter_kernel_name(kernel), {.scatter_kernel = kernel});
            if (!pairs)  // the warp-owned pass with 8 windows per sub-tile instead of 16
              diagnostic("warp-owned scatter pass, 8 windows per sub-tile",
                         {.scatter_kernel = ScatterKernel::warp_owned, .warp_scatter_windows = 8});
          }
          if (!pairs) {  // our counting pass alone: splits our time into count + scatter
            std::size_t count_bytes = temp.bytes();
            rxm::cuda::raw_digit<std::uint32_t> digit{shift, (1u << bits) - 1};
            auto count_only = [&] {
              RXM_CUDA_CHECK(rxm::device::multisplit_offsets(temp.data(), count_bytes, keys.data(), n, digit,
                                                             1u << bits, offsets.data(), stream));
            };
            c.add_diagnostic("radixmesh counting pass only (diagnostic)", time_device(stream, count_only, warmup, reps));
          }
          c.set_floor(bytes_moved, bandwidth, pairs ? "20 B/pair over measured D2D copy bandwidth"
                                                    : "12 B/key over measured D2D copy bandwidth");
          c.print();
          rxm::bench::append_results("multisplit.jsonl", info, c);
        }
        if (skewed) continue;  // skewed keys: radix-digit cases only
        // ---- bucket functors vs RB-sort (label with the same functor, CUB SortPairs on the labels).
        // `fn` runs in our kernels and in RB-sort's label pass; `host_fn` is what the host API takes
        // (the same functor, or for splitters the boundaries in host memory). The other scatter
        // passes are timed as diagnostics where `pass_diagnostics` (the delta case).
        auto functor_case = [&](const std::string& kind, const auto& fn, const auto& host_fn, nlohmann::json params,
                                bool pass_diagnostics) {
          params.update({{"n", n}, {"m", m}, {"buckets", kind}, {"value_bytes", value_bytes},
                         {"distribution", distribution}, {"key", "u32"}});
          Case c("multisplit", params, double(n), pairs ? "pairs" : "keys");
          std::size_t ours_bytes = 0, cub_bytes = 0;
          rxm::MultisplitTuning tuning;  // the diagnostics set it
          using rxm::device::MultisplitEngine;
          auto run_ours = [&] {
            auto status = pairs ? rxm::device::multisplit(temp.data(), ours_bytes, keys.data(), keys_out.data(),
                                                          values.data(), values_out.data(), n, fn, m, offsets.data(),
                                                          stream, nullptr, MultisplitEngine::automatic, tuning)
                                : rxm::device::multisplit(temp.data(), ours_bytes, keys.data(), keys_out.data(), n, fn, m,
                                                          offsets.data(), stream, nullptr, MultisplitEngine::automatic,
                                                          tuning);
            RXM_CUDA_CHECK(status);
          };
          auto run_rb_sort = [&] {
            label_kernel<<<grid, 256, 0, stream>>>(keys.data(), values.data(), labels.data(),
                                                   pairs ? packed.data() : nullptr, n, fn);
            RXM_CUDA_CHECK_LAUNCH();
            if (pairs) {
              RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), cub_bytes, labels.data(), labels_out.data(),
                                                             packed.data(), packed_out.data(), n, 0, bits, stream));
              unpack_kernel<<<grid, 256, 0, stream>>>(packed_out.data(), peer_keys.data(), peer_values.data(), n);
              RXM_CUDA_CHECK_LAUNCH();
            } else {
              RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), cub_bytes, labels.data(), labels_out.data(),
                                                             keys.data(), peer_keys.data(), n, 0, bits, stream));
            }
          };
          RXM_CUDA_CHECK(rxm::device::multisplit(nullptr, ours_bytes, keys.data(), keys_out.data(), values.data(),
                                                 values_out.data(), n, fn, m, offsets.data(), stream));
          RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, labels.data(), labels_out.data(),
                                                         packed.data(), packed_out.data(), n, 0, bits, stream));
          ensure_temp(std::max(ours_bytes, cub_bytes));
          ours_bytes = cub_bytes = temp.bytes();
          run_ours();
          run_rb_sort();
          RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
          if (!outputs_match_peer(pairs)) {
            std::printf("MISMATCH %s m=%u pairs=%d %s\n", kind.c_str(), m, int(pairs), distribution);
            ++failures;
          }
          c.add("radixmesh device::multisplit(" + kind + ")", time_device(stream, run_ours, warmup, reps), true);
          c.add(std::string("RB-sort: label + cub SortPairs on ") + std::to_string(bits) + " bits" +
                    (pairs ? " + pack/unpack" : ""),
                time_device(stream, run_rb_sort, warmup, reps));
          host_api_line(c, host_fn, m, pairs, true, kind.c_str());
          host_api_line(c, host_fn, m, pairs, false, kind.c_str());
          // The other scatter passes than the default (A/B), checked.
          auto other_pass = [&](const std::string& name, ScatterKernel kernel) {
            tuning.scatter_kernel = kernel;
            run_ours();
            RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
            if (!outputs_match_peer(pairs)) {
              std::printf("MISMATCH %s %s m=%u pairs=%d %s\n", kind.c_str(), name.c_str(), m, int(pairs), distribution);
              ++failures;
            }
            c.add_diagnostic("radixmesh, " + name + " (diagnostic)", time_device(stream, run_ours, warmup, reps));
            tuning = {};
          };
          if (pass_diagnostics && m <= ms::max_warp_scatter_buckets) {
            const ScatterKernel default_pass = ms::chosen_scatter_kernel(ScatterKernel::automatic, m, value_bytes);
            for (auto kernel : scatter_kernels)
              if (kernel != default_pass) other_pass(scatter_kernel_name(kernel), kernel);
          }
          c.set_floor(bytes_moved, bandwidth, pairs ? "20 B/pair over measured D2D copy bandwidth"
                                                    : "12 B/key over measured D2D copy bandwidth");
          c.print();
          rxm::bench::append_results("multisplit.jsonl", info, c);
        };
        {
          const rxm::buckets::delta<std::uint32_t> fn(0u, 0xFFFFFFFFu, m);
          functor_case("delta", fn, fn, {{"lo", 0}, {"hi", 0xFFFFFFFFu}}, true);
        }
        if (m == 32 || m == 256) {  // m - 1 evenly spaced boundaries: splitters vs RB-sort
          std::vector<std::uint32_t> boundaries(m - 1);
          for (std::uint32_t i = 0; i + 1 < m; ++i) boundaries[i] = std::uint32_t((std::uint64_t(i + 1) << 32) / m);
          RXM_CUDA_CHECK(cudaMemcpy(splitter_table.data(), boundaries.data(), boundaries.size() * 4, cudaMemcpyHostToDevice));
          functor_case("splitters", rxm::buckets::splitters<std::uint32_t>{splitter_table.data(), m - 1},
                       rxm::buckets::splitters<std::uint32_t>{boundaries.data(), m - 1}, {{"spacing", "even"}}, false);
        }
      }
    }
  }
  std::printf("%s\n", failures == 0 ? "all outputs matched the peers" : "SOME OUTPUTS DIFFERED FROM THE PEERS");
  cudaStreamDestroy(stream);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) { return rxm::bench::driver_main("bench_multisplit", usage, argc, argv, run); }
