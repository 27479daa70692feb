// CPU backend sort: a parallel, stable LSD radix sort on host threads.
//
// One read counts every digit of every key (encoding as it reads); digits on which all keys
// agree are skipped; each remaining digit is one stable scatter between the caller's array and
// one ping-pong buffer, the first encoding as it reads and the last decoding as it writes. Each
// thread owns a contiguous chunk of the source; its bucket offsets come from the per-thread
// counts (prefix over digits, then over threads), which is what keeps the scatter stable.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <barrier>
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
constexpr std::size_t insertion_sort_below = 64;
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

// Stable insertion sort for tiny inputs, on the bits [begin_bit, end_bit) of the encoding.
template <class T, class V>
void insertion_sort(const SortPlan& plan, void* keys, void* values) {
  using U = key_bits_t<T>;
  const EncodeKeys<T> encode{plan.order};
  const int width = plan.end_bit - plan.begin_bit;
  const U mask = width >= int(sizeof(U) * 8) ? U(~U(0)) : U((U(1) << width) - 1);
  auto rank = [&](U raw) { return U((encode(raw) >> plan.begin_bit) & mask); };
  for (std::size_t i = 1; i < plan.n; ++i) {
    const U key = load<U>(keys, i);
    const U key_rank = rank(key);
    V value{};
    if constexpr (has_values_v<V>) value = load<V>(values, i);
    std::size_t j = i;
    for (; j > 0 && key_rank < rank(load<U>(keys, j - 1)); --j) {
      store(keys, j, load<U>(keys, j - 1));
      if constexpr (has_values_v<V>) store(values, j, load<V>(values, j - 1));
    }
    store(keys, j, key);
    if constexpr (has_values_v<V>) store(values, j, value);
  }
}

// Everything the threads of one sort share. Per-thread arrays are indexed [thread][...].
template <class U, class V> struct SharedState {
  DigitPlan digits;
  unsigned workers = 1;
  std::size_t n = 0;
  void* keys = nullptr;
  void* values = nullptr;
  AlignedBytes key_buffer, value_buffer;             // the ping-pong partners of keys and values
  std::vector<std::size_t> all_digit_counts;         // [thread][pass][digit], from the first read
  std::vector<std::size_t> pass_counts;              // [thread][digit], recounted for later passes
  std::vector<std::size_t> count_scratch;            // [thread][4 * radix]
  std::vector<std::size_t> next, first;              // [thread][digit]: LineBuffers' bookkeeping
  AlignedBytes line_keys, line_values;               // [thread][digit][line]

  LineBuffers<U, V> line_buffers(unsigned t) {
    const std::size_t radix = digits.radix(), line = LineBuffers<U, V>::line;
    LineBuffers<U, V> b;
    b.keys = reinterpret_cast<U*>(line_keys.get()) + t * radix * line;
    b.values = has_values_v<V> ? reinterpret_cast<V*>(line_values.get()) + t * radix * line : nullptr;
    b.next = next.data() + t * radix;
    b.first = first.data() + t * radix;
    return b;
  }
};

