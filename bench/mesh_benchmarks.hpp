// The mesh's benchmarks, shared by their drivers (bench_exchange, bench_shuffle, bench_mesh_sort, bench_mesh_topk) and the
// CLI (`radixmesh bench exchange | shuffle | mesh-sort | mesh-topk`). Each takes the driver's arguments (argv[0] is the
// command's name), prints ours beside the peers of the same run with the floor, appends JSON
// lines under bench/results/, and returns 0; errors are rxm::Error.
#pragma once

namespace radixmesh::bench {

extern const char* const exchange_usage;
int run_exchange_benchmark(int argc, char** argv);  // bench/exchange_benchmark.cpp

extern const char* const shuffle_usage;
int run_shuffle_benchmark(int argc, char** argv);  // bench/shuffle_benchmark.cpp

extern const char* const mesh_sort_usage;
int run_mesh_sort_benchmark(int argc, char** argv);  // bench/mesh_sort_benchmark.cpp

extern const char* const mesh_topk_usage;
int run_mesh_topk_benchmark(int argc, char** argv);  // bench/mesh_topk_benchmark.cpp

}  // namespace radixmesh::bench
