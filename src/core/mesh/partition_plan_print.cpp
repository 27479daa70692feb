// partition_text and partition_json (partition_plan.hpp).
#include <string>

#include "core/mesh/json_text.hpp"
#include "core/mesh/partition_plan.hpp"

namespace radixmesh::mesh {
namespace {

std::string list(const std::vector<int>& values, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? separator : "") + std::to_string(values[i]);
  return out;
}

std::string list(const std::vector<std::uint64_t>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::string bucket_range(const BucketGroup& g) {
  return g.first_bucket == g.last_bucket ? std::to_string(g.first_bucket)
                                         : std::to_string(g.first_bucket) + ".." + std::to_string(g.last_bucket);
}

}  // namespace

std::string partition_text(const PartitionPlan& plan) {
  std::string out = "partition plan: " + std::to_string(plan.devices) + " devices, " + std::to_string(plan.buckets) +
                    " buckets, " + std::to_string(plan.groups.size()) + " non-empty group(s), " +
                    std::to_string(plan.spanning.size()) + " spanning, exchange " +
                    (plan.needs_exchange() ? "needed" : "not needed") + "\n";
  out += "  cuts: " + list(plan.cuts) + "\n  received: " + list(plan.received) + "\n";
  for (const BucketGroup& g : plan.groups)
    out += "  bucket " + bucket_range(g) + " [" + std::to_string(g.begin) + ", " + std::to_string(g.end) + ") " +
           to_string(g.fate) + " -> device " + list(g.destinations, ",") + "\n";
  return out;
}

std::string partition_json(const PartitionPlan& plan) {
  std::string out = "{\"devices\":" + std::to_string(plan.devices) + ",\"buckets\":" + std::to_string(plan.buckets) +
                    ",\"needs_exchange\":" + (plan.needs_exchange() ? "true" : "false") + ",\"cuts\":[" +
                    list(plan.cuts) + "],\"received\":[" + list(plan.received) + "],\"send\":[" + list(plan.send) +
                    "],\"groups\":[";
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    const BucketGroup& g = plan.groups[i];
    out += (i ? "," : "") + std::string("{\"first_bucket\":") + std::to_string(g.first_bucket) +
           ",\"last_bucket\":" + std::to_string(g.last_bucket) + ",\"begin\":" + std::to_string(g.begin) +
           ",\"end\":" + std::to_string(g.end) + ",\"fate\":" + json_quote(to_string(g.fate)) +
           ",\"destinations\":[" + list(g.destinations, ",") + "]}";
  }
  return out + "]}";
}

}  // namespace radixmesh::mesh
