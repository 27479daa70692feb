// The sort over several mesh devices (RMG, papers/NOTES-rmg-sort.md), once for every transport and
// device kind. Every device splits its shard by the top digit of the keys' encoding (the sort's
// order: descending reverses the buckets), the histograms are all-gathered, and the partition plan
// gives each bucket its destination; a bucket that spans devices is split again on the next digit
// (only its keys, on every device), until no bucket spans or the digits run out (equal keys are
// then split by position). A device's split buffer is then in destination order, one all_to_all_v
// sends each destination its piece, and each device sorts what it received: the pieces arrive in
// source order and each is stable, so a stable local sort gives the global stable order. Host
// shards on GPU devices are uploaded first and, once large enough, come back down in groups: runs
// of the first pass's buckets, each sorted while the one before goes down (mesh/sort_groups.hpp).
// Where the merge strategy applies (mesh/sort_by_merge.hpp), every device sorts its own shard and
// merges its share from all of them instead.
#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <string>
#include <thread>

#include "core/backends.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/digit_source.hpp"
#include "mesh/every_local.hpp"
#include "mesh/exchange_layout.hpp"
#include "mesh/local_errors.hpp"
#include "mesh/phase_clock.hpp"
#include "mesh/sort_by_merge.hpp"
#include "mesh/sort_checks.hpp"
#include "mesh/sort_groups.hpp"
#include "mesh/sort_passes.hpp"
#include "mesh/sort_ranks_out_of_core.hpp"
#include "radixmesh/buckets.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {
namespace {

// 8-bit digits: the fastest of 4, 6, 8 and 12 bits measured on four logical devices of an H200
// (docs/design/mesh-sort.md).
constexpr int default_digit_bits = 8;

// One local device's arrays: `keys`/`values` hold its input shard (the caller's memory, or an
// upload of it), `split` its keys in bucket order between the passes and the exchange, and
// `result_*` receive its sorted keys (the input itself when sorting in place, the caller's output
// shard, or a buffer downloaded to it).
struct Work {
  std::byte *keys = nullptr, *values = nullptr, *result_keys = nullptr, *result_values = nullptr;
  std::shared_ptr<std::byte> uploaded_keys, uploaded_values, split_keys, split_values, result_buffer_keys,
      result_buffer_values;
};

std::byte* at(void* base, std::uint64_t element, std::size_t bytes) {
  return static_cast<std::byte*>(base) + element * bytes;
}

// Host shards on GPU devices come back down in groups (mesh/sort_groups.hpp) once every local
// device received this many keys: each group is gathered and sorted while the one before comes
// down, so that the local sort hides behind the download (sorted whole first, it took 10.6 of
// 123.2 ms for 2e9 pinned u32 on 4 x H100: docs/design/mesh-sort.md). About groups_per_device
// groups of at least min_group keys: the first group's sort is not hidden, and small sorts run
// below the sort's rate.
constexpr std::uint64_t groups_from = std::uint64_t(1) << 25, groups_per_device = 16,
                        min_group = std::uint64_t(1) << 22;

// The first partition pass's digit: every participant's histogram (size rows of m), and its shift.
struct FirstPass {
  std::vector<std::uint64_t> histograms;
  int m = 0, shift = 0;
};

struct HostShard {
  std::byte *keys = nullptr, *values = nullptr;
};

// Device i's received keys (w.result_*) gathered group by group into a buffer of their own, each
// group sorted there (on the bits below the first pass's digit when it holds one bucket) and
// brought down to its place in `to` once sorted, on the down lane, while the device sorts the next.
// Returns once everything is down, with the host time at which the device's sorts had ended (when
// `timed`; else the time of the return).
std::chrono::steady_clock::time_point sort_down_in_groups(mesh::DeviceBackend& backend, int i, const SortPlan& plan,
                                                          const Work& w, const std::vector<mesh::SortGroup>& groups,
                                                          int digit_shift, HostShard to, std::size_t key_bytes,
                                                          std::size_t value_bytes, bool timed) {
  const std::shared_ptr<std::byte> keys = backend.allocate(i, plan.n * key_bytes, "sort: the received keys in groups");
  const std::shared_ptr<std::byte> values =
      value_bytes ? backend.allocate(i, plan.n * value_bytes, "sort: the received values in groups") : nullptr;
  std::vector<mesh::LaneMark> sorted;
  for (const mesh::SortGroup& g : groups) {
    backend.copy_chunks(i, w.result_keys, keys.get(), g.chunks, key_bytes);
    if (value_bytes) backend.copy_chunks(i, w.result_values, values.get(), g.chunks, value_bytes);
    SortPlan sub = plan;
    sub.n = std::size_t(g.count);
    if (g.one_bucket) sub.end_bit = digit_shift;
    if (sub.n > 1 && sub.begin_bit < sub.end_bit)
      backend.sort_local(i, sub, at(keys.get(), g.begin, key_bytes),
                         value_bytes ? at(values.get(), g.begin, value_bytes) : nullptr);
    sorted.push_back(backend.mark(i, mesh::Lane::device));
  }
  // A host thread notes when the sorts end, while this one brings the groups down (a download into
  // pageable memory returns once its bytes are there).
  auto sorts_ended = std::chrono::steady_clock::now();
  std::exception_ptr wait_failed;
  {
    std::thread waiter;
    if (timed)
      waiter = std::thread([&] {
        try {
          backend.synchronize(i, mesh::Lane::device);
          sorts_ended = std::chrono::steady_clock::now();
        } catch (...) {
          wait_failed = std::current_exception();
        }
      });
    struct Join {
      std::thread& t;
      ~Join() {
        if (t.joinable()) t.join();
      }
    } join{waiter};
    backend.copy_lanes_at_once(i, 1);  // only the down lane stages pageable memory: all its threads
    for (std::size_t g = 0; g < groups.size(); ++g) {
      backend.wait_for(i, mesh::Lane::down, sorted[g]);
      backend.download(i, at(keys.get(), groups[g].begin, key_bytes), at(to.keys, groups[g].begin, key_bytes),
                       groups[g].count * key_bytes, mesh::Lane::down);
      if (value_bytes)
        backend.download(i, at(values.get(), groups[g].begin, value_bytes),
                         at(to.values, groups[g].begin, value_bytes), groups[g].count * value_bytes,
                         mesh::Lane::down);
    }
    backend.synchronize(i, mesh::Lane::down);
  }
  if (wait_failed) std::rethrow_exception(wait_failed);
  return timed ? sorts_ended : std::chrono::steady_clock::now();
}

// The exchange of the split buffers, destination-major, into the result arrays (source-major).
void exchange(comm::Communicator& comm, mesh::LocalErrors& errors, mesh::DeviceBackend& backend,
              const std::vector<Work>& work, const std::vector<std::uint64_t>& moved,
              const std::vector<std::uint64_t>& targets, int first, int locals, int size, std::size_t key_bytes,
              std::size_t value_bytes) {
  std::vector<mesh::ExchangeLayout> layouts;
  std::vector<comm::AllToAllV> keys_args, values_args;
  for (int i = 0; i < locals; ++i) layouts.push_back(mesh::layout_of_matrix(moved, size, first + i));
  for (int i = 0; i < locals; ++i) {
    const std::size_t ii = std::size_t(i);
    const mesh::ExchangeLayout& l = layouts[ii];
    const std::size_t capacity = std::size_t(targets[std::size_t(first + i)]);
    keys_args.push_back({backend.location(i), work[ii].split_keys.get(), work[ii].result_keys, capacity,
                         l.send_counts, l.send_displs, l.recv_counts, l.recv_displs});
    values_args.push_back({backend.location(i), work[ii].split_values.get(), work[ii].result_values, capacity,
                           l.send_counts, l.send_displs, l.recv_counts, l.recv_displs});
  }
  errors.collective([&] { comm.all_to_all_v(keys_args, key_bytes); });
  if (value_bytes) comm.all_to_all_v(values_args, value_bytes);
}

}  // namespace

