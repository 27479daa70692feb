// The shuffle, once for every transport and device kind: validate on every device, split each
// local shard by bucket position (owner-major, so each destination's keys are contiguous), gather
// every device's counts per position (so each receiver knows what it receives), all_to_all_v the
// keys and then the values, and regroup the received (source, bucket) chunks bucket-major.
// Streamed (ShuffleOptions::tiles): the shard is split in tiles, all queued at once, and each
// tile's counts and exchange follow as soon as that tile is split, while the next tiles split; the
// regroup puts each bucket's pieces in order of source, then tile.
#include <cstdio>
#include <string>

#include "radixmesh/communicator.hpp"
#include "core/context_state.hpp"
#include "mesh/shard_count.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "mesh/phase_clock.hpp"
#include "mesh/shuffle_plan.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/shuffle.hpp"

namespace radixmesh::detail {
namespace {

void validate_common(const ShuffleArgs& a, int size) {
  if (!a.bucket_fn_error.empty()) throw Error(ErrorCode::invalid_argument, "shuffle: " + a.bucket_fn_error);
  require(a.m >= 1 && a.m <= buckets::max_buckets,
          "shuffle: m = " + std::to_string(a.m) + " buckets", "use 1 <= m <= 65536 buckets");
  require(a.bucket_owner.size() == a.m,
          "shuffle: bucket_owner has " + std::to_string(a.bucket_owner.size()) + " entries for m = " +
              std::to_string(a.m) + " buckets",
          "pass one owner per bucket");
  for (std::size_t b = 0; b < a.bucket_owner.size(); ++b)
    require(a.bucket_owner[b] >= 0 && a.bucket_owner[b] < size,
            "shuffle: bucket " + std::to_string(b) + " is owned by mesh device " + std::to_string(a.bucket_owner[b]) +
                ", outside the mesh of " + std::to_string(size),
            "give every bucket an owner in [0, mesh_size())");
}

void validate_shard(const ShuffleArgs& a, std::size_t i, int participant) {
  const std::string who = "mesh device " + std::to_string(participant);
  require(a.sizes[i] == 0 || a.keys[i] != nullptr, "shuffle: the keys of " + who + " are null",
          "pass the shard's storage");
  if (a.value_bytes == 0) return;
  require(a.value_sizes[i] == a.sizes[i],
          "shuffle: " + who + " has " + std::to_string(a.sizes[i]) + " keys and " + std::to_string(a.value_sizes[i]) +
              " values",
          "pass as many values as keys on every device");
  require(a.sizes[i] == 0 || a.values[i] != nullptr, "shuffle: the values of " + who + " are null",
          "pass the values' storage");
}

std::string bad_bucket_message(const BadBucket& bad, std::uint32_t m, int participant) {
  char bits[32];
  std::snprintf(bits, sizeof bits, "0x%llx", static_cast<unsigned long long>(bad.key_bits));
  return "shuffle: the key at index " + std::to_string(bad.index) + " of mesh device " + std::to_string(participant) +
         " (bits " + bits + ") has bucket id " + std::to_string(bad.id) + ", not below m = " + std::to_string(m) +
         ". fix: fix the bucket function or m (or pass checked = false to send such keys to bucket m - 1)";
}

// One local device's split shard (every tile's split writes its own range of it).
struct Split {
  std::shared_ptr<std::byte> keys, values;
};

}  // namespace

void run_shuffle(Context& ctx, const ShuffleArgs& a, const ShuffleSink& sink) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  mesh::require_shard_per_device("shuffle", "", a.keys.size(), locals);
  require(a.value_bytes == 0 || a.values.size() == a.keys.size(),
          "shuffle: " + std::to_string(a.values.size()) + " value spans for " + std::to_string(a.keys.size()) +
              " shards",
          "pass one value span per shard");
  const bool gpu_mesh = ctx.mesh_backend(first) == Backend::cuda;
  require(a.device_resident == gpu_mesh,
          std::string("shuffle: ") + (a.device_resident ? "device_span shards on CPU mesh devices"
                                                        : "host spans on GPU mesh devices"),
          a.device_resident ? "pass host spans on a CPU mesh (Context::cpu_mesh), or use a context of GPUs"
                            : "pass one device_span per GPU mesh device (data already on the devices)");
  auto backend = mesh::device_backend_for(ctx);
  const std::size_t key_bytes = size_of(a.type);
  mesh::LocalErrors errors(comm);

