#include "mesh/topk_steps.hpp"

#include <string>

#include "core/topk_plan.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

GatheredSlots::GatheredSlots(comm::Communicator& comm, LocalErrors& errors,
                             const std::vector<std::vector<std::byte>>& local, std::size_t slot_bytes,
                             const char* what)
    : local_(local), slot_bytes_(slot_bytes), in_process_(comm.local_count() == comm.size()) {
  if (in_process_) {
    errors.collective([&] { comm.barrier(); });
    return;
  }
  const std::size_t size = std::size_t(comm.size());
  errors.run(comm.first_local(), [&] {
    require_host_memory(size * slot_bytes, std::string("topk: the ") + what + " of every mesh device");
    gathered_.resize(size * slot_bytes);
  });
  std::vector<std::span<const std::byte>> sent;
  for (const auto& s : local) sent.push_back(std::span(s));
  errors.collective([&] { comm.all_gather(sent, std::span(gathered_)); });
}

void topk_of_entries(const Context& ctx, DeviceBackend& backend, const detail::ShardTopkRequest& rq, std::size_t rows,
                     std::size_t per_row, const std::byte* values, const std::int64_t* indices) {
  const std::size_t total = rows * per_row;
  std::vector<std::int32_t> narrow;
  if (rq.index_bytes == 4) narrow.assign(indices, indices + total);  // checked: n - 1 <= INT32_MAX
  detail::TopkRequest r;
  r.type = rq.type;
  r.values = values;
  r.total = total;
  r.rows = Rows::uniform(rows, per_row);
  r.k = rq.k;
  r.options = rq.options;
  r.index_bytes = rq.index_bytes;
  r.input_indices = rq.index_bytes == 4 ? static_cast<const void*>(narrow.data()) : indices;
  r.input_indices_count = total;
  r.out_values = rq.out_values;
  r.out_indices = rq.out_indices;
  if (backend.concurrent_local_calls())
    backend.topk_local(0, r);
  else
    detail::cpu_topk(detail::validate_topk(r, nullptr), r.values, r.input_indices, r.out_values, r.out_indices,
                     ctx.cpu_threads());
}

detail::TopkRequest local_candidates(const detail::ShardTopkRequest& rq, std::size_t i, std::uint64_t columns,
                                     std::uint64_t take, std::uint64_t offset, void* out_values, void* out_indices) {
  detail::TopkRequest local;
  local.type = rq.type;
  local.values = rq.values[i];
  local.total = rq.sizes[i];
  local.values_device = rq.devices.empty() ? -1 : rq.devices[i];
  local.rows = Rows::uniform(rq.rows, columns);
  local.k = take;
  local.options = {.largest = rq.options.largest, .sorted = false, .include_nan = rq.options.include_nan};
  local.index_bytes = rq.index_bytes;
  local.out_values = out_values;
  local.out_indices = out_indices;
  local.index_base = std::int64_t(offset);
  return local;
}

void topk_candidates_in_process(DeviceBackend& backend, LocalErrors& errors, const detail::ShardTopkRequest& rq,
                                std::span<const std::uint64_t> columns, std::span<const std::uint64_t> offset,
                                std::span<const std::uint64_t> take, TopkStepClock& clock) {
  const int locals = int(take.size());
  const std::size_t rows = rq.rows, value_bytes = size_of(rq.type), index_bytes = rq.index_bytes;
  std::uint64_t per_row = 0;
  for (std::uint64_t t : take) per_row += t;
  // The device that takes the final step: the one holding a device-resident result, else the first.
  int last = 0;
  if (rq.out_device >= 0)
    while (last + 1 < locals && backend.location(last).cuda_device != rq.out_device) ++last;
  const int home = backend.location(last).cuda_device;  // -1: host memory (CPU devices)

  // 2. Every device's candidates in its own memory.
  std::vector<std::shared_ptr<std::byte>> values(static_cast<std::size_t>(locals)), indices(static_cast<std::size_t>(locals));
  on_every_local(backend, errors, 0, locals, [&](int i) {
    const std::size_t ii = std::size_t(i);
    if (take[ii] == 0) return;
    values[ii] = backend.allocate(i, rows * take[ii] * value_bytes, "topk: the candidates of one mesh device");
    indices[ii] = backend.allocate(i, rows * take[ii] * index_bytes, "topk: the candidates of one mesh device");
    detail::TopkRequest local =
        local_candidates(rq, ii, columns[ii], take[ii], offset[ii], values[ii].get(), indices[ii].get());
    local.outputs_device = backend.location(i).cuda_device;
    backend.topk_local(i, local);
  });
  clock.mark(&TopkPhases::local_ms);

  // 3. Row by row into one array on the last step's device: row r holds device 0's candidates of
  //    row r, then device 1's, and so on.
  std::shared_ptr<std::byte> all_values, all_indices;
  errors.run(last, [&] {
    all_values = backend.allocate(last, rows * per_row * value_bytes, "topk: the candidates of every mesh device");
    all_indices = backend.allocate(last, rows * per_row * index_bytes, "topk: the candidates of every mesh device");
    std::uint64_t at = 0;
    for (int i = 0; i < locals; ++i) {
      const std::size_t ii = std::size_t(i);
      if (take[ii] == 0) continue;
      for (const auto& [from, to, bytes] : {std::tuple(values[ii].get(), all_values.get(), value_bytes),
                                            std::tuple(indices[ii].get(), all_indices.get(), index_bytes)})
        backend.copy_rows({.from = i, .to = last, .src = from, .dst = to + at * bytes, .src_pitch = take[ii] * bytes,
                           .dst_pitch = per_row * bytes, .width = take[ii] * bytes, .rows = rows});
      at += take[ii];
    }
    backend.synchronize(last);
  });
  errors.collective([] {});
  clock.mark(&TopkPhases::gather_ms);

  // 4. The final top-k there, with the global indices as input indices, into rq's outputs (host
  //    memory, or that device's: rq.out_device).
  errors.run(last, [&] {
    if (!rq.receives) return;
    detail::TopkRequest r;
    r.type = rq.type;
    r.values = all_values.get();
    r.total = rows * per_row;
    r.values_device = home;
    r.rows = Rows::uniform(rows, per_row);
    r.k = rq.k;
    r.options = rq.options;
    r.index_bytes = index_bytes;
    r.input_indices = all_indices.get();
    r.input_indices_count = r.total;
    r.input_indices_device = home;
    r.out_values = rq.out_values;
    r.out_indices = rq.out_indices;
    r.outputs_device = rq.out_device;
    backend.topk_local(last, r);
  });
  errors.collective([] {});
  clock.mark(&TopkPhases::merge_ms);
}

}  // namespace radixmesh::mesh
