// The sort benchmark, shared by the `bench_sort` driver and `radixmesh bench sort`.
// Generates the input once, runs ours and the peers on identical copies, verifies ours against
// std::stable_sort under key_less (every element), prints the table, appends JSON lines.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/harness.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::bench {

struct SortBenchOptions {
  std::size_t n = 100'000'000;
  KeyType type = KeyType::u32;
  Distribution distribution = Distribution::uniform;
  double zipf_s = 1.0;
  double special_fraction = 0;  // floating-point keys: this share are NaN, infinities, +-0 and denormals
  std::size_t value_bytes = 0;  // 0 keys only, 4 or 8 pairs
  Order order = Order::ascending;
  int warmup = 1;
  int reps = 5;
  std::uint64_t seed = 42;
  bool verify = true;
  bool write_results = true;          // append JSON lines under bench/results/
  std::string results_file = "sort.jsonl";
  bool quiet = false;                 // no table on stdout (the CLI's --json prints its own)
  // CPU only: the peers to time (std::sort, spreadsort, block_indirect_sort by name; empty: none,
  // and ours is verified on its own: sorted, the same keys, stable), and the previous version of
  // ours as a same-run diagnostic line (detail::CpuSortVariant::previous()).
  std::vector<std::string> cpu_peers = {"std::sort", "spreadsort", "block_indirect_sort"};
  bool previous = false;
};

struct SortBenchResult {
  bool verified = false;
  std::string device;                 // what ran ours: CPU model or GPU name
  double ours_median_ms = 0;
  std::string best_peer;
  double best_peer_median_ms = 0;
  double speedup_over_best_peer = 0;  // > 1: ours faster
  Case table{"sort", {}, 0};
};

// CPU backend vs std::sort, boost::sort::spreadsort, boost::sort::block_indirect_sort (bench/cpu_sort_benchmark.cpp).
SortBenchResult run_cpu_sort_benchmark(const SortBenchOptions& options, const RunInfo& info, unsigned threads);
// CUDA backend vs CUB DeviceRadixSort (and torch.sort when python3+torch exist) (bench/cuda_sort_benchmark.cu).
// Defined only when built with CUDA.
SortBenchResult run_cuda_sort_benchmark(const SortBenchOptions& options, const RunInfo& info, Context& ctx);

}  // namespace radixmesh::bench
