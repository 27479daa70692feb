#include "harness/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#ifndef RXM_SOURCE_DIR
#define RXM_SOURCE_DIR "."
#endif
#ifndef RXM_GIT_COMMIT
#define RXM_GIT_COMMIT "unknown"
#endif

namespace radixmesh::bench {

Stats summarize(std::vector<double> t) {
  Stats s;
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  s.reps = int(t.size());
  s.min_ms = t.front();
  s.max_ms = t.back();
  s.median_ms = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  return s;
}

Stats time_host(const std::function<void()>& setup, const std::function<void()>& run, int warmup, int reps) {
  std::vector<double> times;
  for (int i = 0; i < warmup + reps; ++i) {
    if (setup) setup();
    auto start = std::chrono::steady_clock::now();
    run();
    auto stop = std::chrono::steady_clock::now();
    if (i >= warmup) times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return summarize(times);
}

Case::Case(std::string benchmark, nlohmann::json parameters, double items, std::string item_unit)
    : benchmark_(std::move(benchmark)), parameters_(std::move(parameters)), items_(items), item_unit_(std::move(item_unit)) {}

void Case::add(const std::string& implementation, const Stats& stats, bool ours) {
  entries_.push_back({implementation, ours, false, stats});
}

void Case::add_diagnostic(const std::string& implementation, const Stats& stats) {
  entries_.push_back({implementation, false, true, stats});
}

void Case::set_floor(double bytes, double bandwidth, const std::string& basis) {
  floor_bytes_ = bytes;
  floor_bandwidth_ = bandwidth;
  floor_ms_ = bandwidth > 0 ? bytes / bandwidth * 1e3 : 0;
  floor_basis_ = basis;
}

namespace {
const Entry* best_of(const std::vector<Entry>& entries, bool ours) {
  const Entry* best = nullptr;
  for (const auto& e : entries)
    if (!e.diagnostic && e.ours == ours && (!best || e.stats.median_ms < best->stats.median_ms)) best = &e;
  return best;
}
}  // namespace

double Case::speedup_over_best_peer() const {
  const Entry* us = best_of(entries_, true);
  const Entry* peer = best_of(entries_, false);
  return us && peer && us->stats.median_ms > 0 ? peer->stats.median_ms / us->stats.median_ms : 0;
}
std::string Case::best_peer() const {
  const Entry* peer = best_of(entries_, false);
  return peer ? peer->implementation : "";
}

void Case::print(std::FILE* out) const {
  const Entry* us = best_of(entries_, true);
  std::fprintf(out, "\n%s %s\n", benchmark_.c_str(), parameters_.dump().c_str());
  std::fprintf(out, "  %-34s %10s %10s %14s %8s\n", "implementation", "median ms", "min ms",
               ("G" + item_unit_ + "/s").c_str(), "ours/x");
  for (const auto& e : entries_) {
    double rate = e.stats.median_ms > 0 ? items_ / (e.stats.median_ms * 1e-3) / 1e9 : 0;
    double ratio = us && us->stats.median_ms > 0 ? e.stats.median_ms / us->stats.median_ms : 0;
    std::fprintf(out, "  %-34s %10.3f %10.3f %14.3f %7.2fx%s\n", e.implementation.c_str(), e.stats.median_ms,
                 e.stats.min_ms, rate, ratio, e.ours ? "  (ours)" : "");
  }
  if (floor_ms_ > 0)
    std::fprintf(out, "  %-34s %10.3f %10s %14s          %.3g GB over %.1f GB/s (%s)\n", "floor", floor_ms_, "", "",
                 floor_bytes_ / 1e9, floor_bandwidth_ / 1e9, floor_basis_.c_str());
  if (double s = speedup_over_best_peer(); s > 0)
    std::fprintf(out, "  ours vs best peer (%s): %.2fx\n", best_peer().c_str(), s);
}

std::vector<nlohmann::json> Case::json_lines() const {
  std::vector<nlohmann::json> lines;
  const Entry* us = best_of(entries_, true);
  for (const auto& e : entries_) {
    nlohmann::json j;
    j["benchmark"] = benchmark_;
    j["parameters"] = parameters_;
    j["implementation"] = e.implementation;
    j["ours"] = e.ours;
    if (e.diagnostic) j["diagnostic"] = true;
    j["median_ms"] = e.stats.median_ms;
    j["min_ms"] = e.stats.min_ms;
    j["max_ms"] = e.stats.max_ms;
    j["reps"] = e.stats.reps;
    j["items"] = items_;
    j["item_unit"] = item_unit_;
    j["throughput_per_s"] = e.stats.median_ms > 0 ? items_ / (e.stats.median_ms * 1e-3) : 0;
    if (us && !e.ours && !e.diagnostic && us->stats.median_ms > 0) j["speedup_of_ours"] = e.stats.median_ms / us->stats.median_ms;
    if (floor_ms_ > 0) {
      j["floor_ms"] = floor_ms_;
      j["floor_bytes"] = floor_bytes_;
      j["floor_bandwidth_bytes_per_s"] = floor_bandwidth_;
      j["floor_basis"] = floor_basis_;
    }
    lines.push_back(std::move(j));
  }
  return lines;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

namespace {
std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe.get())) out += buf;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The commit the measured code came from: RXM_COMMIT (set by scripts/gpu-check), else the COMMIT
// file that scripts/gpu-pack writes beside the carried binaries (a benchmark started by hand on
// the device: the tree there may hold a stale .git, which would name an older commit than the
// code built), else git in the source tree (+"-dirty" if tracked files
// changed), else the commit at configure time, marked as such.
std::string commit_beside_executable() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  std::ifstream in(exe.parent_path() / "COMMIT");
  std::string commit;
  std::getline(in, commit);
  return commit;
}
std::string commit_id() {
  if (const char* c = std::getenv("RXM_COMMIT"); c && *c) return c;
  if (std::string carried = commit_beside_executable(); !carried.empty()) return carried;
  const std::string git = "git -C '" RXM_SOURCE_DIR "' ";
  std::string head = run_command(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (!head.empty()) {
    bool dirty = !run_command(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
    return head + (dirty ? "-dirty" : "");
  }
  return std::string(RXM_GIT_COMMIT) + "-at-configure";
}
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}
}  // namespace

RunInfo run_info(int argc, char** argv, const std::string& device) {
  RunInfo info;
  info.commit = commit_id();
  info.host_cpu = cpu_model_name() + " x" + std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  info.device = device.empty() ? info.host_cpu : device;
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);
  info.date = utc_now();
  return info;
}

