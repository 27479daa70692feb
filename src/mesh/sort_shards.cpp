// The sort over several mesh devices (RMG, papers/NOTES-rmg-sort.md), once for every transport and
// device kind. Every device splits its shard by the top digit of the keys' encoding (the sort's
// order: descending reverses the buckets), the histograms are all-gathered, and the partition plan
// gives each bucket its destination; a bucket that spans devices is split again on the next digit
// (only its keys, on every device), until no bucket spans or the digits run out (equal keys are
// then split by position). A device's split buffer is then in destination order, one all_to_all_v
// sends each destination its piece, and each device sorts what it received: the pieces arrive in
// source order and each is stable, so a stable local sort gives the global stable order.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/backends.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "mesh/phase_clock.hpp"
#include "mesh/sort_passes.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {
namespace {

// 8-bit digits: RMG's choice, kept until the benchmarks in docs/design/mesh-sort.md say otherwise.
constexpr int default_digit_bits = 8;

// The partition digit on the host (CPU mesh devices): the key's radix digit, for a key type known
// only at run time.
struct DigitSource {
  KeyType type;
  buckets::radix_digit digit;
  static void ids(const void* self, const void* keys, std::size_t begin, std::size_t count, std::uint32_t* out) {
    const auto& s = *static_cast<const DigitSource*>(self);
    visit_key_type(s.type, [&](auto tag) {
      using K = decltype(tag);
      const K* k = static_cast<const K*>(keys) + begin;
      for (std::size_t i = 0; i < count; ++i) out[i] = s.digit(k[i]);
    });
  }
};

// What every participant must agree on, and its key count: gathered once, checked on every process.
struct Agreement {
  std::uint64_t type, value_bytes, order, begin_bit, end_bit, digit_bits, keys;
};
constexpr const char* agreement_fields[] = {"key type", "value width", "order", "begin_bit", "end_bit",
                                            "mesh_digit_bits"};

std::string field_value(const Agreement& a, int field) {
  switch (field) {
    case 0: return std::string(name_of(KeyType(a.type)));
    case 1: return a.value_bytes ? std::to_string(a.value_bytes) + " bytes" : "no values";
    case 2: return a.order ? "descending" : "ascending";
    case 3: return std::to_string(a.begin_bit);
    case 4: return std::to_string(a.end_bit);
    default: return std::to_string(a.digit_bits);
  }
}

void check_agreement(std::span<const Agreement> all) {
  for (std::size_t p = 1; p < all.size(); ++p)
    for (int f = 0; f < 6; ++f) {
      const std::uint64_t* mine = &all[p].type;
      const std::uint64_t* first = &all[0].type;
      if (mine[f] == first[f]) continue;
      throw Error(ErrorCode::invalid_argument,
                  "sort: mesh devices disagree on the " + std::string(agreement_fields[f]) + ": mesh device 0 has " +
                      field_value(all[0], f) + ", mesh device " + std::to_string(p) + " has " +
                      field_value(all[p], f) + ". fix: call the sort with the same key type, values, order and bits "
                      "on every rank");
    }
}

void validate_shard(const ShardSortArgs& a, std::size_t i, int participant, const comm::Location& where,
                    int digit_bits) {
  const std::string who = "mesh device " + std::to_string(participant);
  require(digit_bits >= 1 && digit_bits <= 16, "sort: mesh_digit_bits = " + std::to_string(digit_bits),
          "use 1 to 16 bits per partition digit (0: automatic)");
  require(a.sizes[i] == 0 || a.keys[i] != nullptr, "sort: the keys of " + who + " are null", "pass the shard's storage");
  if (a.device_resident) {
    require(where.cuda_device >= 0, "sort: device_span shards on CPU " + who,
            "pass host spans (std::span) on CPU mesh devices");
    require(a.key_devices[i] == where.cuda_device,
            "sort: the keys shard of " + who + " is on device " + std::to_string(a.key_devices[i]) + ", but " + who +
                " is GPU " + std::to_string(where.cuda_device),
            "pass shard i on the device of mesh device first + i (Context::local_mesh_devices())");
    require(a.sizes[i] == 0 || is_device_pointer(a.keys[i]),
            "sort: the keys shard of " + who + " is a device_span over host memory",
            "pass device memory in device_spans (host memory in std::span)");
  }
  if (a.value_bytes == 0) return;
  require(a.value_sizes[i] == a.sizes[i],
          "sort: " + who + " has " + std::to_string(a.sizes[i]) + " keys and " + std::to_string(a.value_sizes[i]) +
              " values",
          "pass as many values as keys on every device");
  require(a.sizes[i] == 0 || a.values[i] != nullptr, "sort: the values of " + who + " are null",
          "pass the values' storage");
  if (a.device_resident)
    require(a.value_devices[i] == a.key_devices[i],
            "sort: " + who + " has its keys on device " + std::to_string(a.key_devices[i]) + " and its values on " +
                std::to_string(a.value_devices[i]),
            "put a shard's keys and values on the same device");
}

// One local device's arrays: `data` holds the shard (the caller's memory, or an upload of it) and
// receives the result; `split` holds the keys in bucket order between the passes and the exchange.
struct Work {
  std::byte *keys = nullptr, *values = nullptr;
  std::shared_ptr<std::byte> uploaded_keys, uploaded_values, split_keys, split_values;
};

std::byte* at(void* base, std::uint64_t element, std::size_t bytes) {
  return static_cast<std::byte*>(base) + element * bytes;
}

}  // namespace

