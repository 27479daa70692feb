// The GPU sort benchmark: radixmesh's CUDA sort against CUB DeviceRadixSort and torch.sort, on the
// same data in the same run. Two cases per input:
//   device-resident: keys (and values) already on the GPU. Ours through the device-level API
//     (radixmesh::cuda::sort_keys/sort_pairs, preallocated temp, like CUB's) per engine and with the
//     automatic choice, and rxm::sort(ctx, device_span) in place (its scratch allocation included);
//     CUB SortKeys/SortPairs on the key's unsigned bits of the same width (CUB's own int/float
//     twiddling is free in registers, so this is CUB's time for the native type too); for f32 and
//     f64 (and __half, __nv_bfloat16) also CUB on the native float type (its order differs from
//     ours: -0.0 == +0.0, sign-set NaNs first), the number ours must meet; torch.sort. Diagnostics
//     for float keys: ours forced onto the encode/decode path (SortOptions::float_path = encoded),
//     ours on the same keys with one sign-set NaN planted, where the fix-up moves every key once,
//     and with -0.0 and +0.0 planted, where it partitions only the zero run.
//     Floor: 2 x n x (key + value bytes) over the device-to-device copy bandwidth measured here.
//   host-resident: keys in pageable host memory, then in pinned host memory, sorted back into it.
//     Ours: rxm::sort(ctx, std::span) with each plan; peer: cudaMemcpy to the device, CUB,
//     cudaMemcpy back, from and to the same kind of memory (device buffers preallocated). Floor:
//     the bytes each way over the pinned host<->device bandwidth measured here.
// Every output of ours is compared element by element with the CPU backend's sort.
// RXM_BENCH_SORT_INPUTS=device (bench_sort_cuda --device-only) skips the host-resident case.
#include <cuda_bf16.h>  // before CUB: the native half and bfloat16 peers
#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "harness/device_timing.cuh"
#include "radixmesh/device/sort.cuh"
#include "radixmesh/generate.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/sort.hpp"
#include "sort_benchmark.hpp"

namespace radixmesh::bench {

namespace {

struct PcieBandwidth {
  double h2d = 0, d2h = 0;  // bytes per second, pinned, one direction
};
PcieBandwidth measure_pcie(int device, cudaStream_t stream) {
  const std::size_t bytes = std::size_t(1) << 30;
  PinnedBuffer host(bytes);
  std::memset(host.data(), 1, bytes);
  DeviceBuffer dev(device, bytes);
  PcieBandwidth bw;
  Stats up = time_device(
      stream, {}, [&] { RXM_CUDA_CHECK(cudaMemcpyAsync(dev.data(), host.data(), bytes, cudaMemcpyHostToDevice, stream)); },
      1, 5);
  Stats down = time_device(
      stream, {}, [&] { RXM_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev.data(), bytes, cudaMemcpyDeviceToHost, stream)); },
      1, 5);
  bw.h2d = double(bytes) / (up.median_ms * 1e-3);
  bw.d2h = double(bytes) / (down.median_ms * 1e-3);
  return bw;
}

// torch.sort in a child process (bench/peers/torch_sort.py), when python3 has torch.
std::optional<Stats> torch_sort(const SortBenchOptions& o, int reps, std::string& what) {
  const auto peer = run_python_peer(
      "torch_sort.py", "--n " + std::to_string(o.n) + " --type " + std::string(name_of(o.type)) + " --values " +
                           std::to_string(o.value_bytes) + (o.order == Order::descending ? " --descending" : "") +
                           " --reps " + std::to_string(reps));
  if (!peer) return std::nullopt;
  what = std::string(peer->value("what", "torch.sort")) + " " + peer->value("dtype", "") + " (torch " +
         peer->value("torch", "?") + ")";
  return stats_from_json(*peer);
}

