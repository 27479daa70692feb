#include <string>

#include "core/backends.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

SortPlan validate_sort(KeyType type, std::size_t n, std::size_t value_bytes, const SortOptions& options) {
  const int width = int(size_of(type) * 8);
  SortPlan plan{type, n, value_bytes, options.order, options.begin_bit,
                options.end_bit < 0 ? width : options.end_bit, options.host_plan};
  require(value_bytes == 0 || value_bytes == 4 || value_bytes == 8,
          "sort: values are " + std::to_string(value_bytes) + " bytes wide",
          "use 4- or 8-byte values (for wider payloads sort indices, then gather)");
  require(plan.begin_bit >= 0 && plan.begin_bit <= plan.end_bit && plan.end_bit <= width,
          "sort: bit range [" + std::to_string(plan.begin_bit) + ", " + std::to_string(plan.end_bit) +
              ") is not inside the " + std::to_string(width) + "-bit key",
          "use 0 <= begin_bit <= end_bit <= " + std::to_string(width));
  return plan;
}

void sort_host(Context& ctx, KeyType type, void* keys, std::size_t n, void* values, std::size_t value_bytes,
               const SortOptions& options) {
  // Several mesh devices of several processes: a collective call, which checks its arguments on
  // every rank together.
  if (ctx.mesh_size() > ctx.local_mesh_devices().count)
    return mesh_sort_host(ctx, type, keys, n, values, value_bytes, options);
  SortPlan plan = validate_sort(type, n, value_bytes, options);
  require(n == 0 || keys != nullptr, "sort: keys is null", "pass the keys' storage");
  require(value_bytes == 0 || n == 0 || values != nullptr, "sort: values is null", "pass the values' storage");
  if (takes_out_of_core(ctx, plan, options, keys, values)) {
    if (n > 1 && plan.begin_bit < plan.end_bit) sort_out_of_core(ctx, plan, keys, values, options);
    return;
  }
  if (ctx.mesh_size() > 1) return mesh_sort_host(ctx, type, keys, n, values, value_bytes, options);
  if (n <= 1 || plan.begin_bit == plan.end_bit) return;
  if (ctx.backend() == Backend::cuda)
    cuda_sort_host(ctx, plan, keys, values, options.phases);
  else
    cpu_sort(plan, keys, values, ctx.cpu_threads());
}

}  // namespace radixmesh::detail
