// radixmesh/links.hpp — the link graph of a context's devices (MGI's GIG): which devices are
// joined by which links (NVLink, PCIe, a GPU's own memory between logical devices, host memory),
// their per-direction capacities, and the bandwidth between every pair of mesh devices (max-flow
// over the graph). What `radixmesh info --links [--measure] [--json]` prints, and what the
// exchange planner routes over.
#pragma once
#include "radixmesh/export.hpp"
#include <cstdint>
#include <string>
#include <vector>

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

// How an exchange of send_bytes (row-major mesh_size() x mesh_size(): bytes from device i to
// device j) would be routed over the context's link graph: per pair its routes (direct, relayed
// through another GPU, or staged through host memory where peer access is missing) with their
// shares, the schedule of shifted rounds, the modelled time and its floor (the exchange planner,
// MGI §4.3). The link rates are those link_report gives (measured where cached). On CPU devices
// every pair is a host copy.
RXM_API LinkReport explain_exchange(const Context& ctx, const std::vector<std::uint64_t>& send_bytes);

}  // namespace radixmesh
