// The CPU top-k: the reference every GPU result is compared with, and the CPU backend.
//
// Order: an entry is (rank, position) with rank = topk_rank (topk.hpp); better = higher rank, then
// lower position. That is a strict total order, so the k best entries of a row are unique and the
// output is the same bit for bit however the work is split.
//
// Per row, one pass with a candidate buffer and a running threshold instead of nth_element over an
// entry for every value (which takes 410 ms for 2^24 f32, k = 1024, against std::partial_sort's
// 149 ms on a 2-core EPYC). The buffer holds about 2k entries; once it has been
// cut down to the k best, its k-th best entry is the threshold. Positions are scanned in ascending
// order, so a later value with the threshold's rank loses the tie: a value is a candidate only when
// its rank is strictly above the threshold's -- one compare rejects the rest. When the buffer fills
// it is cut to k again (nth_element) and the threshold rises. On random input about k ln(n/k)
// values pass, so the cost is one read + one rank + one compare per value. All-equal input: the
// first threshold rejects everything after the first 2k values.
// A row where k is a large part of it (k = n/2) skips the filter: nth_element over the ranks
// alone (4 bytes for f32 instead of a 16-byte entry) finds the k-th best rank, one scan in position
// order takes the winners, so the unsorted output needs no sort by position.
// Ascending input (largest-k) would make every value a candidate: a long scan starts from a floor
// taken from a strided sample (sampled_floor), checked afterwards.
// Measured (radixmesh bench topk --backend cpu, 2-core AMD EPYC, busy with other builds, f32,
// against nth_element over an entry per value, ms): 2^24 k=1024 16.5 (263); 2^22 k=1000 3.5 (92);
// 512 rows of 2^15 k=50 24 (143); 2^22 k=2^21 110 (249); 2^22 k=1000 all-equal 5.7 (87); 2^22
// k=2^21 all-equal 86 (115; std::nth_element: 37); 2^22 k=1000 ascending 3.2 (87); 2^22 k=2^21
// sorted output 323 (294: the sort of k winners dominates both).
//
// Parallelism: rows over host threads; a row long enough compared with k (and when there are
// fewer rows than threads) is split into chunks, each chunk's winners found on its own thread, and
// the chunks' winners merged with one nth_element (positions are row positions, so ties still go
// to the lowest index).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "core/topk_plan.hpp"

