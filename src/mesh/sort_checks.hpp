// The mesh sort's checks: each device's shards (and output shards), and what every participant
// must agree on (gathered once, so that every process refuses a disagreement with the same words).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "radixmesh/communicator.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

struct Agreement {
  std::uint64_t type, value_bytes, order, begin_bit, end_bit, digit_bits, keys, out_keys;
  std::uint64_t out_of_core;  // an OutOfCoreWish (core/backends.hpp); in_memory where it does not apply
};
// Throws the same Error on every process when two participants' first six words differ.
void check_agreement(std::span<const Agreement> all);

// Local device i's shard (and output shard) on mesh device `participant`, and the digit width.
void validate_shard(const ShardSortArgs& a, std::size_t i, int participant, const comm::Location& where,
                    int digit_bits);
// The shape of one side's spans: one per local device, with their devices where device-resident.
void validate_spans(const ShardSortArgs& a, const ShardSpans& side, const char* what, int locals);

}  // namespace radixmesh::detail
