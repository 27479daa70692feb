// radixmesh/links.hpp — the link graph of a context's devices (MGI's GIG): which devices are
// joined by which links (NVLink, PCIe, a GPU's own memory between logical devices, host memory),
// their per-direction capacities, and the bandwidth between every pair of mesh devices (max-flow
// over the graph). What `radixmesh info --links [--measure] [--json]` prints, and what the
// exchange planner routes over.
#pragma once
#include "radixmesh/export.hpp"
#include <string>

#include "radixmesh/context.hpp"

namespace radixmesh {

struct LinkReport {
  std::string source;  // where the capacities come from: nominal, measured now, or a cache file
  std::string text;    // the vertices, edges and bandwidth matrix, for people
  std::string json;    // the same as one JSON object
  std::string notes;   // what could not be read (e.g. NVML missing), empty when nothing
};

// measure: time device and peer copies now (a few hundred milliseconds per GPU pair) and keep the
// rates in a cache file keyed by the GPUs' UUIDs and the driver ($RXM_LINKS_CACHE, else
// $XDG_CACHE_HOME/radixmesh or ~/.cache/radixmesh); otherwise a cache from an earlier
// measurement is used where there is one, else nominal figures from the link types.
RXM_API LinkReport link_report(const Context& ctx, bool measure = false);

}  // namespace radixmesh
