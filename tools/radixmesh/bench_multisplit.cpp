#include "bench_multisplit.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "bucket_spec.hpp"
#include "radixmesh/multisplit.hpp"

#if defined(RXM_HAS_CUDA)
#include "bench_device.hpp"
#include "radixmesh/sort.hpp"
#endif

namespace radixmesh::cli {

namespace {

using bench::Case;
using bench::Stats;

// The arrays of one split: keys, values (empty for keys only) and the m + 1 offsets.
template <class K, class V> struct Split {
  std::vector<K> keys;
  std::vector<V> values;
  std::vector<std::size_t> offsets;
};

template <class T> bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Bucket ids by the bucket function, each checked against m (the library's checked mode does the
// same for ours, which runs first).
template <class K, class F> std::vector<std::uint32_t> bucket_ids(const std::vector<K>& keys, const F& fn, std::uint32_t m) {
  std::vector<std::uint32_t> id(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    id[i] = fn(keys[i]);
    if (id[i] >= m)  // not require(): its message would be built for every key
      throw_error(ErrorCode::invalid_argument,
                  "bench multisplit: key at index " + std::to_string(i) + " has bucket id " + std::to_string(id[i]),
                  "use a bucket function whose ids are below m");
  }
  return id;
}

// The textbook multisplit (histogram, exclusive prefix sum, stable scatter) on one thread: a
// peer, and the exact reference for ours.
template <class K, class V, class F>
void counting_split(const std::vector<K>& keys, const std::vector<V>& values, const F& fn, std::uint32_t m,
                    Split<K, V>& out) {
  const std::vector<std::uint32_t> id = bucket_ids(keys, fn, m);
  out.offsets.assign(std::size_t(m) + 1, 0);
  for (std::uint32_t b : id) ++out.offsets[b + 1];
  std::partial_sum(out.offsets.begin(), out.offsets.end(), out.offsets.begin());
  std::vector<std::size_t> cursor(out.offsets.begin(), out.offsets.end() - 1);
  out.keys.resize(keys.size());
  out.values.resize(values.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t to = cursor[id[i]]++;
    out.keys[to] = keys[i];
    if (!values.empty()) out.values[to] = values[i];
  }
}

// RB-sort: label every key, stable-sort the indices by label, gather (one thread).
template <class K, class V, class F>
void label_and_sort(const std::vector<K>& keys, const std::vector<V>& values, const F& fn, std::uint32_t m,
                    Split<K, V>& out) {
  const std::vector<std::uint32_t> id = bucket_ids(keys, fn, m);
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return id[a] < id[b]; });
  out.keys.resize(keys.size());
  out.values.resize(values.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out.keys[i] = keys[order[i]];
    if (!values.empty()) out.values[i] = values[order[i]];
  }
}

// Ours through the host-level API, on whatever memory the spans point to.
template <class K, class V, class F>
void multisplit_spans(Context& ctx, const K* in, K* out, const V* values_in, V* values_out, std::size_t n, const F& fn,
                      std::vector<std::size_t>& offsets) {
  if (values_in == nullptr)
    multisplit(ctx, std::span<const K>(in, n), std::span<K>(out, n), fn, std::span<std::size_t>(offsets));
  else
    multisplit(ctx, std::span<const K>(in, n), std::span<K>(out, n), std::span<const V>(values_in, n),
               std::span<V>(values_out, n), fn, std::span<std::size_t>(offsets));
}

template <class K, class V, class F>
BenchOutcome run_on_cpu(const MultisplitBenchOptions& o, Context& ctx, const std::vector<K>& keys,
                        const std::vector<V>& values, const F& fn, std::uint32_t m, Case& c) {
  const std::size_t n = keys.size();
  Split<K, V> ours{std::vector<K>(n), std::vector<V>(values.size()), std::vector<std::size_t>(std::size_t(m) + 1)};
  c.add("radixmesh-cpu (" + std::to_string(ctx.cpu_threads()) + " threads)",
        bench::time_host(nullptr,
                         [&] {
                           multisplit_spans(ctx, keys.data(), ours.keys.data(), values.empty() ? nullptr : values.data(),
                                            ours.values.data(), n, fn, ours.offsets);
                         },
                         o.warmup, o.reps),
        true);
  Split<K, V> reference, rb;
  c.add("counting sort by bucket id (1 thread)",
        bench::time_host(nullptr, [&] { counting_split(keys, values, fn, m, reference); }, o.warmup, o.reps));
  c.add("labels + std::stable_sort (RB-sort, 1 thread)",
        bench::time_host(nullptr, [&] { label_and_sort(keys, values, fn, m, rb); }, o.warmup, o.reps));

  const double bytes = double(n) * double(3 * sizeof(K) + 2 * o.value_bytes);
  const double bandwidth = bench::measured_host_copy_bandwidth();
  c.set_floor(bytes, bandwidth,
              "keys read twice and written once, values read and written once, over host memcpy bandwidth "
              "(read+write bytes/s)");
  BenchOutcome r = outcome_of(c, bytes / bandwidth * 1e3);
  r.verified = same_bytes(ours.keys, reference.keys) && same_bytes(ours.values, reference.values) &&
               ours.offsets == reference.offsets && same_bytes(rb.keys, reference.keys);
  r.device = bench::cpu_model_name();
  return r;
}

#if defined(RXM_HAS_CUDA)

template <class K, class V, class F>
BenchOutcome run_on_cuda(const MultisplitBenchOptions& o, Context& ctx, const std::vector<K>& keys,
                         const std::vector<V>& values, const F& fn, std::uint32_t m, Case& c) {
  const int device = ctx.devices().front().id;
  RXM_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t n = keys.size();
  const bool pairs = !values.empty();
  const DeviceArray<K> keys_in = copy_to_device(device, keys);
  const DeviceArray<V> values_in = copy_to_device(device, values);
  DeviceArray<K> keys_out(device, n);
  DeviceArray<V> values_out(device, values.size());
  std::vector<std::size_t> offsets(std::size_t(m) + 1);
  // Ours: the host-level call on device-resident spans, timed on the host clock (the m + 1
  // offsets come back to the host).
  c.add("radixmesh multisplit (device input)",
        bench::time_host(nullptr,
                         [&] {
                           multisplit_spans(ctx, keys_in.data(), keys_out.data(), pairs ? values_in.data() : nullptr,
                                            values_out.data(), n, fn, offsets);
                         },
                         o.warmup, o.reps),
        true);

  // What users do today for a digit: sort on the digit's bits only (the sort is stable).
  if constexpr (std::is_same_v<F, buckets::radix_digit>) {
    DeviceArray<K> sorted(device, n);
    DeviceArray<V> sorted_values(device, values.size());
    const SortOptions digit_bits{.order = Order::ascending, .begin_bit = fn.shift, .end_bit = fn.shift + fn.bits};
    c.add("radixmesh::sort on the digit's bits",
          bench::time_host(
              [&] {
                RXM_CUDA_CHECK(cudaMemcpy(sorted.data(), keys_in.data(), n * sizeof(K), cudaMemcpyDeviceToDevice));
                if (pairs)
                  RXM_CUDA_CHECK(cudaMemcpy(sorted_values.data(), values_in.data(), n * sizeof(V),
                                            cudaMemcpyDeviceToDevice));
                RXM_CUDA_CHECK(cudaDeviceSynchronize());
              },
              [&] {
                if (pairs) sort(ctx, device_span<K>(sorted), device_span<V>(sorted_values), digit_bits);
                else sort(ctx, device_span<K>(sorted), digit_bits);
              },
              o.warmup, o.reps));
  }

  const double bytes = double(n) * double(3 * sizeof(K) + 2 * o.value_bytes);
  const double bandwidth = device_copy_bandwidth(device, std::max<std::size_t>(n * sizeof(K), std::size_t(1) << 29));
  c.set_floor(bytes, bandwidth,
              "keys read twice and written once, values read and written once, over the device-to-device "
              "cudaMemcpy bandwidth (read+write bytes/s) measured here");
  BenchOutcome r = outcome_of(c, bandwidth > 0 ? bytes / bandwidth * 1e3 : 0);
  r.device = ctx.devices().front().name;
  if (o.verify) {
    Split<K, V> ours{std::vector<K>(n), std::vector<V>(values.size()), offsets}, reference;
    if (n) RXM_CUDA_CHECK(cudaMemcpy(ours.keys.data(), keys_out.data(), n * sizeof(K), cudaMemcpyDeviceToHost));
    if (pairs)
      RXM_CUDA_CHECK(cudaMemcpy(ours.values.data(), values_out.data(), n * sizeof(V), cudaMemcpyDeviceToHost));
    counting_split(keys, values, fn, m, reference);
    r.verified = same_bytes(ours.keys, reference.keys) && same_bytes(ours.values, reference.values) &&
                 ours.offsets == reference.offsets;
  }
  return r;
}

#endif  // RXM_HAS_CUDA

template <class K, class V> BenchOutcome run_typed(const MultisplitBenchOptions& o, Context& ctx, const bench::RunInfo& info) {
  const bool on_cuda = ctx.backend() == Backend::cuda;
  const std::size_t n = o.n;
  // Input, ours, the reference and a peer's output, keys and values; the ids and the peer's order.
  require_host_memory(n * (4 * (sizeof(K) + o.value_bytes) + 8), "bench multisplit");
  std::vector<K> keys(n);
  GenerateOptions generate_options = o.input;
  generate_options.threads = ctx.cpu_threads();
  generate(std::span<K>(keys), generate_options);
  std::vector<V> values(o.value_bytes ? n : 0);
  std::iota(values.begin(), values.end(), V(0));

  return with_bucket_function<K>(o.buckets, [&](const auto& fn, std::uint32_t m) {
    nlohmann::json parameters = {{"n", n},
                                 {"type", std::string(name_of(o.type))},
                                 {"distribution", std::string(name_of(o.input.distribution))},
                                 {"buckets", o.buckets},
                                 {"m", m},
                                 {"value_bytes", o.value_bytes},
                                 {"backend", on_cuda ? "cuda" : "cpu"},
                                 {"seed", o.input.seed},
                                 {"via", "radixmesh bench multisplit"}};
    if (!on_cuda) parameters["threads"] = ctx.cpu_threads();
    Case c("multisplit", parameters, double(n), o.value_bytes ? "pairs" : "keys");
    BenchOutcome r;
    if (on_cuda) {
#if defined(RXM_HAS_CUDA)
      r = run_on_cuda(o, ctx, keys, values, fn, m, c);
#endif
    } else {
      r = run_on_cpu(o, ctx, keys, values, fn, m, c);
    }
    r.verified = r.verified && o.verify;
    r.verified_how = "a counting sort by bucket id (exact keys, values and offsets)";
    if (!o.quiet) {
      c.print();
      std::printf("  verified: %s\n", o.verify ? (r.verified ? ("yes, against " + r.verified_how).c_str() : "NO") : "skipped");
    }
    if (o.write_results && (r.verified || !o.verify)) bench::append_results(o.results_file, info, c);
    return r;
  });
}

}  // namespace

BenchOutcome run_multisplit_benchmark(const MultisplitBenchOptions& o, Context& ctx, const bench::RunInfo& info) {
  require(o.value_bytes == 0 || o.value_bytes == 4 || o.value_bytes == 8,
          "--values " + std::to_string(o.value_bytes) + " is not a value width", "use 0 (keys only), 4 or 8");
#if !defined(RXM_HAS_CUDA)
  if (ctx.backend() == Backend::cuda)
    throw_error(ErrorCode::unsupported, "this radixmesh has no CUDA multisplit benchmark (built without CUDA)",
                "rebuild with -DRXM_ENABLE_CUDA=ON, or use --backend cpu");
#endif
  return visit_key_type(o.type, [&](auto tag) -> BenchOutcome {
    using K = decltype(tag);
    return o.value_bytes == 8 ? run_typed<K, std::uint64_t>(o, ctx, info) : run_typed<K, std::uint32_t>(o, ctx, info);
  });
}

}  // namespace radixmesh::cli
