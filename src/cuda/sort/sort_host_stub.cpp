// Placeholder until the CUDA sort lands (issue 3): host input on a CUDA context sorts on the CPU.
#include "core/backends.hpp"

namespace radixmesh::detail {
void cuda_sort_host(Context& ctx, const SortPlan& plan, void* keys, void* values) {
  cpu_sort(plan, keys, values, ctx.cpu_threads());
}
}  // namespace radixmesh::detail
