// bench_topk: radixmesh's GPU top-k (device-level entry, temp storage allocated once) against
// torch.topk (bench/peers/torch_topk.py, its own process, CUDA events, same shape) and CUB
// sort-then-take (DeviceRadixSort / DeviceSegmentedRadixSort of (value, index) pairs, descending;
// the take is free). Float32, largest, unsorted output, uniform in [0, 1) unless the case says.
// Floor: one read of the input over the device-to-device copy bandwidth measured here.
// Ours is checked against the CUB result in every case (same set of indices: CUB's sort is stable,
// so its ties also come lowest index first).
//
//   bench_topk                 every shape of issue 4
//   bench_topk --sweep         also sweep the delegate subrange 2^alpha at n = 2^28
//   bench_topk --only NAME     cases whose name contains NAME (or one of NAME's '|'-separated parts)
//   bench_topk --ab-rescan     also the standard cases with the small delegate select grid
//                              ("delegate-grid-small") and the delegate pass at 5 and 4 blocks
//                              per SM ("delegate-pass-5-blocks", "-4-blocks"); --ab includes them.
//   bench_topk --ab-sample     also every single-row standard case with the sample-select path
//                              forced off (" sample-off") and forced on (" sample-on"); every
//                              line's params name the path ("path").
//   bench_topk --ab            also the standard cases with scalar loads in the delegate pass,
//                              with the multi-block select, and with the delegate select in one
//                              block per row and in multi-block passes (ours only)
//   bench_topk --rows-sweep    short batched rows (k = 50, 2^27 values): delegates vs one block per
//                              raw row, with and without the one-block select, and the delegate
//                              select in one block per row or in passes (ours only)
//   bench_topk --start-compare where the select starts (device::TopkStart), f32, n = 2^28 and 2^24,
//                              k = 512 and 1024, U[0.6,0.7] and U[128.6,128.7]: radix select alone
//                              (alpha = 0) with no start adaptation, RadiK's scaling (exact) and
//                              our range-adaptive start; the full pipeline (delegates) with each.
//                              Ours only, each checked against the default's indices in the run.
//   bench_topk --beta-sweep    Dr. Top-k's beta in {1, 2, 4} delegates per subrange, n = 2^28 f32,
//                              k = 1024, 65536, 2^20 (ours only, checked against the default)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "harness/device_fill.cuh"
#include "harness/device_timing.cuh"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"

namespace rxm = radixmesh;
using rxm::bench::Case;
using rxm::bench::Stats;

namespace {

struct Shape {
  std::string name;
  std::size_t rows, length, k;
  rxm::KeyType type = rxm::KeyType::f32;
  double lo = 0.0, hi = 1.0;
  bool peers = true;
  // Default: the automatic choices. Cases that change it run ours only, checked against the default.
  rxm::device::TopkTuning tuning;
};

const char* start_name(rxm::device::TopkStart s) {
  switch (s) {
    case rxm::device::TopkStart::automatic: return "automatic";
    case rxm::device::TopkStart::none: return "none";
    case rxm::device::TopkStart::range_adaptive: return "range_adaptive";
    case rxm::device::TopkStart::radik_scaling: return "radik_scaling";
  }
  return "unknown";
}

// The knobs a case sets away from their defaults, under the keys of bench/results/topk.jsonl.
void add_tuning_params(const rxm::device::TopkTuning& t, nlohmann::json& params) {
  if (t.delegate_log2 >= 0) params["alpha"] = t.delegate_log2;
  if (t.block_select >= 0) params["block_select"] = t.block_select;
  if (!t.delegate_vector_loads) params["delegate_vector"] = 0;
  if (t.start != rxm::device::TopkStart::automatic) params["start"] = start_name(t.start);
  if (t.delegate_beta != 1) params["delegate_beta"] = t.delegate_beta;
  if (t.delegate_block_select >= 0) params["delegate_block_select"] = t.delegate_block_select;
  if (!t.delegate_select_full_grid) params["delegate_select_full_grid"] = 0;
  if (t.delegate_pass_five_blocks >= 0) params["delegate_pass_five_blocks"] = t.delegate_pass_five_blocks;
  if (t.sample_select >= 0) params["sample_select"] = t.sample_select;
}

__global__ void iota_rows(std::int32_t* out, std::size_t n, std::size_t length) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * std::size_t(blockDim.x))
    out[i] = std::int32_t(i % length);
}

