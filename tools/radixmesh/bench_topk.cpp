#include "bench_topk.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#if defined(RXM_HAS_CUDA)
#include "bench_device.hpp"
#include "radixmesh/sort.hpp"
#endif

namespace radixmesh::cli {

namespace {

using bench::Case;
using bench::Stats;

// The library's order (topk.hpp): a higher topk_rank is better, equal ranks go to the lower index.
template <class T> struct Better {
  const T* row;
  TopkOptions options;
  template <class I> bool operator()(I a, I b) const {
    const auto ra = topk_rank(row[a], options), rb = topk_rank(row[b], options);
    return ra > rb || (ra == rb && a < b);
  }
};

enum class StdPeer { nth_element, partial_sort };

// fn(r) for every row, the rows split in contiguous blocks over up to `threads` threads.
template <class F> void for_each_row(std::size_t rows, unsigned threads, const F& fn) {
  const std::size_t workers = std::min<std::size_t>(std::max(1u, threads), rows);
  if (workers <= 1) {
    for (std::size_t r = 0; r < rows; ++r) fn(r);
    return;
  }
  std::vector<std::jthread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t r = rows * w / workers; r < rows * (w + 1) / workers; ++r) fn(r);
    });
}

// One row's top-k by a std:: selection over its indices, in the library's output order: best
// first when sorted, else ascending index.
template <class T, class I>
void std_topk_row(StdPeer peer, const T* row, std::size_t length, std::size_t k, const TopkOptions& o,
                  std::int64_t* out) {
  std::vector<I> index(length);
  std::iota(index.begin(), index.end(), I(0));
  const Better<T> better{row, o};
  if (peer == StdPeer::nth_element) {
    std::nth_element(index.begin(), index.begin() + std::ptrdiff_t(k - 1), index.end(), better);
    if (o.sorted) std::sort(index.begin(), index.begin() + std::ptrdiff_t(k), better);
  } else {
    std::partial_sort(index.begin(), index.begin() + std::ptrdiff_t(k), index.end(), better);
  }
  if (!o.sorted) std::sort(index.begin(), index.begin() + std::ptrdiff_t(k));
  std::copy(index.begin(), index.begin() + std::ptrdiff_t(k), out);
}

template <class T>
void std_topk(StdPeer peer, const std::vector<T>& input, std::size_t rows, std::size_t k, const TopkOptions& o,
              unsigned threads, std::vector<std::int64_t>& out) {
  const std::size_t length = input.size() / rows;
  out.resize(rows * k);
  for_each_row(rows, threads, [&](std::size_t r) {
    // 32-bit indices where they fit: half the scratch, and the sort moves half the bytes.
    if (length <= std::size_t(UINT32_MAX))
      std_topk_row<T, std::uint32_t>(peer, input.data() + r * length, length, k, o, out.data() + r * k);
    else
      std_topk_row<T, std::uint64_t>(peer, input.data() + r * length, length, k, o, out.data() + r * k);
  });
}

// Ours against the reference, place by place: the same index, and the input's value at it.
template <class T>
bool same_result(const TopkResult<T>& ours, const std::vector<std::int64_t>& reference, const std::vector<T>& input,
                 std::size_t length) {
  if (ours.indices.size() != reference.size() || ours.values.size() != reference.size()) {
    std::fprintf(stderr, "verification failed: %zu results, expected %zu\n", ours.indices.size(), reference.size());
    return false;
  }
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const std::size_t row = ours.k ? i / ours.k : 0;
    const std::int64_t index = ours.indices[i];
    const bool index_ok = index == reference[i];
    const bool value_ok =
        index_ok && std::memcmp(&ours.values[i], &input[row * length + std::size_t(index)], sizeof(T)) == 0;
    if (!index_ok || !value_ok) {
      std::fprintf(stderr, "verification failed: row %zu place %zu: index %lld%s, expected index %lld\n", row,
                   i - row * ours.k, (long long)index, index_ok ? " with a wrong value" : "",
                   (long long)reference[i]);
      return false;
    }
  }
  return true;
}

std::string describe_input(const TopkBenchOptions& o) {
  std::string d(name_of(o.input.distribution));
  if (is_floating(o.type) && o.input.distribution == Distribution::uniform)
    d += "[" + std::to_string(o.input.lo) + "," + std::to_string(o.input.hi) + ")";
  if (o.input.distribution == Distribution::zipf) d += "(" + std::to_string(o.input.zipf_s) + ")";
  return d;
}

