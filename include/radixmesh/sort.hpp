// radixmesh/sort.hpp — sort keys or key-value pairs, stable, every key type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

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

// How a sort over several mesh devices moves the keys between them (docs/design/mesh-sort.md).
// Both give the same bytes; only the speed differs.
enum class MeshSortStrategy {
  automatic,  // merge on logical devices of one GPU with device-resident shards (measured faster
              // there), partition everywhere else
  partition,  // RMG: every device splits its shard by the top digits of the keys, one all_to_all_v,
              // every device sorts what it received
  merge,      // every device sorts its own shard, the exact cuts of every device's share are found
              // in the sorted shards, and every device merges its pieces, reading the other devices'
              // memory (host shards on GPU devices go up first and come down after; device shards
              // must be memory the other GPUs reach: cudaMalloc'd, or a pool that grants them
              // access). Only where every mesh device is in this process and reads the others'
              // memory; the partition elsewhere
};

// When host-resident input is sorted out of core (in rounds through the devices, with one extra
// host array): automatic where the in-memory sort's buffers do not fit the devices
// (SortOptions::device_memory_limit, or the memory they have free); always, for tests and
// benchmarks on inputs that would fit; never, to get the in-memory sort's out-of-memory error
// instead. A CPU context of one process has no device to run out of. Under Context::mpi the ranks
// decide together: out of core when any rank's GPU cannot hold its shard's in-memory sort or any
// rank says always, unless a rank says never; each rank's shard is then sorted on its own devices,
// cut at exact splitters, exchanged once and merged (docs/design/mesh-sort.md).
enum class OutOfCoreMode { automatic, never, always };

// How far an out-of-core sort is (SortOptions::progress): `step` is "counting", "partitioning" or
// "sorting", at recursion `level` (0 for the whole input; a deeper level sorts one bucket too
// large for a device), `done` of `total` chunks or groups of that step.
struct SortProgress {
  const char* step = "";
  int level = 0;
  std::size_t done = 0, total = 0;
};

// Wall-clock milliseconds of each step of one sort over several mesh devices on this process, and
// its plan, for benchmarks and --explain; one GPU's sort of host-resident input (in memory) fills
// the setup, upload, partition (its split pass), local sort and download times. Asking for it waits
// for every local device at the end of each step, which costs a little.
struct SortPhases {
  double setup_ms = 0;       // one GPU's host sort: its device buffers allocated, before the upload
  double upload_ms = 0;      // host-resident input to GPU mesh devices
  double partition_ms = 0;   // the first digit's local splits, the all_gather of the histograms, the plan
  double refine_ms = 0;      // the further passes over buckets that span devices
  double exchange_ms = 0;    // the all_to_all_v of keys and values
  double local_sort_ms = 0;  // every device's sort of what it received (host shards in groups: until
                             // the last group's sort ended, beside the download of the ones before)
  double download_ms = 0;    // the result back to host memory (in groups: what is left after the sorts)
  int passes = 0;            // partition passes: 1 + the refinement passes (0: sorted across devices)
  bool sorted_across_devices = false;  // the shortcut: each device's keys were already in place
  int digit_bits = 0;        // bits per partition digit
  std::vector<std::uint64_t> counts;  // keys per mesh device, every device of the mesh
  std::vector<std::uint64_t> moved;   // mesh_size x mesh_size: keys device i sent to device j
  std::string plan_text;     // every pass's partition plan, readable
  std::string plan_json;     // the same as one JSON object
  // Out of core: partition_ms holds the partitioning passes, local_sort_ms the groups' passes
  // (transfers included); passes is the deepest level plus one.
  bool out_of_core = false;
  std::uint64_t out_of_core_chunks = 0, out_of_core_groups = 0;
  // Out of core across MPI ranks: the rank's own sort is in partition_ms and local_sort_ms (a CPU
  // rank's in local_sort_ms alone), then the exact splitters' search, the exchange
  // (exchange_ms) and the merge of the received runs.
  double splitters_ms = 0;
  double merge_ms = 0;
  bool merged = false;  // the merge strategy ran (MeshSortStrategy::merge): splitters_ms holds the
                        // cuts' search, exchange_ms the first merge round, merge_ms the others
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
  // Several mesh devices (sort_shards, or sort on a context of several): bits of each partition
  // digit (1..16; 0: automatic, 8), how the keys move between the devices, and where to put the
  // timing of each step and the plan.
  int mesh_digit_bits = 0;
  MeshSortStrategy mesh_strategy = MeshSortStrategy::automatic;
  SortPhases* phases = nullptr;
  // Host-resident input larger than the devices (OutOfCoreMode): the device memory each device
  // may use (0: what it has free), and a callback told of each round's progress (from the host
  // threads that drive the devices, one call at a time).
  OutOfCoreMode out_of_core = OutOfCoreMode::automatic;
  std::size_t device_memory_limit = 0;
  // The host memory the out-of-core sort may take beyond the input (its second array; 0: what the
  // host has available). A sort that needs more is refused before anything moves.
  std::size_t host_memory_limit = 0;
  // Host memory the out-of-core sort takes as its second array instead of allocating one: at least
  // out_of_core_scratch_bytes(n, key bytes, value bytes). A caller that sorts often keeps one and
  // skips the host's first touch of fresh pages (5.4 GB/s on a fresh H100 machine against 48 for
  // written ones: bench/phases/host_register.cu); pinned memory (cudaHostAlloc, cudaHostRegister)
  // also skips the staging copies of the transfers to and from it. Its contents are overwritten.
  std::span<std::byte> host_scratch = {};
  std::function<void(const SortProgress&)> progress = nullptr;
};

