// What the GPU top-k tests share: one CUDA and one CPU context per test binary (made on first
// use, so a binary without a GPU can still skip), the exact comparison of two results (the same
// indices in the same places and bit-identical values, NaN payloads included), and the
// device-level entry with its tuning knobs.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/random_keys.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device/topk.cuh"
#include "radixmesh/keys.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/topk.hpp"

namespace radixmesh::testing {

inline Context& gpu() {
  static Context ctx = Context::local({}, Backend::cuda);
  return ctx;
}
inline Context& cpu() {
  static Context ctx = Context::cpu();
  return ctx;
}

// A test case's description for SCOPED_TRACE: what, the shape, the options and the seed.
inline std::string describe(const std::string& what, std::size_t n, std::size_t k, const TopkOptions& o) {
  return what + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " largest=" + std::to_string(o.largest) +
         " sorted=" + std::to_string(o.sorted) + " nan=" + std::to_string(o.include_nan) +
         " seed=" + std::to_string(test_seed());
}

template <class T, class Index>
void expect_equal(const TopkResult<T, Index>& got, const TopkResult<T, Index>& want) {
  ASSERT_EQ(got.values.size(), want.values.size());
  ASSERT_EQ(got.indices.size(), want.indices.size());
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    ASSERT_EQ(got.indices[i], want.indices[i]) << "place " << i;
    ASSERT_EQ(to_bits(got.values[i]), to_bits(want.values[i])) << "place " << i;
  }
}

// How a test runs the device-level entry (device/topk.cuh): its tuning knobs, and what only the
// tests vary besides.
struct DeviceRun {
  device::TopkTuning tuning;
  bool debug_checks = false;  // TopkProblem::debug_checks: every launch and every row's winner count checked
  std::size_t skip = 0;       // the input starts `skip` values into its device copy (unaligned rows)
};

// The device-level entry on `v` (rows of equal length, or `offsets`), outputs poisoned first;
// `caller` (if not empty): the caller's indices of the values (TopkProblem::input_indices).
template <class T, class Index = std::int64_t>
TopkResult<T, Index> device_topk(const std::vector<T>& v, std::size_t rows, const std::vector<std::uint64_t>& offsets,
                                 std::size_t k, const TopkOptions& o, const DeviceRun& run,
                                 const std::vector<Index>& caller = {}) {
  const std::size_t n = v.size() - run.skip, places = rows * k;
  DeviceArray<T> d(0, v.size()), out_v(0, places);
  DeviceArray<Index> out_i(0, places), d_caller(0, std::max<std::size_t>(caller.size(), 1));
  if (!caller.empty())
    RXM_CUDA_CHECK(cudaMemcpy(d_caller.data(), caller.data(), n * sizeof(Index), cudaMemcpyHostToDevice));
  DeviceArray<std::uint64_t> d_offsets(0, std::max<std::size_t>(offsets.size(), 1));
  RXM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  RXM_CUDA_CHECK(cudaMemset(out_v.data(), 0xA5, places * sizeof(T)));
  RXM_CUDA_CHECK(cudaMemset(out_i.data(), 0xA5, places * sizeof(Index)));
  device::TopkProblem p;
  p.type = key_type_v<T>, p.values = d.data() + run.skip, p.total = n, p.rows = rows, p.k = k, p.options = o;
  if (offsets.empty()) {
    p.row_length = n / rows, p.max_row_length = n / rows;
  } else {
    RXM_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets.data(), offsets.size() * sizeof(std::uint64_t),
                              cudaMemcpyHostToDevice));
    p.row_offsets = d_offsets.data();
    std::uint64_t longest = 0;
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r) longest = std::max(longest, offsets[r + 1] - offsets[r]);
    p.max_row_length = longest;
  }
  p.out_values = out_v.data(), p.out_indices = out_i.data();
  p.tuning = run.tuning, p.debug_checks = run.debug_checks;
  p.index_bytes = sizeof(Index);
  if (!caller.empty()) p.input_indices = d_caller.data();
  const std::size_t bytes = device::topk_temp_bytes(p, 0);
  DeviceBuffer temp(0, bytes);
  device::topk(temp.data(), bytes, p, nullptr);
  RXM_CUDA_CHECK(cudaDeviceSynchronize());
  TopkResult<T, Index> got;
  got.values.resize(places), got.indices.resize(places);
  RXM_CUDA_CHECK(cudaMemcpy(got.values.data(), out_v.data(), places * sizeof(T), cudaMemcpyDeviceToHost));
  RXM_CUDA_CHECK(cudaMemcpy(got.indices.data(), out_i.data(), places * sizeof(Index), cudaMemcpyDeviceToHost));
  return got;
}

}  // namespace radixmesh::testing
