// bench_shuffle: the driver of bench/shuffle_benchmark.cpp (also `radixmesh bench shuffle`).
#include "harness/driver_main.hpp"
#include "mesh_benchmarks.hpp"

int main(int argc, char** argv) {
  return radixmesh::bench::driver_main("bench_shuffle", radixmesh::bench::shuffle_usage, argc, argv,
                                       radixmesh::bench::run_shuffle_benchmark);
}
