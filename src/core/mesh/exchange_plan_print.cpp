// plan_text and plan_json (exchange_plan.hpp).
#include <cstdio>
#include <string>

#include "core/byte_size.hpp"
#include "core/mesh/exchange_plan.hpp"
#include "core/mesh/json_text.hpp"

namespace radixmesh::mesh {
namespace {

std::string path_text(const Route& route, const LinkGraph& graph) {
  std::string out;
  for (std::size_t i = 0; i < route.vertices.size(); ++i)
    out += (i ? " > " : "") + graph.vertices()[route.vertices[i]].name;
  return out;
}

std::string int_list(const std::vector<int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

std::string plan_text(const ExchangePlan& plan, const LinkGraph& graph) {
  std::string out = "exchange plan: " + std::to_string(plan.participants) + " participants, " +
                    std::to_string(plan.steps.size()) + " steps, modelled " + format_seconds(plan.modelled_seconds) +
                    " (link floor " + format_seconds(plan.floor_seconds) + "), " + std::to_string(plan.max_flow_runs) +
                    " max-flow runs\n";
  for (const PairPlan& pair : plan.pairs) {
    if (pair.bytes == 0) continue;
    out += "pair " + std::to_string(pair.source) + " -> " + std::to_string(pair.destination) + ": " +
           detail::format_bytes(pair.bytes);
    if (pair.max_flow > 0) out += ", max-flow " + format_rate(double(pair.max_flow));
    out += "\n";
    for (const RouteShare& s : pair.shares)
      out += "  " + to_string(s.route.kind) + "  " + path_text(s.route, graph) + "  " + detail::format_bytes(s.bytes) +
             " in " + std::to_string(s.chunks) + " chunk(s) of " + detail::format_bytes(s.chunk_bytes) + "\n";
  }
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& step = plan.steps[k];
    out += "step " + std::to_string(k) + ": " + std::to_string(step.transfers.size()) + " transfer(s), " +
           format_seconds(step.seconds) + " (links " + format_seconds(step.link_seconds) + ")\n";
    for (const Transfer& t : step.transfers) {
      out += "  " + std::to_string(t.source) + " -> " + std::to_string(t.destination) + " route " +
             std::to_string(t.share) + "  " + detail::format_bytes(t.bytes);
      out += t.bytes_per_s > 0 ? " at " + format_rate(t.bytes_per_s) + "\n" : " (local)\n";
    }
  }
  return out;
}

std::string plan_json(const ExchangePlan& plan) {
  std::string out = "{\"participants\":" + std::to_string(plan.participants) +
                    ",\"modelled_seconds\":" + json_number(plan.modelled_seconds) +
                    ",\"floor_seconds\":" + json_number(plan.floor_seconds) +
                    ",\"max_flow_runs\":" + std::to_string(plan.max_flow_runs) + ",\"pairs\":[";
  bool first = true;
  for (const PairPlan& pair : plan.pairs) {
    if (pair.bytes == 0) continue;
    out += first ? "" : ",";
    first = false;
    out += "{\"source\":" + std::to_string(pair.source) + ",\"destination\":" + std::to_string(pair.destination) +
           ",\"bytes\":" + std::to_string(pair.bytes) + ",\"max_flow\":" + std::to_string(pair.max_flow) + ",\"routes\":[";
    for (std::size_t s = 0; s < pair.shares.size(); ++s) {
      const RouteShare& share = pair.shares[s];
      out += (s ? "," : "") + std::string("{\"kind\":") + json_quote(to_string(share.route.kind)) +
             ",\"vertices\":" + int_list(share.route.vertices) + ",\"edges\":" + int_list(share.route.edges) +
             ",\"via\":" + int_list(share.route.via) + ",\"rate\":" + std::to_string(share.route.rate) +
             ",\"bytes\":" + std::to_string(share.bytes) + ",\"chunk_bytes\":" + std::to_string(share.chunk_bytes) +
             ",\"chunks\":" + std::to_string(share.chunks) + "}";
    }
    out += "]}";
  }
  out += "],\"steps\":[";
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& step = plan.steps[k];
    out += (k ? "," : "") + std::string("{\"seconds\":") + json_number(step.seconds) +
           ",\"link_seconds\":" + json_number(step.link_seconds) + ",\"transfers\":[";
    for (std::size_t t = 0; t < step.transfers.size(); ++t) {
      const Transfer& x = step.transfers[t];
      out += (t ? "," : "") + std::string("{\"source\":") + std::to_string(x.source) +
             ",\"destination\":" + std::to_string(x.destination) + ",\"route\":" + std::to_string(x.share) +
             ",\"bytes\":" + std::to_string(x.bytes) + ",\"bytes_per_s\":" + json_number(x.bytes_per_s) + "}";
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace radixmesh::mesh
