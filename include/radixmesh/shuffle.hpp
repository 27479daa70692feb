// radixmesh/shuffle.hpp — the shuffle: a distributed multisplit over the devices of a mesh.
//
//   auto ctx = rxm::Context::cpu_mesh(4);
//   std::vector<std::span<const std::uint32_t>> shards = {...};  // one per local mesh device
//   std::vector<int> owner(1024);                                  // bucket -> mesh device
//   auto out = rxm::shuffle(ctx, shards, rxm::buckets::hash{.m = 1024}, std::span<const int>(owner));
//   // out.shards[i]: the keys of the buckets device local_mesh_devices().first + i owns
//
// Every key goes to the mesh device that owns its bucket (bucket_owner[id], m entries, each in
// [0, mesh_size())). Each local device's shard of the result holds the keys (and values) of its
// buckets, grouped by bucket in ascending id, and stable: within a bucket, keys from device 0
// first, then device 1, ..., each in its input order. bucket_offsets (m + 1 entries) says where
// every bucket starts; buckets the device does not own are empty.
//
// Bucket functions: those of rxm::multisplit (radix_digit, identity, delta, splitters, a user
// functor, on CPU mesh devices only) and buckets::hash. m comes from the function's num_buckets(),
// else from bucket_owner.size(); 1 <= m <= 65536. Values (4 or 8 bytes, any trivially copyable
// type) move with their keys.
//
// Where the data lives: host spans on CPU mesh devices (Context::cpu_mesh, Context::mpi with the
// CPU backend), with the result in host vectors (ShuffleResult); device_spans on GPU mesh devices
// (Context::local({0, 1, 2, 3}), logical devices such as Context::local({0, 0, 0, 0}), or
// Context::mpi with GPUs), with the result in device memory of each device (DeviceShuffleResult).
// The call returns when the result is complete.
//
// Collective: every process of the mesh calls it, with its own local devices' shards. Bad input
// on one device (owners outside the mesh, lengths that differ, a bucket id >= m with
// options.checked) throws rxm::Error on every process, naming the device, before any key moves.
#pragma once
#include "radixmesh/export.hpp"
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh {

// Wall-clock time of each step of one shuffle on this process, in milliseconds, for benchmarks:
// asking for it waits for every local device at the end of each step, which costs a little. A
// streamed shuffle (tiles > 1) overlaps its splits and exchanges: counts_ms is then its counting
// pass and the gathered counts, split_ms the streamed part from the first split to the last
// exchange, and exchange_ms stays 0.
struct ShufflePhases {
  double split_ms = 0;     // every sender's split of its shard by owner
  double counts_ms = 0;    // the all_gather of per-owner counts, and the layouts
  double exchange_ms = 0;  // the all_to_all_v of keys and values
  double group_ms = 0;     // every receiver's split of what it got by bucket, into the result
  int tiles = 0;           // how many tiles the shuffle streamed (1: not streamed)
};

struct ShuffleOptions {
  bool checked = true;             // bucket ids >= m throw (as in MultisplitOptions)
  ShufflePhases* phases = nullptr;  // when set, filled with the time of each step
  // Streaming (MGI's sorters and movers): each device's shard is split in `tiles` consecutive
  // tiles after a counting pass over all of them, and a tile's per-destination batches are
  // exchanged while the later tiles are still being split. The result is the same for every tile
  // count. 0: automatic, which is 1 (not streamed): with the shuffle in two splits, 2^30 u32 keys,
  // 4 tiles took 15.2 ms against 14.0 not streamed on 4 x H200, and 30.8 against 26.2 on four
  // logical devices of one H200 (bench_shuffle; docs/design/mesh.md): the exchange, the only step
  // that overlaps, is the shortest, and the counting pass costs more than it hides. Every process
  // must pass the same value.
  int tiles = 0;
};

struct no_values {};

template <class K, class V = no_values> struct ShuffleResult {
  struct Shard {
    int participant = 0;                       // the mesh device this shard belongs to
    std::vector<K> keys;                       // grouped by bucket, stable
    std::vector<V> values;                     // with their keys; empty for a keys-only shuffle
    std::vector<std::uint64_t> bucket_offsets;  // m + 1 entries: bucket b is [offsets[b], offsets[b + 1])
    std::span<const K> bucket(std::uint32_t b) const {
      return std::span<const K>(keys).subspan(bucket_offsets[b], bucket_offsets[b + 1] - bucket_offsets[b]);
    }
  };
  std::vector<Shard> shards;  // one per local mesh device, in order
};

// The result of a shuffle of device-resident shards: each shard in device memory of its mesh
// device (keys and values), the bucket offsets on the host.
template <class K, class V = no_values> struct DeviceShuffleResult {
  struct Shard {
    int participant = 0;                        // the mesh device this shard belongs to
    int device = -1;                            // its CUDA ordinal
    DeviceArray<K> keys;                        // grouped by bucket, stable
    DeviceArray<V> values;                      // with their keys; empty for a keys-only shuffle
    std::vector<std::uint64_t> bucket_offsets;  // m + 1 entries, host memory
  };
  std::vector<Shard> shards;  // one per local mesh device, in order
};

namespace detail {

// One shuffle call, type-erased: src/mesh/shuffle.cpp runs it.
struct ShuffleArgs {
  KeyType type = KeyType::u32;
  std::size_t value_bytes = 0;  // 0, 4 or 8
  std::uint32_t m = 1;
  std::span<const int> bucket_owner;
  std::vector<const void*> keys, values;  // per local device; values empty for keys only
  std::vector<std::size_t> sizes, value_sizes;
  BucketSource source;
  BucketSpec spec;
  std::string bucket_fn_error;  // the bucket function's own check failed: every process is told
  bool checked = true;
  bool device_resident = false;  // shards are device_spans (GPU mesh devices), else host spans
  ShufflePhases* phases = nullptr;
  int tiles = 0;                  // ShuffleOptions::tiles
};

// Where the result goes: shape(result, local, n, m, &keys, &values, &offsets) makes local device
// `local`'s shard hold n keys (and values) and m + 1 offsets, and returns their storage.
struct ShuffleSink {
  void* result = nullptr;
  void (*shape)(void* result, int local, std::size_t n, std::size_t m, void** keys, void** values,
                std::uint64_t** offsets) = nullptr;
};

RXM_API void run_shuffle(Context& ctx, const ShuffleArgs& args, const ShuffleSink& sink);

template <class K, class V, class F, class KeySpan, class ValueSpan>
ShuffleArgs shuffle_args(std::span<const KeySpan> shards, std::span<const ValueSpan> values, const F& bucket_fn,
                         std::span<const int> bucket_owner, const ShuffleOptions& options) {
  ShuffleArgs args;
  args.type = key_type_v<K>;
  if constexpr (!std::is_same_v<V, no_values>) args.value_bytes = sizeof(V);
  if constexpr (has_num_buckets<F>::value) {
    args.m = bucket_fn.num_buckets();
  } else {
    args.m = bucket_owner.size() > buckets::max_buckets ? buckets::max_buckets + 1 : std::uint32_t(bucket_owner.size());
  }
  args.bucket_owner = bucket_owner;
  for (const auto& s : shards) {
    args.keys.push_back(s.data());
    args.sizes.push_back(s.size());
  }
  for (const auto& v : values) {
    args.values.push_back(v.data());
    args.value_sizes.push_back(v.size());
  }
  args.source = {&bucket_fn, [](const void* f, const void* keys, std::size_t begin, std::size_t count,
                                std::uint32_t* ids) {
                   const F& fn = *static_cast<const F*>(f);
                   const K* k = static_cast<const K*>(keys) + begin;
                   for (std::size_t i = 0; i < count; ++i) ids[i] = std::uint32_t(fn(k[i]));
                 }};
  try {
    if (args.m >= 1 && args.m <= buckets::max_buckets) args.spec = spec_of<K>(bucket_fn, args.m);
  } catch (const Error& e) {
    args.bucket_fn_error = e.what();
  }
  args.checked = options.checked;
  args.phases = options.phases;
  args.tiles = options.tiles;
  return args;
}

// Host-resident shards (CPU mesh devices): the result in host vectors.
template <class K, class V, class F>
ShuffleResult<K, V> shuffle_typed(Context& ctx, std::span<const std::span<const K>> shards,
                                  std::span<const std::span<const V>> values, const F& bucket_fn,
                                  std::span<const int> bucket_owner, const ShuffleOptions& options) {
  ShuffleArgs args = shuffle_args<K, V>(shards, values, bucket_fn, bucket_owner, options);
  args.device_resident = false;
  ShuffleResult<K, V> result;
  const MeshDevices local = ctx.local_mesh_devices();
  result.shards.resize(std::size_t(local.count));
  for (int i = 0; i < local.count; ++i) result.shards[std::size_t(i)].participant = local.first + i;
  ShuffleSink sink{&result, [](void* r, int i, std::size_t n, std::size_t m, void** keys, void** vals,
                               std::uint64_t** offsets) {
                     auto& shard = static_cast<ShuffleResult<K, V>*>(r)->shards[std::size_t(i)];
                     shard.keys.resize(n);
                     *keys = shard.keys.data();
                     if constexpr (!std::is_same_v<V, no_values>) {
                       shard.values.resize(n);
                       *vals = shard.values.data();
                     }
                     shard.bucket_offsets.assign(m + 1, 0);
                     *offsets = shard.bucket_offsets.data();
                   }};
  run_shuffle(ctx, args, sink);
  return result;
}

// Device-resident shards (GPU mesh devices): the result in device memory of each shard's device.
template <class K, class V, class F>
DeviceShuffleResult<K, V> shuffle_typed(Context& ctx, std::span<const device_span<const K>> shards,
                                        std::span<const device_span<const V>> values, const F& bucket_fn,
                                        std::span<const int> bucket_owner, const ShuffleOptions& options) {
  ShuffleArgs args = shuffle_args<K, V>(shards, values, bucket_fn, bucket_owner, options);
  args.device_resident = true;
  DeviceShuffleResult<K, V> result;
  const MeshDevices local = ctx.local_mesh_devices();
  result.shards.resize(std::size_t(local.count));
  for (int i = 0; i < local.count; ++i) {
    result.shards[std::size_t(i)].participant = local.first + i;
    result.shards[std::size_t(i)].device = ctx.devices().at(std::size_t(i)).id;
  }
  ShuffleSink sink{&result, [](void* r, int i, std::size_t n, std::size_t m, void** keys, void** vals,
                               std::uint64_t** offsets) {
                     auto& shard = static_cast<DeviceShuffleResult<K, V>*>(r)->shards[std::size_t(i)];
                     shard.keys = DeviceArray<K>(shard.device, n);
                     *keys = shard.keys.data();
                     if constexpr (!std::is_same_v<V, no_values>) {
                       shard.values = DeviceArray<V>(shard.device, n);
                       *vals = shard.values.data();
                     }
                     shard.bucket_offsets.assign(m + 1, 0);
                     *offsets = shard.bucket_offsets.data();
                   }};
  run_shuffle(ctx, args, sink);
  return result;
}

}  // namespace detail

// Keys only: one span per local mesh device.
template <class K, class F>
ShuffleResult<K> shuffle(Context& ctx, std::span<const std::span<const K>> shards, const F& bucket_fn,
                         std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  return detail::shuffle_typed<K, no_values>(ctx, shards, {}, bucket_fn, bucket_owner, options);
}
template <class K, class F>
ShuffleResult<K> shuffle(Context& ctx, const std::vector<std::span<const K>>& shards, const F& bucket_fn,
                         std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  return shuffle(ctx, std::span<const std::span<const K>>(shards), bucket_fn, bucket_owner, options);
}

// Keys and values: values[i] as long as shards[i].
template <class K, class V, class F>
ShuffleResult<K, V> shuffle(Context& ctx, std::span<const std::span<const K>> shards,
                            std::span<const std::span<const V>> values, const F& bucket_fn,
                            std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::shuffle: values must be 4 or 8 bytes wide");
  static_assert(std::is_trivially_copyable_v<V>, "radixmesh::shuffle: values must be trivially copyable");
  return detail::shuffle_typed<K, V>(ctx, shards, values, bucket_fn, bucket_owner, options);
}
template <class K, class V, class F>
ShuffleResult<K, V> shuffle(Context& ctx, const std::vector<std::span<const K>>& shards,
                            const std::vector<std::span<const V>>& values, const F& bucket_fn,
                            std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  return shuffle(ctx, std::span<const std::span<const K>>(shards), std::span<const std::span<const V>>(values),
                 bucket_fn, bucket_owner, options);
}

// Device-resident keys (GPU mesh devices, logical devices included): one device_span per local
// mesh device, each on that device's GPU. The result stays on the devices.
template <class K, class F>
DeviceShuffleResult<K> shuffle(Context& ctx, std::span<const device_span<const K>> shards, const F& bucket_fn,
                               std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  return detail::shuffle_typed<K, no_values>(ctx, shards, std::span<const device_span<const no_values>>{}, bucket_fn,
                                             bucket_owner, options);
}
template <class K, class V, class F>
DeviceShuffleResult<K, V> shuffle(Context& ctx, std::span<const device_span<const K>> shards,
                                  std::span<const device_span<const V>> values, const F& bucket_fn,
                                  std::span<const int> bucket_owner, const ShuffleOptions& options = {}) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "radixmesh::shuffle: values must be 4 or 8 bytes wide");
  static_assert(std::is_trivially_copyable_v<V>, "radixmesh::shuffle: values must be trivially copyable");
  return detail::shuffle_typed<K, V>(ctx, shards, values, bucket_fn, bucket_owner, options);
}

}  // namespace radixmesh
