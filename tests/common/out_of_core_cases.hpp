// The out-of-core sort's checks, shared by the CPU-mesh and GPU tests: an input of one key type
// and distribution, sorted with a device memory limit that forces rounds, must equal the CPU
// backend's in-memory sort byte for byte, keys and values (each key's index: stability shows).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/mesh_sort_cases.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::testing {

// Device memory that holds about `elements` elements of `elem_bytes` per out-of-core group.
inline std::size_t memory_for_groups_of(std::size_t elements, std::size_t elem_bytes) {
  return std::size_t(2.5 * double(elements * elem_bytes));
}

// Options whose device memory limit holds about `group_elements` elements of `elem_bytes` per
// out-of-core group (too little for the inputs of the tests), in `mode`.
inline SortOptions out_of_core_options(std::size_t group_elements, std::size_t elem_bytes,
                                       OutOfCoreMode mode = OutOfCoreMode::automatic) {
  SortOptions o;
  o.out_of_core = mode;
  o.device_memory_limit = memory_for_groups_of(group_elements, elem_bytes);
  return o;
}

// Sorts `n` keys of `type` from `gen` (with values of value_bytes: 0, 4 or 8) on ctx with
// `options` and compares with the CPU backend. Returns the phases of the sort on ctx.
inline SortPhases expect_out_of_core_matches(Context& ctx, KeyType type, std::size_t n, const GenerateOptions& gen,
                                             std::size_t value_bytes, SortOptions options, std::uint64_t seed,
                                             const std::string& what) {
  SCOPED_TRACE(what);
  GenerateOptions g = gen;
  if (!is_floating(type)) g.special_fraction = 0;  // NaN and infinities are floats' alone
  const GlobalInput in = global_input(type, n, g, seed);
  std::vector<std::byte> values(n * value_bytes);
  for (std::size_t i = 0; i < n; ++i)
    if (value_bytes == 4) {
      const std::uint32_t v = std::uint32_t(i);
      std::memcpy(values.data() + i * 4, &v, 4);
    } else if (value_bytes == 8) {
      std::memcpy(values.data() + i * 8, &in.index[i], 8);
    }
  std::vector<std::byte> want_keys = in.keys, want_values = values;
  auto cpu = Context::cpu(1);
  SortOptions reference = options;
  reference.phases = nullptr;
  reference.progress = nullptr;
  detail::sort_host(cpu, type, want_keys.data(), n, value_bytes ? want_values.data() : nullptr, value_bytes, reference);

  SortPhases phases;
  options.phases = &phases;
  std::vector<std::byte> keys = in.keys;
  detail::sort_host(ctx, type, keys.data(), n, value_bytes ? values.data() : nullptr, value_bytes, options);
  EXPECT_TRUE(same_bytes(keys.data(), want_keys.data(), keys.size())) << "keys";
  EXPECT_TRUE(same_bytes(values.data(), want_values.data(), values.size())) << "values";
  return phases;
}

// Keys that make every level recurse: one top byte ("top-byte-equal"), one value ("all-equal"),
// or differing only in the lowest bit ("lowest-bit").
inline std::vector<std::uint32_t> recursing_keys(const std::string& kind, std::size_t n) {
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t mixed = std::uint32_t(i * 2654435761u);
    keys[i] = kind == "all-equal" ? 7u : kind == "lowest-bit" ? 0xABCDEF00u | (mixed >> 31) : 0x55000000u | (mixed >> 8);
  }
  return keys;
}

// Each kind of recursing_keys, with each key's index as its value, sorted on ctx with `options`
// (a limit that a bucket of every key exceeds): equal to the CPU backend, over two levels or more.
inline void expect_recursion_matches(Context& ctx, std::size_t n, SortOptions options) {
  for (const char* kind : {"top-byte-equal", "all-equal", "lowest-bit"}) {
    SCOPED_TRACE(kind);
    std::vector<std::uint32_t> keys = recursing_keys(kind, n), index(n);
    for (std::size_t i = 0; i < n; ++i) index[i] = std::uint32_t(i);
    std::vector<std::uint32_t> want_keys = keys, want_index = index;
    auto cpu = Context::cpu(1);
    sort(cpu, std::span(want_keys), std::span(want_index));
    SortPhases phases;
    options.phases = &phases;
    sort(ctx, std::span(keys), std::span(index), options);
    EXPECT_EQ(keys, want_keys);
    EXPECT_EQ(index, want_index);
    EXPECT_GE(phases.passes, 2) << "a bucket of every key needs a second level";
  }
}

}  // namespace radixmesh::testing