// The bytes of SortOptions::host_scratch that an out-of-core sort of n keys of key_bytes (and
// values of value_bytes) needs: the keys' array, then the values' from the next 64-byte boundary.
constexpr std::size_t out_of_core_scratch_bytes(std::size_t n, std::size_t key_bytes, std::size_t value_bytes) {
  return value_bytes ? (n * key_bytes + 63) / 64 * 64 + n * value_bytes : n * key_bytes;
}

namespace detail {
// Type-erased entry points: the templates below forward here. value_bytes is 0 (keys only), 4 or 8.
RXM_API void sort_host(Context& ctx, KeyType type, void* keys, std::size_t n, void* values,
               std::size_t value_bytes, const SortOptions& options);
// sort_rows: n keys in rows of row_length, each row sorted on its own (host memory).
RXM_API void sort_rows_host(Context& ctx, KeyType type, void* keys, std::size_t n, std::size_t row_length,
                            void* values, std::size_t value_bytes, const SortOptions& options);
// A batch of rows on one CUDA device of the context, sorted out of place and stream-ordered
// (the C API's rxm_sort_rows_device, which the Python package uses on PyTorch and CuPy arrays):
// n keys in rows of row_length from keys_in to keys_out, each row on its own, stable. Values go
// from values_in to values_out; with positions, values_in is null and values_out receives each
// key's position in its row (int32 for value_bytes 4, int64 for 8: an argsort). keys_in may be
// keys_out (values_in values_out): sorted through a copy. Everything is queued on `stream` (a
// cudaStream_t; null: the legacy default stream) with temporaries from the context's pool for the
// device taken and given back on that stream; nothing waits for the GPU.
struct DeviceRowsSort {
  KeyType type = KeyType::u32;
  int device = 0;
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const void* values_in = nullptr;
  void* values_out = nullptr;
  std::size_t value_bytes = 0;  // 0, 4 or 8
  bool positions = false;
  std::size_t n = 0, row_length = 0;
  void* stream = nullptr;
};
RXM_API void sort_rows_device(Context& ctx, const DeviceRowsSort& s, const SortOptions& options);
// Device-resident keys (and values) on the CUDA backend; the device ids come from the spans.
RXM_API void sort_device(Context& ctx, KeyType type, void* keys, std::size_t n, int keys_device, void* values,
                 std::size_t values_n, int values_device, std::size_t value_bytes, const SortOptions& options);
// One sort_shards call: one shard of keys (and values) per local mesh device; with `into`, the
// sorted keys go to the output shards instead (their sizes say how many each device takes).
struct ShardSpans {
  std::vector<void*> keys, values;
  std::vector<std::size_t> sizes, value_sizes;
  std::vector<int> key_devices, value_devices;  // device_span's devices; empty for host shards
};
struct ShardSortArgs {
  KeyType type = KeyType::u32;
  std::size_t value_bytes = 0;  // 0, 4 or 8
  ShardSpans in, out;           // out: only with `into`
  bool into = false;
  bool device_resident = false;
};
RXM_API void sort_shards(Context& ctx, const ShardSortArgs& args, const SortOptions& options);

template <class KeySpan, class ValueSpan>
ShardSpans shard_spans(std::span<const KeySpan> keys, std::span<const ValueSpan> values) {
  ShardSpans spans;
  for (const auto& s : keys) {
    spans.keys.push_back(const_cast<void*>(static_cast<const void*>(s.data())));
    spans.sizes.push_back(s.size());
    if constexpr (requires { s.device(); }) spans.key_devices.push_back(s.device());
  }
  for (const auto& s : values) {
    spans.values.push_back(const_cast<void*>(static_cast<const void*>(s.data())));
    spans.value_sizes.push_back(s.size());
    if constexpr (requires { s.device(); }) spans.value_devices.push_back(s.device());
  }
  return spans;
}

// The arguments of one sort_shards (out empty) or sort_shards_into call; device_spans make it
// device-resident, host spans not.
template <class K, class V, class InKeys, class InValues, class OutKeys = InKeys, class OutValues = InValues>
ShardSortArgs shard_sort_args(std::span<const InKeys> keys, std::span<const InValues> values,
                              std::span<const OutKeys> out = {}, std::span<const OutValues> out_values = {},
                              bool into = false) {
  ShardSortArgs args;
  args.type = key_type_v<K>;
  if constexpr (!std::is_void_v<V>) args.value_bytes = sizeof(V);
  args.device_resident = requires(const InKeys& s) { s.device(); };
  args.in = shard_spans(keys, values);
  args.into = into;
  if (into) args.out = shard_spans(out, out_values);
  return args;
}
}  // namespace detail