template <class T>
BenchOutcome run_on_cpu(const TopkBenchOptions& o, Context& ctx, const std::vector<T>& input, Case& c) {
  const std::size_t length = o.n / o.rows;
  const unsigned threads = ctx.cpu_threads();
  TopkResult<T> ours;
  const Stats s = bench::time_host(
      nullptr, [&] { ours = topk_batched<T>(ctx, std::span<const T>(input), Rows::uniform(o.rows, length), o.k, o.topk); },
      o.warmup, o.reps);
  c.add("radixmesh-cpu (" + std::to_string(threads) + " threads)", s, true);

  // The std:: peers run the rows in parallel on the same threads (one row: one thread).
  const std::string on = o.rows > 1 ? " (" + std::to_string(std::min<std::size_t>(threads, o.rows)) + " threads over rows)"
                                    : " (1 thread)";
  std::vector<std::int64_t> reference;
  c.add(std::string("std::nth_element") + (o.topk.sorted ? " + std::sort of k" : "") + on,
        bench::time_host(nullptr, [&] { std_topk(StdPeer::nth_element, input, o.rows, o.k, o.topk, threads, reference); },
                         o.warmup, o.reps));
  std::vector<std::int64_t> partial;
  c.add("std::partial_sort" + on,
        bench::time_host(nullptr, [&] { std_topk(StdPeer::partial_sort, input, o.rows, o.k, o.topk, threads, partial); },
                         o.warmup, o.reps));

  const double bandwidth = bench::measured_host_copy_bandwidth();
  c.set_floor(double(o.n) * sizeof(T), bandwidth, "one read of the input over host memcpy bandwidth (read+write bytes/s)");
  BenchOutcome r = outcome_of(c, double(o.n) * sizeof(T) / bandwidth * 1e3);
  // The peers' result follows the library's semantics exactly (ranking and ties), so it is the reference.
  r.verified = o.verify && same_result(ours, reference, input, length) && reference == partial;
  r.verified_how = "std::nth_element and std::partial_sort (exact indices and values)";
  r.device = bench::cpu_model_name();
  return r;
}

#if defined(RXM_HAS_CUDA)

const char* torch_dtype(KeyType t) {
  switch (t) {
    case KeyType::f32: return "float32";
    case KeyType::f16: return "float16";
    case KeyType::bf16: return "bfloat16";
    default: return nullptr;
  }
}

