// radixmesh/multisplit.hpp — stable partition of keys (or key-value pairs) into m buckets.
//
//   rxm::multisplit(ctx, keys_in, keys_out, rxm::buckets::radix_digit{.shift = 24, .bits = 8}, offsets);
//
// keys_out holds the keys grouped by bucket id in ascending id order, each bucket keeping the input
// order (stable); bucket_offsets (m + 1 entries: m is bucket_offsets.size() - 1) gets the start of
// every bucket and n at the end. 1 <= m <= 65536. Outputs must not overlap the inputs.
//
// Backends. On a CPU context everything runs on host threads (the reference). On a CUDA context,
// the built-in bucket functions (radix_digit, identity, delta, splitters) run on the GPU, with
// device-resident spans (pointers on a context device) or host-resident ones (staged through
// pinned memory); a user's functor runs on host threads when the data is host-resident, and
// device-resident data with a user functor goes through the device-level entry point
// radixmesh/device/multisplit.cuh, compiled in the user's own .cu file.
//
// Bucket ids >= m: with options.checked (the default) the call throws rxm::Error naming the first
// such key before any output is written. With checked = false such keys land in bucket m - 1 and
// nothing is reported (memory-safe, but the partition is then not the one asked for).
//
// options.tuning (radixmesh/multisplit_tuning.hpp) forces the GPU's ranking method and scatter
// pass; the default runs the measured rules, and every setting gives the same result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/export.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/multisplit_tuning.hpp"

namespace radixmesh {

struct MultisplitOptions {
  bool checked = true;  // see above: ids >= m throw (checked) or go to bucket m - 1 (fast)
  MultisplitTuning tuning = {};  // the GPU kernels' knobs (tests and benchmarks set it; CPU contexts ignore it)
};

// A partition predicate that runs on the GPU: its operator()(K) const is __device__ (or
// __host__ __device__, e.g. RXM_HOST_DEVICE). rxm::partition(ctx, keys_in, keys_out,
// rxm::device_predicate{pred}) runs the device-level partition (radixmesh/device/multisplit.cuh,
// where that overload lives: include it and call from a .cu file) on device-resident spans. A
// wrapper, because whether a callable can run on the device cannot be asked of its type.
template <class P> struct device_predicate {
  P predicate;
};
template <class P> device_predicate(P) -> device_predicate<P>;
template <class T> inline constexpr bool is_device_predicate_v = false;
template <class P> inline constexpr bool is_device_predicate_v<device_predicate<P>> = true;

namespace detail {

// The first key whose bucket id was >= m, if any.
struct BadBucket {
  std::size_t index = SIZE_MAX;
  std::uint32_t id = 0;
  std::uint64_t key_bits = 0;  // the key's raw bits (not encoded)
  bool found() const { return index != SIZE_MAX; }
};

// One call of the type-erased backends. keys_out == nullptr: histogram only (offsets written).
struct MultisplitArgs {
  KeyType type = KeyType::u32;
  std::size_t n = 0;
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const void* values_in = nullptr;
  void* values_out = nullptr;
  std::size_t value_bytes = 0;  // 0, 4 or 8
  std::uint32_t m = 1;
  std::size_t* offsets = nullptr;  // m + 1 entries, host or device memory
  bool checked = true;
  MultisplitTuning tuning = {};
};

// Throws rxm::Error when a knob of `tuning` is out of range (valid_tuning).
inline void validate_tuning(const MultisplitTuning& tuning, const char* call) {
  require(valid_tuning(tuning),
          std::string(call) + ": tuning.scatter_stages = " + std::to_string(tuning.scatter_stages) +
              " and tuning.warp_scatter_windows = " + std::to_string(tuning.warp_scatter_windows),
          "use scatter_stages 0, 1 or 2 and warp_scatter_windows 0 or 8 (0: the default)");
}

// A bucket function the host backend calls in batches: ids[i] = f(keys[begin + i]).
struct BucketSource {
  const void* functor = nullptr;
  void (*ids)(const void* functor, const void* keys, std::size_t begin, std::size_t count,
              std::uint32_t* ids) = nullptr;
};

// The built-in bucket functions as plain data, for the CUDA backend's precompiled kernels.
struct BucketSpec {
  enum class Kind { user, radix_digit, identity, delta, splitters, hash } kind = Kind::user;
  int shift = 0, bits = 0;                             // radix_digit
  std::uint64_t delta_lo_encoded = 0, delta_width = 1;  // delta over integers
  double delta_lo_value = 0, delta_scale = 0;           // delta over floats
  const void* splitters = nullptr;                      // host memory, raw keys, m - 1 of them
};

// True when ptr is device memory (of any device); false for host memory or without CUDA.
RXM_API bool is_device_pointer(const void* ptr);

// Where a host-level call with a device callable runs: the device holding `in` (and `out`, both
// checked against the context) and the context's stream there (a cudaStream_t). Throws
// rxm::Error naming the fix for a CPU context, host-resident data, or data on another device.
// n == 0: nothing is checked and device is -1. Defined in CUDA builds only (its callers are
// templates compiled by nvcc: device/multisplit.cuh).
struct DevicePlace {
  int device = -1;
  void* stream = nullptr;
};
RXM_API DevicePlace device_place(Context& ctx, const char* call, const void* in, const void* out, std::size_t n);

template <class T, class = void> struct has_num_buckets : std::false_type {};
template <class T>
struct has_num_buckets<T, std::void_t<decltype(std::declval<const T&>().num_buckets())>> : std::true_type {};

template <class K> std::string describe_key(K key) {
  char text[64];
  if constexpr (key_traits<K>::is_float) {
    std::snprintf(text, sizeof text, "%.17g", buckets::detail::float_value(key));
  } else if constexpr (std::is_signed_v<K>) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(key));
  } else {
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(key));
  }
  return text;
}