void sort_shards(Context& ctx, const ShardSortArgs& a, const SortOptions& options) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  validate_spans(a, a.in, a.into ? "input " : "", locals);
  if (a.into) validate_spans(a, a.out, "output ", locals);
  auto backend = mesh::device_backend_for(ctx);
  mesh::LocalErrors errors(comm);
  const std::size_t key_bytes = size_of(a.type), value_bytes = a.value_bytes;
  const int digit_bits = options.mesh_digit_bits ? options.mesh_digit_bits : default_digit_bits;

  // Host shards sorted in place over the ranks of several processes (one device each) may go out
  // of core (sort_ranks_out_of_core.hpp); every rank says whether it asks for it in the agreement.
  const bool ranks_may_go_out_of_core = !a.into && !a.device_resident && locals == 1 && size > locals;
  std::vector<SortPlan> plans(std::size_t(locals), SortPlan{a.type, 0, value_bytes, options.order, 0, 0});
  std::vector<Agreement> mine(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      validate_shard(a, ii, first + i, backend->location(i), digit_bits);
      plans[ii] = validate_sort(a.type, a.in.sizes[ii], value_bytes, options);
      mine[ii] = {std::uint64_t(a.type), value_bytes, std::uint64_t(options.order == Order::descending),
                  std::uint64_t(plans[ii].begin_bit), std::uint64_t(plans[ii].end_bit), std::uint64_t(digit_bits),
                  a.in.sizes[ii], a.into ? a.out.sizes[ii] : a.in.sizes[ii],
                  std::uint64_t(ranks_may_go_out_of_core ? rank_out_of_core_wish(ctx, plans[ii], options)
                                                         : OutOfCoreWish::in_memory)};
    });
  std::vector<Agreement> all(static_cast<std::size_t>(size));
  std::vector<std::span<const std::byte>> mine_bytes;
  for (const Agreement& m : mine) mine_bytes.push_back(std::as_bytes(std::span(&m, 1)));
  errors.collective([&] { comm.all_gather(mine_bytes, std::as_writable_bytes(std::span(all))); });
  check_agreement(all);  // the same verdict on every process: they all hold the same gathered words

  // Each device's input count, and what it takes: its own count, or its output shard's size.
  std::vector<std::uint64_t> inputs(static_cast<std::size_t>(size)), targets(static_cast<std::size_t>(size));
  for (std::size_t p = 0; p < all.size(); ++p) {
    inputs[p] = all[p].keys;
    targets[p] = all[p].out_keys;
  }
  const std::uint64_t total = std::accumulate(inputs.begin(), inputs.end(), std::uint64_t(0));
  const std::uint64_t room = std::accumulate(targets.begin(), targets.end(), std::uint64_t(0));
  require(room == total,
          "sort: the output shards hold " + std::to_string(room) + " keys in all, the inputs " + std::to_string(total),
          "size the output shards to add up to the global key count (balanced_shard_sizes gives even ones)");
  const int begin_bit = int(all[0].begin_bit), end_bit = int(all[0].end_bit);
  SortPhases* report = options.phases;
  if (report) {
    *report = SortPhases{};
    report->digit_bits = digit_bits;
    report->counts = targets;
  }
  if (!a.into && (total <= 1 || begin_bit == end_bit)) return;  // nothing changes place
  if (ranks_may_go_out_of_core) {
    bool asked = false, refused = false;
    for (const Agreement& p : all) {
      asked |= OutOfCoreWish(p.out_of_core) == OutOfCoreWish::out_of_core;
      refused |= OutOfCoreWish(p.out_of_core) == OutOfCoreWish::never;
    }
    if (asked && !refused) return sort_ranks_out_of_core(ctx, comm, errors, a, plans[0], inputs, options);
  }
  mesh::PhaseClock<SortPhases> clock(report, *backend, locals);

  // The shards where the devices can sort them: in place (device spans, host spans on CPU mesh
  // devices) or uploaded (host spans on GPU mesh devices), and where their results go.
  const bool upload = !a.device_resident && ctx.mesh_backend(first) == Backend::cuda;
  // The devices upload at once (an upload of pageable memory returns once its bytes are there).
  std::vector<Work> work(static_cast<std::size_t>(locals));
  mesh::on_every_local(*backend, errors, first, locals, [&](int i) {
    const std::size_t ii = std::size_t(i), n = a.in.sizes[ii], out_n = std::size_t(targets[std::size_t(first + i)]);
    Work& w = work[ii];
    if (upload) {
      w.uploaded_keys = backend->allocate(i, n * key_bytes, "sort: the keys uploaded");
      w.keys = w.uploaded_keys.get();
      backend->upload(i, a.in.keys[ii], w.keys, n * key_bytes);
      if (value_bytes) {
        w.uploaded_values = backend->allocate(i, n * value_bytes, "sort: the values uploaded");
        w.values = w.uploaded_values.get();
        backend->upload(i, a.in.values[ii], w.values, n * value_bytes);
      }
    } else {
      w.keys = static_cast<std::byte*>(a.in.keys[ii]);
      if (value_bytes) w.values = static_cast<std::byte*>(a.in.values[ii]);
    }
    if (!a.into) {
      w.result_keys = w.keys;
      w.result_values = w.values;
    } else if (!upload) {
      w.result_keys = static_cast<std::byte*>(a.out.keys[ii]);
      if (value_bytes) w.result_values = static_cast<std::byte*>(a.out.values[ii]);
    } else {
      w.result_buffer_keys = backend->allocate(i, out_n * key_bytes, "sort: the sorted keys");
      w.result_keys = w.result_buffer_keys.get();
      if (value_bytes) {
        w.result_buffer_values = backend->allocate(i, out_n * value_bytes, "sort: the sorted values");
        w.result_values = w.result_buffer_values.get();
      }
    }
  });
  clock.mark(&SortPhases::upload_ms);

  // Where the sorted keys end up, and (host shards on GPU devices) their way down, every device at once.
  const ShardSpans& to = a.into ? a.out : a.in;
  auto download_results = [&] {
    if (upload)
      for (int i = 0; i < locals; ++i)
        errors.run(first + i, [&] {
          const std::size_t ii = std::size_t(i);
          const std::size_t n = std::size_t(targets[std::size_t(first + i)]);
          backend->download(i, work[ii].result_keys, to.keys[ii], n * key_bytes);
          if (value_bytes) backend->download(i, work[ii].result_values, to.values[ii], n * value_bytes);
        });
    for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { backend->synchronize(i); });
    clock.mark(&SortPhases::download_ms);
  };

  // The merge strategy (mesh/sort_by_merge.hpp): its cuts find input already sorted across the
  // devices without the key ranges' read below.
  if (mesh::merge_strategy_applies(ctx, options.mesh_strategy, *backend, locals, size, upload)) {
    std::vector<mesh::MergeShard> shards;
    for (int i = 0; i < locals; ++i) {
      const Work& w = work[std::size_t(i)];
      shards.push_back({w.keys, w.values, a.in.sizes[std::size_t(i)], w.result_keys, w.result_values,
                        targets[std::size_t(first + i)]});
    }
    SortPlan plan = plans[0];
    plan.begin_bit = begin_bit;
    plan.end_bit = end_bit;
    mesh::sort_by_merge(*backend, errors, plan, shards, !a.into, clock, report);
    download_results();
    errors.collective([&] { comm.barrier(); });
    return;
  }

  // The sorted-input shortcut: every device's smallest and largest sort key, gathered. Where the
  // devices' ranges already ascend in device order and every device keeps its count, each device
  // sorts its own keys and nothing moves (one read of the keys instead of the partition passes and
  // the exchange). The devices read at once (each range waits on its own device's stream).
  std::vector<std::uint64_t> own_ranges(std::size_t(locals) * 3, 0), all_ranges(std::size_t(size) * 3, 0);
  mesh::on_every_local(*backend, errors, first, locals, [&](int i) {
    const std::size_t ii = std::size_t(i);
    SortPlan plan = plans[ii];
    plan.n = a.in.sizes[ii];
    backend->key_range(i, plan, work[ii].keys, &own_ranges[ii * 3]);
    own_ranges[ii * 3 + 2] = plan.n;
  });
  std::vector<std::span<const std::byte>> range_bytes;
  for (int i = 0; i < locals; ++i)
    range_bytes.push_back(std::as_bytes(std::span(own_ranges).subspan(std::size_t(i) * 3, 3)));
  errors.collective([&] { comm.all_gather(range_bytes, std::as_writable_bytes(std::span(all_ranges))); });
  std::vector<mesh::DeviceKeyRange> key_ranges;
  for (int p = 0; p < size; ++p)
    key_ranges.push_back({all_ranges[std::size_t(p) * 3], all_ranges[std::size_t(p) * 3 + 1], all_ranges[std::size_t(p) * 3 + 2]});
  const bool already_across = mesh::sorted_across_devices(key_ranges, targets);
  if (report) report->sorted_across_devices = already_across;
  for (int i = 0; i < locals && !already_across; ++i)  // the partition's buffers
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i), n = a.in.sizes[ii];
      work[ii].split_keys = backend->allocate(i, n * key_bytes, "sort: the split keys");
      if (value_bytes) work[ii].split_values = backend->allocate(i, n * value_bytes, "sort: the split values");
    });
  clock.mark(&SortPhases::partition_ms);

  // The partition passes. Pass 0 splits every shard from its input into the split buffer; a later
  // pass splits each spanning bucket's keys into a scratch buffer of their size and copies them
  // back, so between passes the split buffer holds everything (and the input is only read).
  std::vector<mesh::SpanningRange> ranges(already_across ? 0 : 1);
  for (int i = 0; i < locals && !already_across; ++i) {
    ranges[0].lo.push_back(0);
    ranges[0].hi.push_back(a.in.sizes[std::size_t(i)]);
  }
  std::vector<std::uint64_t> moved(std::size_t(size) * std::size_t(size), 0);
  if (already_across)
    for (int p = 0; p < size; ++p) moved[std::size_t(p) * std::size_t(size) + std::size_t(p)] = inputs[std::size_t(p)];
  std::string plan_json;
  FirstPass first_pass;
  int shift = end_bit;
  const mesh::PartitionOptions partition{.epsilon = 0};  // exact counts: every device keeps its own
  for (int pass = 0; !ranges.empty(); ++pass) {
    const int bits = std::min(digit_bits, shift - begin_bit);
    shift -= bits;
    const std::uint32_t m = std::uint32_t(1) << bits;
    const std::vector<std::uint32_t> remap = digit_order(m, options.order);
    const DigitSource source{a.type, {shift, bits}};
    const std::size_t R = ranges.size();
    std::vector<std::vector<std::vector<std::size_t>>> own(
        R, std::vector<std::vector<std::size_t>>(std::size_t(locals), std::vector<std::size_t>(m + 1, 0)));
    auto range_of = [&](std::size_t r, int i) { return ranges[r].hi[std::size_t(i)] - ranges[r].lo[std::size_t(i)]; };
    // A later pass's scratch, per range and device: the refined keys before they go back.
    std::vector<std::vector<std::shared_ptr<std::byte>>> scratch_keys(R, std::vector<std::shared_ptr<std::byte>>(std::size_t(locals))),
        scratch_values = scratch_keys;
    for (std::size_t r = 0; r < R; ++r)
      for (int i = 0; i < locals; ++i)
        errors.run(first + i, [&] {
          if (range_of(r, i) == 0) return;
          const std::size_t ii = std::size_t(i);
          const Work& w = work[ii];
          const std::uint64_t lo = ranges[r].lo[ii], count = range_of(r, i);
          if (pass > 0) {
            scratch_keys[r][ii] = backend->allocate(i, count * key_bytes, "sort: the refined keys");
            if (value_bytes) scratch_values[r][ii] = backend->allocate(i, count * value_bytes, "sort: the refined values");
          }
          mesh::LocalSplit split = digit_split(source, remap);
          split.args.n = count;
          split.args.keys_in = pass == 0 ? at(w.keys, 0, key_bytes) : at(w.split_keys.get(), lo, key_bytes);
          split.args.keys_out = pass == 0 ? w.split_keys.get() : scratch_keys[r][ii].get();
          if (value_bytes) {
            split.args.values_in = pass == 0 ? w.values : at(w.split_values.get(), lo, value_bytes);
            split.args.values_out = pass == 0 ? w.split_values.get() : scratch_values[r][ii].get();
            split.args.value_bytes = value_bytes;
          }
          split.args.offsets = own[r][std::size_t(i)].data();
          backend->start_split(i, int(r), split);
        });
    for (std::size_t r = 0; r < R; ++r)
      for (int i = 0; i < locals; ++i)
        errors.run(first + i, [&] {
          if (range_of(r, i) == 0) return;
          backend->finish_split(i, int(r));
          if (pass == 0) return;
          backend->after_split(i, int(r));
          const std::size_t ii = std::size_t(i);
          const Work& w = work[ii];
          const mesh::Chunk back[] = {{0, ranges[r].lo[ii], range_of(r, i)}};
          backend->copy_chunks(i, scratch_keys[r][ii].get(), w.split_keys.get(), back, key_bytes);
          if (value_bytes) backend->copy_chunks(i, scratch_values[r][ii].get(), w.split_values.get(), back, value_bytes);
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
    if (pass == 0) first_pass = {std::move(gathered), int(m), shift};
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

  // The exchange: each device's split buffer, destination-major, into the result arrays of its
  // destinations (source-major), after every local device's queued work (the refinement copies
  // into the split buffers) has finished. Sorted across devices: each device's keys go to its own
  // result array (nothing to do when sorting in place).
  for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { backend->synchronize(i); });
  if (already_across) {
    for (int i = 0; i < locals; ++i)
      errors.run(first + i, [&] {
        const std::size_t ii = std::size_t(i);
        const mesh::Chunk whole{0, 0, a.in.sizes[ii]};
        if (work[ii].result_keys != work[ii].keys)
          backend->copy_chunks(i, work[ii].keys, work[ii].result_keys, std::span(&whole, 1), key_bytes);
        if (value_bytes && work[ii].result_values != work[ii].values)
          backend->copy_chunks(i, work[ii].values, work[ii].result_values, std::span(&whole, 1), value_bytes);
      });
  } else {
    exchange(comm, errors, *backend, work, moved, targets, first, locals, size, key_bytes, value_bytes);
  }
  clock.mark(&SortPhases::exchange_ms);


  // Every device sorts what it received; host shards on GPU devices go back down, in groups where
  // every local device received enough keys (each group sorted while the one before comes down).
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      work[std::size_t(i)].split_keys.reset();  // its memory goes back to the pool for the sort's scratch
      work[std::size_t(i)].split_values.reset();
    });
  bool in_groups = upload && !already_across;
  for (int i = 0; i < locals; ++i) in_groups &= targets[std::size_t(first + i)] >= groups_from;
  if (in_groups) {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::chrono::steady_clock::time_point> sorted_at(std::size_t(locals), started);
    mesh::on_every_local(*backend, errors, first, locals, [&](int i) {
      const std::size_t ii = std::size_t(i);
      SortPlan plan = plans[ii];
      plan.n = std::size_t(targets[std::size_t(first + i)]);
      const std::uint64_t goal = std::max<std::uint64_t>(min_group, plan.n / groups_per_device);
      const std::vector<mesh::SortGroup> groups =
          mesh::plan_sort_groups(first_pass.histograms, first_pass.m, moved, size, first + i, goal);
      sorted_at[ii] = sort_down_in_groups(*backend, i, plan, work[ii], groups, first_pass.shift,
                                          {static_cast<std::byte*>(to.keys[ii]),
                                           value_bytes ? static_cast<std::byte*>(to.values[ii]) : nullptr},
                                          key_bytes, value_bytes, report != nullptr);
    });
    clock.mark(&SortPhases::download_ms);
    if (report) {  // the sorts' time, from the same start, out of the download's
      const double sorting =
          std::chrono::duration<double, std::milli>(*std::max_element(sorted_at.begin(), sorted_at.end()) - started)
              .count();
      report->local_sort_ms += sorting;
      report->download_ms -= sorting;
    }
  } else {
    for (int i = 0; i < locals; ++i)
      errors.run(first + i, [&] {
        const std::size_t ii = std::size_t(i);
        SortPlan plan = plans[ii];
        plan.n = std::size_t(targets[std::size_t(first + i)]);
        if (plan.n > 1 && plan.begin_bit < plan.end_bit)
          backend->sort_local(i, plan, work[ii].result_keys, work[ii].result_values);
      });
    clock.mark(&SortPhases::local_sort_ms);
    download_results();
  }
  if (report && in_groups)
    report->plan_text += "local sort: in groups of runs of buckets, each sorted while the one before comes down\n";
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
    args.in.keys.push_back(keys ? at(keys, from, key_bytes) : nullptr);
    args.in.sizes.push_back(to - from);
    if (value_bytes) {
      args.in.values.push_back(values ? at(values, from, value_bytes) : nullptr);
      args.in.value_sizes.push_back(to - from);
    }
  }
  sort_shards(ctx, args, options);
}

}  // namespace radixmesh::detail

namespace radixmesh {

std::vector<std::size_t> balanced_shard_sizes(Context& ctx, std::span<const std::size_t> local_input_sizes) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  require(local_input_sizes.size() == std::size_t(locals),
          "balanced_shard_sizes: " + std::to_string(local_input_sizes.size()) + " sizes for " +
              std::to_string(locals) + " local mesh devices",
          "pass one input size per local mesh device");
  // The global count: every local device's size, summed over the mesh.
  std::vector<std::uint64_t> sizes(local_input_sizes.begin(), local_input_sizes.end());
  std::vector<std::span<const std::uint64_t>> local;
  for (const std::uint64_t& n : sizes) local.emplace_back(&n, 1);
  std::uint64_t total = 0;
  comm.all_reduce_sum(local, std::span(&total, 1));
  const std::vector<std::uint64_t> even = mesh::balanced_counts(total, size);
  return std::vector<std::size_t>(even.begin() + first, even.begin() + first + locals);
}

}  // namespace radixmesh
