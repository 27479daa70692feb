// What the GPU top-k tests share: one CUDA and one CPU context per test binary (made on first
// use, so a binary without a GPU can still skip), and the exact comparison of two results —
// the same indices in the same places and bit-identical values (NaN payloads included).
#pragma once
#include <gtest/gtest.h>

#include <cstddef>

#include "radixmesh/context.hpp"
#include "radixmesh/keys.hpp"
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

template <class T, class Index>
void expect_equal(const TopkResult<T, Index>& got, const TopkResult<T, Index>& want) {
  ASSERT_EQ(got.values.size(), want.values.size());
  ASSERT_EQ(got.indices.size(), want.indices.size());
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    ASSERT_EQ(got.indices[i], want.indices[i]) << "place " << i;
    ASSERT_EQ(to_bits(got.values[i]), to_bits(want.values[i])) << "place " << i;
  }
}

}  // namespace radixmesh::testing
