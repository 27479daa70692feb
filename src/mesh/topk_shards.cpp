// Top-k over shards on several mesh devices (radixmesh/topk_shards.hpp), written once over the
// Communicator and the DeviceBackend. The candidate path (Dr. Top-k's merge of local winners):
//   1. one all_gather agrees on type, index width, k, rows and options, and shares every shard's
//      column count, so every process knows each shard's global offset and checks k the same way;
//   2. every device takes its local top-min(k, columns) of each row (the single-device top-k, in
//      ascending index order), and shifts the indices by its shard's offset;
//   3. one all_gather of the candidates (k slots per row and device) between processes; within
//      one process the candidates stay in device memory and are copied row by row to the first
//      device (mesh::topk_candidates_in_process);
//   4. every process takes the final top-k of each row's candidates (on its first GPU, or on the
//      host for CPU devices), with the global indices as input indices. Candidates sit in device
//      order, each device's in ascending index, so position order is global index order: the final
//      top-k breaks ties and orders unsorted output exactly as the single-device top-k of the
//      concatenated data does.
// The union of local top-k's holds the global top-k under that order (a value beaten by k others
// on its own device is beaten by k others overall), so the result is byte-identical.
// The radix-select path (topk_select.cpp) replaces steps 2-4 for one array when chosen
// (TopkShardPath, choose_path below).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mesh/shard_count.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"
#include "mesh/topk_select.hpp"
#include "mesh/topk_steps.hpp"
#include "radixmesh/communicator.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::detail {
namespace {

std::string str(std::size_t x) { return std::to_string(x); }

// What every mesh device declares before the top-k (all_gather): the fields that must agree, then
// the device's own column count.
struct Declaration {
  std::uint64_t type, index_bytes, largest, sorted, include_nan, k, rows, batched, columns;
};
constexpr int agreed_fields = 8;
constexpr const char* field_names[agreed_fields] = {"value type", "index width", "largest", "sorted",
                                                   "include_nan", "k", "rows", "call (topk or topk_batched)"};

std::string field_text(const Declaration& d, int f) {
  const std::uint64_t* v = &d.type;
  switch (f) {
    case 0: return std::string(name_of(KeyType(d.type)));
    case 1: return str(d.index_bytes * 8) + "-bit";
    case 7: return d.batched ? "topk_batched" : "topk";
    default: return f >= 2 && f <= 4 ? (v[f] ? "true" : "false") : str(v[f]);
  }
}

void check_agreement(std::span<const Declaration> all) {
  for (std::size_t p = 1; p < all.size(); ++p)
    for (int f = 0; f < agreed_fields; ++f) {
      if ((&all[p].type)[f] == (&all[0].type)[f]) continue;
      throw Error(ErrorCode::invalid_argument,
                  "topk: mesh devices disagree on the " + std::string(field_names[f]) + ": mesh device 0 has " +
                      field_text(all[0], f) + ", mesh device " + str(p) + " has " + field_text(all[p], f) +
                      ". fix: call topk with the same type, k, rows and options on every rank");
    }
}

// Local device i's shard, checked before the first collective (a bad shard fails on every process).
void validate_shard(const ShardTopkRequest& rq, std::size_t i, int participant, const comm::Location& where) {
  const std::string who = "mesh device " + std::to_string(participant);
  require(rq.sizes[i] == 0 || rq.values[i] != nullptr, "topk: the values of " + who + " are null",
          "pass the shard's storage");
  if (!rq.devices.empty()) {
    require(where.cuda_device >= 0, "topk: a device_span shard on CPU " + who,
            "pass host spans (std::span) on CPU mesh devices");
    require(rq.devices[i] == where.cuda_device,
            "topk: the shard of " + who + " is on device " + std::to_string(rq.devices[i]) + ", but " + who +
                " is GPU " + std::to_string(where.cuda_device),
            "pass shard i on the device of mesh device first + i (Context::local_mesh_devices())");
    require(rq.sizes[i] == 0 || is_device_pointer(rq.values[i]),
            "topk: the shard of " + who + " is a device_span over host memory",
            "pass device memory in device_spans (host memory in std::span)");
  }
  if (rq.batched)
    require(rq.rows > 0 && rq.sizes[i] % rq.rows == 0,
            "topk_batched: " + who + " holds " + str(rq.sizes[i]) + " values, not a whole number of " +
                str(rq.rows) + " rows",
            "pass rows x columns values on every device (row-major, the device's columns of every row)");
}

void validate_call(const ShardTopkRequest& rq, int locals) {
  mesh::require_shard_per_device("topk", "", rq.values.size(), locals);
  require(rq.index_bytes == 4 || rq.index_bytes == 8, "topk: indices are " + str(rq.index_bytes) + " bytes wide",
          "use std::int32_t or std::int64_t indices");
  require(size_of(rq.type) >= 2, "topk: key type " + std::string(name_of(rq.type)) + " is not supported",
          "use a 16-, 32- or 64-bit type (f16, bf16, f32, f64, i16, u16, i32, u32, i64, u64)");
  require(rq.k > 0, "topk: k = 0", "ask for 1 <= k <= n");
  require(rq.rows > 0, "topk_batched: the batch has no rows", "pass at least one row");
  require(!rq.receives || (rq.out_values != nullptr && rq.out_indices != nullptr), "topk: output storage is null",
          "pass output storage of rows * k entries");
}

// The local mesh device that takes the result into GPU `device`'s memory (the first of them, for
// logical devices of one GPU).
int local_of_device(const mesh::DeviceBackend& backend, int locals, int device) {
  for (int i = 0; i < locals; ++i)
    if (backend.location(i).cuda_device == device) return i;
  throw Error(ErrorCode::invalid_argument,
              "topk_into: the outputs are on GPU " + std::to_string(device) +
                  ", which is not a mesh device of this process. fix: pass outputs on one of the context's GPUs, or "
                  "host spans");
}

// k against the gathered column counts: the same verdict on every process.
void check_k(const ShardTopkRequest& rq, std::uint64_t columns, int devices) {
  const std::string where = " (the values of all " + std::to_string(devices) + " mesh devices" +
                            (rq.batched ? ", per row)" : ")");
  require(columns > 0, "topk: the input is empty" + where, "pass at least one value (top-k of nothing is undefined)");
  require(rq.k <= columns, "topk: k = " + str(rq.k) + " is larger than n = " + str(columns) + where,
          "ask for k <= n");
  require(rq.index_bytes == 8 || columns - 1 <= std::uint64_t(INT32_MAX),
          "topk: n = " + str(columns) + where + " does not fit 32-bit indices", "use std::int64_t indices");
}

// The path of this call: as asked, or by the rule of TopkShardPath::automatic.
TopkShardPath choose_path(const ShardTopkRequest& rq, const mesh::DeviceBackend& backend, int devices) {
  const bool select_runs = !rq.batched && rq.rows == 1 && backend.has_topk_select();
  if (rq.path == TopkShardPath::radix_select)
    require(select_runs,
            rq.batched ? std::string("topk_batched: the radix-select path takes one array, not rows")
                       : std::string("topk: the radix-select path is not built for these mesh devices"),
            "use TopkShardPath::automatic or candidates");
  if (rq.path != TopkShardPath::automatic) return rq.path;
  // By measurement the candidates are faster on CPU devices at every k tried (docs/design/mesh-topk.md);
  // the radix select is taken where the k x devices candidates would be too many to hold (2^27).
  return select_runs && rq.k * std::uint64_t(devices) > (std::uint64_t(1) << 27) ? TopkShardPath::radix_select
                                                                   : TopkShardPath::candidates;
}

// Steps 2-4 of the chosen path, the agreement done.
void topk_along(Context& ctx, comm::Communicator& comm, mesh::DeviceBackend& backend, mesh::LocalErrors& errors,
                const ShardTopkRequest& rq, TopkShardPath path, std::span<const Declaration> all,
                std::span<const std::uint64_t> offset, std::span<const std::uint64_t> take) {
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  const std::size_t rows = rq.rows, k = rq.k, value_bytes = size_of(rq.type);
  if (path == TopkShardPath::radix_select)
    return mesh::topk_by_radix_select(ctx, comm, backend, errors, {rq, offset});

  mesh::TopkStepClock clock(rq.phases);
  std::uint64_t per_row = 0;
  for (std::uint64_t t : take) per_row += t;
  if (rq.phases) {
    rq.phases->candidates_per_row = per_row;
    rq.phases->path = TopkShardPath::candidates;
  }
  std::vector<std::uint64_t> columns;
  for (const Declaration& d : all) columns.push_back(d.columns);
  if (locals == size)  // every mesh device in this process: the candidates stay in device memory
    return mesh::topk_candidates_in_process(backend, errors, rq, columns, offset, take, clock);

  // 2. Local candidates: rows x take[d] values and indices at the front of each device's k slots
  //    per row (the all_gather needs one size from every device).
  const mesh::EntrySlot slot(rows * k, value_bytes);
  std::vector<std::vector<std::byte>> contribution(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      require_host_memory(slot.bytes, "topk: the candidates of one mesh device");
      contribution[std::size_t(i)].assign(slot.bytes, std::byte{0});
    });
  mesh::on_every_local(backend, errors, first, locals, [&](int i) {
    const std::size_t ii = std::size_t(i), d = std::size_t(first + i);
    if (take[d] == 0) return;
    std::byte* out = contribution[ii].data();
    detail::TopkRequest local = mesh::local_candidates(rq, ii, columns[d], take[d], offset[d], out, slot.indices(out));
    local.index_bytes = 8;  // the slot's indices
    backend.topk_local(i, local);
  });
  clock.mark(&TopkPhases::local_ms);