namespace radixmesh::detail {

namespace {

template <class U> struct Entry {
  U rank;
  std::uint64_t position;  // within the row
};

// Better first: higher rank, then lower position.
template <class U> bool better(const Entry<U>& a, const Entry<U>& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.position < b.position;
}

// Keeps the `keep` best entries of `buffer` (unordered) and returns the worst of them.
template <class U> Entry<U> cut_to(std::vector<Entry<U>>& buffer, std::size_t keep) {
  std::nth_element(buffer.begin(), buffer.begin() + (keep - 1), buffer.end(), better<U>);
  buffer.resize(keep);
  return buffer[keep - 1];
}

// The buffer holds the k kept entries plus room for as many newcomers (at least 256, so that a
// small k does not run nth_element every few candidates), never more than the values scanned.
// 256 rather than 1024: with 512 rows of 2^15 and k = 50 the first fill and cut of 1074 entries
// per row cost a third of the time (30 -> 21 ms measured under load).
inline std::size_t buffer_capacity(std::size_t keep, std::size_t length) {
  return std::min(length, keep + std::max<std::size_t>(keep, 256));
}

// A starting bound for a long scan, from a strided sample: the rank that about 4k of the values
// reach if the sample is representative. On ascending input (every value beats the running
// threshold, the filter's worst case) it keeps the buffer from being cut every k values from the
// start of the row. Only a guess: best_entries checks that at least k values reached it and rescans
// without it otherwise. 0 (every rank reaches it) when the scan is too short to pay for a sample.
template <class T, bool Largest, bool IncludeNan>
key_bits_t<T> sampled_floor(const T* row, std::uint64_t lo, std::uint64_t length, std::size_t keep) {
  using U = key_bits_t<T>;
  constexpr TopkOptions options{.largest = Largest, .sorted = false, .include_nan = IncludeNan};
  const std::uint64_t samples = std::max<std::uint64_t>(4096, 16 * std::uint64_t(keep));
  if (length / 64 < samples) return U(0);
  const std::uint64_t stride = length / samples;
  std::vector<U> ranks(samples);
  for (std::uint64_t i = 0; i < samples; ++i) ranks[i] = topk_rank(row[lo + i * stride], options);
  const std::uint64_t reaching = std::clamp<std::uint64_t>(4 * keep * samples / length, 1, samples);
  std::nth_element(ranks.begin(), ranks.begin() + std::ptrdiff_t(reaching - 1), ranks.end(), std::greater<U>());
  return ranks[reaching - 1];
}

// The min(keep, hi - lo) best entries among row positions [lo, hi) of `row`, unordered, in
// `buffer` (whose storage is reused). Largest/NaN policy are template parameters so the scan's
// rank is constant-folded out of topk_rank, the one definition of the order.
template <class T, bool Largest, bool IncludeNan>
void best_entries(const T* row, std::uint64_t lo, std::uint64_t hi, std::size_t keep,
                  std::vector<Entry<key_bits_t<T>>>& buffer, bool use_sample = true) {
  using U = key_bits_t<T>;
  constexpr TopkOptions options{.largest = Largest, .sorted = false, .include_nan = IncludeNan};
  const std::uint64_t length = hi - lo;
  keep = std::min<std::size_t>(keep, length);
  const std::size_t capacity = buffer_capacity(keep, length);
  const U floor = use_sample ? sampled_floor<T, Largest, IncludeNan>(row, lo, length, keep) : U(0);
  buffer.clear();
  buffer.reserve(capacity);
  // Until the first cut: every value reaching the floor (with floor 0: every value).
  std::uint64_t p = lo;
  for (; p < hi; ++p) {  // the size is checked only after a push: the loop stays as tight as the next
    const U r = topk_rank(row[p], options);
    if (r >= floor) {
      buffer.push_back({r, p});
      if (buffer.size() == capacity) {
        ++p;
        break;
      }
    }
  }
  if (p == hi) {
    if (buffer.size() < keep)  // the sampled floor was too high: fewer than k values reached it
      return best_entries<T, Largest, IncludeNan>(row, lo, hi, keep, buffer, false);
    if (keep < buffer.size()) cut_to(buffer, keep);
    return;
  }
  // From here k values at least as good as the threshold have been seen, so the floor is implied.
  U threshold = cut_to(buffer, keep).rank;
  // The hot loop: the buffer has room for `capacity - keep` newcomers before the next cut, so the
  // pushes never reallocate.
  for (; p < hi; ++p) {
    const U r = topk_rank(row[p], options);
    if (r > threshold) {
      buffer.push_back({r, p});
      if (buffer.size() == capacity) threshold = cut_to(buffer, keep).rank;
    }
  }
  if (buffer.size() > keep) cut_to(buffer, keep);
}

// Runs f.template operator()<Largest, IncludeNan>() for the options' rank policy, so that scans
// get the rank constant-folded out of topk_rank, the one definition of the order.
template <class F> void with_rank_policy(const TopkOptions& o, F&& f) {
  if (o.largest)
    o.include_nan ? f.template operator()<true, true>() : f.template operator()<true, false>();
  else
    o.include_nan ? f.template operator()<false, true>() : f.template operator()<false, false>();
}

template <class T>
void best_entries(const T* row, std::uint64_t lo, std::uint64_t hi, std::size_t keep, const TopkOptions& o,
                  std::vector<Entry<key_bits_t<T>>>& buffer) {
  with_rank_policy(o, [&]<bool Largest, bool IncludeNan>() {
    best_entries<T, Largest, IncludeNan>(row, lo, hi, keep, buffer);
  });
}

// The filter pays when k is a small part of the row; otherwise most values would pass it and the
// buffer would be the whole row (k = n/2: one nth_element over n 16-byte entries, then a sort of
// k entries by position). The factor 8 is a guess, not tuned.
inline bool filter_pays(std::uint64_t length, std::size_t k) {
  return buffer_capacity(std::min<std::uint64_t>(k, length), length) < length && 8 * std::uint64_t(k) < length;
}

// A row where k is a large part of it: the k-th best rank by nth_element over the ranks alone (the
// key's width, not a 16-byte entry), then one scan in position order takes every value ranked above
// it and, of the values equal to it, the first ones -- the lowest positions, as the tie rule says.
// The winners come out in ascending position order, so the unsorted output needs no sort.
template <class T, bool Largest, bool IncludeNan>
void best_entries_dense(const T* row, std::uint64_t length, std::size_t keep, std::vector<key_bits_t<T>>& ranks,
                        std::vector<Entry<key_bits_t<T>>>& winners) {
  using U = key_bits_t<T>;
  constexpr TopkOptions options{.largest = Largest, .sorted = false, .include_nan = IncludeNan};
  keep = std::min<std::size_t>(keep, length);
  winners.clear();
  if (keep == 0) return;
  ranks.resize(length);
  for (std::uint64_t p = 0; p < length; ++p) ranks[p] = topk_rank(row[p], options);
  std::nth_element(ranks.begin(), ranks.begin() + (keep - 1), ranks.end(), std::greater<U>());
  const U threshold = ranks[keep - 1];
  // nth_element leaves every rank above the threshold in front of it.
  std::size_t equal_left = keep - std::size_t(std::count_if(ranks.begin(), ranks.begin() + (keep - 1),
                                                            [threshold](U r) { return r > threshold; }));
  winners.reserve(keep);
  for (std::uint64_t p = 0; winners.size() < keep; ++p) {
    const U r = topk_rank(row[p], options);
    if (r > threshold) {
      winners.push_back({r, p});
    } else if (r == threshold && equal_left > 0) {
      winners.push_back({r, p});
      --equal_left;
    }
  }
}

// Orders a row's winners as the options ask and writes them, then the padding of a short row.
template <class T, class Index>
void write_row(const TopkPlan& plan, const T* row, const Index* row_input_indices,
               std::vector<Entry<key_bits_t<T>>>& winners, bool by_position, T* row_values, Index* row_indices) {
  using U = key_bits_t<T>;
  if (plan.options.sorted)
    std::sort(winners.begin(), winners.end(), better<U>);
  else if (!by_position)
    std::sort(winners.begin(), winners.end(),
              [](const Entry<U>& a, const Entry<U>& b) { return a.position < b.position; });
  const std::size_t taken = winners.size();
  for (std::size_t j = 0; j < taken; ++j) {
    const std::uint64_t p = winners[j].position;
    row_values[j] = row[p];
    row_indices[j] = row_input_indices ? row_input_indices[p] : Index(p);
  }
  for (std::size_t j = taken; j < plan.k; ++j) {  // a row shorter than k: padding
    row_values[j] = from_bits<T>(U(0));
    row_indices[j] = Index(-1);
  }
}

// A chunk is worth its own thread when it is long and much longer than k (otherwise most of it
// passes the threshold and the merge redoes the work).
constexpr std::uint64_t kMinChunk = std::uint64_t(1) << 16;
inline std::size_t chunks_for(std::uint64_t length, std::size_t k, std::size_t threads) {
  const std::uint64_t min_chunk = std::max<std::uint64_t>(kMinChunk, 8 * std::uint64_t(k));
  return std::size_t(std::clamp<std::uint64_t>(length / min_chunk, 1, threads));
}

template <class T, class Index> struct RowJob {
  const TopkPlan& plan;
  const T* values;
  const Index* input_indices;
  T* out_values;
  Index* out_indices;

  const T* row(std::size_t r) const { return values + plan.row_begin(r); }
  const Index* row_input_indices(std::size_t r) const {
    return input_indices ? input_indices + plan.row_begin(r) : nullptr;
  }
  struct Scratch {  // one per thread, reused across its rows
    std::vector<Entry<key_bits_t<T>>> entries;
    std::vector<key_bits_t<T>> ranks;
  };

  void write(std::size_t r, std::vector<Entry<key_bits_t<T>>>& winners, bool by_position) const {
    write_row<T, Index>(plan, row(r), row_input_indices(r), winners, by_position, out_values + r * plan.k,
                        out_indices + r * plan.k);
  }

  // One row on the calling thread.
  void run_row(std::size_t r, Scratch& scratch) const {
    const std::uint64_t length = plan.row_end(r) - plan.row_begin(r);
    if (filter_pays(length, plan.k)) {
      best_entries<T>(row(r), 0, length, plan.k, plan.options, scratch.entries);
      write(r, scratch.entries, false);
      return;
    }
    with_rank_policy(plan.options, [&]<bool Largest, bool IncludeNan>() {
      best_entries_dense<T, Largest, IncludeNan>(row(r), length, plan.k, scratch.ranks, scratch.entries);
    });
    write(r, scratch.entries, true);
  }

  // One row split into `chunks` over as many threads, the chunks' winners merged.
  void run_row_in_chunks(std::size_t r, std::size_t chunks) const {
    using U = key_bits_t<T>;
    const std::uint64_t length = plan.row_end(r) - plan.row_begin(r);
    std::vector<std::vector<Entry<U>>> winners(chunks);
    auto chunk = [&](std::size_t c) {
      best_entries<T>(row(r), length * c / chunks, length * (c + 1) / chunks, plan.k, plan.options, winners[c]);
    };
    {
      std::vector<std::jthread> pool;
      for (std::size_t c = 1; c < chunks; ++c) pool.emplace_back(chunk, c);
      chunk(0);
    }
    std::vector<Entry<U>> merged;
    for (const auto& w : winners) merged.insert(merged.end(), w.begin(), w.end());
    const std::size_t taken = std::min<std::size_t>(plan.k, length);
    if (merged.size() > taken) cut_to(merged, taken);
    write(r, merged, false);
  }
};

template <class T, class Index>
void topk_rows(const TopkPlan& plan, const void* values, const void* input_indices, void* out_values,
               void* out_indices, unsigned threads) {
  const RowJob<T, Index> job{plan, static_cast<const T*>(values), static_cast<const Index*>(input_indices),
                             static_cast<T*>(out_values), static_cast<Index*>(out_indices)};
  const std::size_t host_threads = std::max<std::size_t>(1, threads);
  if (plan.rows < host_threads) {  // fewer rows than threads: each row in turn, split when it pays
    typename RowJob<T, Index>::Scratch scratch;
    for (std::size_t r = 0; r < plan.rows; ++r) {
      const std::size_t chunks = chunks_for(plan.row_end(r) - plan.row_begin(r), plan.k, host_threads);
      if (chunks > 1)
        job.run_row_in_chunks(r, chunks);
      else
        job.run_row(r, scratch);
    }
    return;
  }
  const std::size_t workers = std::min<std::size_t>(host_threads, plan.rows);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    typename RowJob<T, Index>::Scratch scratch;
    for (std::size_t r; (r = next.fetch_add(1)) < plan.rows;) job.run_row(r, scratch);
  };
  std::vector<std::jthread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
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
