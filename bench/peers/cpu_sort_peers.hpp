// The CPU sorts radixmesh's CPU backend is measured against: std::sort, boost::sort::spreadsort
// (a hybrid radix sort) and boost::sort::block_indirect_sort (parallel). Each sorts into
// radixmesh's order (keys.hpp key_less), so their output can serve as the reference.
//
// Peers sort "records": the bare keys when value_bytes is 0, otherwise {key, value} structs,
// the array of structs a user of these libraries holds (they have no separate value array).
#pragma once
#include <cstddef>
#include <string_view>

#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"

namespace radixmesh::bench {

enum class CpuSortPeer { std_sort, spreadsort, block_indirect_sort };
inline constexpr CpuSortPeer all_cpu_sort_peers[] = {CpuSortPeer::std_sort, CpuSortPeer::spreadsort,
                                                     CpuSortPeer::block_indirect_sort};
std::string_view name_of(CpuSortPeer peer);

// Bytes of one record of `type` keys with `value_bytes` values (0, 4 or 8).
std::size_t cpu_peer_record_bytes(KeyType type, std::size_t value_bytes);
// Interleaves keys[i] and values[i] (values may be null when value_bytes is 0) into records.
void make_cpu_peer_records(KeyType type, std::size_t value_bytes, const void* keys, const void* values,
                           std::size_t n, void* records);
// Copies the key (and value) of each record back out, to compare with radixmesh's arrays.
void split_cpu_peer_records(KeyType type, std::size_t value_bytes, const void* records, std::size_t n, void* keys,
                            void* values);
// Sorts n records by key in `order`; `threads` is used by the parallel peers only.
void run_cpu_sort_peer(CpuSortPeer peer, KeyType type, std::size_t value_bytes, Order order, void* records,
                       std::size_t n, unsigned threads);

}  // namespace radixmesh::bench