template <class T>
BenchOutcome run_on_cuda(const TopkBenchOptions& o, Context& ctx, const std::vector<T>& input, Case& c) {
  const int device = ctx.devices().front().id;
  RXM_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t n = o.n, length = n / o.rows;
  const DeviceArray<T> values = copy_to_device(device, input);
  const device_span<const T> on_device(values.data(), n, device);

  // Ours: the device-level entry with its temporary storage and outputs allocated once, timed
  // with CUDA events as torch.topk is; beside it the host-level call on the same device input,
  // timed on the host clock (its allocations and the copy of the rows * k results to host
  // vectors included), which is the one verified below (both run the same device code).
  device::TopkProblem problem;
  problem.type = o.type, problem.values = values.data(), problem.total = n, problem.rows = o.rows;
  problem.row_length = length, problem.max_row_length = length, problem.k = o.k, problem.options = o.topk;
  std::string path;
  const Stats device_level = time_device_topk(device, problem, o.warmup, o.reps, path);
  c.add("radixmesh::device::topk (" + path + ", CUDA events)", device_level, true);
  TopkResult<T> ours;
  c.add_diagnostic(
      "radixmesh topk_batched (device input, host clock, results copied to the host)",
      bench::time_host(nullptr, [&] { ours = topk_batched<T>(ctx, on_device, Rows::uniform(o.rows, length), o.k, o.topk); },
                       o.warmup, o.reps));

  // torch.topk runs the cases its script knows: same shape, dtype, order and output order
  const char* dtype = torch_dtype(o.type);
  // (its own uniform draw: other distributions and include_nan have no torch counterpart here).
  if (dtype && o.input.distribution == Distribution::uniform && !o.topk.include_nan) {
    char args[512];
    std::snprintf(args, sizeof args, "--rows %zu --length %zu --k %zu --dtype %s --lo %.17g --hi %.17g --reps %d%s%s",
                  o.rows, length, o.k, dtype, o.input.lo, o.input.hi, std::max(o.reps, 3),
                  o.topk.sorted ? " --sorted" : "", o.topk.largest ? "" : " --smallest");
    if (auto peer = bench::run_python_peer("torch_topk.py", args))
      c.add("torch.topk " + peer->value("dtype", std::string()) + " (torch " + peer->value("torch", std::string("?")) + ")",
            bench::stats_from_json(*peer));
  }

  // Sort-then-take: (value, index) pairs sorted by the device sort, the first k taken (one row).
  const double bandwidth = device_copy_bandwidth(device, std::max<std::size_t>(n * sizeof(T), std::size_t(1) << 29));
  if (o.rows == 1 && n <= std::size_t(UINT32_MAX)) {
    DeviceArray<T> keys(device, n);
    std::vector<std::uint32_t> iota(n);
    std::iota(iota.begin(), iota.end(), 0u);
    DeviceArray<std::uint32_t> index(device, n), index_in(device, n);
    RXM_CUDA_CHECK(cudaMemcpy(index_in.data(), iota.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    std::vector<std::uint32_t> taken(o.k);
    const SortOptions order{o.topk.largest ? Order::descending : Order::ascending};
    c.add("radixmesh::sort (device pairs) then take k",
          bench::time_host(
              [&] {
                RXM_CUDA_CHECK(cudaMemcpy(keys.data(), values.data(), n * sizeof(T), cudaMemcpyDeviceToDevice));
                RXM_CUDA_CHECK(cudaMemcpy(index.data(), index_in.data(), n * sizeof(std::uint32_t),
                                          cudaMemcpyDeviceToDevice));
                RXM_CUDA_CHECK(cudaDeviceSynchronize());
              },
              [&] {
                sort(ctx, device_span<T>(keys), device_span<std::uint32_t>(index), order);
                RXM_CUDA_CHECK(cudaMemcpy(taken.data(), index.data(), o.k * sizeof(std::uint32_t),
                                          cudaMemcpyDeviceToHost));
              },
              o.warmup, o.reps));
  }

  c.set_floor(double(n) * sizeof(T), bandwidth,
              "one read of the input over the device-to-device cudaMemcpy bandwidth (read+write bytes/s) measured here");
  BenchOutcome r = outcome_of(c, bandwidth > 0 ? double(n) * sizeof(T) / bandwidth * 1e3 : 0);
  r.device = ctx.devices().front().name;
  r.verified_how = "the CPU backend (exact indices and values)";
  if (o.verify) {
    Context cpu = Context::cpu();
    const TopkResult<T> reference =
        topk_batched<T>(cpu, std::span<const T>(input), Rows::uniform(o.rows, length), o.k, o.topk);
    r.verified = same_result(ours, reference.indices, input, length);
  }
  return r;
}

#endif  // RXM_HAS_CUDA

template <class T> BenchOutcome run_typed(const TopkBenchOptions& o, Context& ctx, const bench::RunInfo& info) {
  const std::size_t length = o.n / o.rows;
  const bool on_cuda = ctx.backend() == Backend::cuda;
  const unsigned threads = ctx.cpu_threads();
  // Input, results (ours and the references), and the peers' index scratch per thread.
  require_host_memory(o.n * sizeof(T) + 4 * o.rows * o.k * (sizeof(T) + 8) +
                          (on_cuda ? 4 * o.n : std::min<std::size_t>(threads, o.rows) * length * 8),
                      "bench topk");
  std::vector<T> input(o.n);
  GenerateOptions generate_options = o.input;
  generate_options.threads = threads;
  generate(std::span<T>(input), generate_options);

  nlohmann::json parameters = {{"rows", o.rows},
                               {"n", length},
                               {"k", o.k},
                               {"type", std::string(name_of(o.type))},
                               {"distribution", describe_input(o)},
                               {"largest", o.topk.largest},
                               {"sorted", o.topk.sorted},
                               {"backend", on_cuda ? "cuda" : "cpu"},
                               {"seed", o.input.seed},
                               {"via", "radixmesh bench topk"}};
  if (!on_cuda) parameters["threads"] = threads;
  Case c("topk", parameters, double(o.n), "values");
  BenchOutcome r;
  if (on_cuda) {
#if defined(RXM_HAS_CUDA)
    r = run_on_cuda(o, ctx, input, c);
#endif
  } else {
    r = run_on_cpu(o, ctx, input, c);
  }
  if (!o.quiet) {
    c.print();
    std::printf("  verified: %s\n", o.verify ? (r.verified ? ("yes, against " + r.verified_how).c_str() : "NO") : "skipped");
  }
  // Only verified runs are recorded: a wrong top-k's timing means nothing.
  if (o.write_results && (r.verified || !o.verify)) bench::append_results(o.results_file, info, c);
  return r;
}

}  // namespace

bool cuda_topk_bench_built() {
#if defined(RXM_HAS_CUDA)
  return true;
#else
  return false;
#endif
}

BenchOutcome run_topk_benchmark(const TopkBenchOptions& o, Context& ctx, const bench::RunInfo& info) {
  require(o.rows >= 1 && o.n % o.rows == 0 && o.n > 0,
          "bench topk: --rows " + std::to_string(o.rows) + " does not divide --n " + std::to_string(o.n),
          "pass --n a multiple of --rows (each row has n / rows values)");
  const std::size_t length = o.n / o.rows;
  require(o.k >= 1 && o.k <= length,
          "bench topk: k = " + std::to_string(o.k) + " is not within 1 <= k <= n = " + std::to_string(length) +
              " (values per row)",
          "pass 1 <= -k <= --n / --rows");
  if (ctx.backend() == Backend::cuda && !cuda_topk_bench_built())
    throw_error(ErrorCode::unsupported, "this radixmesh has no CUDA top-k benchmark (built without CUDA)",
                "rebuild with -DRXM_ENABLE_CUDA=ON, or use --backend cpu");
  return visit_key_type(o.type, [&](auto tag) -> BenchOutcome {
    using T = decltype(tag);
    if constexpr (sizeof(T) < 2) {
      throw_error(ErrorCode::unsupported, "bench topk: --type " + std::string(name_of(o.type)) + " is not supported",
                  "use f32, f16, bf16, f64, i16, u16, i32, u32, i64 or u64");
    } else {
      return run_typed<T>(o, ctx, info);
    }
  });
}

}  // namespace radixmesh::cli
