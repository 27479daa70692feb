// The shuffle, once for every transport and device kind, in two splits around one exchange:
// every sender splits its shard by owner (a split into as many buckets as devices, one pass), the
// counts are gathered, all_to_all_v moves each owner's run, and every receiver splits what it got
// by its own buckets straight into the result. A receiver's buffer holds the keys by source, then
// input order, so its stable split gives the stable result (bucket-major, then source, then input
// order). Against one split by every bucket followed by a regroup of the received chunks, this
// moves each key through memory 3 times (two one-pass splits and the exchange) instead of 5 (a
// two-pass split above 256 buckets, the exchange and the regroup).
// Streamed (ShuffleOptions::tiles > 1): a counting pass over every tile comes first (one read of
// the keys), so every receiver knows where each (source, tile) piece goes before the first moves;
// then the tiles are split, all queued at once, and tile t is exchanged as soon as it is split,
// while later tiles split.
#include <algorithm>
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

  // Tiles: automatic is 1 (ShuffleOptions::tiles says what was measured); every process passes
  // the same value.
  const int tiles = a.tiles > 0 ? a.tiles : 1;
  errors.run(first, [&] {
    require(a.tiles >= 0 && a.tiles <= 1024, "shuffle: tiles = " + std::to_string(a.tiles),
            "use 0 (automatic) or 1 to 1024 tiles");
  });
  if (a.phases) *a.phases = ShufflePhases{.tiles = tiles};  // marks add to their fields

  mesh::PhaseClock<ShufflePhases> clock(a.phases, *backend, locals);
  mesh::OwnerBuckets buckets;
  errors.run(first, [&] { buckets = mesh::owner_buckets(a.bucket_owner, size); });
  const std::size_t P = std::size_t(size), T = std::size_t(tiles);
  const bool streamed = T > 1;
  // Tile t of local device i covers [begin(i, t), begin(i, t + 1)) of its shard.
  auto begin = [&](int i, std::size_t t) { return a.sizes[std::size_t(i)] * t / T; };

  std::vector<Split> splits(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t n = a.sizes[std::size_t(i)];
      Split& s = splits[std::size_t(i)];
      s.keys = backend->allocate(i, n * key_bytes, "shuffle: the split keys");
      if (a.value_bytes) s.values = backend->allocate(i, n * a.value_bytes, "shuffle: the split values");
    });
  // offsets[i][t]: tile t of device i by owner (P + 1 entries, from the tile's start).
  std::vector<std::vector<std::vector<std::size_t>>> offsets(
      static_cast<std::size_t>(locals), std::vector<std::vector<std::size_t>>(T, std::vector<std::size_t>(P + 1, 0)));
  // The split of tile t of device i by owner, under `ticket`; counts only when `count_only`.
  auto start_owner_split = [&](int i, std::size_t t, int ticket, bool count_only) {
    const std::size_t from = begin(i, t), ii = std::size_t(i);
    mesh::LocalSplit split;
    split.args.type = a.type;
    split.args.n = begin(i, t + 1) - from;
    split.args.keys_in = static_cast<const std::byte*>(a.keys[ii]) + from * key_bytes;
    if (!count_only) {
      split.args.keys_out = splits[ii].keys.get() + from * key_bytes;
      if (a.value_bytes) {
        split.args.values_in = static_cast<const std::byte*>(a.values[ii]) + from * a.value_bytes;
        split.args.values_out = splits[ii].values.get() + from * a.value_bytes;
        split.args.value_bytes = a.value_bytes;
      }
    }
    split.args.m = std::uint32_t(P);
    split.args.offsets = offsets[ii][t].data();
    split.args.checked = a.checked && (count_only || !streamed);  // a streamed shuffle checks in its count
    split.source = a.source;
    split.spec = a.spec;
    split.remap = buckets.owner.data();
    split.function_m = a.m;
    backend->start_split(i, ticket, split);
  };
  auto finish_checked = [&](int i, std::size_t t, int ticket) {
    BadBucket bad = backend->finish_split(i, ticket);
    if (!bad.found()) return;
    bad.index += begin(i, t);  // the tile's index within the shard
    throw Error(ErrorCode::invalid_argument, bad_bucket_message(bad, a.m, first + i));
  };

  // Split (not streamed), or count (streamed), every tile of every device: queued at once (GPU
  // devices work on a stream of their own), then waited for.
  for (std::size_t t = 0; t < T; ++t)
    for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { start_owner_split(i, t, int(t), streamed); });
  for (std::size_t t = 0; t < T; ++t)
    for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { finish_checked(i, t, int(t)); });
  if (!streamed) clock.mark(&ShufflePhases::split_ms);
  // Every device's count per (tile, owner), so that each receiver knows what it receives and from
  // where, before any key moves.
  std::vector<std::vector<std::uint64_t>> own(static_cast<std::size_t>(locals), std::vector<std::uint64_t>(T * P, 0));
  if (!errors.any())
    for (std::size_t i = 0; i < own.size(); ++i)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t d = 0; d < P; ++d) own[i][t * P + d] = offsets[i][t][d + 1] - offsets[i][t][d];
  std::vector<std::span<const std::byte>> own_bytes;
  for (const auto& o : own) own_bytes.push_back(std::as_bytes(std::span(o)));
  std::vector<std::uint64_t> counts(P * T * P);
  errors.collective([&] { comm.all_gather(own_bytes, std::as_writable_bytes(std::span(counts))); });

  std::vector<std::vector<mesh::ExchangeLayout>> layouts(static_cast<std::size_t>(locals));  // [device][tile]
  std::vector<std::uint64_t> received(static_cast<std::size_t>(locals), 0);
  std::vector<Split> inbox(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i) {
    const std::size_t ii = std::size_t(i);
    std::vector<std::size_t> tile_begin;
    for (std::size_t t = 0; t <= T; ++t) tile_begin.push_back(begin(i, t));
    layouts[ii] = mesh::tile_layouts(first + i, size, counts, tile_begin);
    for (const auto& l : layouts[ii]) received[ii] += l.received;
    errors.run(first + i, [&] {
      inbox[ii].keys = backend->allocate(i, received[ii] * key_bytes, "shuffle: the received keys");
      if (a.value_bytes) inbox[ii].values = backend->allocate(i, received[ii] * a.value_bytes, "shuffle: the received values");
    });
  }
  if (!streamed) clock.mark(&ShufflePhases::counts_ms);
  if (streamed) {  // the tiles' splits, queued at once; tile t moves as soon as it is split
    for (std::size_t t = 0; t < T; ++t)
      for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { start_owner_split(i, t, int(T + t), false); });
    clock.mark(&ShufflePhases::counts_ms);  // the counting passes and the gathered counts
  }
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<comm::AllToAllV> keys_args, values_args;
    for (int i = 0; i < locals; ++i) {
      const std::size_t ii = std::size_t(i);
      const mesh::ExchangeLayout& lay = layouts[ii][t];
      errors.run(first + i, [&] {
        if (streamed) backend->finish_split(i, int(T + t));
        backend->after_split(i, int(streamed ? T + t : t));
      });
      keys_args.push_back({backend->location(i), splits[ii].keys.get(), inbox[ii].keys.get(), received[ii],
                           lay.send_counts, lay.send_displs, lay.recv_counts, lay.recv_displs});
      values_args.push_back({backend->location(i), splits[ii].values.get(), inbox[ii].values.get(), received[ii],
                             lay.send_counts, lay.send_displs, lay.recv_counts, lay.recv_displs});
    }
    errors.collective([&] { comm.all_to_all_v(keys_args, key_bytes); });
    if (a.value_bytes) comm.all_to_all_v(values_args, a.value_bytes);
  }
  clock.mark(streamed ? &ShufflePhases::split_ms : &ShufflePhases::exchange_ms);

  // Every receiver splits what it got by its own buckets (their places in id order), straight
  // into the result; queued on every device, then waited for.
  const int group_ticket = int(2 * T);
  std::vector<std::vector<std::size_t>> group_offsets(static_cast<std::size_t>(locals));
  std::vector<std::uint64_t*> result_offsets(static_cast<std::size_t>(locals), nullptr);
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      const std::uint32_t owned = buckets.owned[std::size_t(first + i)];
      void *keys = nullptr, *values = nullptr;
      sink.shape(sink.result, i, received[ii], a.m, &keys, &values, &result_offsets[ii]);
      group_offsets[ii].assign(std::size_t(owned) + 1, 0);
      if (owned == 0) return;  // then it received nothing
      mesh::LocalSplit split;
      split.args.type = a.type;
      split.args.n = received[ii];
      split.args.keys_in = inbox[ii].keys.get();
      split.args.keys_out = keys;
      if (a.value_bytes) {
        split.args.values_in = inbox[ii].values.get();
        split.args.values_out = values;
        split.args.value_bytes = a.value_bytes;
      }
      split.args.m = owned;
      split.args.offsets = group_offsets[ii].data();
      split.args.checked = false;  // every id was checked by its sender
      split.source = a.source;
      split.spec = a.spec;
      split.remap = buckets.place.data();
      split.function_m = a.m;
      backend->start_split(i, group_ticket, split);
    });
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      if (buckets.owned[std::size_t(first + i)] != 0) {
        backend->finish_split(i, group_ticket);
        backend->after_split(i, group_ticket);
      }
      const std::vector<std::uint64_t> o = mesh::result_offsets(first + i, buckets, group_offsets[ii]);
      std::copy(o.begin(), o.end(), result_offsets[ii]);
    });
  for (int i = 0; i < locals; ++i) backend->synchronize(i);  // complete on return, or idle before an error leaves
  clock.mark(&ShufflePhases::group_ms);
  errors.collective([] {});  // rethrows a local error of the last step
}

}  // namespace radixmesh::detail
