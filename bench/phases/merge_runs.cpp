// Microbenchmark of mesh::merge_runs (src/mesh/sorted_runs.hpp): 2^27 random u32 keys in 2, 4 and 8
// sorted runs merged by 1 and 16 host threads, best of 3. Outside CMake; build and run:
//   g++ -O3 -std=c++20 -Isrc -Iinclude bench/phases/merge_runs.cpp -o merge_runs -pthread && ./merge_runs label
// Call BG (the H200 machine's 16-core Xeon) compared the head scan with branches against the
// branch-free one: bench/results/gpu-check/h200-bg-merge_runs.log.
#include "mesh/sorted_runs.hpp"
#include <chrono>
#include <cstdio>
#include <random>
#include <algorithm>
namespace rxm = radixmesh;
int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "merge_runs";
  const std::size_t n = std::size_t(1) << 27;
  for (std::size_t R : {2, 4, 8}) {
    std::vector<std::uint32_t> data(n), out(n);
    std::mt19937 rng(1); for (auto& x : data) x = rng();
    std::vector<rxm::mesh::Run<std::uint32_t>> runs;
    for (std::size_t r = 0; r < R; ++r) { std::sort(data.begin() + r*n/R, data.begin() + (r+1)*n/R); runs.push_back({data.data() + r*n/R, nullptr, n/R}); }
    rxm::mesh::SortKey<std::uint32_t> sk;
    for (unsigned t : {1u, 16u}) {
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        auto s = std::chrono::steady_clock::now();
        rxm::mesh::merge_runs(runs, out.data(), nullptr, 0, sk, t);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
      }
      std::printf("%s runs %zu threads %2u: %7.1f ms, %5.0f Mkeys/s, sorted %d\n", label, R, t, best, n / best / 1e3, (int)std::is_sorted(out.begin(), out.end()));
    }
  }
}
