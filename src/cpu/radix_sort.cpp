// CPU backend sort: a parallel, stable radix sort on host threads (class RadixSort below).
//
// Large inputs are split once, in parallel, by their most significant varying digit, from the
// caller's array into one ping-pong buffer (encoding as it reads); each bucket is then finished
// by one thread, in cache: further splits, LSD passes over the last few varying digits, or
// insertion sort for a few dozen keys, decoding on the last write. Bits on which all keys of a
// range agree are never sorted on. Measured on a 2-core EPYC (2*10^7 uniform keys, one thread,
// CPU time), this beat a pure LSD sort with 11-bit digits (which beat 8-bit ones by 1.5x) by
// 1.15x on u32 and 2.1x on u64: most of its passes run in cache instead of in DRAM.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cstdlib>
#include <latch>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "core/backends.hpp"
#include "cpu/radix_sort_digits.hpp"
#include "cpu/radix_sort_kernels.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace cpu_radix {
namespace {

// Below this many keys a stable insertion sort beats setting up radix passes.
constexpr std::size_t insertion_sort_below = 32;
// Each extra thread must have at least this many keys to pay for its start and the barriers.
constexpr std::size_t min_keys_per_thread = std::size_t(1) << 16;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<unsigned char[], FreeDeleter>;

// 64-byte aligned (the scatter's line flushes), on transparent huge pages when big: the scatter
// writes to thousands of places at once and 4 KiB pages would thrash the TLB.
AlignedBytes allocate_aligned(std::size_t bytes) {
  constexpr std::size_t huge_page = std::size_t(2) << 20;
  const bool huge = bytes >= 4 * huge_page;
  const std::size_t alignment = huge ? huge_page : 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw_error(ErrorCode::out_of_memory, "cpu sort: cannot allocate " + std::to_string(rounded) + " bytes",
                      "sort fewer keys at once, or free host memory");
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
  return AlignedBytes(static_cast<unsigned char*>(p));
}

// Stable insertion sort of [lo, hi) in place, for tiny ranges, on the bits [begin_bit,
// end_bit) of the encoding (`read` turns what is stored into the encoding).
template <class U, class V, class Read>
void insertion_sort(void* keys, void* values, std::size_t lo, std::size_t hi, Read read, int begin_bit,
                    int end_bit) {
  const int width = end_bit - begin_bit;
  const U mask = width >= int(sizeof(U) * 8) ? U(~U(0)) : U((U(1) << width) - 1);
  auto rank = [&](U stored) { return U((read(stored) >> begin_bit) & mask); };
  for (std::size_t i = lo + 1; i < hi; ++i) {
    const U key = load<U>(keys, i);
    const U key_rank = rank(key);
    V value{};
    if constexpr (has_values_v<V>) value = load<V>(values, i);
    std::size_t j = i;
    for (; j > lo && key_rank < rank(load<U>(keys, j - 1)); --j) {
      store(keys, j, load<U>(keys, j - 1));
      if constexpr (has_values_v<V>) store(values, j, load<V>(values, j - 1));
    }
    store(keys, j, key);
    if constexpr (has_values_v<V>) store(values, j, value);
  }
}

// Ranges of at most this many bytes of keys are scattered directly: they sit in the L2 cache.
constexpr std::size_t direct_scatter_bytes = std::size_t(1) << 19;
// Such a range with at most this many bits left is finished by LSD passes (two 11-bit digits).
constexpr int in_cache_lsd_bits = 2 * max_digit_bits;
// Every split but the last consumes at least 4 bits, so a 64-bit key is split at most 16 times.
constexpr int max_depth = 17;

// A range in cache splits into at most 2^CpuSortVariant::in_cache_digit_bits = 512 buckets: its keys
// then take one more in-cache level before insertion sort instead of an insertion sort of ~24
// keys each. On the 2-core development machine (`bench_sort --n 100000000 --type u64 --dist
// uniform|zipf --reps 3 --threads 2`, 2 threads): uniform 800 ms against 1092 with 2048 buckets,
// Zipf(1.0) 766 against 786 (docs/design/sort.md); `bench_sort --previous` times both in one run.
// u32 keys' in-cache ranges have at most 22 bits left and take the LSD path.
//
// A split aims at about eight keys per bucket (few enough for insertion sort to finish them
// cheaply), with at most 2048 buckets so that counters and line buffers stay in L1/L2, and at
// most 2^in_cache_digit_bits for a range that already sits in cache (above).
inline int digit_bits_for_range(std::size_t n, std::size_t key_bytes, int in_cache_digit_bits) {
  const int cap = n * key_bytes <= direct_scatter_bytes ? in_cache_digit_bits : max_digit_bits;
  return std::clamp(int(std::bit_width(n)) - 3, 4, cap);
}

// Per-thread working memory, sized for the widest digit.
template <class U, class V> struct ThreadScratch {
  std::vector<std::size_t> counts;         // [digit]
  std::vector<std::size_t> count_scratch;  // [4 * digit]
  std::vector<std::size_t> next, first;    // [digit]: the scatter's bookkeeping
  std::vector<std::size_t> bounds;         // [depth][digit + 1]: bucket boundaries of each level
  AlignedBytes line_keys, line_values;     // [digit][line]
  LineBuffers<U, V> buffers{};

  explicit ThreadScratch(std::size_t radix) {
    constexpr std::size_t line = LineBuffers<U, V>::line;
    counts.resize(radix);
    count_scratch.resize(4 * radix);
    next.resize(radix);
    first.resize(radix);
    bounds.resize(max_depth * (radix + 1));
    line_keys = allocate_aligned(radix * line * sizeof(U));
    if constexpr (has_values_v<V>) line_values = allocate_aligned(radix * line * sizeof(V));
    buffers.keys = reinterpret_cast<U*>(line_keys.get());
    buffers.values = has_values_v<V> ? reinterpret_cast<V*>(line_values.get()) : nullptr;
    buffers.next = next.data();
    buffers.first = first.data();
  }
};

// A stable radix sort that splits by the most significant *varying* digit first (MSD), then
// recurses into each bucket with the bits below it, ending each bucket with insertion sort once
// it is a few dozen keys. The first split is parallel: every thread counts and scatters its
// chunk of the caller's array into the buffer (the classic parallel LSD pass: a bucket's part
// from thread t follows the parts of earlier threads, which is what keeps it stable); the
// buckets, each a small fraction of the input and soon in cache, then go to whichever thread is
// free. Every split skips the bits on which all keys of its range agree, so reduced-entropy and
// heavily duplicated inputs take fewer passes. Ping-pong between the caller's array and one
// buffer; whatever a bucket ends in is copied back, decoded, at its leaf.
template <class T, class V> class RadixSort {
  using U = key_bits_t<T>;

 public:
  RadixSort(const SortPlan& plan, void* keys, void* values, unsigned threads, CpuSortVariant variant)
      : plan_(plan), variant_(variant) {
    workers_ = unsigned(std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(1, plan.n / min_keys_per_thread)));
    const std::size_t value_bytes = has_values_v<V> ? sizeof(V) : 0;
    require_host_memory(plan.n * (sizeof(U) + value_bytes), "cpu sort: the ping-pong buffer");
    key_buffer_ = allocate_aligned(plan.n * sizeof(U));
    if constexpr (has_values_v<V>) value_buffer_ = allocate_aligned(plan.n * sizeof(V));
    keys_[0] = keys;
    keys_[1] = key_buffer_.get();
    values_[0] = values;
    values_[1] = value_buffer_.get();
    varying_.assign(workers_, U(0));
    scratch_.reserve(workers_);
    for (unsigned t = 0; t < workers_; ++t) scratch_.emplace_back(std::size_t(1) << max_digit_bits);
  }

