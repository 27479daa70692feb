#include "peers/cpu_sort_peers.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <boost/sort/sort.hpp>
#include <boost/sort/spreadsort/spreadsort.hpp>

namespace radixmesh::bench {

namespace {

struct KeysOnly {};
template <class T, class V> struct Record {
  T key;
  V value;
};
template <class T, class V> using record_t = std::conditional_t<std::is_same_v<V, KeysOnly>, T, Record<T, V>>;
template <class T, class V> const T& key_of(const record_t<T, V>& r) {
  if constexpr (std::is_same_v<V, KeysOnly>) return r;
  else return r.key;
}

// Calls f(T{}, V{}) for the run-time key type and value width.
template <class F> void visit_record(KeyType type, std::size_t value_bytes, F&& f) {
  visit_key_type(type, [&](auto key) {
    if (value_bytes == 4) f(key, std::uint32_t{});
    else if (value_bytes == 8) f(key, std::uint64_t{});
    else f(key, KeysOnly{});
  });
}

template <class T, class V>
void sort_records(CpuSortPeer peer, Order order, record_t<T, V>* first, std::size_t n, unsigned threads) {
  using R = record_t<T, V>;
  R* last = first + n;
  const key_less<T> less{order};
  auto record_less = [less](const R& a, const R& b) { return less(key_of<T, V>(a), key_of<T, V>(b)); };
  switch (peer) {
    case CpuSortPeer::std_sort:
      return std::sort(first, last, record_less);
    case CpuSortPeer::block_indirect_sort:
      return boost::sort::block_indirect_sort(first, last, record_less, std::max(1u, threads));
    case CpuSortPeer::spreadsort: {
      // The library's own fast paths where its order is ours (plain integers / floats, ascending,
      // keys only: its NaN order differs, which only affects NaN inputs); otherwise its
      // functor form on our encoding.
      constexpr bool plain = std::is_same_v<V, KeysOnly> && (std::is_integral_v<T> || std::is_floating_point_v<T>);
      if constexpr (plain && std::is_integral_v<T>) {
        if (order == Order::ascending) return boost::sort::spreadsort::integer_sort(first, last);
      } else if constexpr (plain) {
        if (order == Order::ascending) return boost::sort::spreadsort::float_sort(first, last);
      }
      auto shifted_encoding = [order](const R& r, unsigned shift) {
        return key_bits_t<T>(encode_key(key_of<T, V>(r), order) >> shift);
      };
      return boost::sort::spreadsort::integer_sort(first, last, shifted_encoding, record_less);
    }
  }
}

}  // namespace

std::string_view name_of(CpuSortPeer peer) {
  switch (peer) {
    case CpuSortPeer::std_sort: return "std::sort";
    case CpuSortPeer::spreadsort: return "boost::sort::spreadsort";
    case CpuSortPeer::block_indirect_sort: return "boost::sort::block_indirect_sort";
  }
  return "?";
}

std::size_t cpu_peer_record_bytes(KeyType type, std::size_t value_bytes) {
  std::size_t bytes = 0;
  visit_record(type, value_bytes, [&](auto key, auto value) { bytes = sizeof(record_t<decltype(key), decltype(value)>); });
  return bytes;
}

void make_cpu_peer_records(KeyType type, std::size_t value_bytes, const void* keys, const void* values,
                           std::size_t n, void* records) {
  visit_record(type, value_bytes, [&](auto key, auto value) {
    using T = decltype(key);
    using V = decltype(value);
    if constexpr (std::is_same_v<V, KeysOnly>) {
      std::memcpy(records, keys, n * sizeof(T));
    } else {
      auto* out = static_cast<Record<T, V>*>(records);
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(&out[i].key, static_cast<const unsigned char*>(keys) + i * sizeof(T), sizeof(T));
        std::memcpy(&out[i].value, static_cast<const unsigned char*>(values) + i * sizeof(V), sizeof(V));
      }
    }
  });
}

void split_cpu_peer_records(KeyType type, std::size_t value_bytes, const void* records, std::size_t n, void* keys,
                            void* values) {
  visit_record(type, value_bytes, [&](auto key, auto value) {
    using T = decltype(key);
    using V = decltype(value);
    if constexpr (std::is_same_v<V, KeysOnly>) {
      std::memcpy(keys, records, n * sizeof(T));
    } else {
      const auto* in = static_cast<const Record<T, V>*>(records);
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(static_cast<unsigned char*>(keys) + i * sizeof(T), &in[i].key, sizeof(T));
        if (values) std::memcpy(static_cast<unsigned char*>(values) + i * sizeof(V), &in[i].value, sizeof(V));
      }
    }
  });
}

void run_cpu_sort_peer(CpuSortPeer peer, KeyType type, std::size_t value_bytes, Order order, void* records,
                       std::size_t n, unsigned threads) {
  visit_record(type, value_bytes, [&](auto key, auto value) {
    using T = decltype(key);
    using V = decltype(value);
    sort_records<T, V>(peer, order, static_cast<record_t<T, V>*>(records), n, threads);
  });
}

}  // namespace radixmesh::bench
