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

}  // namespace radixmesh::mesh
