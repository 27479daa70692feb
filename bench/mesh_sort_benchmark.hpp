// What bench_mesh_sort's two modes share: its options, and timing with the input restored before
// every repetition (sort_shards sorts in place). Device-resident keys: mesh_sort_benchmark.cpp;
// pinned host-resident keys (--host): mesh_sort_host_benchmark.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/harness.hpp"

namespace radixmesh::bench {

struct MeshSortOptions {
  std::vector<int> devices{0, 0, 0, 0};
  std::uint64_t keys = std::uint64_t(1) << 30;
  std::string type = "u32";
  int value_bytes = 0;
  std::string distribution = "uniform";
  int digit_bits = 0;
  std::string strategy = "automatic";  // MeshSortStrategy of the line marked ours: automatic, partition, merge
  int reps = 5;
  bool explain = false;
  bool host = false;  // the keys (and values) in pinned host memory
  // --host --out-of-core BYTES: also the out-of-core sort with each GPU limited to BYTES, and the
  // CPU backend's sort of the same keys (what a user does with data larger than the GPUs today).
  std::uint64_t out_of_core = 0;
  // --host --large: an input larger than the GPUs, in pageable host memory: the out-of-core sort
  // alone (the in-memory sorts would not fit) beside the CPU backend, the result checked sorted.
  bool large = false;
};

// cudaDeviceSynchronize on every visible GPU.
void sync_all_gpus();

// Runs restore() untimed, then times run(); one warm-up first.
Stats time_ms(const std::function<void()>& restore, const std::function<void()>& run, int reps);

// The --host mode for key type K (std::uint32_t or std::uint64_t).
template <class K> int run_mesh_sort_host(const MeshSortOptions& o, int argc, char** argv);
template <class K> int run_mesh_sort_large(const MeshSortOptions& o, int argc, char** argv);

}  // namespace radixmesh::bench
