// radixmesh/topk_shards.hpp — top-k over data spread across the devices of a mesh context (several
// GPUs, logical devices, a CPU mesh, or MPI ranks): one shard per local mesh device.
//
//   std::vector<rxm::device_span<const float>> shards = ...;       // one per local mesh device
//   auto r = rxm::topk(ctx, std::span(shards), 1024);             // the global top-1024
//   auto b = rxm::topk_batched(ctx, std::span(slices), 4096, 50);  // vocabulary-parallel rows
//
// topk: the shards, in mesh-device order (under Context::mpi, rank order; each rank passes its own
// shard), are one array; indices are positions in it (shard d starts after the values of shards
// 0..d-1). topk_batched: every device holds `rows` rows of its own columns (row-major, rows x
// columns_d values; column counts may differ between devices, as an uneven vocabulary split does),
// and row r of the whole batch is row r of every shard side by side; indices are global columns.
//
// The result is the bytes that topk / topk_batched of the concatenated data on one device gives:
// every option and rule of radixmesh/topk.hpp carries over (largest or smallest, sorted or in
// ascending index order, the NaN policy, the lowest global index winning ties). It is returned on
// the host of every process (topk, topk_batched), written where the caller says (topk_into,
// topk_batched_into: one GPU's memory, or host buffers), or left on the devices that hold the
// winners (topk_distributed). k may exceed some shards (even be empty ones); k > n (the total, or
// the total columns of a row) is an error. Every process passes the same type, k, rows and
// options, or every process gets the same error naming the disagreement.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "radixmesh/topk.hpp"

