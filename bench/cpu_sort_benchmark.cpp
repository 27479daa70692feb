// The CPU backend's sort against std::sort, boost spreadsort and boost block_indirect_sort on
// the same input (bench/sort_benchmark.hpp). Every run starts from a fresh copy of the input,
// made untimed; ours is verified element by element against std::sort's output.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/backends.hpp"
#include "cpu/radix_sort_digits.hpp"
#include "peers/cpu_sort_peers.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/sort.hpp"
#include "sort_benchmark.hpp"

namespace radixmesh::bench {

namespace {

using Bytes = std::vector<unsigned char>;

// Values are the original indices, so the pairs' check can tell a stable result from another.
Bytes index_values(std::size_t n, std::size_t value_bytes) {
  Bytes values(n * value_bytes);
  if (value_bytes == 0) return values;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t index = i;
    if (value_bytes == 4) {
      const auto narrow = std::uint32_t(index);
      std::memcpy(&values[i * 4], &narrow, 4);
    } else {
      std::memcpy(&values[i * 8], &index, 8);
    }
  }
  return values;
}

std::uint64_t value_at(const Bytes& values, std::size_t value_bytes, std::size_t i) {
  if (value_bytes == 4) {
    std::uint32_t v;
    std::memcpy(&v, &values[i * 4], 4);
    return v;
  }
  std::uint64_t v;
  std::memcpy(&v, &values[i * 8], 8);
  return v;
}

// Without std::sort's keys to compare with: every neighbour in order under the encoding, and the
// same keys as the input by two order-independent sums of a mixing of each key's bits (a
// different multiset passes with probability about 2^-64 per sum).
bool sorted_same_keys(KeyType type, Order order, const Bytes& input_keys, const Bytes& keys, std::size_t n) {
  return visit_key_type(type, [&](auto tag) {
    using T = decltype(tag);
    using U = key_bits_t<T>;
    auto bits = [](const Bytes& b, std::size_t i) {
      U u;
      std::memcpy(&u, &b[i * sizeof(U)], sizeof(U));
      return u;
    };
    const auto mix = buckets::hash::mix;  // splitmix64's finalizer
    std::uint64_t in_sum = 0, out_sum = 0, in_sq = 0, out_sq = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t a = mix(std::uint64_t(bits(input_keys, i)) + 1), b = mix(std::uint64_t(bits(keys, i)) + 1);
      in_sum += a, out_sum += b, in_sq += mix(a), out_sq += mix(b);
      if (i > 0 && encode_key(from_bits<T>(bits(keys, i)), order) < encode_key(from_bits<T>(bits(keys, i - 1)), order)) {
        std::fprintf(stderr, "verification failed: keys %zu and %zu are out of order\n", i - 1, i);
        return false;
      }
    }
    if (in_sum != out_sum || in_sq != out_sq) {
      std::fprintf(stderr, "verification failed: the sorted keys are not the input's keys\n");
      return false;
    }
    return true;
  });
}

// Sorted keys under key_less are unique bit for bit (the encoding is a bijection), so ours must
// equal std::sort's keys exactly. For pairs the stable order is then pinned down by: each value
// is the index of an input key equal to the key beside it, every index appears once, and
// indices rise within each run of equal keys -- which is exactly std::stable_sort's result.
bool verify(KeyType type, Order order, std::size_t value_bytes, const Bytes& input_keys, const Bytes& reference_keys,
            const Bytes& keys, const Bytes& values, std::size_t n) {
  const std::size_t key_bytes = size_of(type);
  if (reference_keys.empty()) {  // no std::sort run: sorted, and the same multiset of keys
    if (!sorted_same_keys(type, order, input_keys, keys, n)) return false;
  } else if (keys != reference_keys) {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(&keys[i * key_bytes], &reference_keys[i * key_bytes], key_bytes) != 0) {
        std::fprintf(stderr, "verification failed: key %zu differs from std::sort's\n", i);
        break;
      }
    return false;
  }
  if (value_bytes == 0) return true;
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t from = value_at(values, value_bytes, i);
    const bool valid = from < n && !seen[from] &&
                       std::memcmp(&input_keys[from * key_bytes], &keys[i * key_bytes], key_bytes) == 0;
    const bool stable = i == 0 || std::memcmp(&keys[(i - 1) * key_bytes], &keys[i * key_bytes], key_bytes) != 0 ||
                        value_at(values, value_bytes, i - 1) < from;
    if (!valid || !stable) {
      std::fprintf(stderr, "verification failed: value %zu is %s\n", i, valid ? "out of input order (unstable)" : "wrong");
      return false;
    }
    seen[from] = true;
  }
  return true;
}

