// topk_distributed (radixmesh/topk_shards.hpp): the global top-k of one array, each winner left on
// the mesh device whose shard holds it. The result is taken unsorted (ascending global index) on
// the host of every process; every local device's winners are then one contiguous range of it
// (its shard's global index range), ordered best first when asked, and written into the device's
// output shard, in the memory of its input shard.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/topk_plan.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::detail {

namespace {

std::int64_t index_at(const std::byte* indices, std::size_t index_bytes, std::size_t e) {
  if (index_bytes == 4) {
    std::int32_t i;
    std::memcpy(&i, indices + e * 4, 4);
    return i;
  }
  std::int64_t i;
  std::memcpy(&i, indices + e * 8, 8);
  return i;
}

// Entries [lo, hi) of (values, indices) reordered best first, ties by index: the CPU top-k of
// those entries with k = all of them, sorted, their indices as input indices (the one definition
// of the sorted order, radixmesh/topk.hpp).
void sort_best_first(const ShardTopkRequest& rq, std::byte* values, std::byte* indices, std::size_t lo,
                     std::size_t hi) {
  const std::size_t vb = size_of(rq.type), ib = rq.index_bytes, n = hi - lo;
  std::vector<std::byte> v(n * vb), ix(n * ib);
  TopkRequest r;
  r.type = rq.type;
  r.values = values + lo * vb;
  r.total = n;
  r.rows = Rows::uniform(1, n);
  r.k = n;
  r.options = rq.options;
  r.options.sorted = true;
  r.index_bytes = ib;
  r.input_indices = indices + lo * ib;
  r.input_indices_count = n;
  r.out_values = v.data();
  r.out_indices = ix.data();
  cpu_topk(validate_topk(r, nullptr), r.values, r.input_indices, r.out_values, r.out_indices, 1);
  std::memcpy(values + lo * vb, v.data(), v.size());
  std::memcpy(indices + lo * ib, ix.data(), ix.size());
}

}  // namespace

std::vector<std::size_t> topk_shards_distributed(Context& ctx, const ShardTopkRequest& request,
                                                 const ShardWinnersOut& out) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  auto backend = mesh::device_backend_for(ctx);
  mesh::LocalErrors errors(comm);
  const std::size_t k = request.k, vb = size_of(request.type), ib = request.index_bytes;

  // Every device's shard size, for the global index range of this process's shards; the outputs
  // checked first, so a short one fails on every process.
  std::vector<std::uint64_t> mine(static_cast<std::size_t>(locals), 0), sizes(static_cast<std::size_t>(size), 0);
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i), need = std::min<std::size_t>(k, request.sizes.at(ii));
      require(out.capacity.at(ii) >= need,
              "topk_distributed: the output of mesh device " + std::to_string(first + i) + " holds " +
                  std::to_string(out.capacity[ii]) + " entries; it may keep up to " + std::to_string(need),
              "give every device's output min(k, its shard's size) entries");
      require(need == 0 || (out.values[ii] && out.indices[ii]), "topk_distributed: an output is null",
              "pass output storage on every device");
      mine[ii] = request.sizes[ii];
    });
  std::vector<std::span<const std::byte>> sent;
  for (const std::uint64_t& m : mine) sent.push_back(std::as_bytes(std::span(&m, 1)));
  errors.collective([&] { comm.all_gather(sent, std::as_writable_bytes(std::span(sizes))); });
  std::uint64_t first_index = 0;
  for (int d = 0; d < first; ++d) first_index += sizes[std::size_t(d)];

  // The result in ascending global index, on the host.
  std::vector<std::byte> values(k * vb), indices(k * ib);
  ShardTopkRequest rq = request;
  rq.options.sorted = false;
  rq.out_values = values.data();
  rq.out_indices = indices.data();
  rq.out_device = -1;
  rq.receives = true;
  topk_shards(ctx, rq);

  // Every local device's range of it, into its output.
  std::vector<std::size_t> kept(static_cast<std::size_t>(locals), 0);
  std::uint64_t lo_index = first_index;
  std::size_t at = 0;
  while (at < k && std::uint64_t(index_at(indices.data(), ib, at)) < lo_index) ++at;
  for (int i = 0; i < locals; ++i) {
    const std::size_t ii = std::size_t(i), lo = at;
    const std::uint64_t hi_index = lo_index + request.sizes[ii];
    while (at < k && std::uint64_t(index_at(indices.data(), ib, at)) < hi_index) ++at;
    kept[ii] = at - lo;
    lo_index = hi_index;
    errors.run(first + i, [&] {
      if (kept[ii] == 0) return;
      if (request.options.sorted) sort_best_first(request, values.data(), indices.data(), lo, at);
      if (!request.devices.empty()) {  // device_spans: into the GPU's memory
        backend->upload(i, values.data() + lo * vb, out.values[ii], kept[ii] * vb);
        backend->upload(i, indices.data() + lo * ib, out.indices[ii], kept[ii] * ib);
        backend->synchronize(i);
      } else {
        std::memcpy(out.values[ii], values.data() + lo * vb, kept[ii] * vb);
        std::memcpy(out.indices[ii], indices.data() + lo * ib, kept[ii] * ib);
      }
    });
  }
  errors.collective([&] { comm.barrier(); });
  return kept;
}

}  // namespace radixmesh::detail