  errors.run(first, [&] { validate_common(a, size); });
  for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { validate_shard(a, std::size_t(i), first + i); });

  // Tiles: every process must agree, so the automatic count depends only on the mesh's makeup
  // (ShuffleOptions::tiles says what was measured).
  const int tiles = a.tiles > 0 ? a.tiles : backend->overlaps_split_and_exchange() ? 4 : 1;
  errors.run(first, [&] {
    require(a.tiles >= 0 && a.tiles <= 1024, "shuffle: tiles = " + std::to_string(a.tiles),
            "use 0 (automatic) or 1 to 1024 tiles");
  });
  if (a.phases) *a.phases = ShufflePhases{.tiles = tiles};  // marks add to their fields

  mesh::PhaseClock<ShufflePhases> clock(a.phases, *backend, locals);
  mesh::BucketOrder order;
  errors.run(first, [&] { order = mesh::order_buckets(a.bucket_owner, size); });
  const std::size_t m = a.m, T = std::size_t(tiles);
  // Tile t of local device i covers [begin(i, t), begin(i, t + 1)) of its shard.
  auto begin = [&](int i, std::size_t t) { return a.sizes[std::size_t(i)] * t / T; };

  // Split every tile of every device: queued at once (GPU devices split on a stream of their own,
  // tile after tile), waited for tile by tile below.
  std::vector<Split> splits(static_cast<std::size_t>(locals));
  std::vector<std::vector<std::vector<std::size_t>>> tile_offsets(
      static_cast<std::size_t>(locals), std::vector<std::vector<std::size_t>>(T, std::vector<std::size_t>(m + 1, 0)));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t n = a.sizes[std::size_t(i)];
      Split& s = splits[std::size_t(i)];
      s.keys = backend->allocate(i, n * key_bytes, "shuffle: the split keys");
      if (a.value_bytes) s.values = backend->allocate(i, n * a.value_bytes, "shuffle: the split values");
    });
  for (std::size_t t = 0; t < T; ++t)
    for (int i = 0; i < locals; ++i)
      errors.run(first + i, [&] {
        const std::size_t from = begin(i, t);
        const Split& s = splits[std::size_t(i)];
        mesh::LocalSplit split;
        split.args.type = a.type;
        split.args.n = begin(i, t + 1) - from;
        split.args.keys_in = static_cast<const std::byte*>(a.keys[std::size_t(i)]) + from * key_bytes;
        split.args.keys_out = s.keys.get() + from * key_bytes;
        if (a.value_bytes) {
          split.args.values_in = static_cast<const std::byte*>(a.values[std::size_t(i)]) + from * a.value_bytes;
          split.args.values_out = s.values.get() + from * a.value_bytes;
          split.args.value_bytes = a.value_bytes;
        }
        split.args.m = a.m;
        split.args.offsets = tile_offsets[std::size_t(i)][t].data();
        split.args.checked = a.checked;
        split.source = a.source;
        split.spec = a.spec;
        split.remap = order.remap.data();
        backend->start_split(i, int(t), split);
      });

  // Tile by tile: wait for its splits, gather its counts, exchange its batches. The exchange of
  // tile t waits only for tile t's split on each device, so it runs while later tiles split.
  std::vector<std::vector<std::uint64_t>> tile_counts(T, std::vector<std::uint64_t>(std::size_t(size) * m));

  std::vector<std::vector<mesh::ExchangeLayout>> layouts(static_cast<std::size_t>(locals));  // [device][tile]
  std::vector<std::vector<std::shared_ptr<std::byte>>> recv_keys(static_cast<std::size_t>(locals)),
      recv_values(static_cast<std::size_t>(locals));
  for (std::size_t t = 0; t < T; ++t) {
    for (int i = 0; i < locals; ++i)
      errors.run(first + i, [&] {
        BadBucket bad = backend->finish_split(i, int(t));
        if (!bad.found()) return;
        bad.index += begin(i, t);  // the tile's index within the shard
        throw Error(ErrorCode::invalid_argument, bad_bucket_message(bad, a.m, first + i));
      });
    if (T == 1) clock.mark(&ShufflePhases::split_ms);
    // Every device's count per bucket position in this tile, so that each receiver knows what it
    // receives.
    std::vector<std::vector<std::uint64_t>> own(static_cast<std::size_t>(locals), std::vector<std::uint64_t>(m, 0));
    if (!errors.any())
      for (std::size_t i = 0; i < own.size(); ++i)
        for (std::size_t pos = 0; pos < m; ++pos) own[i][pos] = tile_offsets[i][t][pos + 1] - tile_offsets[i][t][pos];
    std::vector<std::span<const std::byte>> own_bytes;
    for (const auto& o : own) own_bytes.push_back(std::as_bytes(std::span(o)));
    errors.collective([&] { comm.all_gather(own_bytes, std::as_writable_bytes(std::span(tile_counts[t]))); });

    std::vector<comm::AllToAllV> keys_args, values_args;
    for (int i = 0; i < locals; ++i) {
      const std::size_t ii = std::size_t(i);
      mesh::ExchangeLayout l = mesh::layout_for(first + i, size, order, tile_counts[t], tile_offsets[ii][t]);
      for (auto& d : l.send_displs) d += begin(i, t);  // displacements within the whole split shard
      layouts[ii].push_back(std::move(l));
      const mesh::ExchangeLayout& lay = layouts[ii].back();
      recv_keys[ii].emplace_back();
      recv_values[ii].emplace_back();
      errors.run(first + i, [&] {
        recv_keys[ii].back() = backend->allocate(i, lay.received * key_bytes, "shuffle: the received keys");
        if (a.value_bytes)
          recv_values[ii].back() = backend->allocate(i, lay.received * a.value_bytes, "shuffle: the received values");
        backend->after_split(i, int(t));
      });
      keys_args.push_back({backend->location(i), splits[ii].keys.get(), recv_keys[ii].back().get(), lay.received,
                           lay.send_counts, lay.send_displs, lay.recv_counts, lay.recv_displs});
      values_args.push_back({backend->location(i), splits[ii].values.get(), recv_values[ii].back().get(),
                             lay.received, lay.send_counts, lay.send_displs, lay.recv_counts, lay.recv_displs});
    }
    if (T == 1) clock.mark(&ShufflePhases::counts_ms);
    errors.collective([&] { comm.all_to_all_v(keys_args, key_bytes); });
    if (a.value_bytes) comm.all_to_all_v(values_args, a.value_bytes);
    if (T == 1) clock.mark(&ShufflePhases::exchange_ms);
  }
  if (T > 1) clock.mark(&ShufflePhases::split_ms);  // the streamed splits and exchanges

  // The received tiles, source-major, into the result: bucket-major, stable by source then tile.
  for (int i = 0; i < locals; ++i) {
    const std::size_t ii = std::size_t(i);
    const mesh::ShuffleRegroup r = mesh::regroup_for(first + i, size, a.bucket_owner, order, tile_counts, layouts[ii]);
    void *keys = nullptr, *values = nullptr;
    std::uint64_t* offsets = nullptr;
    sink.shape(sink.result, i, r.received, m, &keys, &values, &offsets);
    std::copy(r.bucket_offsets.begin(), r.bucket_offsets.end(), offsets);
    for (std::size_t t = 0; t < T; ++t) {
      backend->copy_chunks(i, recv_keys[ii][t].get(), keys, r.chunks[t], key_bytes);
      if (a.value_bytes) backend->copy_chunks(i, recv_values[ii][t].get(), values, r.chunks[t], a.value_bytes);
    }
  }
  for (int i = 0; i < locals; ++i) backend->synchronize(i);  // the result is complete on return
  clock.mark(&ShufflePhases::regroup_ms);
}

}  // namespace radixmesh::detail