__global__ void row_offsets(std::int64_t* out, std::size_t rows, std::size_t length) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i <= rows) out[i] = std::int64_t(i * length);
}

const char* torch_dtype(rxm::KeyType t) {
  return t == rxm::KeyType::f16 ? "float16" : t == rxm::KeyType::bf16 ? "bfloat16" : "float32";
}

std::optional<Stats> torch_topk(const Shape& s, int reps, std::string& what) {
  char args[512];
  std::snprintf(args, sizeof args, "--rows %zu --length %zu --k %zu --dtype %s --lo %.17g --hi %.17g --reps %d",
                s.rows, s.length, s.k, torch_dtype(s.type), s.lo, s.hi, reps);
  const auto peer = rxm::bench::run_python_peer("torch_topk.py", args);
  if (!peer) return std::nullopt;
  what = "torch.topk " + std::string(peer->value("dtype", "")) + " (torch " + peer->value("torch", "?") + ")";
  return rxm::bench::stats_from_json(*peer);
}

template <class T>
void run_case(const Shape& s, const rxm::bench::RunInfo& info, cudaStream_t stream, int reps, bool with_peers,
              double& bandwidth) {
  const std::size_t n = s.rows * s.length, places = s.rows * s.k;
  rxm::DeviceArray<T> values(0, n), out_values(0, places);
  rxm::DeviceArray<std::int64_t> out_indices(0, places);
  rxm::bench::fill_values<T><<<1024, 256, 0, stream>>>(values.data(), n,
                                                    rxm::bench::UniformValues{float(s.lo), float(s.hi), 42});
  RXM_CUDA_CHECK_LAUNCH();
  if (bandwidth == 0) {
    rxm::DeviceArray<T> copy(0, n);
    bandwidth = rxm::bench::measure_d2d_bandwidth(copy.data(), values.data(), n * sizeof(T), stream);
  }

  rxm::device::TopkProblem p;
  p.type = s.type, p.values = values.data(), p.total = n, p.rows = s.rows, p.row_length = s.length;
  p.max_row_length = s.length, p.k = s.k, p.out_values = out_values.data(), p.out_indices = out_indices.data();
  p.tuning = s.tuning;
  const std::size_t temp_bytes = rxm::device::topk_temp_bytes(p, 0);
  rxm::DeviceBuffer temp(0, temp_bytes);
  const Stats ours = rxm::bench::time_device(stream, [&] { rxm::device::topk(temp.data(), temp_bytes, p, stream); }, 3, reps);
  std::vector<std::int64_t> our_idx(places);
  RXM_CUDA_CHECK(cudaMemcpy(our_idx.data(), out_indices.data(), places * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
  // A case without peers (a tuning variant: alpha, block, vector, start or beta): its indices
  // against the default tuning's in the same run (the default is the one verified against CUB and
  // by the GPU tests), so no line goes unverified.
  std::string default_check = "not checked";
  if (!with_peers) {
    rxm::device::TopkProblem d = p;
    d.tuning = {};
    const std::size_t d_bytes = rxm::device::topk_temp_bytes(d, 0);
    rxm::DeviceArray<std::int64_t> d_indices(0, places);
    d.out_indices = d_indices.data();
    {
      rxm::DeviceBuffer d_temp(0, d_bytes);
      rxm::device::topk(d_temp.data(), d_bytes, d, stream);
      RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    std::vector<std::int64_t> default_idx(places);
    RXM_CUDA_CHECK(cudaMemcpy(default_idx.data(), d_indices.data(), places * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
    default_check = default_idx == our_idx ? "yes" : "NO";
    if (default_idx != our_idx) std::printf("MISMATCH %s against the default tuning\n", s.name.c_str());
  }

  nlohmann::json params = {{"rows", s.rows}, {"n", s.length}, {"k", s.k}, {"type", std::string(rxm::name_of(s.type))},
                           {"distribution", "uniform[" + std::to_string(s.lo) + "," + std::to_string(s.hi) + ")"},
                           {"largest", true}, {"sorted", false}, {"case", s.name}};
  add_tuning_params(s.tuning, params);
  params["path"] = rxm::device::topk_path_name(p, 0);
  Case c("topk", params, double(n), "keys");
  c.add("radixmesh::device::topk", ours, true);
  c.set_floor(double(n) * sizeof(T), bandwidth, "one read of the input over the D2D copy bandwidth measured here");

  bool verified = false;
  if (with_peers) {
    // CUB sort-then-take: (value, index) pairs sorted descending per row; the first k are the top-k.
    std::size_t cub_bytes = 0;
    rxm::DeviceArray<T> keys_out(0, n);
    rxm::DeviceArray<std::int32_t> idx_in(0, n), idx_out(0, n);
    rxm::DeviceArray<std::int64_t> offsets(0, s.rows + 1);
    iota_rows<<<1024, 256, 0, stream>>>(idx_in.data(), n, s.length);
    row_offsets<<<unsigned((s.rows + 256) / 256), 256, 0, stream>>>(offsets.data(), s.rows, s.length);
    RXM_CUDA_CHECK_LAUNCH();
    auto cub_sort = [&](void* t) {
      if (s.rows == 1)
        RXM_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(t, cub_bytes, values.data(), keys_out.data(),
                                                                 idx_in.data(), idx_out.data(), n, 0,
                                                                 int(sizeof(T) * 8), stream));
      else
        RXM_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
            t, cub_bytes, values.data(), keys_out.data(), idx_in.data(), idx_out.data(), std::int64_t(n),
            std::int64_t(s.rows), offsets.data(), offsets.data() + 1, 0, int(sizeof(T) * 8), stream));
    };
    cub_sort(nullptr);
    rxm::DeviceBuffer cub_temp(0, cub_bytes);
    c.add(s.rows == 1 ? "cub::DeviceRadixSort then take k" : "cub::DeviceSegmentedRadixSort then take k",
          rxm::bench::time_device(stream, [&] { cub_sort(cub_temp.data()); }, 2, std::max(3, reps / 4)));
    verified = true;
    for (std::size_t r = 0; r < s.rows && verified; ++r) {
      std::vector<std::int32_t> cub_idx(s.k);
      RXM_CUDA_CHECK(cudaMemcpy(cub_idx.data(), idx_out.data() + r * s.length, s.k * sizeof(std::int32_t),
                                cudaMemcpyDeviceToHost));
      std::sort(cub_idx.begin(), cub_idx.end());
      for (std::size_t j = 0; j < s.k; ++j)
        if (cub_idx[j] != our_idx[r * s.k + j]) {
          std::printf("MISMATCH %s row %zu place %zu: ours %lld, cub %d\n", s.name.c_str(), r, j,
                      (long long)our_idx[r * s.k + j], cub_idx[j]);
          verified = false;
          break;
        }
    }
  }
  // torch runs in its own process after ours freed nothing: it has the rest of the device.
  std::string what;
  if (with_peers)
    if (auto t = torch_topk(s, reps, what)) c.add(what, *t);
  c.print();
  std::printf("  verified against CUB: %s\n", with_peers ? (verified ? "yes" : "NO") : "not checked");
  if (!with_peers) std::printf("  same indices as the default tuning: %s\n", default_check.c_str());
  rxm::bench::append_results("topk.jsonl", info, c);
}

}  // namespace

const char* const usage =
    "usage: bench_topk [--sweep] [--rows-sweep] [--ab] [--ab-rescan] [--ab-sample] [--start-compare]\n"
    "                  [--beta-sweep] [--only NAME[|NAME...]]\n"
    "  without flags: every shape of issue 4 against torch.topk and CUB sort-then-take\n"
    "  (the header of bench/topk_benchmark.cu says what each flag adds)\n";

int run(int argc, char** argv) {
  bool sweep = false, rows_sweep = false, ab = false, ab_rescan = false, start_compare = false, beta_sweep = false,
       ab_sample = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sweep") sweep = true;
    else if (a == "--rows-sweep") rows_sweep = true;
    else if (a == "--ab") ab = true;
    else if (a == "--ab-rescan") ab_rescan = true;
    else if (a == "--ab-sample") ab_sample = true;
    else if (a == "--start-compare") start_compare = true;
    else if (a == "--beta-sweep") beta_sweep = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else rxm::bench::driver_argument_error("bench_topk", "unknown argument '" + a + "' (or one without its value)");
  }
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const auto info = rxm::bench::run_info(argc, argv, prop.name);
  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaStreamCreate(&stream));
  const std::size_t n28 = std::size_t(1) << 28;
  std::vector<Shape> shapes = {
      {"n2^28 k16", 1, n28, 16},
      {"n2^28 k1024", 1, n28, 1024},
      {"n2^28 k4096", 1, n28, 4096},
      {"n2^28 k65536", 1, n28, 65536},
      {"n2^28 k2^20", 1, n28, std::size_t(1) << 20},
      {"n2^29 k1024", 1, n28 * 2, 1024},
      {"16x2^22 k512", 16, std::size_t(1) << 22, 512},
      {"64x2^22 k512", 64, std::size_t(1) << 22, 512},
      {"4096x32768 k50", 4096, 32768, 50},
      {"U[128.6,128.7] n2^28 k1024", 1, n28, 1024, rxm::KeyType::f32, 128.6, 128.7},
      {"f16 n2^28 k1024", 1, n28, 1024, rxm::KeyType::f16},
      {"bf16 n2^28 k1024", 1, n28, 1024, rxm::KeyType::bf16},
  };
  const std::size_t standard_count = shapes.size();
  if (sweep)
    for (std::size_t k : {std::size_t(1024), std::size_t(65536), std::size_t(1) << 20})
      for (int alpha : {0, 4, 6, 8, 10, 12})
        shapes.push_back({.name = "sweep k" + std::to_string(k) + " alpha" + std::to_string(alpha), .rows = 1,
                          .length = n28, .k = k, .peers = false, .tuning = {.delegate_log2 = alpha}});
  if (ab) {
    const std::size_t standard = shapes.size();
    for (std::size_t i = 0; i < standard; ++i) {
      Shape scalar = shapes[i], multi = shapes[i];
      scalar.name += " scalar-delegates", scalar.tuning.delegate_vector_loads = false, scalar.peers = false;
      multi.name += " multi-block-select", multi.tuning.block_select = 0, multi.peers = false;
      shapes.push_back(scalar);
      if (shapes[i].k <= 2048) shapes.push_back(multi);
      // The delegate select in one block per row against its multi-block passes (both forced).
      for (int one_block : {0, 1}) {
        Shape d = shapes[i];
        d.name += one_block ? " delegates-one-block" : " delegates-multi-block";
        d.tuning.delegate_block_select = one_block, d.peers = false;
        if (shapes[i].rows > 1 || shapes[i].k <= 1024) shapes.push_back(d);
      }
    }
  }
  if (ab || ab_rescan) {  // the rescan and delegate-grid switches against their defaults (ours only)
    struct Variant {
      const char* suffix;
      rxm::device::TopkTuning tuning;  // replaces the standard case's default tuning
    };
    constexpr Variant variants[] = {{" delegate-grid-small", {.delegate_select_full_grid = false}},
                                    {" delegate-pass-5-blocks", {.delegate_pass_five_blocks = 1}},
                                    {" delegate-pass-4-blocks", {.delegate_pass_five_blocks = 0}}};
    for (std::size_t i = 0; i < standard_count; ++i)
      for (const Variant& variant : variants) {
        Shape v = shapes[i];
        v.name += variant.suffix;
        v.tuning = variant.tuning;
        v.peers = false;
        shapes.push_back(v);
      }
  }
  if (ab_sample)  // the sample-select path forced off and on beside the automatic choice (ours only)
    for (std::size_t i = 0; i < standard_count; ++i) {
      if (shapes[i].rows != 1) continue;
      for (int on : {0, 1}) {
        Shape v = shapes[i];
        v.name += on ? " sample-on" : " sample-off";
        v.tuning.sample_select = on, v.peers = false;
        shapes.push_back(v);
      }
    }
  if (rows_sweep)
    for (std::size_t length : {std::size_t(1) << 12, std::size_t(1) << 13, std::size_t(1) << 14, std::size_t(1) << 15,
                               std::size_t(1) << 16, std::size_t(1) << 17}) {
      const std::size_t rows = (std::size_t(1) << 27) / length;
      const std::string base = std::to_string(rows) + "x" + std::to_string(length) + " k50";
      // Ours only, one-block select on (1) or off (0), raw rows (alpha 0) or the automatic alpha (-1).
      auto rows_case = [&](const std::string& what, int alpha, int block) {
        return Shape{.name = "rows " + base + " " + what, .rows = rows, .length = length, .k = 50, .peers = false,
                     .tuning = {.delegate_log2 = alpha, .block_select = block}};
      };
      shapes.push_back(rows_case("raw block", 0, 1));
      shapes.push_back(rows_case("raw multi", 0, 0));
      // Delegates only from kMinDelegateRow (2^13); JSON lines of the sweep at other thresholds
      // carry their own commit.
      if (length >= (std::size_t(1) << 13)) {
        shapes.push_back(rows_case("delegates block", -1, 1));
        shapes.push_back(rows_case("delegates multi", -1, 0));
        // The delegate select in multi-block passes instead of one block per row (its automatic
        // choice for these rows: at most 2^11 delegates per row).
        Shape passes = rows_case("delegates block, delegate passes", -1, 1);
        passes.tuning.delegate_block_select = 0;
        shapes.push_back(passes);
      }
    }
  if (start_compare) {
    using rxm::device::TopkStart;
    for (std::size_t n : {n28, std::size_t(1) << 24})
      for (std::size_t k : {std::size_t(512), std::size_t(1024)})
        for (double lo : {0.6, 128.6}) {
          const std::string base = std::string("start n2^") + (n == n28 ? "28" : "24") + " k" + std::to_string(k) +
                                   (lo < 1 ? " U[0.6,0.7]" : " U[128.6,128.7]");
          auto add = [&](const std::string& what, int alpha, TopkStart start) {
            shapes.push_back({.name = base + " " + what, .rows = 1, .length = n, .k = k, .lo = lo, .hi = lo + 0.1,
                              .peers = false, .tuning = {.delegate_log2 = alpha, .start = start}});
          };
          add("select-only none", 0, TopkStart::none);
          add("select-only radik-scaling", 0, TopkStart::radik_scaling);
          add("select-only range-adaptive", 0, TopkStart::range_adaptive);
          add("delegates none", -1, TopkStart::none);
          add("delegates radik-scaling", -1, TopkStart::radik_scaling);
          add("delegates range-adaptive", -1, TopkStart::range_adaptive);
        }
  }
  if (beta_sweep)
    for (std::size_t k : {std::size_t(1024), std::size_t(65536), std::size_t(1) << 20})
      for (int beta : {1, 2, 4})
        shapes.push_back({.name = "beta k" + std::to_string(k) + " beta" + std::to_string(beta), .rows = 1,
                          .length = n28, .k = k, .peers = false, .tuning = {.delegate_beta = beta}});
  double bandwidth = 0;
  for (const auto& s : shapes) {
    if (!only.empty()) {  // '|' separates alternatives
      bool wanted = false;
      for (std::size_t a = 0; a <= only.size() && !wanted;) {
        const std::size_t bar = std::min(only.find('|', a), only.size());
        wanted = s.name.find(only.substr(a, bar - a)) != std::string::npos;
        a = bar + 1;
      }
      if (!wanted) continue;
    }
    const bool peers = s.peers;
    switch (s.type) {
      case rxm::KeyType::f16: run_case<__half>(s, info, stream, 20, peers, bandwidth); break;
      case rxm::KeyType::bf16: run_case<__nv_bfloat16>(s, info, stream, 20, peers, bandwidth); break;
      default: run_case<float>(s, info, stream, 20, peers, bandwidth); break;
    }
  }
  RXM_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) { return rxm::bench::driver_main("bench_topk", usage, argc, argv, run); }
