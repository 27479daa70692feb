// The shuffle, once for every transport and device kind: validate on every device, split each
// local shard by bucket position (owner-major, so each destination's keys are contiguous), gather
// every device's counts per position (so each receiver knows what it receives), all_to_all_v the
// keys and then the values, and regroup the received (source, bucket) chunks bucket-major.
#include <chrono>
#include <cstdio>
#include <string>

#include "radixmesh/communicator.hpp"
#include "core/context_state.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
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

// Times the steps of one shuffle when the caller asked for them: each mark waits for every local
// device, then reads the host clock.
class PhaseClock {
 public:
  PhaseClock(ShufflePhases* out, mesh::DeviceBackend& backend, int locals) : out_(out), backend_(backend), locals_(locals) {
    start_ = std::chrono::steady_clock::now();
  }
  void mark(double ShufflePhases::*field) {
    if (!out_) return;
    for (int i = 0; i < locals_; ++i) backend_.synchronize(i);
    const auto now = std::chrono::steady_clock::now();
    out_->*field = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
  }

 private:
  ShufflePhases* out_;
  mesh::DeviceBackend& backend_;
  int locals_;
  std::chrono::steady_clock::time_point start_;
};

// One local device's split shard.
struct Split {
  std::shared_ptr<std::byte> keys, values;
  std::vector<std::size_t> offsets;  // m + 1, by position
};

}  // namespace

void run_shuffle(Context& ctx, const ShuffleArgs& a, const ShuffleSink& sink) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  require(a.keys.size() == std::size_t(locals),
          "shuffle: " + std::to_string(a.keys.size()) + " shards for " + std::to_string(locals) +
              " local mesh devices",
          "pass one span per local mesh device (Context::local_mesh_devices())");
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

  PhaseClock clock(a.phases, *backend, locals);
  mesh::BucketOrder order;
  errors.run(first, [&] { order = mesh::order_buckets(a.bucket_owner, size); });
  std::vector<Split> splits(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t n = a.sizes[std::size_t(i)];
      Split& s = splits[std::size_t(i)];
      s.offsets.assign(std::size_t(a.m) + 1, 0);
      s.keys = backend->allocate(i, n * key_bytes, "shuffle: the split keys");
      if (a.value_bytes) s.values = backend->allocate(i, n * a.value_bytes, "shuffle: the split values");
      mesh::LocalSplit split;
      split.args.type = a.type;
      split.args.n = n;
      split.args.keys_in = a.keys[std::size_t(i)];
      split.args.keys_out = s.keys.get();
      if (a.value_bytes) {
        split.args.values_in = a.values[std::size_t(i)];
        split.args.values_out = s.values.get();
        split.args.value_bytes = a.value_bytes;
      }
      split.args.m = a.m;
      split.args.offsets = s.offsets.data();
      split.args.checked = a.checked;
      split.source = a.source;
      split.spec = a.spec;
      split.remap = order.remap.data();
      backend->start_split(i, split);
    });
  // Every device's split is queued before any is waited for, so the devices split at once.
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const BadBucket bad = backend->finish_split(i);
      if (bad.found()) throw Error(ErrorCode::invalid_argument, bad_bucket_message(bad, a.m, first + i));
    });

  clock.mark(&ShufflePhases::split_ms);
  // Every device's count per bucket position, so that each receiver knows what it receives.
  const std::size_t m = a.m;
  std::vector<std::vector<std::uint64_t>> own(static_cast<std::size_t>(locals), std::vector<std::uint64_t>(m, 0));
  if (!errors.any())
    for (std::size_t i = 0; i < own.size(); ++i)
      for (std::size_t pos = 0; pos < m; ++pos) own[i][pos] = splits[i].offsets[pos + 1] - splits[i].offsets[pos];
  std::vector<std::span<const std::byte>> own_bytes;
  for (const auto& o : own) own_bytes.push_back(std::as_bytes(std::span(o)));
  std::vector<std::uint64_t> counts(std::size_t(size) * m);
  errors.collective([&] { comm.all_gather(own_bytes, std::as_writable_bytes(std::span(counts))); });

  std::vector<mesh::ShuffleLayout> layouts;
  std::vector<std::shared_ptr<std::byte>> recv_keys, recv_values;
  recv_keys.resize(std::size_t(locals));
  recv_values.resize(std::size_t(locals));
  for (int i = 0; i < locals; ++i) {
    layouts.push_back(mesh::layout_for(first + i, size, a.bucket_owner, order, counts, splits[std::size_t(i)].offsets));
    const std::uint64_t received = layouts.back().received;
    errors.run(first + i, [&] {
      recv_keys[std::size_t(i)] = backend->allocate(i, received * key_bytes, "shuffle: the received keys");
      if (a.value_bytes)
        recv_values[std::size_t(i)] = backend->allocate(i, received * a.value_bytes, "shuffle: the received values");
    });
  }
  auto exchange = [&](const std::vector<std::shared_ptr<std::byte>>& from, const std::vector<std::shared_ptr<std::byte>>& to,
                      std::size_t elem_bytes) {
    std::vector<comm::AllToAllV> args(static_cast<std::size_t>(locals));
    for (std::size_t i = 0; i < args.size(); ++i) {
      const mesh::ShuffleLayout& l = layouts[i];
      args[i] = {backend->location(int(i)), from[i].get(), to[i].get(), l.received,
                 l.send_counts, l.send_displs, l.recv_counts, l.recv_displs};
    }
    comm.all_to_all_v(args, elem_bytes);
  };
  std::vector<std::shared_ptr<std::byte>> split_keys, split_values;
  for (const Split& s : splits) {
    split_keys.push_back(s.keys);
    split_values.push_back(s.values);
  }
  clock.mark(&ShufflePhases::counts_ms);
  errors.collective([&] { exchange(split_keys, recv_keys, key_bytes); });
  if (a.value_bytes) exchange(split_values, recv_values, a.value_bytes);
  clock.mark(&ShufflePhases::exchange_ms);

  for (int i = 0; i < locals; ++i) {
    const mesh::ShuffleLayout& l = layouts[std::size_t(i)];
    void *keys = nullptr, *values = nullptr;
    std::uint64_t* offsets = nullptr;
    sink.shape(sink.result, i, l.received, m, &keys, &values, &offsets);
    std::copy(l.bucket_offsets.begin(), l.bucket_offsets.end(), offsets);
    backend->copy_chunks(i, recv_keys[std::size_t(i)].get(), keys, l.regroup, key_bytes);
    if (a.value_bytes) backend->copy_chunks(i, recv_values[std::size_t(i)].get(), values, l.regroup, a.value_bytes);
  }
  for (int i = 0; i < locals; ++i) backend->synchronize(i);  // the result is complete on return
  clock.mark(&ShufflePhases::regroup_ms);
}

}  // namespace radixmesh::detail
