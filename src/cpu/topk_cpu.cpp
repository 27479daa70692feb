// The CPU top-k: the reference every GPU result is compared with. Per row: (rank, position) pairs,
// nth_element with the position as tie-break (lowest index wins), then the output order the
// options ask for. Rows run in parallel on host threads.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "cpu/topk_plan.hpp"

namespace radixmesh::detail {

namespace {

template <class T, class Index>
void topk_row(const TopkPlan& plan, const T* values, const Index* input_indices, std::size_t row, T* out_values,
              Index* out_indices) {
  using U = key_bits_t<T>;
  struct Entry {
    U rank;
    std::uint64_t position;
  };
  // Better first: higher rank, then lower position. A strict total order: the result is unique.
  auto better = [](const Entry& a, const Entry& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.position < b.position;
  };
  const std::uint64_t begin = plan.row_begin(row), length = plan.row_end(row) - begin;
  std::vector<Entry> entries(length);
  for (std::uint64_t i = 0; i < length; ++i) entries[i] = {topk_rank(values[begin + i], plan.options), i};
  const std::size_t taken = std::min<std::size_t>(plan.k, length);
  if (taken < length) std::nth_element(entries.begin(), entries.begin() + taken, entries.end(), better);
  entries.resize(taken);
  if (plan.options.sorted)
    std::sort(entries.begin(), entries.end(), better);
  else
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.position < b.position; });
  T* row_values = out_values + row * plan.k;
  Index* row_indices = out_indices + row * plan.k;
  for (std::size_t j = 0; j < taken; ++j) {
    const std::uint64_t p = entries[j].position;
    row_values[j] = values[begin + p];
    row_indices[j] = input_indices ? input_indices[begin + p] : Index(p);
  }
  for (std::size_t j = taken; j < plan.k; ++j) {  // a row shorter than k: padding
    row_values[j] = from_bits<T>(U(0));
    row_indices[j] = Index(-1);
  }
}

template <class T, class Index>
void topk_rows(const TopkPlan& plan, const void* values, const void* input_indices, void* out_values,
               void* out_indices, unsigned threads) {
  const auto* v = static_cast<const T*>(values);
  const auto* ii = static_cast<const Index*>(input_indices);
  auto* ov = static_cast<T*>(out_values);
  auto* oi = static_cast<Index*>(out_indices);
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(threads ? threads : 1, plan.rows));
  if (workers == 1) {
    for (std::size_t r = 0; r < plan.rows; ++r) topk_row<T, Index>(plan, v, ii, r, ov, oi);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (std::size_t r; (r = next.fetch_add(1)) < plan.rows;) topk_row<T, Index>(plan, v, ii, r, ov, oi);
    });
}

}  // namespace

void cpu_topk(const TopkPlan& plan, const void* values, const void* input_indices, void* out_values,
              void* out_indices, unsigned threads) {
  visit_key_type(plan.type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) >= 2) {
      if (plan.index_bytes == 4)
        topk_rows<T, std::int32_t>(plan, values, input_indices, out_values, out_indices, threads);
      else
        topk_rows<T, std::int64_t>(plan, values, input_indices, out_values, out_indices, threads);
    }
  });
}

}  // namespace radixmesh::detail