void sort_shards(Context& ctx, const ShardSortArgs& a, const SortOptions& options) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  require(a.keys.size() == std::size_t(locals),
          "sort: " + std::to_string(a.keys.size()) + " shards for " + std::to_string(locals) + " local mesh devices",
          "pass one span per local mesh device (Context::local_mesh_devices())");
  require(a.value_bytes == 0 || a.values.size() == a.keys.size(),
          "sort: " + std::to_string(a.values.size()) + " value spans for " + std::to_string(a.keys.size()) + " shards",
          "pass one value span per shard");
  require(!a.device_resident || (a.key_devices.size() == a.keys.size() &&
                                 (a.value_bytes == 0 || a.value_devices.size() == a.values.size())),
          "sort: device shards without their devices", "build the shards as device_spans");
  auto backend = mesh::device_backend_for(ctx);
  mesh::LocalErrors errors(comm);
  const std::size_t key_bytes = size_of(a.type), value_bytes = a.value_bytes;
  const int digit_bits = options.mesh_digit_bits ? options.mesh_digit_bits : default_digit_bits;

  std::vector<SortPlan> plans(std::size_t(locals), SortPlan{a.type, 0, value_bytes, options.order, 0, 0});
  std::vector<Agreement> mine(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      validate_shard(a, ii, first + i, backend->location(i), digit_bits);
      plans[ii] = validate_sort(a.type, a.sizes[ii], value_bytes, options);
      mine[ii] = {std::uint64_t(a.type), value_bytes, std::uint64_t(options.order == Order::descending),
                  std::uint64_t(plans[ii].begin_bit), std::uint64_t(plans[ii].end_bit), std::uint64_t(digit_bits),
                  a.sizes[ii]};
    });
  std::vector<Agreement> all(static_cast<std::size_t>(size));
  std::vector<std::span<const std::byte>> mine_bytes;
  for (const Agreement& m : mine) mine_bytes.push_back(std::as_bytes(std::span(&m, 1)));
  errors.collective([&] { comm.all_gather(mine_bytes, std::as_writable_bytes(std::span(all))); });
  check_agreement(all);  // the same verdict on every process: they all hold the same gathered words

  std::vector<std::uint64_t> targets(static_cast<std::size_t>(size));
  for (std::size_t p = 0; p < all.size(); ++p) targets[p] = all[p].keys;
  const std::uint64_t total = std::accumulate(targets.begin(), targets.end(), std::uint64_t(0));
  const int begin_bit = int(all[0].begin_bit), end_bit = int(all[0].end_bit);
  SortPhases* report = options.phases;
  if (report) {
    *report = SortPhases{};
    report->digit_bits = digit_bits;
    report->counts = targets;
  }
  if (total <= 1 || begin_bit == end_bit) return;  // nothing changes place
  mesh::PhaseClock<SortPhases> clock(report, *backend, locals);

  // The shards where the devices can sort them: in place (device spans, host spans on CPU mesh
  // devices) or uploaded (host spans on GPU mesh devices).
  const bool upload = !a.device_resident && ctx.mesh_backend(first) == Backend::cuda;
  std::vector<Work> work(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i), n = a.sizes[ii];
      Work& w = work[ii];
      if (upload) {
        w.uploaded_keys = backend->allocate(i, n * key_bytes, "sort: the keys uploaded");
        w.keys = w.uploaded_keys.get();
        backend->upload(i, a.keys[ii], w.keys, n * key_bytes);
        if (value_bytes) {
          w.uploaded_values = backend->allocate(i, n * value_bytes, "sort: the values uploaded");
          w.values = w.uploaded_values.get();
          backend->upload(i, a.values[ii], w.values, n * value_bytes);
        }
      } else {
        w.keys = static_cast<std::byte*>(a.keys[ii]);
        if (value_bytes) w.values = static_cast<std::byte*>(a.values[ii]);
      }
      w.split_keys = backend->allocate(i, n * key_bytes, "sort: the split keys");
      if (value_bytes) w.split_values = backend->allocate(i, n * value_bytes, "sort: the split values");
    });
  clock.mark(&SortPhases::upload_ms);

  // The partition passes. Pass 0 splits every shard from its data into the split buffer; a later
  // pass splits each spanning bucket's keys into the same range of the data array (free until the
  // exchange) and copies them back, so between passes the split buffer holds everything.
  std::vector<mesh::SpanningRange> ranges(1);
  for (int i = 0; i < locals; ++i) {
    ranges[0].lo.push_back(0);
    ranges[0].hi.push_back(a.sizes[std::size_t(i)]);
  }
  std::vector<std::uint64_t> moved(std::size_t(size) * std::size_t(size), 0);
  std::string plan_json;
  int shift = end_bit;
  const mesh::PartitionOptions partition{.epsilon = 0};  // exact counts: every device keeps its own
  for (int pass = 0; !ranges.empty(); ++pass) {
    const int bits = std::min(digit_bits, shift - begin_bit);
    shift -= bits;
    const std::uint32_t m = std::uint32_t(1) << bits;
    std::vector<std::uint32_t> remap(m);
    for (std::uint32_t d = 0; d < m; ++d) remap[d] = options.order == Order::descending ? m - 1 - d : d;
    const DigitSource source{a.type, {shift, bits}};
    const std::size_t R = ranges.size();
    std::vector<std::vector<std::vector<std::size_t>>> own(
        R, std::vector<std::vector<std::size_t>>(std::size_t(locals), std::vector<std::size_t>(m + 1, 0)));
    auto range_of = [&](std::size_t r, int i) { return ranges[r].hi[std::size_t(i)] - ranges[r].lo[std::size_t(i)]; };
    for (std::size_t r = 0; r < R; ++r)
      for (int i = 0; i < locals; ++i)
        errors.run(first + i, [&] {
          if (range_of(r, i) == 0) return;
          const Work& w = work[std::size_t(i)];
          const std::uint64_t lo = ranges[r].lo[std::size_t(i)];
          std::byte* from_keys = pass == 0 ? w.keys : w.split_keys.get();
          std::byte* to_keys = pass == 0 ? w.split_keys.get() : w.keys;
          mesh::LocalSplit split;
          split.args.type = a.type;
          split.args.n = range_of(r, i);
          split.args.keys_in = at(from_keys, lo, key_bytes);
          split.args.keys_out = at(to_keys, lo, key_bytes);
          if (value_bytes) {
            split.args.values_in = at(pass == 0 ? w.values : w.split_values.get(), lo, value_bytes);
            split.args.values_out = at(pass == 0 ? w.split_values.get() : w.values, lo, value_bytes);
            split.args.value_bytes = value_bytes;
          }
          split.args.m = m;
          split.args.offsets = own[r][std::size_t(i)].data();
          split.args.checked = false;
          split.source = {&source, &DigitSource::ids};
          split.spec.kind = BucketSpec::Kind::radix_digit;
          split.spec.shift = shift;
          split.spec.bits = bits;
          split.remap = remap.data();
          backend->start_split(i, int(r), split);
        });
    for (std::size_t r = 0; r < R; ++r)
      for (int i = 0; i < locals; ++i)
        errors.run(first + i, [&] {
          if (range_of(r, i) == 0) return;
          backend->finish_split(i, int(r));
          if (pass == 0) return;
          backend->after_split(i, int(r));
          const Work& w = work[std::size_t(i)];
          const std::uint64_t lo = ranges[r].lo[std::size_t(i)];
          const mesh::Chunk back[] = {{lo, lo, range_of(r, i)}};
          backend->copy_chunks(i, w.keys, w.split_keys.get(), back, key_bytes);
          if (value_bytes) backend->copy_chunks(i, w.values, w.split_values.get(), back, value_bytes);
        });

    // Every device's histogram of every range, gathered; then the plans, the same on every process.
    std::vector<std::vector<std::uint64_t>> counts(std::size_t(locals), std::vector<std::uint64_t>(R * m, 0));
    for (std::size_t i = 0; i < counts.size() && !errors.any(); ++i)
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t k = 0; k < m; ++k) counts[i][r * m + k] = own[r][i][k + 1] - own[r][i][k];
    std::vector<std::span<const std::byte>> count_bytes;
    for (const auto& c : counts) count_bytes.push_back(std::as_bytes(std::span(c)));
    std::vector<std::uint64_t> gathered(std::size_t(size) * R * m);
    errors.collective([&] { comm.all_gather(count_bytes, std::as_writable_bytes(std::span(gathered))); });
    mesh::PassPlans planned =
        mesh::plan_pass(ranges, size, int(m), shift == begin_bit, gathered, own, targets, partition);
    for (const mesh::PartitionPlan& plan : planned.plans) {
      for (std::size_t e = 0; e < moved.size(); ++e) moved[e] += plan.send[e];
      if (report) {
        report->plan_text += "pass " + std::to_string(pass) + ", digit bits [" + std::to_string(shift) + ", " +
                             std::to_string(shift + bits) + "):\n" + mesh::partition_text(plan);
        plan_json += std::string(plan_json.empty() ? "" : ",") + "{\"pass\":" + std::to_string(pass) +
                     ",\"shift\":" + std::to_string(shift) + ",\"bits\":" + std::to_string(bits) +
                     ",\"plan\":" + mesh::partition_json(plan) + "}";
      }
    }
    ranges = std::move(planned.next);
    if (report) ++report->passes;
    clock.mark(pass == 0 ? &SortPhases::partition_ms : &SortPhases::refine_ms);
  }

  // The exchange: each device's split buffer, destination-major, into the data arrays of its
  // destinations (source-major). The refinement copies on this process's devices finish first: a
  // peer's copy into a data array must not overtake them.
  for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { backend->synchronize(i); });
  std::vector<mesh::SortLayout> layouts;
  std::vector<comm::AllToAllV> keys_args, values_args;
  for (int i = 0; i < locals; ++i) layouts.push_back(mesh::sort_layout(moved, size, first + i));
  for (int i = 0; i < locals; ++i) {
    const std::size_t ii = std::size_t(i);
    const mesh::SortLayout& l = layouts[ii];
    keys_args.push_back({backend->location(i), work[ii].split_keys.get(), work[ii].keys, a.sizes[ii], l.send_counts,
                         l.send_displs, l.recv_counts, l.recv_displs});
    values_args.push_back({backend->location(i), work[ii].split_values.get(), work[ii].values, a.sizes[ii],
                           l.send_counts, l.send_displs, l.recv_counts, l.recv_displs});
  }
  errors.collective([&] { comm.all_to_all_v(keys_args, key_bytes); });
  if (value_bytes) comm.all_to_all_v(values_args, value_bytes);
  clock.mark(&SortPhases::exchange_ms);

  // Every device sorts what it received; host shards on GPU devices go back down.
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      work[ii].split_keys.reset();  // its memory goes back to the pool for the sort's scratch
      work[ii].split_values.reset();
      SortPlan plan = plans[ii];
      plan.n = a.sizes[ii];
      backend->sort_local(i, plan, work[ii].keys, work[ii].values);
    });
  clock.mark(&SortPhases::local_sort_ms);
  if (upload)
    for (int i = 0; i < locals; ++i)
      errors.run(first + i, [&] {
        const std::size_t ii = std::size_t(i);
        backend->download(i, work[ii].keys, a.keys[ii], a.sizes[ii] * key_bytes);
        if (value_bytes) backend->download(i, work[ii].values, a.values[ii], a.sizes[ii] * value_bytes);
      });
  for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { backend->synchronize(i); });
  clock.mark(&SortPhases::download_ms);
  if (report) {
    report->moved = moved;
    report->plan_json = "{\"passes\":[" + plan_json + "]}";
  }
  // A local failure after the last collective: every process learns it at a barrier.
  errors.collective([&] { comm.barrier(); });
}

void mesh_sort_host(Context& ctx, KeyType type, void* keys, std::size_t n, void* values, std::size_t value_bytes,
                    const SortOptions& options) {
  const int locals = ctx.local_mesh_devices().count;
  ShardSortArgs args;
  args.type = type;
  args.value_bytes = value_bytes;
  const std::size_t key_bytes = size_of(type);
  for (int i = 0; i < locals; ++i) {
    const std::size_t from = n * std::size_t(i) / std::size_t(locals), to = n * std::size_t(i + 1) / std::size_t(locals);
    args.keys.push_back(keys ? at(keys, from, key_bytes) : nullptr);
    args.sizes.push_back(to - from);
    if (value_bytes) {
      args.values.push_back(values ? at(values, from, value_bytes) : nullptr);
      args.value_sizes.push_back(to - from);
    }
  }
  sort_shards(ctx, args, options);
}

}  // namespace radixmesh::detail
