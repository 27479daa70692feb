// The GPU top-k at its limits and against a scheduling race:
// - GpuTopkSmall.*: large k on short rows, where the last block's bucket pick must read the row
//   state before the picking thread updates it (a warp reading it after would write a second
//   digit; visible only under compute-sanitizer racecheck, see docs/design/topk.md, "Correctness
//   invariants"). "Small" in the name puts
//   it in scripts/gpu-check's racecheck filter, so racecheck runs it every GPU check; one case
//   also runs with RXM_TOPK_DEBUG=1, which checks every row's winner count.
// - GpuTopkScale.MoreThan65535Rows: batches beyond one grid's y extent (launched in chunks).
// - GpuTopkScale.IndicesBeyond32Bits: n > 2^32 (2^34 + 3 f16 where memory allows) through the
//   device-level entry, against planted top values (an exact reference without a 32 GiB CPU run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/gpu_skip.hpp"
#include "common/random_keys.hpp"
#include "common/topk_checks.hpp"
#include "common/topk_inputs.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/memory.hpp"
#include "radixmesh/topk.hpp"

namespace rxm = radixmesh;
using rxm::testing::test_seed;
using rxm::testing::gpu;
using rxm::testing::cpu;
using rxm::testing::expect_equal;

namespace {

const rxm::TopkOptions some_options[] = {{.largest = true, .sorted = false},
                                         {.largest = false, .sorted = true},
                                         {.largest = true, .sorted = true, .include_nan = true}};

std::string describe(const std::string& what, std::size_t n, std::size_t k, const rxm::TopkOptions& o) {
  return what + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " largest=" + std::to_string(o.largest) +
         " sorted=" + std::to_string(o.sorted) + " nan=" + std::to_string(o.include_nan) +
         " seed=" + std::to_string(test_seed());
}

// Large k on a 1023-element row: the picked bucket lies far below the top bins, in a later warp
// than the threads whose bins hold few elements, which is what the race needed.
template <class T> void large_k_short_rows() {
  for (const auto& input : rxm::testing::topk_inputs(test_seed())) {
    if (input.name != "uniform" && input.name != "sorted" && input.name != "normal" && input.name != "specials") continue;
    const auto v = rxm::testing::make_topk_input<T>(input, 1023);
    for (std::size_t k : {std::size_t(511), std::size_t(1000), std::size_t(1022)})
      for (const auto& o : some_options) {
        SCOPED_TRACE(describe(std::string(rxm::name_of(rxm::key_type_v<T>)) + " " + input.name, v.size(), k, o));
        expect_equal(rxm::topk(gpu(), std::span<const T>(v), k, o), rxm::topk(cpu(), std::span<const T>(v), k, o));
      }
  }
}

struct DebugEnv {  // RXM_TOPK_DEBUG=1 for one scope
  DebugEnv() { setenv("RXM_TOPK_DEBUG", "1", 1); }
  ~DebugEnv() { unsetenv("RXM_TOPK_DEBUG"); }
};

}  // namespace

TEST(GpuTopkSmall, LargeKF16) { RXM_REQUIRE_GPU(); large_k_short_rows<rxm::half_t>(); }
TEST(GpuTopkSmall, LargeKF32) { RXM_REQUIRE_GPU(); large_k_short_rows<float>(); }
TEST(GpuTopkSmall, LargeKWithDebugChecks) {
  RXM_REQUIRE_GPU();
  DebugEnv debug;
  large_k_short_rows<rxm::bfloat16_t>();
  // A batch with delegates and offsets through every checked stage.
  const auto v = rxm::testing::make_topk_input<float>(rxm::testing::topk_input(test_seed(), "uniform"), 200000);
  const std::vector<std::uint64_t> offsets = {0, 0, 3, 100000, 200000};
  const auto rows = rxm::Rows::from_offsets(offsets);
  expect_equal(rxm::topk_batched(gpu(), std::span<const float>(v), rows, 700),
               rxm::topk_batched(cpu(), std::span<const float>(v), rows, 700));
}

TEST(GpuTopkScale, MoreThan65535Rows) {
  RXM_REQUIRE_GPU();
  const auto input = rxm::testing::topk_input(test_seed(), "normal");
  {
    const std::size_t count = 70000, length = 48, k = 5;
    const auto v = rxm::testing::make_topk_input<float>(input, count * length);
    for (const auto& o : some_options) {
      SCOPED_TRACE(describe("uniform rows=70000", length, k, o));
      const auto rows = rxm::Rows::uniform(count, length);
      expect_equal(rxm::topk_batched<float, std::int32_t>(gpu(), std::span<const float>(v), rows, k, o),
                   rxm::topk_batched<float, std::int32_t>(cpu(), std::span<const float>(v), rows, k, o));
    }
  }
  {  // 131073 rows of 0..49 values (empty ones included): three chunks of rows
    std::vector<std::uint64_t> offsets = {0};
    for (std::size_t r = 0; r < 131073; ++r) offsets.push_back(offsets.back() + (r * 7) % 50);
    const auto v = rxm::testing::make_topk_input<double>(input, offsets.back());
    const auto rows = rxm::Rows::from_offsets(offsets);
    for (const auto& o : some_options) {
      SCOPED_TRACE(describe("offset rows=131073", v.size(), 4, o));
      expect_equal(rxm::topk_batched(gpu(), std::span<const double>(v), rows, 4, o),
                   rxm::topk_batched(cpu(), std::span<const double>(v), rows, 4, o));
    }
  }
}