template <class K, class F> BucketSpec spec_of(const F& f, std::uint32_t m) {
  BucketSpec spec;
  if constexpr (std::is_same_v<F, buckets::radix_digit>) {
    constexpr int width = int(sizeof(K) * 8);
    require(f.bits >= 0 && f.bits <= 16 && f.shift >= 0 && f.shift + f.bits <= width,
            "multisplit: radix_digit{shift = " + std::to_string(f.shift) + ", bits = " + std::to_string(f.bits) +
                "} is not inside the " + std::to_string(width) + "-bit key",
            "use 0 <= bits <= 16 and shift + bits <= " + std::to_string(width));
    spec.kind = BucketSpec::Kind::radix_digit;
    spec.shift = f.shift;
    spec.bits = f.bits;
  } else if constexpr (std::is_same_v<F, buckets::identity>) {
    spec.kind = BucketSpec::Kind::identity;
  } else if constexpr (std::is_same_v<F, buckets::hash>) {
    spec.kind = BucketSpec::Kind::hash;
  } else if constexpr (std::is_same_v<F, buckets::delta<K>>) {
    require(key_less<K>{}(f.lo, f.hi), "multisplit: delta buckets need lo < hi",
            "pass a range [lo, hi) with lo below hi");
    if constexpr (key_traits<K>::is_float) {
      const double lo = buckets::detail::float_value(f.lo), hi = buckets::detail::float_value(f.hi);
      require(lo - lo == 0.0 && hi - hi == 0.0, "multisplit: delta buckets over floats need finite lo and hi",
              "pass finite bounds; keys outside [lo, hi) go to the first or last bucket anyway");
    }
    spec.kind = BucketSpec::Kind::delta;
    spec.delta_lo_encoded = f.lo_encoded;
    spec.delta_width = f.width;
    spec.delta_lo_value = f.lo_value;
    spec.delta_scale = f.scale;
  } else if constexpr (std::is_same_v<F, buckets::splitters<K>>) {
    require(f.count + 1 == m, "multisplit: " + std::to_string(f.count) + " splitters make " +
                                  std::to_string(f.count + 1) + " buckets, not m = " + std::to_string(m),
            "pass m - 1 splitters");
    require(f.count == 0 || (f.data != nullptr && !is_device_pointer(f.data)),
            "multisplit: splitters are null or in device memory", "pass the splitters in host memory");
    for (std::uint32_t i = 1; i < f.count; ++i)
      require(!key_less<K>{}(f.data[i], f.data[i - 1]),
              "multisplit: splitters are not sorted (entry " + std::to_string(i) + " is below entry " +
                  std::to_string(i - 1) + ")",
              "sort the splitters ascending (key_less order)");
    spec.kind = BucketSpec::Kind::splitters;
    spec.splitters = f.data;
  }
  return spec;
}

