// The benchmark harness: warm-up, repetitions, median and min; our figure beside the peers'
// from the same run as a ratio; the floor (bytes that must move / measured bandwidth); results
// appended as JSON lines under bench/results/. Nobody types a figure into a result file.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace radixmesh::bench {

struct Stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};
Stats summarize(std::vector<double> times_ms);

// Times `run` on the host clock; `setup` runs before each repetition, untimed (e.g. restore the
// unsorted input). Warm-up repetitions are not recorded.
Stats time_host(const std::function<void()>& setup, const std::function<void()>& run, int warmup, int reps);

struct Entry {
  std::string implementation;  // "radixmesh-cpu", "std::sort", "cub::DeviceRadixSort", ...
  bool ours = false;
  bool diagnostic = false;     // a variant or stage of ours, shown for insight: neither ours nor a peer
  Stats stats;
};

// One benchmark case (fixed inputs) with every implementation measured on it.
class Case {
 public:
  Case(std::string benchmark, nlohmann::json parameters, double items, std::string item_unit = "keys");
  void add(const std::string& implementation, const Stats& stats, bool ours = false);
  // A diagnostic line (one stage alone, a rejected variant): printed and recorded, never the
  // "best peer" a ratio is taken against.
  void add_diagnostic(const std::string& implementation, const Stats& stats);
  // The floor: `bytes` that must move over `bandwidth_bytes_per_s` (measured, said how in `basis`).
  void set_floor(double bytes, double bandwidth_bytes_per_s, const std::string& basis);
  // ours / best peer as a speed ratio (>1: we are faster); 0 when either is missing.
  double speedup_over_best_peer() const;
  std::string best_peer() const;
  void print(std::FILE* out = stdout) const;  // a small table: impl, median, min, throughput, ratio
  std::vector<nlohmann::json> json_lines() const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string benchmark_;
  nlohmann::json parameters_;
  double items_;
  std::string item_unit_;
  std::vector<Entry> entries_;
  double floor_ms_ = 0, floor_bytes_ = 0, floor_bandwidth_ = 0;
  std::string floor_basis_;
};

// Where the run happened: commit, device, command line, date. Filled once per process.
struct RunInfo {
  std::string commit, device, host_cpu, command, date;
};
RunInfo run_info(int argc, char** argv, const std::string& device);

// Appends the case's lines to bench/results/<file> (directory from RXM_RESULTS_DIR, else the
// source tree's bench/results), each merged with the run info.
void append_results(const std::string& file, const RunInfo& info, const Case& c);

std::string cpu_model_name();

// Runs a peer written in Python, bench/peers/<script> (found from the working directory, else the
// source tree), as `python3 <script> <args>`, and parses the one JSON object it prints
// (median_ms, min_ms, max_ms, reps and its own fields). nullopt when python3, the script or the
// framework it needs is missing: the benchmark then reports ours without that peer.
std::optional<nlohmann::json> run_python_peer(const std::string& script, const std::string& args);
// The same for a peer that prints one JSON object per line (one per case of a grid).
std::vector<nlohmann::json> run_python_peer_lines(const std::string& script, const std::string& args);
Stats stats_from_json(const nlohmann::json& peer);

// Host memory bandwidth of this machine, measured once: a large memcpy (read + write bytes / s).
double measured_host_copy_bandwidth();

}  // namespace radixmesh::bench
