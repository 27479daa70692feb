// rxm::sort_rows: every row of a host-resident batch sorted on its own (radixmesh/sort.hpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/backends.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

namespace {
// n keys make whole rows of row_length (rows of length 0 only when there are no keys).
void require_whole_rows(std::size_t n, std::size_t row_length) {
  require(row_length > 0 || n == 0, "sort_rows: rows of length 0 for " + std::to_string(n) + " keys",
          "pass the row length (n / rows)");
  require(n == 0 || n % row_length == 0,
          "sort_rows: " + std::to_string(n) + " keys are not a whole number of rows of " + std::to_string(row_length),
          "pass n = rows x row_length keys");
}
}  // namespace

void sort_rows_host(Context& ctx, KeyType type, void* keys, std::size_t n, std::size_t row_length, void* values,
                    std::size_t value_bytes, const SortOptions& options) {
  require(ctx.mesh_size() == 1,
          "sort_rows: a context of " + std::to_string(ctx.mesh_size()) + " mesh devices",
          "sort rows on a context of one device (each row is sorted on one device)");
  require_whole_rows(n, row_length);
  const SortPlan plan = validate_sort(type, row_length, value_bytes, options);
  require(n == 0 || keys != nullptr, "sort_rows: keys is null", "pass the keys' storage");
  require(value_bytes == 0 || n == 0 || values != nullptr, "sort_rows: values is null", "pass the values' storage");
  if (n == 0 || row_length <= 1 || plan.begin_bit == plan.end_bit) return;
  const std::size_t rows = n / row_length, key_bytes = size_of(type);
  auto row_keys = [&](std::size_t r) { return static_cast<std::byte*>(keys) + r * row_length * key_bytes; };
  auto row_values = [&](std::size_t r) {
    return value_bytes ? static_cast<std::byte*>(values) + r * row_length * value_bytes : nullptr;
  };
  if (ctx.backend() == Backend::cuda) {
    // One segmented sort of the whole batch where it takes the rows; else each row through the
    // host-resident GPU sort (long rows, which fill the GPU one at a time).
    if (cuda_sort_rows_host(ctx, plan, keys, rows, values)) return;
    for (std::size_t r = 0; r < rows; ++r) cuda_sort_host(ctx, plan, row_keys(r), row_values(r));
    return;
  }
  const unsigned threads = std::max(1u, ctx.cpu_threads());
  if (rows < threads) {  // few long rows: each with every thread
    for (std::size_t r = 0; r < rows; ++r) cpu_sort(plan, row_keys(r), row_values(r), threads);
    return;
  }
  // Many rows: one thread per row at a time, rows handed out in turn.
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::atomic<bool> stop{false};
  auto worker = [&] {
    try {
      for (std::size_t r; !stop && (r = next.fetch_add(1)) < rows;) cpu_sort(plan, row_keys(r), row_values(r), 1);
    } catch (...) {
      if (!stop.exchange(true)) failed = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < std::min<std::size_t>(threads, rows); ++t) pool.emplace_back(worker);
    worker();
  }
  if (failed) std::rethrow_exception(failed);
}

void sort_rows_device(Context& ctx, const DeviceRowsSort& s, const SortOptions& options) {
  require(ctx.backend() == Backend::cuda,
          "sort_rows: the keys are on CUDA device " + std::to_string(s.device) + " but the context is on the CPU backend",
          "use a CUDA context (Context::local()) for device-resident keys");
  require_whole_rows(s.n, s.row_length);
  const SortPlan plan = validate_sort(s.type, s.row_length, s.value_bytes, options);
  require(s.n == 0 || (s.keys_in != nullptr && s.keys_out != nullptr), "sort_rows: a key pointer is null",
          "pass the keys' device storage");
  require(s.value_bytes == 0 || s.n == 0 || s.values_out != nullptr, "sort_rows: values_out is null",
          "pass storage for the values (or the positions)");
  require(!s.positions || s.values_in == nullptr, "sort_rows: positions asked for with values_in given",
          "pass values_in = null to get each key's position in its row");
  require(s.positions || s.value_bytes == 0 || s.n == 0 || s.values_in != nullptr, "sort_rows: values_in is null",
          "pass the values, or ask for positions");
  require(!s.positions || s.value_bytes == 8 || s.row_length <= std::size_t(INT32_MAX),
          "sort_rows: positions in rows of " + std::to_string(s.row_length) + " keys need 8-byte values",
          "pass value_bytes = 8 (int64 positions)");
  if (s.n == 0) return;
  cuda_sort_rows_device(ctx, plan, s, options);
}

}  // namespace radixmesh::detail