namespace {

// Background f16 values in [0, 0.5): bit patterns below 0x3800, from a hash of the position.
__global__ void fill_background(std::uint16_t* v, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += gridDim.x * std::uint64_t(blockDim.x)) {
    std::uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    v[i] = std::uint16_t((z ^ (z >> 31)) % 0x3800u);
  }
}

struct Plant {
  std::uint64_t position;
  std::uint16_t bits;
};

}  // namespace

TEST(GpuTopkScale, IndicesBeyond32Bits) {
  RXM_REQUIRE_GPU();
  std::size_t free_bytes = 0, total_bytes = 0;
  RXM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t spare = std::size_t(2) << 30;
  std::uint64_t n = (std::uint64_t(1) << 34) + 3;
  if (free_bytes < n * 2 + spare) n = (std::uint64_t(1) << 32) + 3;
  if (free_bytes < n * 2 + spare)
    GTEST_SKIP() << "needs " << (n * 2 + spare) / (1 << 20) << " MiB of device memory, " << free_bytes / (1 << 20)
                 << " MiB free";
  std::printf("n = %llu f16 values (%.1f GiB)\n", (unsigned long long)n, double(n * 2) / double(1ull << 30));
  rxm::DeviceBuffer values(0, n * 2);
  auto* v = static_cast<std::uint16_t*>(values.data());
  fill_background<<<4096, 256>>>(v, n, test_seed());
  RXM_CUDA_CHECK_LAUNCH();
  // 15 distinct values 1 + j/16 and three copies of 0.75 (k = 17 takes the two lowest-index
  // copies); positions at both ends and around 2^32.
  const std::uint64_t G = std::uint64_t(1) << 32;
  std::vector<Plant> plants;
  const std::uint64_t distinct_at[15] = {0,     5,     n / 4 + 7, G - 1,      G,         G + 1,     n / 2, n / 2 + 1,
                                         n - n / 8, 3 * (n / 4), n - 1000, n - 11, n - 3, n - 2, n - 1};
  for (int j = 0; j < 15; ++j) plants.push_back({distinct_at[j], std::uint16_t(0x3C00 + 64 * j)});
  for (std::uint64_t at : {n - 5, n / 4 + 100, n - 7}) plants.push_back({at, 0x3A00});  // 0.75
  for (const Plant& p : plants)
    RXM_CUDA_CHECK(cudaMemcpy(v + p.position, &p.bits, 2, cudaMemcpyHostToDevice));
  const std::size_t k = 17;
  // Expected: all 15 distinct ones and the copies at n/4 + 100 and n - 7.
  std::vector<Plant> want(plants.begin(), plants.begin() + 15);
  want.push_back({n / 4 + 100, 0x3A00});
  want.push_back({n - 7, 0x3A00});

  rxm::DeviceArray<std::uint16_t> out_v(0, k);
  rxm::DeviceArray<std::int64_t> out_i(0, k);
  for (bool sorted : {false, true}) {
    SCOPED_TRACE("sorted=" + std::to_string(sorted) + " n=" + std::to_string(n));
    rxm::device::TopkProblem p;
    p.type = rxm::KeyType::f16, p.values = v, p.total = n, p.rows = 1, p.row_length = n, p.max_row_length = n;
    p.k = k, p.options.sorted = sorted, p.out_values = out_v.data(), p.out_indices = out_i.data();
    const std::size_t bytes = rxm::device::topk_temp_bytes(p, 0);
    rxm::DeviceBuffer temp(0, bytes);
    RXM_CUDA_CHECK(cudaMemset(out_i.data(), 0xA5, k * sizeof(std::int64_t)));  // poison
    rxm::device::topk(temp.data(), bytes, p, nullptr);
    std::vector<std::uint16_t> got_v(k);
    std::vector<std::int64_t> got_i(k);
    RXM_CUDA_CHECK(cudaMemcpy(got_v.data(), out_v.data(), k * 2, cudaMemcpyDeviceToHost));
    RXM_CUDA_CHECK(cudaMemcpy(got_i.data(), out_i.data(), k * 8, cudaMemcpyDeviceToHost));
    std::vector<Plant> order = want;
    if (sorted)  // best first, ties by index
      std::sort(order.begin(), order.end(), [](const Plant& a, const Plant& b) {
        return a.bits != b.bits ? a.bits > b.bits : a.position < b.position;
      });
    else
      std::sort(order.begin(), order.end(), [](const Plant& a, const Plant& b) { return a.position < b.position; });
    for (std::size_t i = 0; i < k; ++i) {
      EXPECT_EQ(got_i[i], std::int64_t(order[i].position)) << "place " << i;
      EXPECT_EQ(got_v[i], order[i].bits) << "place " << i;
    }
  }
}

TEST(GpuTopkScale, Int32IndicesRefuseLongRows) {
  RXM_REQUIRE_GPU();
  rxm::device::TopkProblem p;
  p.type = rxm::KeyType::f16, p.values = (void*)1, p.total = (std::size_t(1) << 31) + 1, p.rows = 1;
  p.row_length = p.total, p.max_row_length = p.total, p.k = 4, p.index_bytes = 4;
  p.out_values = (void*)1, p.out_indices = (void*)1;
  try {
    (void)rxm::device::topk_temp_bytes(p, 0);
    FAIL() << "expected an error for 32-bit indices of a row of 2^31 + 1";
  } catch (const rxm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("64-bit indices"), std::string::npos) << e.what();
  }
}
