#include "mesh/sort_by_merge.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace radixmesh::mesh {
namespace {

const std::byte* at(const void* base, std::uint64_t element, std::size_t bytes) {
  return base ? static_cast<const std::byte*>(base) + element * bytes : nullptr;
}

}  // namespace

bool merge_strategy_applies(const Context& ctx, MeshSortStrategy asked, DeviceBackend& backend, int locals, int size,
                            bool upload) {
  if (asked == MeshSortStrategy::partition || locals != size || size > max_merge_devices || size < 2) return false;
  if (asked == MeshSortStrategy::automatic) {
    if (upload) return false;  // the partition overlaps the download with the local sorts
    // Measured faster on four logical devices of one H200 (docs/design/mesh-sort.md); on GPUs of
    // their own the partition stays until the merge is measured there.
    if (ctx.mesh_backend(0) != Backend::cuda) return false;
    const auto& devices = ctx.devices();
    for (const DeviceInfo& d : devices)
      if (d.id != devices.front().id) return false;
  }
  return backend.reads_local_peers();
}

void sort_by_merge(DeviceBackend& backend, LocalErrors& errors, const detail::SortPlan& plan,
                   std::span<const MergeShard> shards, bool in_place, PhaseClock<SortPhases>& clock,
                   SortPhases* report) {
  const int P = int(shards.size());
  const std::size_t kb = size_of(plan.type), vb = plan.value_bytes;

  // The buffers: the sorted copies of inputs that must stay as they were, and each device's two
  // merge buffers (keys 0, 1; values 0, 1).
  std::vector<std::shared_ptr<std::byte>> copies(std::size_t(2 * P));
  std::vector<std::array<std::shared_ptr<std::byte>, 4>> buffers(static_cast<std::size_t>(P));
  // Declared after the buffers, so it runs before they go: every device's queued steps end before
  // any buffer is given back or the caller sees an error, also where a failed step made the others
  // skip their waits (a device's merge may still be reading another device's buffers).
  struct WaitForAll {
    DeviceBackend& backend;
    int devices;
    ~WaitForAll() {
      for (int i = 0; i < devices; ++i) try {
          backend.synchronize(i);
        } catch (...) {  // the step's own error is already on its way
        }
    }
  } wait_for_all{backend, P};

  // Every device sorts its shard where it lies (a copy of it when the input must stay as it was),
  // all at once.
  std::vector<SortedRun> runs(static_cast<std::size_t>(P));
  for (int i = 0; i < P; ++i)
    errors.run(i, [&] {
      const MergeShard& s = shards[std::size_t(i)];
      std::byte *keys = s.keys, *values = s.values;
      if (!in_place && s.n) {
        const Chunk whole{0, 0, s.n};
        copies[std::size_t(2 * i)] = backend.allocate(i, s.n * kb, "sort: the keys' sorted copy");
        keys = copies[std::size_t(2 * i)].get();
        backend.copy_chunks(i, s.keys, keys, std::span(&whole, 1), kb);
        if (vb) {
          copies[std::size_t(2 * i + 1)] = backend.allocate(i, s.n * vb, "sort: the values' sorted copy");
          values = copies[std::size_t(2 * i + 1)].get();
          backend.copy_chunks(i, s.values, values, std::span(&whole, 1), vb);
        }
      }
      detail::SortPlan own = plan;
      own.n = std::size_t(s.n);
      if (own.n > 1 && own.begin_bit < own.end_bit) backend.sort_local(i, own, keys, values);
      runs[std::size_t(i)] = {keys, values, s.n};
    });
  for (int i = 0; i < P; ++i) errors.run(i, [&] { backend.synchronize(i); });
  clock.mark(&SortPhases::local_sort_ms);

  // The cuts: device i's share starts at the sum of the shares before it.
  std::vector<std::uint64_t> places(std::size_t(P) + 1, 0);
  for (int i = 0; i < P; ++i) places[std::size_t(i) + 1] = places[std::size_t(i)] + shards[std::size_t(i)].target;
  std::vector<std::uint64_t> cuts((std::size_t(P) + 1) * std::size_t(P), 0);
  errors.run(0, [&] { backend.cuts_of_runs(0, plan, runs, places, cuts.data()); });
  auto cut = [&](int place, int run) { return cuts[std::size_t(place) * std::size_t(P) + std::size_t(run)]; };
  clock.mark(&SortPhases::splitters_ms);
  if (report) {
    report->moved.assign(std::size_t(P) * std::size_t(P), 0);
    for (int i = 0; i < P; ++i)
      for (int r = 0; r < P; ++r) report->moved[std::size_t(r) * std::size_t(P) + std::size_t(i)] = cut(i + 1, r) - cut(i, r);
  }
  // Sorted across the devices already (each device's share is its own sorted shard): in place,
  // nothing moves.
  bool stays = in_place;
  for (int i = 0; i < P && stays; ++i) stays = cut(i, i) == 0 && cut(i + 1, i) == shards[std::size_t(i)].n;
  if (stays) {
    if (report) {
      report->merged = true;
      report->sorted_across_devices = true;
    }
    return;
  }

  // Device i's pieces, one of every run in run order, merged two at a time (each merge stable, the
  // earlier piece first), so ties keep the global order: device order, then position. The first
  // round reads the other devices' runs into a buffer of the device's own; after it, every device
  // waits for all, since in place the last round writes over the runs. Later rounds alternate
  // between two buffers, and the last writes the result.
  std::vector<std::vector<SortedRun>> pieces(static_cast<std::size_t>(P));
  for (int i = 0; i < P; ++i)
    for (int r = 0; r < P; ++r) {
      const std::uint64_t from = cut(i, r), to = cut(i + 1, r);
      pieces[std::size_t(i)].push_back({at(runs[std::size_t(r)].keys, from, kb), at(runs[std::size_t(r)].values, from, vb),
                                        to - from});
    }
  int rounds = 0;
  for (int slot = 0;; slot ^= 1, ++rounds) {
    const std::size_t count = pieces[0].size();  // the same on every device
    const bool last = count <= 2 && (rounds > 0 || !in_place);
    for (int i = 0; i < P; ++i)
      errors.run(i, [&] {
        const MergeShard& s = shards[std::size_t(i)];
        auto& own = buffers[std::size_t(i)];
        std::byte *keys = s.result_keys, *values = s.result_values;
        if (!last) {
          if (!own[std::size_t(slot)]) own[std::size_t(slot)] = backend.allocate(i, s.target * kb, "sort: the merged keys");
          if (vb && !own[std::size_t(2 + slot)])
            own[std::size_t(2 + slot)] = backend.allocate(i, s.target * vb, "sort: the merged values");
          keys = own[std::size_t(slot)].get();
          values = vb ? own[std::size_t(2 + slot)].get() : nullptr;
        }
        std::vector<SortedRun> next;
        std::uint64_t written = 0;
        const std::vector<SortedRun>& mine = pieces[std::size_t(i)];
        for (std::size_t j = 0; j < count; j += 2) {
          const SortedRun& a = mine[j];
          const SortedRun b = j + 1 < count ? mine[j + 1] : SortedRun{};
          std::byte* k = keys + written * kb;
          std::byte* v = values ? values + written * vb : nullptr;
          backend.merge_two(i, plan, a, b, k, v);
          next.push_back({k, v, a.n + b.n});
          written += a.n + b.n;
        }
        pieces[std::size_t(i)] = std::move(next);
      });
    for (int i = 0; i < P; ++i) errors.run(i, [&] { backend.synchronize(i); });
    clock.mark(rounds == 0 ? &SortPhases::exchange_ms : &SortPhases::merge_ms);
    if (last || errors.any()) break;
  }

  if (report) {
    report->merged = true;
    report->plan_text += "merge: every device sorted its own shard; each device's share cut from every sorted shard "
                         "at exact splitters and merged in " + std::to_string(rounds + 1) + " rounds of two-run merges\n";
  }
}

}  // namespace radixmesh::mesh
