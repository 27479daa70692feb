// The out-of-core sorts' second host array: the caller's SortOptions::host_scratch, or a fresh
// allocation within SortOptions::host_memory_limit and what the host has available. Either is
// refused, naming the bytes needed and had, before anything moves.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "core/backends.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

struct ExtraHostArray {
  std::byte* keys = nullptr;
  std::byte* values = nullptr;  // null without values
  std::unique_ptr<std::byte[]> owned;
};

// `what` names the array in errors ("sort: the out-of-core sort's second host array"). A fresh
// array's pages are written by `threads` host threads before it is returned: the host's first
// touch of a page costs far more than a copy into it (5.4 against 48 GB/s on a fresh 16-core
// H100 machine, bench/phases/host_register.cu), and it stalls whatever writes there first (the
// staging copies' thread teams, MPI's receives: 1.88 s against 0.54 s for 1.5e9 u32 keys per rank
// on 4 GPU ranks of one host, call AU), so it is done at once, by every thread.
ExtraHostArray extra_host_array(const SortPlan& plan, const SortOptions& options, const std::string& what,
                                unsigned threads);

}  // namespace radixmesh::detail