  void run() {
    if (workers_ == 1) return sort_range(scratch_[0], 0, false, 0, plan_.n, plan_.begin_bit, plan_.end_bit, 0);
    std::barrier<> sync(workers_);
    // Threads wait at `start` so that a failed thread creation can call the others off before
    // any of them reaches a barrier that would never fill.
    std::latch start(1);
    std::atomic<bool> abandoned{false};
    std::vector<std::jthread> pool;
    try {
      for (unsigned t = 1; t < workers_; ++t)
        pool.emplace_back([&, t] {
          start.wait();
          if (!abandoned) work(t, sync);
        });
    } catch (const std::system_error& e) {
      abandoned = true;
      start.count_down();
      throw_error(ErrorCode::internal, std::string("cpu sort: cannot start a thread: ") + e.what(),
                  "run with fewer threads (Context::cpu(threads))");
    }
    start.count_down();
    work(0, sync);
  }

 private:
  U range_mask(int begin_bit, int end_bit) const {
    const int width = end_bit - begin_bit;
    const U low = width >= int(sizeof(U) * 8) ? U(~U(0)) : U((U(1) << width) - 1);
    return U(low << begin_bit);
  }

  // The parallel first split of the whole input, thread t's share.
  void work(unsigned t, std::barrier<>& sync) {
    const std::size_t n = plan_.n, lo = n * t / workers_, hi = n * (t + 1) / workers_;
    const int begin_bit = plan_.begin_bit, end_bit = plan_.end_bit, digit_bits = digit_bits_for_range(n, sizeof(U), variant_.in_cache_digit_bits);
    ThreadScratch<U, V>& mine = scratch_[t];
    const EncodeKeys<T> encode{plan_.order};
    // Guess that the top digit varies (count it while finding which bits vary); recount if not.
    int shift = std::max(begin_bit, end_bit - digit_bits), bits = end_bit - shift;
    const U reference = encode(load<U>(keys_[0], 0));
    const U varying = U(count_digit<U>(keys_[0], lo, hi, encode, shift, bits, std::size_t(1) << bits,
                                       mine.counts.data(), mine.count_scratch.data()) |
                        (encode(load<U>(keys_[0], lo)) ^ reference));
    varying_[t] = varying;
    sync.arrive_and_wait();
    U all_varying = 0;
    for (unsigned w = 0; w < workers_; ++w) all_varying = U(all_varying | varying_[w]);
    all_varying = U(all_varying & range_mask(begin_bit, end_bit));
    if (all_varying == 0) return;  // every key has the same bits in the range: already sorted
    const int top = std::bit_width(all_varying) - 1;
    if (std::max(begin_bit, top + 1 - digit_bits) != shift) {
      shift = std::max(begin_bit, top + 1 - digit_bits);
      bits = top + 1 - shift;
      count_digit<U>(keys_[0], lo, hi, encode, shift, bits, std::size_t(1) << bits, mine.counts.data(),
                     mine.count_scratch.data());
      sync.arrive_and_wait();
    }
    const std::size_t radix = std::size_t(1) << bits;

    // Thread t's part of bucket d follows every smaller digit and the earlier threads' parts of d.
    std::size_t* bounds = mine.bounds.data();
    std::size_t offset = 0;
    for (std::size_t d = 0; d < radix; ++d) {
      bounds[d] = offset;
      std::size_t start = offset;
      for (unsigned w = 0; w < workers_; ++w) {
        if (w < t) start += scratch_[w].counts[d];
        offset += scratch_[w].counts[d];
      }
      mine.next[d] = start;
    }
    bounds[radix] = n;
    const bool last_split = shift == begin_bit;
    scatter(true, last_split, 0, lo, hi, shift, bits, mine);
    sync.arrive_and_wait();  // the buckets are complete
    if (last_split) return finish_range(1, false, lo, hi);
    for (std::size_t d; (d = next_bucket_.fetch_add(1, std::memory_order_relaxed)) < radix;)
      sort_range(mine, 1, true, bounds[d], bounds[d + 1], begin_bit, shift, 1);
  }

