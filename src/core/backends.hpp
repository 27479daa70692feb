// The entry points each backend provides to the type-erased dispatch in src/core.
// Keys arrive in their original type; each backend encodes (keys.hpp) as it reads them.
#pragma once
#include <cstddef>

#include "radixmesh/context.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/links.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::detail {

// SortOptions after validation: end_bit resolved, bits within the key width.
struct SortPlan {
  KeyType type;
  std::size_t n;
  std::size_t value_bytes;  // 0, 4 or 8
  Order order;
  int begin_bit;
  int end_bit;
  HostStagingPlan host_plan = HostStagingPlan::automatic;
};
RXM_API SortPlan validate_sort(KeyType type, std::size_t n, std::size_t value_bytes, const SortOptions& options);

// One sorted run of keys (and values, SortPlan::value_bytes each, or none) in a device's memory:
// the mesh sort's merge strategy cuts and merges them (mesh/device_backend.hpp).
struct SortedRun {
  const void* keys = nullptr;
  const void* values = nullptr;
  std::uint64_t n = 0;
};

// The choices that set the CPU sort apart from its previous version, so that a benchmark can time
// both in one run (bench_sort --previous): how many buckets a split of a range that already sits
// in cache makes (2^in_cache_digit_bits; src/cpu/radix_sort.cpp). The previous version split such
// ranges like any other, into up to 2^11 (docs/design/sort.md has both measured).
struct CpuSortVariant {
  int in_cache_digit_bits = 9;
  static CpuSortVariant previous() { return {11}; }
};

// src/cpu: host threads.
void cpu_sort(const SortPlan& plan, void* keys, void* values, unsigned threads);
// The same with a given version's choices; exported for the benchmark, as validate_sort is.
RXM_API void cpu_sort_variant(const SortPlan& plan, void* keys, void* values, unsigned threads,
                              const CpuSortVariant& variant);
// src/cuda: host-resident input staged through the context's first device; `phases`, when set, gets
// each step's time (upload, the split pass, the sorts, the download left after them).
void cuda_sort_host(Context& ctx, const SortPlan& plan, void* keys, void* values, SortPhases* phases = nullptr);
// src/cuda: `rows` host-resident rows of row_plan.n keys (and values), each sorted on its own by one
// segmented sort on the context's first GPU; false (nothing done) where that path does not take them.
bool cuda_sort_rows_host(Context& ctx, const SortPlan& row_plan, void* keys, std::size_t rows, void* values);
// src/cuda: sort_rows_device (radixmesh/sort.hpp), validated; row_plan.n is the row length.
void cuda_sort_rows_device(Context& ctx, const SortPlan& row_plan, const DeviceRowsSort& s, const SortOptions& options);
// src/mesh: host-resident input on a context of several mesh devices (sort_shards over even slices,
// or this rank's shard of an MPI context); checks its arguments on every rank together.
void mesh_sort_host(Context& ctx, KeyType type, void* keys, std::size_t n, void* values, std::size_t value_bytes,
                    const SortOptions& options);
// src/mesh/sort_out_of_core.cpp: whether host-resident `plan` (at keys, values) goes out of core on
// ctx's local mesh devices (it does not fit the in-memory sort's buffers within each device's
// budget: SortOptions::device_memory_limit, or what the device has free, shared between logical
// devices of one GPU; single-process contexts only; or one GPU takes large pinned input resident),
// and the sort itself (stable, in place, with at most one extra host array of the same size,
// refused up front when the host cannot hold it).
bool takes_out_of_core(Context& ctx, const SortPlan& plan, const SortOptions& options, const void* keys,
                       const void* values);
void sort_out_of_core(Context& ctx, const SortPlan& plan, void* keys, void* values, const SortOptions& options);
// The same with the second host array given (tmp_values: null without values); options.phases is
// added to, not reset.
void sort_out_of_core_with(Context& ctx, const SortPlan& plan, void* keys, void* values, void* tmp_keys,
                           void* tmp_values, const SortOptions& options);
// What one rank of a multi-process context asks of an in-place sort of its host shard (plan.n keys
// here): out of core when its GPU cannot hold the mesh sort's buffers within its budget or
// OutOfCoreMode::always says so, never under OutOfCoreMode::never. The ranks go out of core
// together when one asks it and none says never (sort_shards, through the agreement's words).
enum class OutOfCoreWish : std::uint64_t { in_memory = 0, out_of_core = 1, never = 2 };
OutOfCoreWish rank_out_of_core_wish(Context& ctx, const SortPlan& plan, const SortOptions& options);
// require_host_memory within a caller's cap as well (SortOptions::host_memory_limit; 0: none).
void require_host_memory_within(std::size_t bytes, std::size_t limit, const std::string& what);

// Multisplit (validated by multisplit_host in src/core/multisplit_dispatch.cpp).
// src/cpu: host threads.
BadBucket cpu_multisplit(const MultisplitArgs& args, BucketSource source, unsigned threads);
// src/cuda/multisplit: built-in bucket functions, host- or device-resident keys.
BadBucket cuda_multisplit(Context& ctx, const MultisplitArgs& args, const BucketSpec& spec);

// The link graph of a CUDA context's devices (src/cuda/mesh/machine_links.cpp).
LinkReport cuda_link_report(const Context& ctx, bool measure);
// The exchange plan of send_bytes (row-major P x P) over the context's link graph.
LinkReport cuda_exchange_report(const Context& ctx, const std::vector<std::uint64_t>& send_bytes);

}  // namespace radixmesh::detail
