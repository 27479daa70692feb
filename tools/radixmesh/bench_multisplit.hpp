// `radixmesh bench multisplit`: radixmesh's multisplit through the host-level API against the
// peers measured in the same run on the same input, ours verified element by element.
//   CPU:  a counting sort by bucket id (histogram, prefix sum, stable scatter; one thread) -- the
//         textbook multisplit, and the exact reference -- and label-then-std::stable_sort (RB-sort).
//   CUDA: input resident on the device; for radix buckets, radixmesh's device sort restricted to
//         the digit's bits (what users do with CUB DeviceRadixSort today); other bucket functions
//         have no in-process GPU peer (bench_multisplit measures RB-sort on the device). Ours is
//         checked against the CPU backend.
// Floor: keys read twice and written once, values read and written once (12 B/key for u32 keys,
// 20 B/pair with u32 values), over the measured copy bandwidth.
#pragma once
#include <cstddef>
#include <string>

#include "bench_common.hpp"
#include "harness/harness.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh::cli {

struct MultisplitBenchOptions {
  std::size_t n = 0;
  KeyType type = KeyType::u32;
  GenerateOptions input;
  std::string buckets = "radix:24:8";  // the --buckets forms of `radixmesh multisplit`
  std::size_t value_bytes = 0;         // 0 keys only, 4 or 8 (the values are the input indices)
  int warmup = 1, reps = 5;
  bool verify = true;
  bool write_results = true;
  std::string results_file = "multisplit.jsonl";
  bool quiet = false;
};

BenchOutcome run_multisplit_benchmark(const MultisplitBenchOptions& options, Context& ctx, const bench::RunInfo& info);

}  // namespace radixmesh::cli