  // One thread sorts [lo, hi), which sits in keys_[from] (encoded or not), by the bits
  // [begin_bit, end_bit) of the encoding, leaving it decoded in the caller's array.
  void sort_range(ThreadScratch<U, V>& mine, int from, bool encoded, std::size_t lo, std::size_t hi, int begin_bit,
                  int end_bit, int depth) {
    const std::size_t n = hi - lo;
    if (n < insertion_sort_below) {
      if (encoded) insertion_sort<U, V>(keys_[from], values_[from], lo, hi, KeepBits<U>{}, begin_bit, end_bit);
      else insertion_sort<U, V>(keys_[from], values_[from], lo, hi, EncodeKeys<T>{plan_.order}, begin_bit, end_bit);
      return finish_range(from, encoded, lo, hi);
    }
    const int digit_bits = digit_bits_for_range(n, sizeof(U), variant_.in_cache_digit_bits);
    int shift = std::max(begin_bit, end_bit - digit_bits), bits = end_bit - shift;
    auto count = [&] {
      return encoded ? count_digit<U>(keys_[from], lo, hi, KeepBits<U>{}, shift, bits, std::size_t(1) << bits,
                                      mine.counts.data(), mine.count_scratch.data())
                     : count_digit<U>(keys_[from], lo, hi, EncodeKeys<T>{plan_.order}, shift, bits,
                                      std::size_t(1) << bits, mine.counts.data(), mine.count_scratch.data());
    };
    const U varying = U(count() & range_mask(begin_bit, end_bit));
    if (varying == 0) return finish_range(from, encoded, lo, hi);
    const int top = std::bit_width(varying) - 1;
    if (n * sizeof(U) <= direct_scatter_bytes && top + 1 - begin_bit <= in_cache_lsd_bits)
      return lsd_in_cache(mine, from, encoded, lo, hi, begin_bit, top + 1, varying);
    if (std::max(begin_bit, top + 1 - digit_bits) != shift) {
      shift = std::max(begin_bit, top + 1 - digit_bits);
      bits = top + 1 - shift;
      count();
    }
    const std::size_t radix = std::size_t(1) << bits;
    std::size_t* bounds = mine.bounds.data() + std::size_t(depth) * (mine.next.size() + 1);
    for (std::size_t d = 0, offset = lo; d < radix; offset += mine.counts[d++]) bounds[d] = mine.next[d] = offset;
    bounds[radix] = hi;
    const bool last_split = shift == begin_bit;
    scatter(!encoded, last_split, from, lo, hi, shift, bits, mine);
    if (last_split) return finish_range(1 - from, false, lo, hi);
    for (std::size_t d = 0; d < radix; ++d)
      sort_range(mine, 1 - from, true, bounds[d], bounds[d + 1], begin_bit, shift, depth + 1);
  }