namespace radixmesh {

// How the top-k over shards is taken (docs/design/mesh-topk.md):
// - candidates: every device's local top-k, gathered, and a final top-k of the k x devices
//   candidates per row;
// - radix_select: Dr. Top-k's distributed radix select for one array (not topk_batched): one
//   digit of the rank per pass, each device counting its keys and one all_gather picking the
//   digit of the global k-th, then every device taking its own winners. No k x devices
//   candidates, so k can be as large as the data. GPU devices read their shards in device memory
//   (host shards are uploaded first).
// - automatic: the candidates (faster on CPU and GPU devices at every k measured), unless k x
//   devices candidates exceed 2^27 on one array.
enum class TopkShardPath { automatic, candidates, radix_select };

// Each step's host-clock time of one call, and the path taken, when the caller passes a TopkPhases.
struct TopkPhases {
  TopkShardPath path = TopkShardPath::automatic;  // the path taken
  double local_ms = 0;   // candidates: every device's local top-k; radix_select: the counting passes
  double gather_ms = 0;  // the all_gather of the candidates or of the winners
  double merge_ms = 0;   // candidates: the final top-k; radix_select: taking the winners (and sorting them)
  std::size_t candidates_per_row = 0;  // candidates: per row; radix_select: 0
  int select_passes = 0;               // radix_select: digit passes
};

struct TopkShardOptions {
  TopkShardPath path = TopkShardPath::automatic;
  TopkPhases* phases = nullptr;
};

namespace detail {
// One topk / topk_batched call over shards: one entry per local mesh device.
struct ShardTopkRequest {
  KeyType type = KeyType::f32;
  std::vector<const void*> values;
  std::vector<std::size_t> sizes;  // values per shard
  std::vector<int> devices;        // device_span's devices; empty for host shards
  std::size_t rows = 1;            // batched: rows per shard; else 1
  bool batched = false;
  std::size_t k = 0;
  TopkOptions options;
  std::size_t index_bytes = 8;
  void* out_values = nullptr;   // rows * k entries: host memory, or CUDA device out_device's
  void* out_indices = nullptr;  // rows * k entries of index_bytes, beside out_values
  int out_device = -1;          // the CUDA device holding the outputs; -1: host memory
  bool receives = true;         // false: this process passes no outputs (topk_into under MPI)
  TopkShardPath path = TopkShardPath::automatic;
  TopkPhases* phases = nullptr;
};
RXM_API void topk_shards(Context& ctx, const ShardTopkRequest& request);

// topk_distributed: the request (one array; outputs unused) and every local device's output shard.
struct ShardWinnersOut {
  std::vector<void*> values, indices;  // one per local mesh device, in the memory of its input shard
  std::vector<std::size_t> capacity;   // entries each holds
};
RXM_API std::vector<std::size_t> topk_shards_distributed(Context& ctx, const ShardTopkRequest& request,
                                                         const ShardWinnersOut& out);

template <class T, class Span> ShardTopkRequest shard_request(std::span<const Span> shards, std::size_t rows,
                                                              bool batched, std::size_t k, const TopkOptions& o,
                                                              std::size_t index_bytes, const TopkShardOptions& mesh) {
  ShardTopkRequest rq;
  rq.type = key_type_v<T>;
  for (const auto& s : shards) {
    rq.values.push_back(s.data());
    rq.sizes.push_back(s.size());
    if constexpr (requires { s.device(); }) rq.devices.push_back(s.device());
  }
  rq.rows = rows;
  rq.batched = batched;
  rq.k = k;
  rq.options = o;
  rq.index_bytes = index_bytes;
  rq.path = mesh.path;
  rq.phases = mesh.phases;
  return rq;
}

template <class T, class Index, class Span>
TopkResult<T, Index> run_topk_shards(Context& ctx, std::span<const Span> shards, std::size_t rows, bool batched,
                                     std::size_t k, const TopkOptions& o, const TopkShardOptions& mesh) {
  static_assert(std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>,
                "radixmesh::topk: indices are std::int32_t or std::int64_t");
  ShardTopkRequest rq = shard_request<T>(shards, rows, batched, k, o, sizeof(Index), mesh);
  TopkResult<T, Index> result;
  result.rows = rows;
  result.k = k;
  // Sized only for a k that fits the request's row count (the call checks k against n itself).
  if (k > 0 && rows > 0 && rows <= SIZE_MAX / k / (sizeof(T) + sizeof(Index))) {
    require_host_memory(rows * k * (sizeof(T) + sizeof(Index)),
                        "topk: the results (" + std::to_string(rows) + " rows x k = " + std::to_string(k) + ")");
    result.values.resize(rows * k);
    result.indices.resize(rows * k);
  }
  rq.out_values = result.values.data();
  rq.out_indices = result.indices.data();
  topk_shards(ctx, rq);
  return result;
}

// topk_into / topk_batched_into: outputs of rows * k entries, or none (empty spans) on a process
// that wants no copy.
template <class T, class Index, class Span, class OutValues, class OutIndices>
void run_topk_shards_into(Context& ctx, std::span<const Span> shards, std::size_t rows, bool batched, std::size_t k,
                          OutValues out_values, OutIndices out_indices, const TopkOptions& o,
                          const TopkShardOptions& mesh) {
  static_assert(std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>,
                "radixmesh::topk_into: indices are std::int32_t or std::int64_t");
  ShardTopkRequest rq = shard_request<T>(shards, rows, batched, k, o, sizeof(Index), mesh);
  rq.receives = !out_values.empty() || !out_indices.empty();
  if (rq.receives) {
    require(out_values.size() == rows * k && out_indices.size() == rows * k,
            "topk_into: the outputs hold " + std::to_string(out_values.size()) + " values and " +
                std::to_string(out_indices.size()) + " indices, not rows x k = " + std::to_string(rows * k),
            "pass outputs of rows * k entries each (or empty ones on a process that wants no copy)");
    if constexpr (requires { out_values.device(); }) {
      require(out_values.device() == out_indices.device(),
              "topk_into: the values go to device " + std::to_string(out_values.device()) + " and the indices to " +
                  std::to_string(out_indices.device()),
              "put both outputs on one GPU");
      rq.out_device = out_values.device();
    }
    rq.out_values = out_values.data();
    rq.out_indices = out_indices.data();
  }
  topk_shards(ctx, rq);
}

template <class T, class Index, class Span, class OutSpan, class IndexSpan>
std::vector<std::size_t> run_topk_distributed(Context& ctx, std::span<const Span> shards, std::size_t k,
                                              std::span<const OutSpan> out_values,
                                              std::span<const IndexSpan> out_indices, const TopkOptions& o,
                                              const TopkShardOptions& mesh) {
  static_assert(std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>,
                "radixmesh::topk_distributed: indices are std::int32_t or std::int64_t");
  ShardTopkRequest rq = shard_request<T>(shards, 1, false, k, o, sizeof(Index), mesh);
  require(out_values.size() == shards.size() && out_indices.size() == shards.size(),
          "topk_distributed: " + std::to_string(shards.size()) + " input shards but " +
              std::to_string(out_values.size()) + " value and " + std::to_string(out_indices.size()) + " index outputs",
          "pass one output shard per input shard");
  ShardWinnersOut out;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    out.values.push_back(out_values[i].data());
    out.indices.push_back(out_indices[i].data());
    out.capacity.push_back(std::min(out_values[i].size(), out_indices[i].size()));
  }
  return topk_shards_distributed(ctx, rq, out);
}
}  // namespace detail

