// The two loops of a parallel LSD radix sort on host threads, each run by one thread over its
// chunk: counting digits, and the stable scatter through software write-combining buffers.
//
// Keys travel as their unsigned encodings (keys.hpp). The first pass reads the caller's raw
// keys and encodes as it reads (EncodeKeys), the last pass decodes as it writes (DecodeKeys);
// the passes between use KeepBits and are shared by every key type of one width.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "radixmesh/keys.hpp"

namespace radixmesh::detail::cpu_radix {

// Arrays are addressed as raw bytes and read/written through memcpy: the caller's keys are
// floats or halves, and reading them as unsigned integers directly would break strict aliasing.
template <class X> inline X load(const void* base, std::size_t i) {
  X x;
  std::memcpy(&x, static_cast<const unsigned char*>(base) + i * sizeof(X), sizeof(X));
  return x;
}
template <class X> inline void store(void* base, std::size_t i, X x) {
  std::memcpy(static_cast<unsigned char*>(base) + i * sizeof(X), &x, sizeof(X));
}

// Keys-only sorts carry this in place of a value type.
struct NoValues {};
template <class V> inline constexpr bool has_values_v = !std::is_same_v<V, NoValues>;

// Read-side codecs: from what is stored in the source array to the encoding.
template <class U> struct KeepBits {
  static constexpr bool encodes = false;
  U operator()(U bits) const { return bits; }
};
template <class T> struct EncodeKeys {
  static constexpr bool encodes = true;
  Order order;
  key_bits_t<T> operator()(key_bits_t<T> raw) const { return encode_key(from_bits<T>(raw), order); }
};
// Write-side codecs: from the encoding to what is stored in the destination array.
template <class U> struct KeepEncoded {
  static constexpr bool decodes = false;
  U operator()(U encoded) const { return encoded; }
};
template <class T> struct DecodeKeys {
  static constexpr bool decodes = true;
  Order order;
  key_bits_t<T> operator()(key_bits_t<T> encoded) const { return to_bits(decode_key<T>(encoded, order)); }
};

// Counts every planned digit of keys[lo, hi) in one read: histograms[p * radix + digit].
template <class U, class Encode>
void count_all_digits(const void* keys, std::size_t lo, std::size_t hi, Encode encode, const int* shifts, const int* bits, int passes,
                      std::size_t radix, std::size_t* histograms) {
  std::fill(histograms, histograms + std::size_t(passes) * radix, std::size_t(0));
  for (std::size_t i = lo; i < hi; ++i) {
    const U key = encode(load<U>(keys, i));
    for (int p = 0; p < passes; ++p)
      ++histograms[std::size_t(p) * radix + ((key >> shifts[p]) & ((U(1) << bits[p]) - 1))];
  }
}

// Counts one digit of already-encoded keys. Four interleaved tables keep runs of equal digits
// (sorted or heavily duplicated input) from serializing on one counter's store-to-load latency.
template <class U>
void count_digit(const void* keys, std::size_t lo, std::size_t hi, int shift, int bits, std::size_t radix, std::size_t* histogram,
                 std::size_t* scratch /* 4 * radix */) {
  std::fill(scratch, scratch + 4 * radix, std::size_t(0));
  const U mask = U((U(1) << bits) - 1);
  std::size_t i = lo;
  for (; i + 4 <= hi; i += 4) {
    ++scratch[(load<U>(keys, i) >> shift) & mask];
    ++scratch[radix + ((load<U>(keys, i + 1) >> shift) & mask)];
    ++scratch[2 * radix + ((load<U>(keys, i + 2) >> shift) & mask)];
    ++scratch[3 * radix + ((load<U>(keys, i + 3) >> shift) & mask)];
  }
  for (; i < hi; ++i) ++scratch[(load<U>(keys, i) >> shift) & mask];
  for (std::size_t d = 0; d < radix; ++d)
    histogram[d] = scratch[d] + scratch[radix + d] + scratch[2 * radix + d] + scratch[3 * radix + d];
}

// Per-thread staging for the scatter: one cache line of keys (and the matching values) per
// bucket, so that memory sees whole-line writes instead of one element per line per bucket.
template <class U, class V> struct LineBuffers {
  static constexpr std::size_t line = 64 / sizeof(U);  // keys per 64-byte line
  U* keys;                 // radix * line, 64-byte aligned
  V* values;               // radix * line (unused for NoValues)
  std::size_t* next;       // radix: the next destination index of each bucket
  std::size_t* first;      // radix: this thread's first destination index of each bucket
};

template <class U, class V>
inline void copy_run(const LineBuffers<U, V>& buffers, std::size_t bucket, std::size_t slot, std::size_t count,
                     std::size_t destination, void* keys_out, void* values_out) {
  constexpr std::size_t line = LineBuffers<U, V>::line;
  std::memcpy(static_cast<unsigned char*>(keys_out) + destination * sizeof(U), buffers.keys + bucket * line + slot,
              count * sizeof(U));
  if constexpr (has_values_v<V>)
    std::memcpy(static_cast<unsigned char*>(values_out) + destination * sizeof(V),
                buffers.values + bucket * line + slot, count * sizeof(V));
}

// Stable scatter of keys[lo, hi) by digit (key >> shift) & mask into the buckets whose start
// indices for this thread are in buffers.next (advanced as it writes). Line boundaries are
// reckoned on the destination's addresses so that full-line flushes are aligned.
template <class U, class V, class Read, class Write>
void scatter_digit(const void* keys_in, const void* values_in, std::size_t lo, std::size_t hi, void* keys_out,
                   void* values_out, int shift, int bits, std::size_t radix, Read read, Write write,
                   const LineBuffers<U, V>& buffers) {
  constexpr std::size_t line = LineBuffers<U, V>::line;
  const std::size_t misalign = (reinterpret_cast<std::uintptr_t>(keys_out) / sizeof(U)) & (line - 1);
  const U mask = U((U(1) << bits) - 1);
  std::copy(buffers.next, buffers.next + radix, buffers.first);
  for (std::size_t i = lo; i < hi; ++i) {
    const U stored = load<U>(keys_in, i);
    const U key = read(stored);
    const std::size_t bucket = (key >> shift) & mask;
    const std::size_t at = buffers.next[bucket]++;
    const std::size_t slot = (at + misalign) & (line - 1);
    // Encoding then decoding in one pass gives back the stored bits.
    if constexpr (Read::encodes && Write::decodes) buffers.keys[bucket * line + slot] = stored;
    else buffers.keys[bucket * line + slot] = write(key);
    if constexpr (has_values_v<V>) buffers.values[bucket * line + slot] = load<V>(values_in, i);
    if (slot == line - 1) {
      const std::size_t count = std::min(line, at + 1 - buffers.first[bucket]);
      copy_run(buffers, bucket, line - count, count, at + 1 - count, keys_out, values_out);
    }
  }
  for (std::size_t bucket = 0; bucket < radix; ++bucket) {  // the partial last line of each bucket
    const std::size_t end = buffers.next[bucket];
    const std::size_t count = std::min((end + misalign) & (line - 1), end - buffers.first[bucket]);
    if (count) copy_run(buffers, bucket, (end - count + misalign) & (line - 1), count, end - count, keys_out, values_out);
  }
}

}  // namespace radixmesh::detail::cpu_radix
