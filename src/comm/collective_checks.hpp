// Checks every transport runs before a collective moves a byte, on data gathered from every
// participant, so that every process reaches the same verdict and throws the same rxm::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <chrono>

#include "radixmesh/communicator.hpp"

namespace radixmesh::comm {

// One participant's declaration for an all_to_all_v, as a flat row of
// declaration_row_length(size) words: send_counts[size], recv_counts[size], then recv_capacity,
// recv_needed (the end of its furthest receive range), elem_bytes and a shape code (0: the
// spans had size() entries and no range overflowed; otherwise which argument was malformed).
std::size_t declaration_row_length(int size);
std::vector<std::uint64_t> declaration_row(const AllToAllV& a, int size, std::size_t elem_bytes);

// rows: declaration_row_length(size) words per participant, in participant order. Throws
// rxm::Error (invalid_argument or out_of_memory) naming the first participant whose declaration
// does not fit the others: a malformed argument, elem_bytes that differ, a send count that is not
// the receiver's receive count, or a receive buffer too small for what it is to receive.
void check_declarations(std::span<const std::uint64_t> rows, int size);

// The checks of an all_to_all_placed with every participant's entry in hand (one process): a
// piece for a participant outside the mesh, a null buffer with pieces, the pieces a participant
// sends another that are not that receiver's recv_counts entry, pieces past a receive buffer
// (out_of_memory, naming the elements held and needed), or pieces of one receiver that overlap.
void check_placed(std::span<const AllToAllPlaced> all, int size);

// Throws rxm::Error: `op` could not run because participant `participant` failed with `message`.
[[noreturn]] void throw_participant_failed(const char* op, int participant, int size, const std::string& message);

// Throws rxm::Error for a timeout: `op` waited `waited` for the listed participants.
[[noreturn]] void throw_timeout(const char* op, std::span<const int> missing, int size,
                                std::chrono::milliseconds waited);

}  // namespace radixmesh::comm