// The global top-k of device-resident shards (GPU mesh devices) ...
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk(Context& ctx, std::span<const device_span<const T>> shards, std::size_t k,
                          const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  return detail::run_topk_shards<T, Index>(ctx, shards, 1, false, k, o, mesh);
}
// ... and of host shards (CPU mesh devices, or host memory for GPU mesh devices).
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk(Context& ctx, std::span<const std::span<const T>> shards, std::size_t k,
                          const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  return detail::run_topk_shards<T, Index>(ctx, shards, 1, false, k, o, mesh);
}

// Per-row top-k of rows split by columns across the mesh devices (vocabulary-parallel logits).
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk_batched(Context& ctx, std::span<const device_span<const T>> column_shards, std::size_t rows,
                                  std::size_t k, const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  return detail::run_topk_shards<T, Index>(ctx, column_shards, rows, true, k, o, mesh);
}
template <class T, class Index = std::int64_t>
TopkResult<T, Index> topk_batched(Context& ctx, std::span<const std::span<const T>> column_shards, std::size_t rows,
                                  std::size_t k, const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  return detail::run_topk_shards<T, Index>(ctx, column_shards, rows, true, k, o, mesh);
}

// The global top-k (or each row's) written into out_values and out_indices (rows * k entries
// each): device_spans on one GPU of this process (the final step runs there; on logical devices,
// on the first mesh device of that GPU), or host spans. Every process calls it; under
// Context::mpi a process that wants no copy passes empty outputs.
template <class T, class Index = std::int64_t>
void topk_into(Context& ctx, std::span<const device_span<const T>> shards, std::size_t k, device_span<T> out_values,
               device_span<Index> out_indices, const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  detail::run_topk_shards_into<T, Index>(ctx, shards, 1, false, k, out_values, out_indices, o, mesh);
}
template <class T, class Index = std::int64_t>
void topk_into(Context& ctx, std::span<const std::span<const T>> shards, std::size_t k, std::span<T> out_values,
               std::span<Index> out_indices, const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  detail::run_topk_shards_into<T, Index>(ctx, shards, 1, false, k, out_values, out_indices, o, mesh);
}
template <class T, class Index = std::int64_t>
void topk_batched_into(Context& ctx, std::span<const device_span<const T>> column_shards, std::size_t rows,
                       std::size_t k, device_span<T> out_values, device_span<Index> out_indices,
                       const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  detail::run_topk_shards_into<T, Index>(ctx, column_shards, rows, true, k, out_values, out_indices, o, mesh);
}
template <class T, class Index = std::int64_t>
void topk_batched_into(Context& ctx, std::span<const std::span<const T>> column_shards, std::size_t rows,
                       std::size_t k, std::span<T> out_values, std::span<Index> out_indices,
                       const TopkOptions& o = {}, const TopkShardOptions& mesh = {}) {
  detail::run_topk_shards_into<T, Index>(ctx, column_shards, rows, true, k, out_values, out_indices, o, mesh);
}

// The global top-k of one array left where it lies: every local mesh device i keeps its own
// winners in out_values[i] and out_indices[i] (the kind of memory of its input shard: a
// device_span on its GPU, or a host span; each holding at least min(k, shard i's size) entries),
// with their global indices, best first when o.sorted (ties by index), else in ascending index.
// Returns how many winners each local device kept; over every device of every process they add
// up to k.
template <class T, class Index = std::int64_t>
std::vector<std::size_t> topk_distributed(Context& ctx, std::span<const device_span<const T>> shards, std::size_t k,
                                          std::span<const device_span<T>> out_values,
                                          std::span<const device_span<Index>> out_indices, const TopkOptions& o = {},
                                          const TopkShardOptions& mesh = {}) {
  return detail::run_topk_distributed<T, Index>(ctx, shards, k, out_values, out_indices, o, mesh);
}
template <class T, class Index = std::int64_t>
std::vector<std::size_t> topk_distributed(Context& ctx, std::span<const std::span<const T>> shards, std::size_t k,
                                          std::span<const std::span<T>> out_values,
                                          std::span<const std::span<Index>> out_indices, const TopkOptions& o = {},
                                          const TopkShardOptions& mesh = {}) {
  return detail::run_topk_distributed<T, Index>(ctx, shards, k, out_values, out_indices, o, mesh);
}

}  // namespace radixmesh