// The type-erased half of every host-level multisplit (src/core/multisplit_dispatch.cpp).
// validate_multisplit checks what does not depend on the key type (m, null keys, the tuning);
// multisplit_host picks the backend (the GPU for built-in bucket functions on a CUDA context or
// device-resident keys, host threads otherwise) and returns the first bad bucket id, if any.
RXM_API void validate_multisplit(const MultisplitArgs& args);
RXM_API BadBucket multisplit_host(Context& ctx, const MultisplitArgs& args, BucketSource source, const BucketSpec& spec);

template <class K, class F>
void run_multisplit(Context& ctx, MultisplitArgs args, const F& bucket_fn) {
  validate_multisplit(args);
  if constexpr (has_num_buckets<F>::value)
    require(bucket_fn.num_buckets() == args.m,
            "multisplit: the bucket function has " + std::to_string(bucket_fn.num_buckets()) +
                " buckets but bucket_offsets has room for " + std::to_string(args.m),
            "pass a bucket_offsets span of num_buckets() + 1 entries");
  const BucketSpec spec = spec_of<K>(bucket_fn, args.m);
  BucketSource source{&bucket_fn, [](const void* f, const void* keys, std::size_t begin, std::size_t count,
                                     std::uint32_t* ids) {
                        const F& fn = *static_cast<const F*>(f);
                        const K* k = static_cast<const K*>(keys) + begin;
                        for (std::size_t i = 0; i < count; ++i) ids[i] = std::uint32_t(fn(k[i]));
                      }};
  const BadBucket bad = multisplit_host(ctx, args, source, spec);
  if (bad.found())
    throw_error(ErrorCode::invalid_argument,
                "multisplit: key " + describe_key(from_bits<K>(key_bits_t<K>(bad.key_bits))) + " at index " +
                    std::to_string(bad.index) + " has bucket id " + std::to_string(bad.id) + ", not below m = " +
                    std::to_string(args.m),
                "fix the bucket function or m (or pass checked = false to send such keys to bucket m - 1)");
}

template <class K> MultisplitArgs make_args(std::span<const K> keys_in, std::span<std::size_t> offsets,
                                           const MultisplitOptions& options) {
  require(!offsets.empty(), "multisplit: bucket_offsets is empty (m = -1 buckets)",
          "pass m + 1 offsets for 1 <= m <= 65536 buckets");
  MultisplitArgs args;
  args.type = key_type_v<K>;
  args.n = keys_in.size();
  args.keys_in = keys_in.data();
  args.m = offsets.size() - 1 > buckets::max_buckets ? buckets::max_buckets + 1 : std::uint32_t(offsets.size() - 1);
  args.offsets = offsets.data();
  args.checked = options.checked;
  args.tuning = options.tuning;
  return args;
}

}  // namespace detail

