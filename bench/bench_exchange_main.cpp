// bench_exchange: the driver of bench/exchange_benchmark.cpp (also `radixmesh bench exchange`).
#include "harness/driver_main.hpp"
#include "mesh_benchmarks.hpp"

int main(int argc, char** argv) {
  return radixmesh::bench::driver_main("bench_exchange", radixmesh::bench::exchange_usage, argc, argv,
                                       radixmesh::bench::run_exchange_benchmark);
}