  // A range in cache with few bits left to sort: LSD passes over the digits that have a varying
  // bit (the others are constant and skipped), cheaper than splitting down to tiny leaves.
  void lsd_in_cache(ThreadScratch<U, V>& mine, int from, bool encoded, std::size_t lo, std::size_t hi, int begin_bit,
                    int end_bit, U varying) {
    const DigitPlan digits = plan_digits(begin_bit, end_bit, max_digit_bits);
    auto digit_varies = [&](int p) { return ((varying >> digits.shift[p]) & ((U(1) << digits.bits[p]) - 1)) != 0; };
    int last_varying = digits.passes - 1;
    while (!digit_varies(last_varying)) --last_varying;  // end_bit is one past the top varying bit
    int at = from;
    bool first_pass = true;
    for (int p = 0; p < digits.passes; ++p) {
      if (!digit_varies(p)) continue;
      const bool last_pass = p == last_varying;
      const bool encode_on_read = first_pass && !encoded;
      if (encode_on_read)
        count_digit<U>(keys_[at], lo, hi, EncodeKeys<T>{plan_.order}, digits.shift[p], digits.bits[p],
                       std::size_t(1) << digits.bits[p], mine.counts.data(), mine.count_scratch.data());
      else
        count_digit<U>(keys_[at], lo, hi, KeepBits<U>{}, digits.shift[p], digits.bits[p],
                       std::size_t(1) << digits.bits[p], mine.counts.data(), mine.count_scratch.data());
      for (std::size_t d = 0, offset = lo; d < (std::size_t(1) << digits.bits[p]); offset += mine.counts[d++])
        mine.next[d] = offset;
      scatter(encode_on_read, last_pass, at, lo, hi, digits.shift[p], digits.bits[p], mine);
      at = 1 - at;
      first_pass = false;
    }
    finish_range(at, false, lo, hi);
  }

