// bench_mesh_topk: the driver of bench/mesh_topk_benchmark.cpp (also `radixmesh bench mesh-topk`).
#include "harness/driver_main.hpp"
#include "mesh_benchmarks.hpp"

int main(int argc, char** argv) {
  return radixmesh::bench::driver_main("bench_mesh_topk", radixmesh::bench::mesh_topk_usage, argc, argv,
                                       radixmesh::bench::run_mesh_topk_benchmark);
}