// CUB in ascending order only: its descending sort runs the same passes (the bits are flipped in
// registers), and leaving it out halves the CUB instantiations this file compiles.
// Count is CUB's item-count type, which sets its offset width and, on sm_90, its pass tuning: users
// call it with int (32-bit offsets) or std::size_t (64-bit), so the bench times both.
template <class Bits, class V, class Count = int>
void cub_sort(void* temp, std::size_t& temp_bytes, const Bits* keys_in, Bits* keys_out, const V* values_in,
              V* values_out, Count n, bool pairs, cudaStream_t stream) {
  const int end_bit = int(sizeof(Bits) * 8);
  if (!pairs)
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, n, 0, end_bit, stream));
  else
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, 0,
                                                   end_bit, stream));
}

// The CUDA type CUB sorts natively for a float key type: float, double, __half, __nv_bfloat16.
template <class K> struct cub_native { using type = K; };
template <> struct cub_native<half_t> { using type = __half; };
template <> struct cub_native<bfloat16_t> { using type = __nv_bfloat16; };

// CUB on native float keys, its own float order (ascending; keys as they are, no encoding).
template <class K, class V>
void cub_sort_native(void* temp, std::size_t& temp_bytes, const void* keys_in_, void* keys_out_, const V* values_in,
                     V* values_out, int n, bool pairs, cudaStream_t stream) {
  using N = typename cub_native<K>::type;
  const N* keys_in = static_cast<const N*>(keys_in_);
  N* keys_out = static_cast<N*>(keys_out_);
  if (!pairs)
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, n, 0, int(sizeof(K) * 8), stream));
  else
    RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, 0,
                                                   int(sizeof(K) * 8), stream));
}

bool device_inputs_only() {
  const char* inputs = std::getenv("RXM_BENCH_SORT_INPUTS");
  return inputs && std::string(inputs) == "device";
}

const char* engine_name(SortEngine e) {
  switch (e) {
    case SortEngine::automatic: return "automatic";
    case SortEngine::cub_onesweep: return "cub_onesweep";
    case SortEngine::multisplit_lsd: return "multisplit_lsd";
  }
  return "?";
}

template <class K, class V> struct Reference {
  std::vector<K> keys;
  std::vector<V> values;
};

// Element-by-element check of ours against the CPU backend (bits, so NaNs compare too).
template <class K, class V>
bool matches(const Reference<K, V>& ref, std::type_identity_t<std::span<const K>> keys,
             std::type_identity_t<std::span<const V>> values, const char* what) {
  for (std::size_t i = 0; i < ref.keys.size(); ++i) {
    if (std::memcmp(&ref.keys[i], &keys[i], sizeof(K)) != 0 || (!values.empty() && ref.values[i] != values[i])) {
      std::fprintf(stderr, "MISMATCH (%s) at element %zu of %zu\n", what, i, ref.keys.size());
      return false;
    }
  }
  return true;
}

// The CPU backend's result for the input whose first planted.size() keys were replaced by
// `planted`, built from the reference of the original input instead of a second sort: the replaced
// keys leave (pairs: values 0 .. p-1; keys only: one key of the same bits each), and each planted
// key goes before the first key not below it in our order (input index j < p comes before every
// equal key; inserted last to first, equal planted keys keep their input order).
template <class K, class V>
Reference<K, V> with_planted(const Reference<K, V>& ref, const std::vector<K>& input, const std::vector<K>& planted,
                             Order order, bool pairs) {
  const std::size_t p = planted.size();
  std::vector<key_bits_t<K>> replaced;
  for (std::size_t j = 0; j < p; ++j) replaced.push_back(to_bits(input[j]));
  Reference<K, V> out;
  out.keys.reserve(ref.keys.size());
  out.values.reserve(pairs ? ref.keys.size() : 0);
  for (std::size_t i = 0; i < ref.keys.size(); ++i) {
    if (pairs && ref.values[i] < V(p)) continue;
    if (!pairs) {
      auto it = std::find(replaced.begin(), replaced.end(), to_bits(ref.keys[i]));
      if (it != replaced.end()) {
        replaced.erase(it);
        continue;
      }
    }
    out.keys.push_back(ref.keys[i]);
    if (pairs) out.values.push_back(ref.values[i]);
  }
  for (std::size_t j = p; j-- > 0;) {
    const auto rank = encode_key(planted[j], order);
    const auto at = std::partition_point(out.keys.begin(), out.keys.end(),
                                         [&](const K& key) { return encode_key(key, order) < rank; });
    const std::size_t pos = std::size_t(at - out.keys.begin());
    out.keys.insert(at, planted[j]);
    if (pairs) out.values.insert(out.values.begin() + std::ptrdiff_t(pos), V(j));
  }
  return out;
}