  // Moves [lo, hi) from keys_[at] into the caller's arrays, decoding if it is still encoded.
  void finish_range(int at, bool encoded, std::size_t lo, std::size_t hi) {
    if (at == 0 && !encoded) return;
    const DecodeKeys<T> decode{plan_.order};
    if (encoded) {
      for (std::size_t i = lo; i < hi; ++i) store(keys_[0], i, decode(load<U>(keys_[at], i)));
    } else {
      std::memcpy(static_cast<unsigned char*>(keys_[0]) + lo * sizeof(U),
                  static_cast<const unsigned char*>(keys_[at]) + lo * sizeof(U), (hi - lo) * sizeof(U));
    }
    if constexpr (has_values_v<V>)
      if (at != 0)
        std::memcpy(static_cast<unsigned char*>(values_[0]) + lo * sizeof(V),
                    static_cast<const unsigned char*>(values_[at]) + lo * sizeof(V), (hi - lo) * sizeof(V));
  }

  // One stable scatter of [lo, hi) from keys_[from] to keys_[1 - from] (values alongside), with
  // the codecs the pass needs: encode as it reads the caller's keys, decode on the last split.
  void scatter(bool encode_on_read, bool decode_on_write, int from, std::size_t lo, std::size_t hi, int shift, int bits,
               ThreadScratch<U, V>& mine) const {
    const bool direct = (hi - lo) * sizeof(U) <= direct_scatter_bytes;
    auto run = [&](auto read, auto write) {
      if (direct)
        scatter_digit_direct<U, V>(keys_[from], values_[from], lo, hi, keys_[1 - from], values_[1 - from], shift, bits,
                                   read, write, mine.next.data());
      else
        scatter_digit<U, V>(keys_[from], values_[from], lo, hi, keys_[1 - from], values_[1 - from], shift, bits,
                            std::size_t(1) << bits, read, write, mine.buffers);
    };
    const EncodeKeys<T> encode{plan_.order};
    const DecodeKeys<T> decode{plan_.order};
    if (encode_on_read && decode_on_write) run(encode, decode);
    else if (encode_on_read) run(encode, KeepEncoded<U>{});
    else if (decode_on_write) run(KeepBits<U>{}, decode);
    else run(KeepBits<U>{}, KeepEncoded<U>{});
  }

  SortPlan plan_;
  CpuSortVariant variant_;
  unsigned workers_ = 1;
  AlignedBytes key_buffer_, value_buffer_;
  void* keys_[2] = {};    // [0] the caller's keys, [1] the buffer
  void* values_[2] = {};  // likewise for values
  std::vector<ThreadScratch<U, V>> scratch_;
  std::vector<U> varying_;  // [thread]: the bits in which the thread's keys differ from the first key
  std::atomic<std::size_t> next_bucket_{0};
};

template <class T, class V>
void sort_typed(const SortPlan& plan, void* keys, void* values, unsigned threads, CpuSortVariant variant) {
  if (plan.n < insertion_sort_below)
    return insertion_sort<key_bits_t<T>, V>(keys, values, 0, plan.n, EncodeKeys<T>{plan.order}, plan.begin_bit,
                                            plan.end_bit);
  RadixSort<T, V>(plan, keys, values, threads, variant).run();
}

}  // namespace
}  // namespace cpu_radix

void cpu_sort(const SortPlan& plan, void* keys, void* values, unsigned threads) {
  cpu_sort_variant(plan, keys, values, threads, {});
}

void cpu_sort_variant(const SortPlan& plan, void* keys, void* values, unsigned threads,
                      const CpuSortVariant& variant) {
  if (plan.n <= 1 || plan.begin_bit >= plan.end_bit) return;
  visit_key_type(plan.type, [&](auto tag) {
    using T = decltype(tag);
    switch (plan.value_bytes) {
      case 0: return cpu_radix::sort_typed<T, cpu_radix::NoValues>(plan, keys, values, threads, variant);
      case 4: return cpu_radix::sort_typed<T, std::uint32_t>(plan, keys, values, threads, variant);
      case 8: return cpu_radix::sort_typed<T, std::uint64_t>(plan, keys, values, threads, variant);
      default:
        throw_error(ErrorCode::invalid_argument,
                    "sort: values are " + std::to_string(plan.value_bytes) + " bytes wide",
                    "use 4- or 8-byte values (for wider payloads sort indices, then gather)");
    }
  });
}

}  // namespace radixmesh::detail