// Radix passes an LSD sort of this input needs: 11-bit digits (the widest the CPU backend uses)
// that have a bit varying across the keys (a digit with no varying bit is constant and skipped).
int needed_passes(KeyType type, Order order, const Bytes& keys, std::size_t n) {
  return visit_key_type(type, [&](auto tag) {
    using T = decltype(tag);
    using U = key_bits_t<T>;
    if (n == 0) return 0;
    auto encoded = [&](std::size_t i) {
      T key;
      std::memcpy(&key, &keys[i * sizeof(T)], sizeof(T));
      return encode_key(key, order);
    };
    const U first = encoded(0);
    U varying = 0;
    for (std::size_t i = 1; i < n; ++i) varying = U(varying | (encoded(i) ^ first));
    const auto digits = detail::cpu_radix::plan_digits(0, int(sizeof(T) * 8), detail::cpu_radix::max_digit_bits);
    int passes = 0;
    for (int p = 0; p < digits.passes; ++p)
      if ((varying >> digits.shift[p]) & ((std::uint64_t(1) << digits.bits[p]) - 1)) ++passes;
    return passes;
  });
}

}  // namespace

SortBenchResult run_cpu_sort_benchmark(const SortBenchOptions& options, const RunInfo& info, unsigned threads) {
  threads = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = options.n, key_bytes = size_of(options.type), value_bytes = options.value_bytes;
  require(value_bytes == 0 || value_bytes == 4 || value_bytes == 8,
          "bench sort: values of " + std::to_string(value_bytes) + " bytes", "use 0, 4 or 8");
  const std::size_t record_bytes = cpu_peer_record_bytes(options.type, value_bytes);
  // Input, working copy, our ping-pong buffer, the peers' records, the reference keys.
  require_host_memory(n * (3 * (key_bytes + value_bytes) + record_bytes + key_bytes), "bench sort (CPU)");

  GenerateOptions generate_options;
  generate_options.distribution = options.distribution;
  generate_options.seed = options.seed;
  generate_options.zipf_s = options.zipf_s;
  generate_options.special_fraction = options.special_fraction;
  generate_options.threads = threads;
  Bytes input_keys(n * key_bytes);
  generate(options.type, input_keys.data(), n, generate_options);
  const Bytes input_values = index_values(n, value_bytes);

  nlohmann::json parameters = {{"n", n},
                               {"type", std::string(name_of(options.type))},
                               {"distribution", std::string(name_of(options.distribution))},
                               {"value_bytes", value_bytes},
                               {"order", options.order == Order::ascending ? "ascending" : "descending"},
                               {"threads", threads},
                               {"seed", options.seed},
                               {"backend", "cpu"}};
  if (options.distribution == Distribution::zipf) parameters["zipf_s"] = options.zipf_s;
  if (options.special_fraction > 0) parameters["special_fraction"] = options.special_fraction;
  SortBenchResult result;
  result.device = info.device.empty() ? cpu_model_name() : info.device;
  result.table = Case("sort", parameters, double(n));

  // Ours, and the previous version of ours: each sorts a fresh copy of the input into its arrays.
  Context ctx = Context::cpu(threads);
  const SortOptions sort_options{options.order};
  auto time_ours = [&](Bytes& out_keys, Bytes& out_values, const auto& sort) {
    return time_host(
        [&] {
          std::memcpy(out_keys.data(), input_keys.data(), out_keys.size());
          if (!out_values.empty()) std::memcpy(out_values.data(), input_values.data(), out_values.size());
        },
        [&] { sort(out_keys.data(), value_bytes ? out_values.data() : nullptr); }, options.warmup, options.reps);
  };
  Bytes keys(n * key_bytes), values(n * value_bytes);
  const Stats ours = time_ours(keys, values, [&](void* k, void* v) {
    detail::sort_host(ctx, options.type, k, n, v, value_bytes, sort_options);
  });
  result.table.add("radixmesh-cpu (" + std::to_string(threads) + " threads)", ours, true);
  if (options.previous) {  // the version before the last change of the algorithm, same input
    const detail::SortPlan plan = detail::validate_sort(options.type, n, value_bytes, sort_options);
    Bytes previous_keys(n * key_bytes), previous_values(n * value_bytes);
    const Stats previous = time_ours(previous_keys, previous_values, [&](void* k, void* v) {
      detail::cpu_sort_variant(plan, k, v, threads, detail::CpuSortVariant::previous());
    });
    require(previous_keys == keys && previous_values == values, "bench sort: the previous version's result differs",
            "report this as a bug");
    result.table.add_diagnostic("radixmesh-cpu, previous version (in-cache splits into 2048 buckets)", previous);
  }

  // Peers, each on records made fresh from the input before every run.
  Bytes records(n * record_bytes), reference_keys;
  for (CpuSortPeer peer : all_cpu_sort_peers) {
    if (std::none_of(options.cpu_peers.begin(), options.cpu_peers.end(),
                     [&](const std::string& wanted) { return name_of(peer).ends_with(wanted); }))
      continue;
    Stats s = time_host(
        [&] {
          make_cpu_peer_records(options.type, value_bytes, input_keys.data(), input_values.data(), n, records.data());
        },
        [&] { run_cpu_sort_peer(peer, options.type, value_bytes, options.order, records.data(), n, threads); },
        options.warmup, options.reps);
    std::string name(name_of(peer));
    if (peer == CpuSortPeer::block_indirect_sort) name += " (" + std::to_string(threads) + " threads)";
    result.table.add(name, s);
    if (peer == CpuSortPeer::std_sort && options.verify) {
      reference_keys.resize(n * key_bytes);
      split_cpu_peer_records(options.type, value_bytes, records.data(), n, reference_keys.data(), nullptr);
    }
  }
  records = Bytes();

  result.verified = options.verify && verify(options.type, options.order, value_bytes, input_keys, reference_keys, keys, values, n);

  const int passes = needed_passes(options.type, options.order, input_keys, n);
  const double bandwidth = measured_host_copy_bandwidth();
  result.table.set_floor(2.0 * passes * double(n) * double(key_bytes + value_bytes), bandwidth,
                         "LSD radix sort with 11-bit digits: " + std::to_string(passes) +
                             " passes (digits with a varying bit), each reading and writing every key and value "
                             "once; over memcpy bandwidth (read+write bytes/s)");

  result.ours_median_ms = ours.median_ms;
  result.best_peer = result.table.best_peer();
  for (const auto& e : result.table.entries())
    if (!e.ours && e.implementation == result.best_peer) result.best_peer_median_ms = e.stats.median_ms;
  result.speedup_over_best_peer = result.table.speedup_over_best_peer();

  if (!options.quiet) {
    result.table.print();
    std::printf("  verified: %s\n", options.verify ? (result.verified ? "yes" : "NO") : "skipped");
  }
  // Only verified runs are recorded: a wrong sort's timing means nothing.
  if (options.write_results && (result.verified || !options.verify))
    append_results(options.results_file, info, result.table);
  return result;
}

}  // namespace radixmesh::bench
