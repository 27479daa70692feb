// radixmesh/sort.hpp — sort keys or key-value pairs, stable, every key type.
#pragma once
#include <cstddef>
#include <span>

#include "radixmesh/context.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/export.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh {

// Which GPU sort runs (ignored by the CPU backend). automatic picks the faster one measured for
// the key and value widths (src/cuda/sort/engine_choice.cpp records the figures).
enum class SortEngine {
  automatic,
  cub_onesweep,    // CUB DeviceRadixSort (onesweep) on the encoded keys
  multisplit_lsd,  // LSD radix sort: one radixmesh digit multisplit per digit
};

// How floating-point keys are sorted on the GPU with CUB's engine (ignored by the CPU backend, the
// multisplit engine and other key types). Both give the same order (keys.hpp); only the speed
// differs, so this is for benchmarks and tests that compare the two.
enum class FloatSortPath {
  automatic,  // CUB's native float sort plus an order fix-up where it applies (all bits, fewer
              // than 2^32 keys: src/cuda/sort/native_float.hpp), else encoded
  encoded,    // encode to unsigned bits, sort, decode (the path of integer keys)
};

// How host-resident input is staged through the GPU (ignored for device-resident input and by the
// CPU backend). Both give the same result; only the speed differs, so this is for benchmarks and
// tests that compare the two (src/cuda/sort/sort_host.cpp has the measured choice).
enum class HostStagingPlan {
  automatic,  // split where it measured faster: unsigned ascending keys of >= 2^22 with > 16 bits
  whole,      // upload everything, sort on the GPU, download
  split,      // sort on the top 4 bits first, then sort each bucket while earlier ones download
};

struct SortOptions {
  Order order = Order::ascending;
  // Only bits [begin_bit, end_bit) of the order-preserving *encoding* (keys.hpp) take part; the
  // default is every bit. Radix partitioning that already fixed the high bits sorts fewer bits.
  int begin_bit = 0;
  int end_bit = -1;  // -1: the key's width in bits
  SortEngine engine = SortEngine::automatic;
  FloatSortPath float_path = FloatSortPath::automatic;
  HostStagingPlan host_plan = HostStagingPlan::automatic;
};

namespace detail {
// Type-erased entry points: the templates below forward here. value_bytes is 0 (keys only), 4 or 8.
RXM_API void sort_host(Context& ctx, KeyType type, void* keys, std::size_t n, void* values,
               std::size_t value_bytes, const SortOptions& options);
// Device-resident keys (and values) on the CUDA backend; the device ids come from the spans.
RXM_API void sort_device(Context& ctx, KeyType type, void* keys, std::size_t n, int keys_device, void* values,
                 std::size_t values_n, int values_device, std::size_t value_bytes, const SortOptions& options);
}  // namespace detail

// Sorts host-resident keys in place. Stable: equal keys keep their input order.
template <class K> void sort(Context& ctx, std::span<K> keys, const SortOptions& options = {}) {
  detail::sort_host(ctx, key_type_v<K>, keys.data(), keys.size(), nullptr, 0, options);
}

// Sorts keys and permutes values alongside (values of 4 or 8 bytes, any trivially copyable type).
template <class K, class V>
void sort(Context& ctx, std::span<K> keys, std::span<V> values, const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort: values must be 4 or 8 bytes wide");
  require(keys.size() == values.size(), "sort: keys and values differ in length",
          "pass a values span with exactly one value per key");
  detail::sort_host(ctx, key_type_v<K>, keys.data(), keys.size(), values.data(), sizeof(V), options);
}

// Sorts device-resident keys in place on their device, which must belong to ctx (a CUDA context).
// Synchronous: returns when the keys are sorted. Temporary device memory: one more array of keys
// (and of values), checked against the free memory before anything is allocated.
template <class K> void sort(Context& ctx, device_span<K> keys, const SortOptions& options = {}) {
  detail::sort_device(ctx, key_type_v<K>, keys.data(), keys.size(), keys.device(), nullptr, 0, -1, 0, options);
}

// Device-resident keys and values (4 or 8 bytes each), sorted in place together.
template <class K, class V>
void sort(Context& ctx, device_span<K> keys, device_span<V> values, const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort: values must be 4 or 8 bytes wide");
  detail::sort_device(ctx, key_type_v<K>, keys.data(), keys.size(), keys.device(), values.data(), values.size(),
                      values.device(), sizeof(V), options);
}

}  // namespace radixmesh
