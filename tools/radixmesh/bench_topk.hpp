// `radixmesh bench topk`: radixmesh's top-k through the host-level API (rxm::topk_batched) against
// the peers measured in the same run on the same input, ours verified index by index.
//   CPU:  std::nth_element and std::partial_sort over indices, ranked by rxm::topk_rank with ties
//         to the lower index (the library's semantics), so their result is the exact reference.
//   CUDA: input resident on the device; peers torch.topk (bench/peers/torch_topk.py, when python3
//         and torch are there and the case is one it runs: f32/f16/bf16 uniform, largest, unsorted)
//         and radixmesh's device sort of (value, index) pairs then take k (one row); ours checked
//         against the CPU backend's result.
// Floor: one read of the input over the measured copy bandwidth (host memcpy, or device-to-device).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench_common.hpp"
#include "harness/harness.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::cli {

struct TopkBenchOptions {
  std::size_t n = 0;     // values in all rows together
  std::size_t rows = 1;  // n / rows values each
  std::size_t k = 0;
  KeyType type = KeyType::f32;
  GenerateOptions input;  // distribution, seed, zipf_s, lo/hi, threads
  TopkOptions topk;
  int warmup = 1, reps = 5;
  bool verify = true;
  bool write_results = true;
  std::string results_file = "topk.jsonl";
  bool quiet = false;  // no table on stdout (--json prints its own)
};

// Whether this binary can benchmark top-k on a CUDA context (built with CUDA).
bool cuda_topk_bench_built();

// Runs the benchmark on `ctx` (its backend picks the CPU or CUDA half), prints the table unless
// quiet, appends the JSON lines when asked and verified (or unverified by request).
BenchOutcome run_topk_benchmark(const TopkBenchOptions& options, Context& ctx, const bench::RunInfo& info);

}  // namespace radixmesh::cli