// Sorts host-resident keys in place. Stable: equal keys keep their input order.
template <class K> void sort(Context& ctx, std::span<K> keys, const SortOptions& options = {}) {
  detail::sort_host(ctx, key_type_v<K>, keys.data(), keys.size(), nullptr, 0, options);
}

// On a context of several mesh devices (Context::local({0, 1, 2, 3}), logical devices such as
// Context::local({0, 0, 0, 0}), Context::cpu_mesh(n)) the keys are sorted by all of them: each
// takes an even slice, and sort_shards below sorts the slices together. With Context::mpi, `keys`
// is this rank's shard and the sort is global across ranks (every rank calls it; each keeps its
// count). The result is the same as on one device, byte for byte.
//
// Sorts keys and permutes values alongside (values of 4 or 8 bytes, any trivially copyable type).
template <class K, class V>
void sort(Context& ctx, std::span<K> keys, std::span<V> values, const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort: values must be 4 or 8 bytes wide");
  require(keys.size() == values.size(), "sort: keys and values differ in length",
          "pass a values span with exactly one value per key");
  detail::sort_host(ctx, key_type_v<K>, keys.data(), keys.size(), values.data(), sizeof(V), options);
}

// Every row of a host-resident batch sorted on its own (numpy.sort and torch.sort along the last
// axis): keys holds rows of row_length keys, row-major; stable; values move with their keys. On a
// context of one device: CPU contexts sort many rows at once (one thread per row), or each long
// row with every thread; CUDA contexts sort a batch of rows of up to 2^16 keys with one segmented
// radix sort on the GPU (a block per row), and longer rows one after another through the
// host-resident GPU sort.
template <class K> void sort_rows(Context& ctx, std::span<K> keys, std::size_t row_length, const SortOptions& options = {}) {
  detail::sort_rows_host(ctx, key_type_v<K>, keys.data(), keys.size(), row_length, nullptr, 0, options);
}
template <class K, class V>
void sort_rows(Context& ctx, std::span<K> keys, std::span<V> values, std::size_t row_length,
               const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort_rows: values must be 4 or 8 bytes wide");
  require(keys.size() == values.size(), "sort_rows: keys and values differ in length",
          "pass a values span with exactly one value per key");
  detail::sort_rows_host(ctx, key_type_v<K>, keys.data(), keys.size(), row_length, values.data(), sizeof(V), options);
}

// Sorts device-resident keys in place on their device, which must belong to ctx (a CUDA context).
// Synchronous: returns when the keys are sorted. Starts after the work queued before it on the
// legacy default stream and on blocking streams (a kernel that wrote the keys); synchronize your
// non-blocking streams first. Temporary device memory: one more array of keys
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

