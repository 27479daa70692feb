// The loops of the CPU radix sort, each run by one thread over a range: counting a digit, and
// the stable scatter by it (through software write-combining buffers when the range is far
// larger than the caches, directly when it fits).
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

// Counts one digit of keys[lo, hi) (`read` gives the encoding) and returns the bits in which
// some key differs from the first, so the caller can see which digits are worth a pass. Four
// interleaved tables keep runs of equal digits (sorted or heavily duplicated input) from
// serializing on one counter's store-to-load latency.
template <class U, class Read>
U count_digit(const void* keys, std::size_t lo, std::size_t hi, Read read, int shift, int bits, std::size_t radix,
              std::size_t* histogram, std::size_t* scratch /* 4 * radix */) {
  std::fill(scratch, scratch + 4 * radix, std::size_t(0));
  const U mask = U((U(1) << bits) - 1);
  const U reference = lo < hi ? read(load<U>(keys, lo)) : U(0);
  U varying0 = 0, varying1 = 0;
  std::size_t i = lo;
  for (; i + 4 <= hi; i += 4) {
    const U k0 = read(load<U>(keys, i)), k1 = read(load<U>(keys, i + 1));
    const U k2 = read(load<U>(keys, i + 2)), k3 = read(load<U>(keys, i + 3));
    ++scratch[(k0 >> shift) & mask];
    ++scratch[radix + ((k1 >> shift) & mask)];
    ++scratch[2 * radix + ((k2 >> shift) & mask)];
    ++scratch[3 * radix + ((k3 >> shift) & mask)];
    varying0 = U(varying0 | (k0 ^ reference) | (k1 ^ reference));
    varying1 = U(varying1 | (k2 ^ reference) | (k3 ^ reference));
  }
  for (; i < hi; ++i) {
    const U k = read(load<U>(keys, i));
    ++scratch[(k >> shift) & mask];
    varying0 = U(varying0 | (k ^ reference));
  }
  for (std::size_t d = 0; d < radix; ++d)
    histogram[d] = scratch[d] + scratch[radix + d] + scratch[2 * radix + d] + scratch[3 * radix + d];
  return U(varying0 | varying1);
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

// A full line of bucket `bucket` to destination index `destination` (whose key address is
// 64-byte aligned): fixed-size copies the compiler turns into a few vector moves.
template <class U, class V>
inline void copy_line(const LineBuffers<U, V>& buffers, std::size_t bucket, std::size_t destination, void* keys_out,
                      void* values_out) {
  constexpr std::size_t line = LineBuffers<U, V>::line;
  std::memcpy(static_cast<unsigned char*>(keys_out) + destination * sizeof(U), buffers.keys + bucket * line,
              line * sizeof(U));
  if constexpr (has_values_v<V>)
    std::memcpy(static_cast<unsigned char*>(values_out) + destination * sizeof(V), buffers.values + bucket * line,
                line * sizeof(V));
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
      if (at + 1 >= buffers.first[bucket] + line) {  // the whole line is this thread's: a fixed-size copy
        copy_line(buffers, bucket, at + 1 - line, keys_out, values_out);
      } else {  // the bucket's first line, shared with whatever precedes it
        const std::size_t count = at + 1 - buffers.first[bucket];
        copy_run(buffers, bucket, line - count, count, at + 1 - count, keys_out, values_out);
      }
    }
  }
  for (std::size_t bucket = 0; bucket < radix; ++bucket) {  // the partial last line of each bucket
    const std::size_t end = buffers.next[bucket];
    const std::size_t count = std::min((end + misalign) & (line - 1), end - buffers.first[bucket]);
    if (count) copy_run(buffers, bucket, (end - count + misalign) & (line - 1), count, end - count, keys_out, values_out);
  }
}

// The same stable scatter without staging, for ranges that fit in cache, where line
// buffers only add copies. next[bucket] holds each bucket's next destination index.
template <class U, class V, class Read, class Write>
void scatter_digit_direct(const void* keys_in, const void* values_in, std::size_t lo, std::size_t hi, void* keys_out,
                          void* values_out, int shift, int bits, Read read, Write write, std::size_t* next) {
  const U mask = U((U(1) << bits) - 1);
  for (std::size_t i = lo; i < hi; ++i) {
    const U stored = load<U>(keys_in, i);
    const U key = read(stored);
    const std::size_t at = next[(key >> shift) & mask]++;
    if constexpr (Read::encodes && Write::decodes) store(keys_out, at, stored);
    else store(keys_out, at, write(key));
    if constexpr (has_values_v<V>) store(values_out, at, load<V>(values_in, i));
  }
}

}  // namespace radixmesh::detail::cpu_radix
