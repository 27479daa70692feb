// The link report of a context: the CUDA backend's graph of its GPUs, or the CPU mesh's plain
// statement that its devices share host memory.
#include "core/backends.hpp"
#include "radixmesh/links.hpp"

namespace radixmesh {

LinkReport link_report(const Context& ctx, bool measure) {
  if (ctx.backend() == Backend::cuda) return detail::cuda_link_report(ctx, measure);
  LinkReport r;
  r.source = "CPU devices";
  r.text = "CPU backend: " + std::to_string(ctx.mesh_size()) +
           " mesh device(s); devices of this process exchange through host memory\n";
  r.json = "{\"source\":\"CPU devices\",\"participants\":" + std::to_string(ctx.mesh_size()) + "}";
  return r;
}

}  // namespace radixmesh