// Sorts keys spread over the mesh devices, one shard per local mesh device (in local order;
// Context::local_mesh_devices()), in place: afterwards every key on mesh device i is <= (in the
// sort's order) every key on device i + 1, each device keeps its count, and the result is stable in
// global order (device order, then position): the same bytes as one device sorting the shards
// concatenated. GPU mesh devices take device_spans on their own device; CPU mesh devices (cpu_mesh,
// CPU MPI ranks) take host spans, and so may GPU mesh devices (uploaded, sorted, downloaded).
// Collective: every process calls it with its own devices' shards; ranks that disagree on the key
// type, values, order or bits, and bad shards on any device, throw rxm::Error on every process.
// RMG's algorithm (docs/design/mesh-sort.md): a histogram of the top digit on every device, one
// all_gather, a partition plan (src/core/mesh/partition_plan.hpp) refined only where a bucket spans
// devices, one all_to_all_v, and a local sort of what each device received.
template <class K> void sort_shards(Context& ctx, std::span<const device_span<K>> shards, const SortOptions& options = {}) {
  detail::sort_shards(ctx, detail::shard_sort_args<K, void>(shards, std::span<const device_span<K>>()), options);
}
template <class K, class V>
void sort_shards(Context& ctx, std::span<const device_span<K>> shards, std::span<const device_span<V>> values,
                 const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort_shards: values must be 4 or 8 bytes wide");
  detail::sort_shards(ctx, detail::shard_sort_args<K, V>(shards, values), options);
}
template <class K> void sort_shards(Context& ctx, std::span<const std::span<K>> shards, const SortOptions& options = {}) {
  detail::sort_shards(ctx, detail::shard_sort_args<K, void>(shards, std::span<const std::span<K>>()), options);
}
template <class K, class V>
void sort_shards(Context& ctx, std::span<const std::span<K>> shards, std::span<const std::span<V>> values,
                 const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort_shards: values must be 4 or 8 bytes wide");
  detail::sort_shards(ctx, detail::shard_sort_args<K, V>(shards, values), options);
}

// The same into other shards, the inputs untouched: out[i] (and out_values[i]) take the keys of
// mesh device first + i, and their sizes, which must add up to the global key count over every
// device, say how many each takes (any counts: balanced_shard_sizes gives even ones). Output
// shards live where the inputs do (device_spans on each GPU device, host spans on CPU devices).
template <class K>
void sort_shards_into(Context& ctx, std::span<const device_span<const K>> in, std::span<const device_span<K>> out,
                      const SortOptions& options = {}) {
  detail::sort_shards(ctx, detail::shard_sort_args<K, void>(in, std::span<const device_span<const K>>(), out,
                                                            std::span<const device_span<K>>(), true), options);
}
template <class K, class V>
void sort_shards_into(Context& ctx, std::span<const device_span<const K>> in, std::span<const device_span<const V>> in_values,
                      std::span<const device_span<K>> out, std::span<const device_span<V>> out_values,
                      const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort_shards_into: values must be 4 or 8 bytes wide");
  detail::sort_shards(ctx, detail::shard_sort_args<K, V>(in, in_values, out, out_values, true), options);
}
template <class K>
void sort_shards_into(Context& ctx, std::span<const std::span<const K>> in, std::span<const std::span<K>> out,
                      const SortOptions& options = {}) {
  detail::sort_shards(ctx, detail::shard_sort_args<K, void>(in, std::span<const std::span<const K>>(), out,
                                                            std::span<const std::span<K>>(), true), options);
}
template <class K, class V>
void sort_shards_into(Context& ctx, std::span<const std::span<const K>> in, std::span<const std::span<const V>> in_values,
                      std::span<const std::span<K>> out, std::span<const std::span<V>> out_values,
                      const SortOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::sort_shards_into: values must be 4 or 8 bytes wide");
  detail::sort_shards(ctx, detail::shard_sort_args<K, V>(in, in_values, out, out_values, true), options);
}

// Even output sizes for sort_shards_into: every local device's share of the global key count
// (n / P each, the first n mod P devices one more), given this process's input sizes. Collective:
// every process calls it.
RXM_API std::vector<std::size_t> balanced_shard_sizes(Context& ctx, std::span<const std::size_t> local_input_sizes);

}  // namespace radixmesh
