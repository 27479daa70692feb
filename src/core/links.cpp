// The link report of a context: the CUDA backend's graph of its GPUs, or the CPU mesh's plain
// statement that its devices share host memory.
#include "core/backends.hpp"
#include "radixmesh/error.hpp"
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

LinkReport explain_exchange(const Context& ctx, const std::vector<std::uint64_t>& send_bytes) {
  const std::size_t p = std::size_t(ctx.mesh_size());
  require(send_bytes.size() == p * p,
          "explain_exchange: " + std::to_string(send_bytes.size()) + " send sizes for a mesh of " + std::to_string(p),
          "pass mesh_size() x mesh_size() byte counts, row-major (row: sender)");
  if (ctx.backend() == Backend::cuda) return detail::cuda_exchange_report(ctx, send_bytes);
  LinkReport r;
  r.source = "CPU devices";
  r.text = "CPU devices of one process: every pair is a host memory copy\n";
  r.json = "{\"source\":\"CPU devices\"}";
  return r;
}

}  // namespace radixmesh
