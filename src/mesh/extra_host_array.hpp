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
  bool fresh = false;           // allocated here: its pages are not yet written
  std::unique_ptr<std::byte[]> owned;
};

// `what` names the array in errors ("sort: the out-of-core sort's second host array").
ExtraHostArray extra_host_array(const SortPlan& plan, const SortOptions& options, const std::string& what);

}  // namespace radixmesh::detail