void append_results(const std::string& file, const RunInfo& info, const Case& c) {
  std::filesystem::path dir = std::getenv("RXM_RESULTS_DIR") ? std::getenv("RXM_RESULTS_DIR")
                                                             : std::string(RXM_SOURCE_DIR) + "/bench/results";
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / file, std::ios::app);
  if (!out) throw std::runtime_error("cannot append to " + (dir / file).string());
  for (auto j : c.json_lines()) {
    j["commit"] = info.commit;
    j["device"] = info.device;
    j["host_cpu"] = info.host_cpu;
    j["command"] = info.command;
    j["date"] = info.date;
    out << j.dump() << "\n";
  }
}

std::vector<nlohmann::json> run_python_peer_lines(const std::string& script, const std::string& args) {
  std::filesystem::path path = std::filesystem::path("bench/peers") / script;
  if (!std::filesystem::exists(path)) path = std::filesystem::path(RXM_SOURCE_DIR) / "bench/peers" / script;
  if (!std::filesystem::exists(path)) return {};
  const std::string out = run_command("python3 '" + path.string() + "' " + args + " 2>/dev/null");
  std::vector<nlohmann::json> lines;
  for (std::size_t at = 0; at < out.size();) {
    const std::size_t end = std::min(out.find('\n', at), out.size());
    auto json = nlohmann::json::parse(out.substr(at, end - at), nullptr, false);
    if (!json.is_discarded() && json.contains("median_ms")) lines.push_back(std::move(json));
    at = end + 1;
  }
  return lines;
}

std::optional<nlohmann::json> run_python_peer(const std::string& script, const std::string& args) {
  auto lines = run_python_peer_lines(script, args);
  if (lines.size() != 1) return std::nullopt;
  return std::move(lines.front());
}

Stats stats_from_json(const nlohmann::json& peer) {
  Stats s;
  s.median_ms = peer.at("median_ms");
  s.min_ms = peer.at("min_ms");
  s.max_ms = peer.at("max_ms");
  s.reps = peer.at("reps");
  return s;
}

double measured_host_copy_bandwidth() {
  static const double bandwidth = [] {
    const std::size_t bytes = std::size_t(1) << 29;  // 512 MiB: far beyond any cache
    std::unique_ptr<char[]> a(new char[bytes]), b(new char[bytes]);
    std::memset(a.get(), 1, bytes);
    std::memset(b.get(), 2, bytes);
    Stats s = time_host(nullptr, [&] { std::memcpy(b.get(), a.get(), bytes); }, 1, 5);
    return 2.0 * double(bytes) / (s.min_ms * 1e-3);
  }();
  return bandwidth;
}

}  // namespace radixmesh::bench
