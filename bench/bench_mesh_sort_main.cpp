// bench_mesh_sort: the driver of bench/mesh_sort_benchmark.cpp (also `radixmesh bench mesh-sort`).
#include "harness/driver_main.hpp"
#include "mesh_benchmarks.hpp"

int main(int argc, char** argv) {
  return radixmesh::bench::driver_main("bench_mesh_sort", radixmesh::bench::mesh_sort_usage, argc, argv,
                                       radixmesh::bench::run_mesh_sort_benchmark);
}
