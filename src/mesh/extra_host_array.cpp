#include "mesh/extra_host_array.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/byte_size.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/key_types.hpp"

namespace radixmesh::detail {
namespace {

// Writes zeros over `bytes` at `p` by up to `threads` host threads (one per 16 MiB at least).
void touch(std::byte* p, std::size_t bytes, unsigned threads) {
  threads = unsigned(std::clamp<std::size_t>(bytes >> 24, 1, std::max(1u, threads)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const std::size_t from = bytes * t / threads, to = bytes * (t + 1) / threads;
      std::memset(p + from, 0, to - from);
    });
  for (std::thread& t : pool) t.join();
}

}  // namespace

ExtraHostArray extra_host_array(const SortPlan& plan, const SortOptions& options, const std::string& what,
                                unsigned threads) {
  const std::size_t key_bytes = size_of(plan.type);
  const std::size_t bytes = out_of_core_scratch_bytes(plan.n, key_bytes, plan.value_bytes);
  ExtraHostArray a;
  if (!options.host_scratch.empty()) {
    require(options.host_scratch.size() >= bytes,
            what + " needs " + format_bytes(bytes) + " but SortOptions::host_scratch holds " +
                format_bytes(options.host_scratch.size()),
            "pass at least out_of_core_scratch_bytes(n, key bytes, value bytes) of host_scratch, or none (the "
            "sort then allocates its own)");
    a.keys = options.host_scratch.data();
  } else {
    require_host_memory_within(bytes, options.host_memory_limit, what);
    a.owned.reset(new std::byte[bytes]);  // not value-initialized: touch writes every page
    a.keys = a.owned.get();
    touch(a.keys, bytes, threads);
  }
  if (plan.value_bytes) a.values = a.keys + (bytes - plan.n * plan.value_bytes);
  return a;
}

}  // namespace radixmesh::detail