template <class T> std::vector<T> download(const void* device, std::size_t n) {
  std::vector<T> out(n);
  RXM_CUDA_CHECK(cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

template <class K, int ValueBytes>
SortBenchResult run_typed(const SortBenchOptions& o, const RunInfo& info, Context& ctx) {
  using V = std::conditional_t<ValueBytes == 8, std::uint64_t, std::uint32_t>;
  using Bits = key_bits_t<K>;
  constexpr bool pairs = ValueBytes != 0;
  const std::size_t n = o.n;
  const int reps = std::max(o.reps, 10), warmup = std::max(o.warmup, 2);
  const bool descending = o.order == Order::descending;
  const int device = ctx.devices().at(0).id;
  SortBenchResult result;
  result.device = ctx.devices().at(0).name;

  // Input: keys from the generator, values = original index (which makes stability visible).
  std::vector<K> keys(n);
  GenerateOptions g;
  g.distribution = o.distribution;
  g.seed = o.seed;
  g.zipf_s = o.zipf_s;
  g.special_fraction = o.special_fraction;
  generate(std::span<K>(keys), g);
  std::vector<V> values(pairs ? n : 0);
  std::iota(values.begin(), values.end(), V(0));

  Reference<K, V> ref{keys, values};
  if (o.verify) {
    auto cpu = Context::cpu();
    SortOptions so{.order = o.order};
    if (pairs)
      sort(cpu, std::span<K>(ref.keys), std::span<V>(ref.values), so);
    else
      sort(cpu, std::span<K>(ref.keys), so);
  }
  bool verified = o.verify;

  nlohmann::json params = {{"n", n},
                           {"type", std::string(name_of(o.type))},
                           {"distribution", std::string(name_of(o.distribution))},
                           {"value_bytes", ValueBytes},
                           {"order", descending ? "descending" : "ascending"}};
  const double bytes_per_item = double(sizeof(K) + (pairs ? sizeof(V) : 0));

  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaSetDevice(device));
  RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // ---------------- device-resident ----------------
  nlohmann::json device_params = params;
  device_params["input"] = "device-resident";
  Case dev_case("sort-gpu", device_params, double(n), "keys");
  {
    DeviceArray<K> keys_in(device, n), keys_out(device, n), keys_work(device, n);
    DeviceArray<V> values_in(device, pairs ? n : 0), values_out(device, pairs ? n : 0),
        values_work(device, pairs ? n : 0);
    RXM_CUDA_CHECK(cudaMemcpy(keys_in.data(), keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    if (pairs) RXM_CUDA_CHECK(cudaMemcpy(values_in.data(), values.data(), n * sizeof(V), cudaMemcpyHostToDevice));

    const double d2d = measure_d2d_bandwidth(keys_out.data(), keys_in.data(), n * sizeof(K), stream);
    dev_case.set_floor(2.0 * double(n) * bytes_per_item, d2d,
                       "read + write every key and value once; device-to-device cudaMemcpy measured in this run");

    // Ours through the device-level API (its SortOptions overloads), per engine and float path.
    auto ours = [&](void* temp, std::size_t& temp_bytes, SortOptions so) {
      so.order = o.order;
      if (!pairs)
        cuda::sort_keys(temp, temp_bytes, keys_in.data(), keys_out.data(), n, so, stream);
      else
        cuda::sort_pairs(temp, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(), values_out.data(), n, so,
                         stream);
    };
    for (SortEngine engine : {SortEngine::automatic, SortEngine::cub_onesweep, SortEngine::multisplit_lsd}) {
      std::size_t temp_bytes = 0;
      try {
        ours(nullptr, temp_bytes, {.engine = engine});
      } catch (const Error& e) {
        std::printf("  (engine %s not measured: %s)\n", engine_name(engine), e.what());
        continue;
      }
      DeviceBuffer temp(device, temp_bytes);
      RXM_CUDA_CHECK(cudaMemset(keys_out.data(), 0xA5, n * sizeof(K)));  // poison: every element must be written
      Stats s = time_device(stream, {}, [&] { ours(temp.data(), temp_bytes, {.engine = engine}); }, warmup, reps);
      const std::string name = std::string("radixmesh::cuda::sort_") + (pairs ? "pairs" : "keys") + " [" +
                               engine_name(engine) + "]";
      dev_case.add(name, s, true);
      if (engine == SortEngine::automatic) {
        result.ours_median_ms = s.median_ms;
      }
      if (o.verify) {
        auto got_keys = download<K>(keys_out.data(), n);
        auto got_values = pairs ? download<V>(values_out.data(), n) : std::vector<V>{};
        verified &= matches(ref, got_keys, std::span<const V>(got_values), name.c_str());
      }
    }

    // Ours in place through the host-level call on device memory (scratch allocation included).
    {
      auto restore = [&] {
        RXM_CUDA_CHECK(cudaMemcpy(keys_work.data(), keys_in.data(), n * sizeof(K), cudaMemcpyDeviceToDevice));
        if (pairs)
          RXM_CUDA_CHECK(cudaMemcpy(values_work.data(), values_in.data(), n * sizeof(V), cudaMemcpyDeviceToDevice));
      };
      auto run = [&] {
        if (pairs)
          sort(ctx, device_span(keys_work), device_span(values_work), SortOptions{.order = o.order});
        else
          sort(ctx, device_span(keys_work), SortOptions{.order = o.order});
      };
      Stats s = time_host(restore, run, warmup, reps);
      dev_case.add("rxm::sort(device_span) in place, incl. scratch alloc", s, true);
      if (o.verify) {
        auto got_keys = download<K>(keys_work.data(), n);
        auto got_values = pairs ? download<V>(values_work.data(), n) : std::vector<V>{};
        verified &= matches(ref, got_keys, std::span<const V>(got_values), "device_span in place");
      }
    }

    // CUB on the same device-resident data (same width), with each item-count type users call it with.
    auto time_cub = [&](auto count, const char* count_name) {
      using Count = decltype(count);
      const Bits* bits_in = reinterpret_cast<const Bits*>(keys_in.data());
      Bits* bits_out = reinterpret_cast<Bits*>(keys_out.data());
      std::size_t temp_bytes = 0;
      cub_sort<Bits, V, Count>(nullptr, temp_bytes, bits_in, bits_out, values_in.data(), values_out.data(), count,
                               pairs, stream);
      DeviceBuffer temp(device, temp_bytes);
      Stats s = time_device(
          stream, {},
          [&] {
            cub_sort<Bits, V, Count>(temp.data(), temp_bytes, bits_in, bits_out, values_in.data(), values_out.data(),
                                     count, pairs, stream);
          },
          warmup, reps);
      dev_case.add(std::string("cub::DeviceRadixSort::Sort") + (pairs ? "Pairs" : "Keys") + " (u" +
                       std::to_string(sizeof(Bits) * 8) + " bits, ascending, " + count_name + ")",
                   s);
    };
    if (n <= std::size_t(std::numeric_limits<int>::max())) time_cub(int(n), "int count: 32-bit offsets");
    time_cub(n, "size_t count: 64-bit offsets");
    // CUB on the native float type: the same passes, its own (different) float order.
    if constexpr (key_traits<K>::is_float) {
      if (n <= std::size_t(std::numeric_limits<int>::max())) {
        std::size_t temp_bytes = 0;
        cub_sort_native<K, V>(nullptr, temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                              values_out.data(), int(n), pairs, stream);
        DeviceBuffer temp(device, temp_bytes);
        Stats s = time_device(
            stream, {},
            [&] {
              cub_sort_native<K, V>(temp.data(), temp_bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                    values_out.data(), int(n), pairs, stream);
            },
            warmup, reps);
        dev_case.add(std::string("cub::DeviceRadixSort::Sort") + (pairs ? "Pairs" : "Keys") + " (native " +
                         std::string(name_of(o.type)) + ", ascending; -0 == +0)",
                     s);
      }
      // Diagnostics of ours: the encode/decode path on the same input, then the fix-up's two costly
      // cases: one sign-set NaN planted (the NaN group goes to the other end: every key moves once)
      // and -0.0, +0.0 planted (the zero run is partitioned by sign), each checked element by
      // element against the CPU backend's order.
      std::size_t temp_bytes = 0;
      ours(nullptr, temp_bytes, {});
      DeviceBuffer temp(device, temp_bytes);
      std::size_t encoded_bytes = 0;
      const SortOptions encoded_path{.float_path = FloatSortPath::encoded};
      ours(nullptr, encoded_bytes, encoded_path);
      DeviceBuffer encoded_temp(device, encoded_bytes);
      Stats encoded =
          time_device(stream, {}, [&] { ours(encoded_temp.data(), encoded_bytes, encoded_path); }, warmup, reps);
      dev_case.add_diagnostic("ours, encode/decode path (FloatSortPath::encoded)", encoded);
      if (o.verify) {
        auto got_keys = download<K>(keys_out.data(), n);
        auto got_values = pairs ? download<V>(values_out.data(), n) : std::vector<V>{};
        verified &= matches(ref, got_keys, std::span<const V>(got_values), "encoded path");
      }
      using B = key_bits_t<K>;
      auto time_planted = [&](const std::vector<K>& planted, const char* name) {
        RXM_CUDA_CHECK(cudaMemcpy(keys_in.data(), planted.data(), planted.size() * sizeof(K), cudaMemcpyHostToDevice));
        Stats s = time_device(stream, {}, [&] { ours(temp.data(), temp_bytes, {}); }, warmup, reps);
        dev_case.add_diagnostic(name, s);
        RXM_CUDA_CHECK(cudaMemcpy(keys_in.data(), keys.data(), planted.size() * sizeof(K), cudaMemcpyHostToDevice));
        if (o.verify) {
          const auto expected = with_planted(ref, keys, planted, o.order, pairs);
          auto got_keys = download<K>(keys_out.data(), n);
          auto got_values = pairs ? download<V>(values_out.data(), n) : std::vector<V>{};
          verified &= matches(expected, got_keys, std::span<const V>(got_values), name);
        }
      };
      // Sign set and every other bit set: a sign-set NaN, the last key of our ascending order.
      time_planted({from_bits<K>(B(~B(0)))}, "ours, one sign-set NaN planted (the fix-up moves every key)");
      const B sign = B(B(1) << (sizeof(B) * 8 - 1));
      time_planted({from_bits<K>(sign), from_bits<K>(B(0))},
                   "ours, -0.0 and +0.0 planted (the fix-up partitions the zero run only)");
    }
  }
  // torch.sort, in its own process, on data of the same size and width (after ours freed its memory).
  {
    std::string what;
    if (auto s = torch_sort(o, reps, what)) dev_case.add(what, *s);
  }

  // ---------------- host-resident ----------------
  // The same routine for keys in pageable memory (the common case) and in pinned memory (RMG's
  // setting): ours with the automatic plan and each plan forced, beside cudaMemcpy + CUB +
  // cudaMemcpy back on the same kind of memory.
  std::vector<Case> host_cases;
  const bool host_input = !device_inputs_only();
  if (host_input) {
    const PcieBandwidth pcie = measure_pcie(device, stream);
    const double bytes = double(n) * bytes_per_item;
    auto host_case_for = [&](const char* input, std::span<K> work_keys, std::span<V> work_values) {
      nlohmann::json host_params = params;
      host_params["input"] = input;
      Case host_case("sort-gpu", host_params, double(n), "keys");
      // Bytes in over H2D and out over D2H: one number of bytes over their harmonic bandwidth.
      host_case.set_floor(2.0 * bytes, 2.0 / (1.0 / pcie.h2d + 1.0 / pcie.d2h),
                          "every key and value over PCIe once each way; pinned cudaMemcpy H2D " +
                              std::to_string(pcie.h2d / 1e9).substr(0, 5) + " GB/s, D2H " +
                              std::to_string(pcie.d2h / 1e9).substr(0, 5) + " GB/s measured in this run");
      auto restore = [&] {
        std::memcpy(work_keys.data(), keys.data(), n * sizeof(K));
        if (pairs) std::memcpy(work_values.data(), values.data(), n * sizeof(V));
      };
      // The automatic plan, then each plan forced (SortOptions::host_plan, src/cuda/sort/sort_host.cpp),
      // and the out-of-core sort's resident way (src/mesh/sort_out_of_core.cpp), which one GPU takes
      // for large pinned input and which is a diagnostic for pageable input.
      using radixmesh::HostStagingPlan;
      using radixmesh::OutOfCoreMode;
      struct Plan {
        const char* name;
        HostStagingPlan host_plan;
        OutOfCoreMode out_of_core;
      };
      const Plan plans[] = {{"automatic", HostStagingPlan::automatic, OutOfCoreMode::automatic},
                            {"whole", HostStagingPlan::whole, OutOfCoreMode::never},
                            {"split", HostStagingPlan::split, OutOfCoreMode::never},
                            {"out-of-core resident", HostStagingPlan::automatic, OutOfCoreMode::always}};
      auto sort_work = [&](const SortOptions& options) {
        if (pairs)
          sort(ctx, work_keys, work_values, options);
        else
          sort(ctx, work_keys, options);
      };
      for (const auto& [plan, host_plan, out_of_core] : plans) {
        SortOptions options{.order = o.order, .host_plan = host_plan, .out_of_core = out_of_core};
        Stats s = time_host(restore, [&] { sort_work(options); }, 1, std::max(3, reps / 2));
        const std::string name = std::string("rxm::sort(std::span) host->GPU->host [") + plan + " plan]";
        if (out_of_core == OutOfCoreMode::always)
          host_case.add_diagnostic(name, s);
        else
          host_case.add(name, s, true);
        if (o.verify)
          verified &= matches(ref, std::span<const K>(work_keys), std::span<const V>(work_values),
                              (name + ", " + input).c_str());
        // One more run with its steps timed (each step then drains the stream), beside their floors.
        SortPhases steps;
        options.phases = &steps;
        restore();
        const auto start = std::chrono::steady_clock::now();
        sort_work(options);
        const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (o.quiet) continue;
        if (steps.out_of_core)
          std::printf("  %s, %s plan, steps (ms, one timed run of %.1f): %llu chunks up and split %.1f (upload's "
                      "floor %.1f), %llu groups sorted and down %.1f (download's floor %.1f)\n",
                      input, plan, total, static_cast<unsigned long long>(steps.out_of_core_chunks),
                      steps.partition_ms, bytes / pcie.h2d * 1e3,
                      static_cast<unsigned long long>(steps.out_of_core_groups), steps.local_sort_ms,
                      bytes / pcie.d2h * 1e3);
        else
          std::printf("  %s, %s plan, steps (ms, one timed run of %.1f): setup %.1f, upload %.1f (floor %.1f), "
                      "split %.1f, sorts %.1f, download after them %.1f (whole download's floor %.1f)\n",
                      input, plan, total, steps.setup_ms, steps.upload_ms, bytes / pcie.h2d * 1e3,
                      steps.partition_ms, steps.local_sort_ms, steps.download_ms, bytes / pcie.d2h * 1e3);
      }

      // The naive peer: cudaMemcpy up, CUB, cudaMemcpy back, from and to the same host memory
      // (device buffers allocated beforehand).
      if (n <= std::size_t(std::numeric_limits<int>::max())) {
        DeviceArray<Bits> d_in(device, n), d_out(device, n);
        DeviceArray<V> v_in(device, pairs ? n : 0), v_out(device, pairs ? n : 0);
        std::size_t temp_bytes = 0;
        cub_sort<Bits, V>(nullptr, temp_bytes, d_in.data(), d_out.data(), v_in.data(), v_out.data(), int(n), pairs,
                          stream);
        DeviceBuffer temp(device, temp_bytes);
        Stats s = time_host(
            restore,
            [&] {
              RXM_CUDA_CHECK(
                  cudaMemcpyAsync(d_in.data(), work_keys.data(), n * sizeof(K), cudaMemcpyHostToDevice, stream));
              if (pairs)
                RXM_CUDA_CHECK(
                    cudaMemcpyAsync(v_in.data(), work_values.data(), n * sizeof(V), cudaMemcpyHostToDevice, stream));
              cub_sort<Bits, V>(temp.data(), temp_bytes, d_in.data(), d_out.data(), v_in.data(), v_out.data(), int(n),
                                pairs, stream);
              RXM_CUDA_CHECK(
                  cudaMemcpyAsync(work_keys.data(), d_out.data(), n * sizeof(K), cudaMemcpyDeviceToHost, stream));
              if (pairs)
                RXM_CUDA_CHECK(cudaMemcpyAsync(work_values.data(), v_out.data(), n * sizeof(V),
                                               cudaMemcpyDeviceToHost, stream));
              RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
            },
            1, std::max(3, reps / 2));
        const std::string memory = std::string(input).substr(std::string("host-").size());
        host_case.add("cudaMemcpy(" + memory + ") + CUB + cudaMemcpy back", s);
      }
      return host_case;
    };
    {
      std::vector<K> work_keys(n);
      std::vector<V> work_values(pairs ? n : 0);
      host_cases.push_back(host_case_for("host-pageable", std::span<K>(work_keys), std::span<V>(work_values)));
    }
    {
      PinnedBuffer pinned_keys(n * sizeof(K)), pinned_values(pairs ? n * sizeof(V) : 0);
      host_cases.push_back(host_case_for("host-pinned", std::span<K>(static_cast<K*>(pinned_keys.data()), n),
                                         std::span<V>(static_cast<V*>(pinned_values.data()), pairs ? n : 0)));
    }
  }
  RXM_CUDA_CHECK(cudaStreamDestroy(stream));

  result.verified = verified;
  result.best_peer = dev_case.best_peer();
  result.speedup_over_best_peer = dev_case.speedup_over_best_peer();
  for (const auto& e : dev_case.entries())
    if (!e.ours && e.implementation == result.best_peer) result.best_peer_median_ms = e.stats.median_ms;
  if (!o.quiet) {
    dev_case.print();
    for (const Case& c : host_cases) c.print();
    std::printf("  verified against the CPU backend, element by element: %s\n",
                o.verify ? (verified ? "yes" : "NO - MISMATCH") : "not checked");
  }
  if (o.write_results) {
    append_results(o.results_file, info, dev_case);
    for (const Case& c : host_cases) append_results(o.results_file, info, c);
  }
  result.table = dev_case;
  return result;
}

}  // namespace

SortBenchResult run_cuda_sort_benchmark(const SortBenchOptions& options, const RunInfo& info, Context& ctx) {
  require(ctx.backend() == Backend::cuda, "the GPU sort benchmark needs a CUDA context",
          "run it on a machine with a GPU (Context::local())");
  require(options.value_bytes == 0 || options.value_bytes == 4 || options.value_bytes == 8,
          "sort benchmark: values must be 0, 4 or 8 bytes", "pass --values 0, 4 or 8");
  return visit_key_type(options.type, [&](auto tag) {
    using K = decltype(tag);
    switch (options.value_bytes) {
      case 4: return run_typed<K, 4>(options, info, ctx);
      case 8: return run_typed<K, 8>(options, info, ctx);
      default: return run_typed<K, 0>(options, info, ctx);
    }
  });
}

}  // namespace radixmesh::bench
