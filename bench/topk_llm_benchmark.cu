// bench_topk_llm: the top-k of LLM sampling, sorted (best first, ties by lowest index), on the
// device-level entry captured in a CUDA graph of `calls` calls, beside torch.topk(sorted=True)
// captured the same way (bench/peers/torch_topk_grid.py, one process for the whole grid). Per
// shape: ours sorted (the figure), ours unsorted (the cost of sorting), the path before the
// row-stream one (row_stream = 0), the row-stream family's other variants (row_cluster, row_smem,
// row_warp) and, on the row-stream blocks, the other choice of their seed (row_stream_estimate),
// all diagnostics; the floor is one read of the logits over the device-to-device copy bandwidth
// measured in the run. Ours sorted is checked against the CPU backend (every index and value),
// and the previous path and the other variants against ours.
//
//   bench_topk_llm [--rows 1,8,64,256,4096] [--vocab 32000,128256,256000] [--k 1,50,1024]
//                  [--dtype bf16,f32] [--calls 20] [--reps 10] [--no-torch] [--no-verify]
//                  [--segment-min LIST] [--compact LIST] [--row-cluster 0|1] [--row-smem 0|1]
//                  [--row-warp 0|1] [--row-compact 0|1] [--estimate 0|1] (sweeps of the row-stream knobs, or the variant
//                  forced: ours only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda/runtime/captured_graph.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "harness/device_fill.cuh"
#include "harness/device_timing.cuh"
#include "harness/driver_main.hpp"
#include "harness/harness.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::bench::Case;
using rxm::bench::Stats;