  // 3. Every device's candidates, on every process.
  const mesh::GatheredSlots gathered(comm, errors, contribution, slot.bytes, "candidates");
  clock.mark(&TopkPhases::gather_ms);

  // 4. The final top-k of each row's candidates (device order, then ascending index).
  std::vector<std::byte> candidates(rows * per_row * value_bytes);
  std::vector<std::int64_t> indices(rows * per_row);
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t at = r * per_row;
    for (std::size_t d = 0; d < std::size_t(size); ++d) {
      const std::byte* from = gathered[d];
      std::memcpy(candidates.data() + at * value_bytes, from + r * take[d] * value_bytes, take[d] * value_bytes);
      std::memcpy(indices.data() + at, slot.indices(from) + r * take[d], take[d] * 8);
      at += take[d];
    }
  }
  if (rq.receives) mesh::topk_of_entries(ctx, backend, rq, rows, per_row, candidates.data(), indices.data());
  clock.mark(&TopkPhases::merge_ms);
}

}  // namespace

void topk_shards(Context& ctx, const ShardTopkRequest& rq) {
  comm::Communicator& comm = communicator(ctx);
  const int size = comm.size(), first = comm.first_local(), locals = comm.local_count();
  validate_call(rq, locals);
  auto backend = mesh::device_backend_for(ctx);
  mesh::LocalErrors errors(comm);
  const std::size_t rows = rq.rows, k = rq.k, value_bytes = size_of(rq.type);

  // The local device that takes a device-resident result (checked on every process's behalf).
  int out_local = 0;
  errors.run(first, [&] {
    if (rq.receives && rq.out_device >= 0) out_local = local_of_device(*backend, locals, rq.out_device);
  });

  // 1. Agreement and column counts.
  std::vector<Declaration> mine(static_cast<std::size_t>(locals));
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      const std::size_t ii = std::size_t(i);
      validate_shard(rq, ii, first + i, backend->location(i));
      mine[ii] = {std::uint64_t(rq.type), rq.index_bytes, rq.options.largest, rq.options.sorted,
                  rq.options.include_nan, k, rows, rq.batched, rq.sizes[ii] / rows};
    });
  std::vector<std::span<const std::byte>> declared;
  for (const Declaration& d : mine) declared.push_back(std::as_bytes(std::span(&d, 1)));
  std::vector<Declaration> all(static_cast<std::size_t>(size));
  errors.collective([&] { comm.all_gather(declared, std::as_writable_bytes(std::span(all))); });
  check_agreement(all);
  std::vector<std::uint64_t> offset(static_cast<std::size_t>(size) + 1, 0), take(static_cast<std::size_t>(size));
  for (std::size_t d = 0; d < all.size(); ++d) {
    offset[d + 1] = offset[d] + all[d].columns;
    take[d] = std::min<std::uint64_t>(k, all[d].columns);
  }
  check_k(rq, offset.back(), size);
  const TopkShardPath path = choose_path(rq, *backend, size);
  // The radix select's kernels read device memory: host shards on GPU devices go up first (the
  // candidate path's local top-k uploads them itself).
  ShardTopkRequest uploaded_request;
  std::vector<std::shared_ptr<std::byte>> uploaded(static_cast<std::size_t>(locals));
  if (path == TopkShardPath::radix_select && rq.devices.empty() && backend->location(0).cuda_device >= 0) {
    uploaded_request = rq;
    for (int i = 0; i < locals; ++i) {
      const std::size_t ii = std::size_t(i);
      uploaded_request.devices.push_back(backend->location(i).cuda_device);
      errors.run(first + i, [&] {
        uploaded[ii] = backend->allocate(i, rq.sizes[ii] * value_bytes, "topk: a host shard uploaded");
        backend->upload(i, rq.values[ii], uploaded[ii].get(), rq.sizes[ii] * value_bytes);
        uploaded_request.values[ii] = uploaded[ii].get();
      });
    }
  }
  const ShardTopkRequest& req = uploaded_request.devices.empty() ? rq : uploaded_request;
  // Within one process the candidate path writes a device-resident result where it goes; the
  // other paths end on the host, and such a result is uploaded from there.
  if (rq.receives && rq.out_device >= 0 && (path == TopkShardPath::radix_select || locals != size)) {
    const std::size_t places = rows * k;
    std::vector<std::byte> values(places * value_bytes), indices(places * rq.index_bytes);
    ShardTopkRequest on_host = req;
    on_host.out_device = -1;
    on_host.out_values = values.data();
    on_host.out_indices = indices.data();
    topk_along(ctx, comm, *backend, errors, on_host, path, all, offset, take);
    errors.run(first + out_local, [&] {
      backend->upload(out_local, values.data(), rq.out_values, values.size());
      backend->upload(out_local, indices.data(), rq.out_indices, indices.size());
      backend->synchronize(out_local);
    });
    errors.collective([&] { comm.barrier(); });
    return;
  }
  topk_along(ctx, comm, *backend, errors, req, path, all, offset, take);
}

}  // namespace radixmesh::detail