template <class T, class V> class RadixSort {
  using U = key_bits_t<T>;

 public:
  RadixSort(const SortPlan& plan, void* keys, void* values, unsigned threads) : plan_(plan) {
    auto& s = state_;
    s.n = plan.n;
    s.keys = keys;
    s.values = values;
    s.digits = plan_digits(plan.begin_bit, plan.end_bit, digit_bits_for(plan.n));
    s.workers = unsigned(std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(1, plan.n / min_keys_per_thread)));
    const std::size_t value_bytes = has_values_v<V> ? sizeof(V) : 0;
    require_host_memory(plan.n * (sizeof(U) + value_bytes), "cpu sort: the ping-pong buffer");
    s.key_buffer = allocate_aligned(plan.n * sizeof(U));
    if constexpr (has_values_v<V>) s.value_buffer = allocate_aligned(plan.n * sizeof(V));
    const std::size_t radix = s.digits.radix(), line = LineBuffers<U, V>::line;
    s.all_digit_counts.resize(std::size_t(s.workers) * s.digits.passes * radix);
    s.pass_counts.resize(std::size_t(s.workers) * radix);
    s.count_scratch.resize(std::size_t(s.workers) * 4 * radix);
    s.next.resize(std::size_t(s.workers) * radix);
    s.first.resize(std::size_t(s.workers) * radix);
    s.line_keys = allocate_aligned(std::size_t(s.workers) * radix * line * sizeof(U));
    if constexpr (has_values_v<V>) s.line_values = allocate_aligned(std::size_t(s.workers) * radix * line * sizeof(V));
  }

  void run() {
    const unsigned workers = state_.workers;
    std::barrier<> sync(workers);
    if (workers == 1) return work(0, sync);
    // Threads wait at `start` so that a failed thread creation can call the others off before
    // any of them reaches a barrier that would never fill.
    std::latch start(1);
    std::atomic<bool> abandoned{false};
    std::vector<std::jthread> pool;
    try {
      for (unsigned t = 1; t < workers; ++t)
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
  void work(unsigned t, std::barrier<>& sync) {
    auto& s = state_;
    const DigitPlan& digits = s.digits;
    const std::size_t radix = digits.radix(), n = s.n;
    const std::size_t lo = n * t / s.workers, hi = n * (t + 1) / s.workers;
    const EncodeKeys<T> encode{plan_.order};
    std::size_t* my_all_counts = s.all_digit_counts.data() + std::size_t(t) * digits.passes * radix;
    count_all_digits<U>(s.keys, lo, hi, encode, digits.shift.data(), digits.bits.data(), digits.passes, radix,
                        my_all_counts);
    sync.arrive_and_wait();

    // Every thread derives the same passes and totals from the shared counts.
    std::vector<std::size_t> totals(std::size_t(digits.passes) * radix, 0);
    for (unsigned w = 0; w < s.workers; ++w)
      for (std::size_t i = 0; i < totals.size(); ++i)
        totals[i] += s.all_digit_counts[std::size_t(w) * digits.passes * radix + i];
    std::vector<int> active;
    for (int p = 0; p < digits.passes; ++p)
      if (!digit_is_constant(totals.data() + std::size_t(p) * radix, radix, n)) active.push_back(p);

    void* key_arrays[2] = {s.keys, s.key_buffer.get()};
    void* value_arrays[2] = {s.values, s.value_buffer.get()};
    const LineBuffers<U, V> buffers = s.line_buffers(t);
    for (std::size_t k = 0; k < active.size(); ++k) {
      const int p = active[k];
      const void* keys_in = key_arrays[k % 2];
      const void* values_in = value_arrays[k % 2];
      // The first pass's per-thread counts came with the first read; later ones are recounted.
      auto counts_of = [&](unsigned w) {
        return k == 0 ? s.all_digit_counts.data() + (std::size_t(w) * digits.passes + p) * radix
                      : s.pass_counts.data() + std::size_t(w) * radix;
      };
      if (k > 0) {
        count_digit<U>(keys_in, lo, hi, digits.shift[p], digits.bits[p], radix, counts_of(t),
                       s.count_scratch.data() + std::size_t(t) * 4 * radix);
        sync.arrive_and_wait();
      }
      std::size_t offset = 0;  // bucket d of thread t starts after all smaller digits, then after earlier threads
      for (std::size_t d = 0; d < radix; ++d) {
        std::size_t start = offset;
        for (unsigned w = 0; w < t; ++w) start += counts_of(w)[d];
        buffers.next[d] = start;
        offset += totals[std::size_t(p) * radix + d];
      }
      scatter(k == 0, k + 1 == active.size(), keys_in, values_in, lo, hi, key_arrays[(k + 1) % 2],
              value_arrays[(k + 1) % 2], digits.shift[p], digits.bits[p], radix, buffers);
      sync.arrive_and_wait();
    }
    if (active.size() % 2 == 1) {  // an odd number of passes left the result in the buffer
      std::memcpy(static_cast<unsigned char*>(s.keys) + lo * sizeof(U), s.key_buffer.get() + lo * sizeof(U),
                  (hi - lo) * sizeof(U));
      if constexpr (has_values_v<V>)
        std::memcpy(static_cast<unsigned char*>(s.values) + lo * sizeof(V), s.value_buffer.get() + lo * sizeof(V),
                    (hi - lo) * sizeof(V));
    }
  }

  // Picks the scatter whose codecs fit the pass: encode on the first, decode on the last.
  void scatter(bool first_pass, bool last_pass, const void* keys_in, const void* values_in, std::size_t lo,
               std::size_t hi, void* keys_out, void* values_out, int shift, int bits, std::size_t radix,
               const LineBuffers<U, V>& buffers) const {
    const EncodeKeys<T> encode{plan_.order};
    const DecodeKeys<T> decode{plan_.order};
    if (first_pass && last_pass)
      scatter_digit<U, V>(keys_in, values_in, lo, hi, keys_out, values_out, shift, bits, radix, encode, decode, buffers);
    else if (first_pass)
      scatter_digit<U, V>(keys_in, values_in, lo, hi, keys_out, values_out, shift, bits, radix, encode,
                          KeepEncoded<U>{}, buffers);
    else if (last_pass)
      scatter_digit<U, V>(keys_in, values_in, lo, hi, keys_out, values_out, shift, bits, radix, KeepBits<U>{}, decode,
                          buffers);
    else
      scatter_digit<U, V>(keys_in, values_in, lo, hi, keys_out, values_out, shift, bits, radix, KeepBits<U>{},
                          KeepEncoded<U>{}, buffers);
  }

  SortPlan plan_;
  SharedState<U, V> state_;
};

template <class T, class V> void sort_typed(const SortPlan& plan, void* keys, void* values, unsigned threads) {
  if (plan.n < insertion_sort_below) return insertion_sort<T, V>(plan, keys, values);
  RadixSort<T, V>(plan, keys, values, threads).run();
}

}  // namespace
}  // namespace cpu_radix

void cpu_sort(const SortPlan& plan, void* keys, void* values, unsigned threads) {
  if (plan.n <= 1 || plan.begin_bit >= plan.end_bit) return;
  visit_key_type(plan.type, [&](auto tag) {
    using T = decltype(tag);
    switch (plan.value_bytes) {
      case 0: return cpu_radix::sort_typed<T, cpu_radix::NoValues>(plan, keys, values, threads);
      case 4: return cpu_radix::sort_typed<T, std::uint32_t>(plan, keys, values, threads);
      case 8: return cpu_radix::sort_typed<T, std::uint64_t>(plan, keys, values, threads);
      default:
        throw_error(ErrorCode::invalid_argument,
                    "sort: values are " + std::to_string(plan.value_bytes) + " bytes wide",
                    "use 4- or 8-byte values (for wider payloads sort indices, then gather)");
    }
  });
}

}  // namespace radixmesh::detail
