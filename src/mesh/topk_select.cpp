// The top-k of one array over shards by distributed radix select (Dr. Top-k's large-k path; the
// candidate path is in topk_shards.cpp, which calls this after its agreement step):
//   1. Digit passes from the top of the rank (topk_rank, larger is better), 8 bits at a time: every
//      device counts its keys whose rank has the prefix found so far, by the next digit
//      (DeviceBackend::topk_select_count); one all_gather of the counts; every process finds the
//      digit that holds the global k-th and extends the prefix. After the last pass the prefix is
//      the k-th rank T, and the per-device counts give each device's keys above T.
//   2. The keys equal to T that are needed go to the lowest global indices: device by device, in
//      mesh order (each device takes its first ones in position order).
//   3. Every device takes its winners in position order (topk_select_take); they are gathered
//      between processes (read in place within one) in device order, which is ascending global
//      index: the unsorted result as one device gives it. Sorted output sorts those k winners by
//      rank, ties by index (topk_of_entries over the winners with their global indices).
#include "mesh/topk_select.hpp"

#include <algorithm>
#include <cstring>

#include "mesh/topk_steps.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

namespace {
constexpr int select_digit_bits = 8;
}  // namespace

void topk_by_radix_select(const Context& ctx, comm::Communicator& comm, DeviceBackend& backend, LocalErrors& errors,
                          const SelectCall& call) {
  const detail::ShardTopkRequest& rq = call.request;
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  const std::size_t P = std::size_t(size), k = rq.k, value_bytes = size_of(rq.type);
  const int width = int(value_bytes * 8);
  TopkStepClock clock(rq.phases);

  // 1. The digit passes.
  std::uint64_t mask = 0, prefix = 0, needed = k;
  std::vector<std::uint64_t> above(P, 0), ties(P, 0);
  int passes = 0;
  for (int hi = width; hi > 0; ++passes) {
    const int bits = std::min(select_digit_bits, hi), shift = hi - bits;
    const std::size_t radix = std::size_t(1) << bits;
    std::vector<std::vector<std::uint64_t>> mine(static_cast<std::size_t>(locals), std::vector<std::uint64_t>(radix, 0));
    on_every_local(backend, errors, first, locals, [&](int i) {
      const std::size_t ii = std::size_t(i);
      if (rq.sizes[ii] == 0) return;
      detail::TopkSelectScan scan{rq.type, rq.options, rq.values[ii], rq.sizes[ii], mask, prefix, shift, bits};
      backend.topk_select_count(i, scan, mine[ii].data());
    });
    std::vector<std::span<const std::byte>> sent;
    for (const auto& m : mine) sent.push_back(std::as_bytes(std::span(m)));
    std::vector<std::uint64_t> all(P * radix);
    errors.collective([&] { comm.all_gather(sent, std::as_writable_bytes(std::span(all))); });
    std::uint64_t cum = 0;
    std::size_t digit = radix;
    while (digit-- > 0) {
      std::uint64_t total = 0;
      for (std::size_t d = 0; d < P; ++d) total += all[d * radix + digit];
      if (cum + total >= needed) break;
      cum += total;
    }
    require(digit < radix, "topk: the radix select lost the k-th value (counts below k)", "report this as a bug");
    for (std::size_t d = 0; d < P; ++d) {
      for (std::size_t g = digit + 1; g < radix; ++g) above[d] += all[d * radix + g];
      ties[d] = all[d * radix + digit];
    }
    needed -= cum;
    prefix |= std::uint64_t(digit) << shift;
    mask |= std::uint64_t(radix - 1) << shift;
    hi = shift;
  }
  clock.mark(&TopkPhases::local_ms);

  // 2. Each device's winners: its keys above the k-th, and the ties the lowest indices take.
  std::vector<std::uint64_t> take(P), winners(P);
  std::uint64_t max_winners = 0, all_winners = 0;
  for (std::size_t d = 0; d < P; ++d) {
    take[d] = std::min(ties[d], needed);
    needed -= take[d];
    winners[d] = above[d] + take[d];
    max_winners = std::max(max_winners, winners[d]);
    all_winners += winners[d];
  }
  require(all_winners == k && needed == 0,
          "topk: the radix select counted " + std::to_string(all_winners) + " winners for k = " + std::to_string(k),
          "report this as a bug");

  // 3. Every device takes its winners into a slot of max_winners entries; gathered in device order.
  const EntrySlot slot(max_winners, value_bytes);
  std::vector<std::vector<std::byte>> slots(static_cast<std::size_t>(locals));
  on_every_local(backend, errors, first, locals, [&](int i) {
    const std::size_t ii = std::size_t(i), d = std::size_t(first + i);
    require_host_memory(slot.bytes, "topk: the winners of one mesh device");
    slots[ii].assign(slot.bytes, std::byte{0});
    if (winners[d] == 0) return;
    std::int64_t* positions = slot.indices(slots[ii].data());
    detail::TopkSelectTake t{rq.type, rq.options, rq.values[ii], rq.sizes[ii], prefix, take[d], winners[d],
                           slots[ii].data(), positions};
    backend.topk_select_take(i, t);
    for (std::uint64_t e = 0; e < winners[d]; ++e) positions[e] += std::int64_t(call.offset[d]);
  });
  const GatheredSlots gathered(comm, errors, slots, slot.bytes, "winners");
  clock.mark(&TopkPhases::gather_ms);

  std::vector<std::byte> values(k * value_bytes);
  std::vector<std::int64_t> indices(k);
  std::size_t at = 0;
  for (std::size_t d = 0; d < P; ++d) {
    std::memcpy(values.data() + at * value_bytes, gathered[d], winners[d] * value_bytes);
    std::memcpy(indices.data() + at, slot.indices(gathered[d]), winners[d] * 8);
    at += winners[d];
  }
  if (!rq.receives) {
    // this process takes no copy of the result
  } else if (rq.options.sorted) {
    // Best first, ties by index: the top-k of the k winners, their global indices as input.
    topk_of_entries(ctx, backend, rq, 1, k, values.data(), indices.data());
  } else {
    std::memcpy(rq.out_values, values.data(), values.size());
    if (rq.index_bytes == 8) {
      std::memcpy(rq.out_indices, indices.data(), k * 8);
    } else {
      auto* out = static_cast<std::int32_t*>(rq.out_indices);
      for (std::size_t e = 0; e < k; ++e) out[e] = std::int32_t(indices[e]);  // checked: n - 1 <= INT32_MAX
    }
  }
  clock.mark(&TopkPhases::merge_ms);
  if (rq.phases) {
    rq.phases->path = TopkShardPath::radix_select;
    rq.phases->select_passes = passes;
    rq.phases->candidates_per_row = 0;
  }
}

}  // namespace radixmesh::mesh