namespace {

struct Options {
  std::vector<std::size_t> rows = {1, 8, 64, 256, 4096}, vocab = {32000, 128256, 256000}, k = {1, 50, 1024};
  std::vector<rxm::KeyType> types = {rxm::KeyType::bf16, rxm::KeyType::f32};
  int calls = 20, reps = 10;
  bool torch = true, verify = true;
  // The row-stream knobs to sweep (TopkTuning::row_stream_segment / _compact; 0: automatic).
  // Sweeping times ours sorted only.
  std::vector<std::size_t> segment = {0}, compact = {0};
  int row_cluster = -1;  // TopkTuning::row_cluster for ours (-1: automatic); forcing it times ours only
  int row_smem = -1;     // TopkTuning::row_smem, the same way
  int row_warp = -1;     // TopkTuning::row_warp, the same way
  int row_compact = -1;  // TopkTuning::row_compact, the same way
  int estimate = -1;     // TopkTuning::row_stream_estimate, the same way
  int gather = -1;       // TopkTuning::row_cluster_gather, the same way
  bool sweep() const {
    return segment.size() > 1 || compact.size() > 1 || segment[0] || compact[0] || row_cluster >= 0 || row_smem >= 0 ||
           row_warp >= 0 || row_compact >= 0 || estimate >= 0 || gather >= 0;
  }
};

const char* torch_dtype(rxm::KeyType t) {
  return t == rxm::KeyType::bf16 ? "bfloat16" : t == rxm::KeyType::f16 ? "float16" : "float32";
}
std::string shape_key(std::size_t rows, std::size_t vocab, std::size_t k, rxm::KeyType t) {
  return std::to_string(rows) + "x" + std::to_string(vocab) + ":" + std::to_string(k) + ":" + torch_dtype(t);
}

// Stats of `calls` back-to-back calls, per call.
Stats per_call(Stats s, int calls) {
  s.median_ms /= calls, s.min_ms /= calls, s.max_ms /= calls;
  return s;
}

// One top-k call with its own temporary storage, for as long as it lives.
struct TopkCall {
  rxm::device::TopkProblem problem;
  rxm::DeviceBuffer temp;
  explicit TopkCall(const rxm::device::TopkProblem& q) : problem(q), temp(0, rxm::device::topk_temp_bytes(q, 0)) {}
  void operator()(cudaStream_t stream) const { rxm::device::topk(temp.data(), temp.bytes(), problem, stream); }
};

template <class T, class Host>
void run_shape(const Options& o, std::size_t rows, std::size_t vocab, std::size_t k, rxm::KeyType type,
               const rxm::bench::RunInfo& info, cudaStream_t stream, double bandwidth,
               const std::map<std::string, nlohmann::json>& torch, int segment, int compact) {
  const std::size_t n = rows * vocab, places = rows * k;
  rxm::DeviceArray<T> logits(0, n), out_v(0, places), ref_v(0, places);
  rxm::DeviceArray<std::int32_t> out_i(0, places), ref_i(0, places);
  rxm::bench::fill_values<T><<<1024, 256, 0, stream>>>(logits.data(), n, rxm::bench::LogitValues{});
  RXM_CUDA_CHECK_LAUNCH();
  rxm::device::TopkProblem p;
  p.type = type, p.values = logits.data(), p.total = n, p.rows = rows, p.row_length = vocab;
  p.max_row_length = vocab, p.k = k, p.options = {.largest = true, .sorted = true}, p.index_bytes = 4;
  p.out_values = out_v.data(), p.out_indices = out_i.data();
  p.tuning.row_stream_segment = segment, p.tuning.row_stream_compact = compact;
  p.tuning.row_cluster = o.row_cluster, p.tuning.row_smem = o.row_smem, p.tuning.row_warp = o.row_warp;
  p.tuning.row_compact = o.row_compact;
  p.tuning.row_stream_estimate = o.estimate, p.tuning.row_cluster_gather = o.gather;
  // In a graph where the path allows it; the previous path's segmented CUB sort (several sorted
  // rows) cannot be captured, so it runs as `calls` launches on the stream, timed the same way.
  auto timed = [&](const rxm::device::TopkProblem& q, bool graph) {
    const TopkCall call(q);
    if (graph) {
      const rxm::detail::CapturedGraph g(stream, [&] { call(stream); }, o.calls);
      return per_call(rxm::bench::time_device(stream, [&] { g.launch(); }, 2, o.reps), o.calls);
    }
    return per_call(rxm::bench::time_device(stream, [&] { for (int c = 0; c < o.calls; ++c) call(stream); }, 2, o.reps),
                    o.calls);
  };
  rxm::device::TopkProblem unsorted = p, previous = p;
  unsorted.options.sorted = false;
  unsorted.out_values = ref_v.data(), unsorted.out_indices = ref_i.data();
  const bool peers = !o.sweep();
  // Ours sorted and unsorted, their graphs replayed in turn, so that whatever changes over the
  // run (clocks, the variants timed between) weighs on both alike: the sorted / unsorted ratio is
  // an issue's target, and timed one after the other it read up to 1.11x at k = 1, where both run
  // the same kernels (call HE). out_v / out_i hold ours.
  Stats ours, ours_unsorted;
  if (peers) {
    const TopkCall sorted_call(p), unsorted_call(unsorted);
    const rxm::detail::CapturedGraph sorted_graph(stream, [&] { sorted_call(stream); }, o.calls);
    const rxm::detail::CapturedGraph unsorted_graph(stream, [&] { unsorted_call(stream); }, o.calls);
    const auto both = rxm::bench::time_device_interleaved(
        stream, {[&] { sorted_graph.launch(); }, [&] { unsorted_graph.launch(); }}, 2, o.reps);
    ours = per_call(both[0], o.calls), ours_unsorted = per_call(both[1], o.calls);
  }
  previous.tuning = {};
  previous.tuning.row_stream = 0;
  previous.out_values = ref_v.data(), previous.out_indices = ref_i.data();
  const Stats old_path = peers ? timed(previous, false) : Stats{};
  // The row-stream family's other variants at this shape, each timed and compared with ours the
  // same way: blocks that keep k or a cluster per row (TopkTuning::row_cluster), a block per row
  // from shared memory (TopkTuning::row_smem), a warp per row (TopkTuning::row_warp), and a block
  // per row that keeps what reaches a sampled bound (TopkTuning::row_compact), where they differ
  // from ours.
  struct Variant {
    std::string label;
    Stats time;
    std::vector<Host> v;
    std::vector<std::int32_t> i;
  };
  std::vector<Variant> variants;
  const std::string path = rxm::device::topk_path_name(p, 0);
  auto try_variant = [&](rxm::device::TopkTuning tuning, const std::string& label, bool other_path = true) {
    rxm::device::TopkProblem variant = previous;
    variant.tuning = tuning;
    if (!peers || k < 2 || (rxm::device::topk_path_name(variant, 0) == path) == other_path) return;
    Variant got{label + " (" + rxm::device::topk_path_name(variant, 0) + ")", timed(variant, true), {}, {}};
    RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
    got.v.resize(places), got.i.resize(places);
    RXM_CUDA_CHECK(cudaMemcpy(got.v.data(), ref_v.data(), places * sizeof(T), cudaMemcpyDeviceToHost));
    RXM_CUDA_CHECK(cudaMemcpy(got.i.data(), ref_i.data(), places * 4, cudaMemcpyDeviceToHost));
    variants.push_back(std::move(got));
  };
  rxm::device::TopkTuning other = p.tuning;
  other.row_smem = 0;
  other.row_cluster = path == "row-cluster" ? 0 : 1;
  try_variant(other, path == "row-cluster" ? "radixmesh sorted, row_cluster = 0" : "radixmesh sorted, row_cluster = 1");
  other = p.tuning;
  other.row_smem = path == "row-smem" ? 0 : 1;
  try_variant(other, path == "row-smem" ? "radixmesh sorted, row_smem = 0" : "radixmesh sorted, row_smem = 1");
  other = p.tuning;
  other.row_warp = path == "row-warp" ? 0 : 1;
  try_variant(other, path == "row-warp" ? "radixmesh sorted, row_warp = 0" : "radixmesh sorted, row_warp = 1");
  other = p.tuning;
  other.row_compact = path == "row-compact" ? 0 : 1;
  try_variant(other, path == "row-compact" ? "radixmesh sorted, row_compact = 0" : "radixmesh sorted, row_compact = 1");
  if (path == "row-cluster")  // the cluster's two finishes, forced (ours takes one of them)
    for (int gather : {0, 1}) {
      other = p.tuning;
      other.row_cluster_gather = gather;
      try_variant(other, "radixmesh sorted, row_cluster_gather = " + std::to_string(gather), false);
    }
  if (path == "row-stream") {  // the blocks' seed not guessed
    other = p.tuning;
    other.row_stream_estimate = 0;
    try_variant(other, "radixmesh sorted, row_stream_estimate = 0", false);
  }
  if (!peers) ours = timed(p, true);
  RXM_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<Host> got_v(places), prev_v(places);
  std::vector<std::int32_t> got_i(places), prev_i(places);
  RXM_CUDA_CHECK(cudaMemcpy(got_v.data(), out_v.data(), places * sizeof(T), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got_i.data(), out_i.data(), places * 4, cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(prev_v.data(), ref_v.data(), places * sizeof(T), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(prev_i.data(), ref_i.data(), places * 4, cudaMemcpyDeviceToHost));
  bool same_as_previous =
      !peers || (got_i == prev_i && std::memcmp(got_v.data(), prev_v.data(), places * sizeof(T)) == 0);
  for (const Variant& v : variants)
    same_as_previous = same_as_previous && got_i == v.i && std::memcmp(got_v.data(), v.v.data(), places * sizeof(T)) == 0;
  std::string verified = "skipped";
  if (o.verify) {
    std::vector<Host> host(n);
    RXM_CUDA_CHECK(cudaMemcpy(host.data(), logits.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
    auto cpu = rxm::Context::cpu();
    const auto want = rxm::topk_batched<Host, std::int32_t>(cpu, std::span<const Host>(host),
                                                            rxm::Rows::uniform(rows, vocab), k, p.options);
    const bool ok = want.indices == got_i && std::memcmp(want.values.data(), got_v.data(), places * sizeof(T)) == 0;
    verified = ok ? "yes, against the CPU backend (every index and value)" : "NO";
  }

  nlohmann::json params = {{"rows", rows}, {"n", vocab}, {"k", k}, {"type", std::string(rxm::name_of(type))},
                           {"distribution", "sum of 4 uniforms (about normal)"}, {"largest", true},
                           {"sorted", true}, {"timing", "CUDA graph of " + std::to_string(o.calls) + " calls"},
                           {"path", rxm::device::topk_path_name(p, 0)}};
  if (segment) params["row_stream_segment"] = segment;
  if (compact) params["row_stream_compact"] = compact;
  if (o.estimate >= 0) params["row_stream_estimate"] = o.estimate;
  Case c("topk_llm", params, double(n), "values");
  c.add("radixmesh::device::topk sorted, in a CUDA graph", ours, true);
  if (peers) {
    c.add_diagnostic("radixmesh unsorted (the cost of sorting)", ours_unsorted);
    c.add_diagnostic("radixmesh sorted, the path before row-stream (row_stream = 0; stream launches)", old_path);
    for (const Variant& v : variants) c.add_diagnostic(v.label, v.time);
  }
  if (auto t = torch.find(shape_key(rows, vocab, k, type)); peers && t != torch.end())
    c.add(t->second.value("what", std::string("torch.topk")) + " (torch " + t->second.value("torch", std::string("?")) + ")",
          rxm::bench::stats_from_json(t->second));
  c.set_floor(double(n) * sizeof(T), bandwidth, "one read of the logits over the D2D copy bandwidth measured here");
  c.print();
  std::printf("  sorted / unsorted = %.3f / %.3f = %.2fx; verified: %s; other paths' results identical: %s\n",
              ours.median_ms, ours_unsorted.median_ms, ours.median_ms / ours_unsorted.median_ms, verified.c_str(),
              same_as_previous ? "yes" : "NO");
  if (verified == "NO" || !same_as_previous) std::printf("MISMATCH %s\n", shape_key(rows, vocab, k, type).c_str());
  if (verified != "NO") rxm::bench::append_results("topk_llm.jsonl", info, c);
}

std::vector<std::size_t> count_list(const std::string& flag, const std::string& text) {
  std::vector<std::size_t> out;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(std::size_t(rxm::bench::driver_count("bench_topk_llm", flag, text.substr(at, comma - at))));
    at = comma + 1;
  }
  return out;
}

}  // namespace

const char* const usage =
    "usage: bench_topk_llm [--rows 1,8,64,256,4096] [--vocab 32000,128256,256000] [--k 1,50,1024]\n"
    "                      [--dtype bf16,f32] [--calls 20] [--reps 10] [--no-torch] [--no-verify]\n"
    "                      [--segment-min LIST] [--compact LIST] [--row-cluster 0|1] [--row-smem 0|1]\n"
    "                      [--row-warp 0|1] [--row-compact 0|1] [--estimate 0|1] [--gather 0|1]  (knob sweeps, ours only)\n"
    "  sorted top-k at LLM shapes in a CUDA graph, beside torch.topk(sorted=True) in a graph\n";

int run(int argc, char** argv) {
  Options o;
  rxm::bench::DriverArgs args("bench_topk_llm", argc, argv);
  while (args.next()) {
    if (args.is("--rows")) o.rows = count_list("--rows", args.value());
    else if (args.is("--vocab")) o.vocab = count_list("--vocab", args.value());
    else if (args.is("--k")) o.k = count_list("--k", args.value());
    else if (args.is("--calls")) o.calls = int(rxm::bench::driver_count("bench_topk_llm", "--calls", args.value()));
    else if (args.is("--reps")) o.reps = int(rxm::bench::driver_count("bench_topk_llm", "--reps", args.value()));
    else if (args.is("--no-torch")) o.torch = false;
    else if (args.is("--segment-min")) o.segment = count_list("--segment-min", args.value());
    else if (args.is("--compact")) o.compact = count_list("--compact", args.value());
    else if (args.is("--row-cluster")) o.row_cluster = int(rxm::bench::driver_count("bench_topk_llm", "--row-cluster", args.value()));
    else if (args.is("--row-smem")) o.row_smem = int(rxm::bench::driver_count("bench_topk_llm", "--row-smem", args.value()));
    else if (args.is("--row-warp")) o.row_warp = int(rxm::bench::driver_count("bench_topk_llm", "--row-warp", args.value()));
    else if (args.is("--row-compact")) o.row_compact = int(rxm::bench::driver_count("bench_topk_llm", "--row-compact", args.value()));
    else if (args.is("--gather")) o.gather = int(rxm::bench::driver_count("bench_topk_llm", "--gather", args.value()));
    else if (args.is("--estimate")) o.estimate = int(rxm::bench::driver_count("bench_topk_llm", "--estimate", args.value()));
    else if (args.is("--no-verify")) o.verify = false;
    else if (args.is("--dtype")) {
      o.types.clear();
      const std::string text = args.value();
      for (std::size_t at = 0; at <= text.size();) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string t = text.substr(at, comma - at);
        if (t == "bf16") o.types.push_back(rxm::KeyType::bf16);
        else if (t == "f16") o.types.push_back(rxm::KeyType::f16);
        else if (t == "f32") o.types.push_back(rxm::KeyType::f32);
        else rxm::bench::driver_argument_error("bench_topk_llm", "--dtype " + t + " is not bf16, f16 or f32");
        at = comma + 1;
      }
    } else args.unknown();
  }
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const auto info = rxm::bench::run_info(argc, argv, prop.name);
  // torch first, in its own process, for the whole grid (one import, one CUDA context).
  std::map<std::string, nlohmann::json> torch;
  if (o.torch && !o.sweep()) {
    std::string shapes;
    for (auto t : o.types)
      for (auto r : o.rows)
        for (auto v : o.vocab)
          for (auto k : o.k)
            if (k <= v) shapes += (shapes.empty() ? "" : ",") + shape_key(r, v, k, t);
    for (auto& line : rxm::bench::run_python_peer_lines(
             "torch_topk_grid.py", "--shapes " + shapes + " --calls " + std::to_string(o.calls) + " --reps " +
                                       std::to_string(o.reps)))
      torch[line.value("key", std::string())] = line;
    std::printf("torch.topk: %zu of the grid's shapes measured\n", torch.size());
  }
  cudaStream_t stream;
  RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  double bandwidth = 0;
  {
    const std::size_t bytes = std::size_t(1) << 30;
    rxm::DeviceBuffer a(0, bytes), b(0, bytes);
    RXM_CUDA_CHECK(cudaMemset(a.data(), 1, bytes));
    bandwidth = rxm::bench::measure_d2d_bandwidth(b.data(), a.data(), bytes, stream);
  }
  for (auto t : o.types)
    for (auto r : o.rows)
      for (auto v : o.vocab)
        for (auto k : o.k) {
          if (k > v) continue;
          for (auto segment : o.segment)
            for (auto compact : o.compact) {
              const int sg = int(segment), cp = int(compact);
              switch (t) {
                case rxm::KeyType::bf16:
                  run_shape<__nv_bfloat16, rxm::bfloat16_t>(o, r, v, k, t, info, stream, bandwidth, torch, sg, cp);
                  break;
                case rxm::KeyType::f16:
                  run_shape<__half, rxm::half_t>(o, r, v, k, t, info, stream, bandwidth, torch, sg, cp);
                  break;
                default: run_shape<float, float>(o, r, v, k, t, info, stream, bandwidth, torch, sg, cp); break;
              }
            }
        }
  RXM_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) { return rxm::bench::driver_main("bench_topk_llm", usage, argc, argv, run); }