// Keys only.
template <class K, class F>
void multisplit(Context& ctx, std::span<const K> keys_in, std::span<K> keys_out, const F& bucket_fn,
                std::span<std::size_t> bucket_offsets, const MultisplitOptions& options = {}) {
  auto args = detail::make_args(keys_in, bucket_offsets, options);
  require(keys_out.size() == keys_in.size(),
          "multisplit: keys_out has " + std::to_string(keys_out.size()) + " entries for " +
              std::to_string(keys_in.size()) + " keys",
          "pass a keys_out span as long as keys_in");
  args.keys_out = keys_out.data();
  detail::run_multisplit<K>(ctx, args, bucket_fn);
}

// Keys and values (4 or 8 bytes each, any trivially copyable type): values move with their keys.
template <class K, class V, class F>
void multisplit(Context& ctx, std::span<const K> keys_in, std::span<K> keys_out, std::span<const V> values_in,
                std::span<V> values_out, const F& bucket_fn, std::span<std::size_t> bucket_offsets,
                const MultisplitOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::multisplit: values must be 4 or 8 bytes wide");
  auto args = detail::make_args(keys_in, bucket_offsets, options);
  require(keys_out.size() == keys_in.size() && values_in.size() == keys_in.size() &&
              values_out.size() == keys_in.size(),
          "multisplit: keys_in, keys_out, values_in and values_out have " + std::to_string(keys_in.size()) + ", " +
              std::to_string(keys_out.size()) + ", " + std::to_string(values_in.size()) + " and " +
              std::to_string(values_out.size()) + " entries",
          "pass four spans of the same length");
  args.keys_out = keys_out.data();
  args.values_in = values_in.data();
  args.values_out = values_out.data();
  args.value_bytes = sizeof(V);
  detail::run_multisplit<K>(ctx, args, bucket_fn);
}

// By-product: counts[b] = number of keys in bucket b (m = counts.size()).
template <class K, class F>
void histogram(Context& ctx, std::span<const K> keys, const F& bucket_fn, std::span<std::size_t> counts,
               const MultisplitOptions& options = {}) {
  std::vector<std::size_t> offsets(counts.size() + 1);
  auto args = detail::make_args(keys, std::span<std::size_t>(offsets), options);
  if (detail::is_device_pointer(counts.data()))
    throw_error(ErrorCode::unsupported, "histogram: counts are in device memory",
                "pass a host span for counts (the keys may be on the device)");
  detail::run_multisplit<K>(ctx, args, bucket_fn);
  for (std::size_t b = 0; b < counts.size(); ++b) counts[b] = offsets[b + 1] - offsets[b];
}

// By-product: stable two-way partition (compaction). Keys with predicate(key) true come first, in
// input order, then the others; returns how many were true. A host predicate runs where a user
// functor runs (host threads; host-resident keys only). Device-resident keys need a predicate that
// runs on the GPU, wrapped as rxm::device_predicate{pred}: that overload is in
// radixmesh/device/multisplit.cuh (the m = 2 multisplit on the context's stream of the keys' device).
template <class K, class Predicate>
std::size_t partition(Context& ctx, std::span<const K> keys_in, std::span<K> keys_out, Predicate predicate,
                      const MultisplitOptions& options = {}) {
  static_assert(!is_device_predicate_v<Predicate>,
                "rxm::partition with a device_predicate: include radixmesh/device/multisplit.cuh and call it from "
                "a .cu file compiled by nvcc");
  require(!detail::is_device_pointer(keys_in.data()) && !detail::is_device_pointer(keys_out.data()),
          "partition: the keys are in device memory but the predicate runs on host threads",
          "give a predicate with a __device__ operator() as rxm::device_predicate{pred} from a .cu file that "
          "includes radixmesh/device/multisplit.cuh, or pass host-resident keys");
  std::size_t offsets[3];
  auto two_way = [predicate](K key) { return predicate(key) ? 0u : 1u; };
  multisplit(ctx, keys_in, keys_out, two_way, std::span<std::size_t>(offsets), options);
  return offsets[1];
}

}  // namespace radixmesh
