#include "comm/collective_checks.hpp"

#include <algorithm>

#include "core/byte_size.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::comm {
namespace {

enum Shape : std::uint64_t { shape_ok = 0, shape_span_sizes = 1, shape_overflow = 2, shape_null = 3 };

std::string participant_name(int p, int size) {
  return "participant " + std::to_string(p) + " of " + std::to_string(size);
}

}  // namespace

std::size_t declaration_row_length(int size) { return 2 * std::size_t(size) + 4; }

std::vector<std::uint64_t> declaration_row(const AllToAllV& a, int size, std::size_t elem_bytes) {
  const std::size_t n = std::size_t(size);
  std::vector<std::uint64_t> row(declaration_row_length(size), 0);
  row[2 * n + 2] = elem_bytes;
  std::uint64_t& shape = row[2 * n + 3];
  if (a.send_counts.size() != n || a.send_displs.size() != n || a.recv_counts.size() != n ||
      a.recv_displs.size() != n) {
    shape = shape_span_sizes;
    return row;
  }
  std::uint64_t needed = 0, send_total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    row[j] = a.send_counts[j];
    row[n + j] = a.recv_counts[j];
    const std::uint64_t end = a.recv_displs[j] + a.recv_counts[j];
    if (end < a.recv_displs[j] || a.send_displs[j] + a.send_counts[j] < a.send_displs[j]) shape = shape_overflow;
    needed = std::max(needed, end);
    send_total += a.send_counts[j];
  }
  if ((send_total != 0 && a.send == nullptr) || (needed != 0 && a.recv == nullptr)) shape = shape_null;
  row[2 * n] = a.recv_capacity;
  row[2 * n + 1] = needed;
  return row;
}

void check_declarations(std::span<const std::uint64_t> rows, int size) {
  const std::size_t n = std::size_t(size), len = declaration_row_length(size);
  require(rows.size() == n * len, "all_to_all_v: internal declaration table of the wrong size",
          "report this bug");
  auto row = [&](std::size_t p) { return rows.subspan(p * len, len); };
  for (std::size_t p = 0; p < n; ++p) {
    switch (row(p)[2 * n + 3]) {
      case shape_ok: break;
      case shape_span_sizes:
        throw_error(ErrorCode::invalid_argument,
                    "all_to_all_v: " + participant_name(int(p), size) +
                        " passed counts or displacements whose length is not the mesh size " + std::to_string(n),
                    "pass send_counts, send_displs, recv_counts and recv_displs of size() entries each");
      case shape_overflow:
        throw_error(ErrorCode::invalid_argument,
                    "all_to_all_v: " + participant_name(int(p), size) +
                        " passed a displacement plus count that overflows 64 bits",
                    "pass displacements and counts in elements that fit its buffers");
      default:
        throw_error(ErrorCode::invalid_argument,
                    "all_to_all_v: " + participant_name(int(p), size) +
                        " passed a null send or receive buffer with nonzero counts",
                    "pass the buffers' storage");
    }
  }
  const std::uint64_t elem_bytes = row(0)[2 * n + 2];
  for (std::size_t p = 1; p < n; ++p)
    require(row(p)[2 * n + 2] == elem_bytes,
            "all_to_all_v: " + participant_name(int(p), size) + " moves elements of " +
                std::to_string(row(p)[2 * n + 2]) + " bytes, participant 0 of " + std::to_string(elem_bytes),
            "call all_to_all_v with the same element size on every process");
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t sent = row(i)[j], expected = row(j)[n + i];
      require(sent == expected,
              "all_to_all_v: " + participant_name(int(i), size) + " sends " + std::to_string(sent) +
                  " elements to participant " + std::to_string(j) + ", which expects " + std::to_string(expected),
              "exchange the send counts first (all_gather) so that recv_counts[i] on j equals send_counts[j] on i");
    }
  for (std::size_t p = 0; p < n; ++p) {
    const std::uint64_t capacity = row(p)[2 * n], needed = row(p)[2 * n + 1];
    if (needed > capacity)
      throw_error(ErrorCode::out_of_memory,
                  "all_to_all_v: the receive buffer of " + participant_name(int(p), size) + " holds " +
                      std::to_string(capacity) + " elements (" + detail::format_bytes(capacity * elem_bytes) +
                      " free) but needs " + std::to_string(needed) + " (" +
                      detail::format_bytes(needed * elem_bytes) + " needed)",
                  "give it a receive buffer of at least max(recv_displs[i] + recv_counts[i]) elements");
  }
}

void check_placed(std::span<const AllToAllPlaced> all, int size) {
  const std::size_t n = std::size_t(size);
  std::vector<std::vector<std::uint64_t>> sent(n, std::vector<std::uint64_t>(n, 0));
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> ranges(n);  // per receiver: [at, at + count)
  for (std::size_t i = 0; i < n; ++i) {
    const AllToAllPlaced& a = all[i];
    require(a.recv_counts.size() == n,
            "all_to_all_placed: " + participant_name(int(i), size) + " passed " +
                std::to_string(a.recv_counts.size()) + " receive counts",
            "pass one receive count per participant (size() entries)");
    for (const PlacedPiece& piece : a.pieces) {
      require(piece.to >= 0 && piece.to < size,
              "all_to_all_placed: " + participant_name(int(i), size) + " sends a piece to participant " +
                  std::to_string(piece.to),
              "send pieces to participants 0 .. size() - 1");
      if (piece.count == 0) continue;
      require(a.send != nullptr && all[std::size_t(piece.to)].recv != nullptr,
              "all_to_all_placed: " + participant_name(int(i), size) + " sends a piece with a null buffer at an end",
              "pass the buffers' storage");
      require(piece.at + piece.count >= piece.at,
              "all_to_all_placed: " + participant_name(int(i), size) + " passed a piece whose end overflows 64 bits",
              "pass places and counts in elements that fit the buffers");
      sent[i][std::size_t(piece.to)] += piece.count;
      ranges[std::size_t(piece.to)].push_back({piece.at, piece.at + piece.count});
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      require(sent[i][j] == all[j].recv_counts[i],
              "all_to_all_placed: " + participant_name(int(i), size) + " sends " + std::to_string(sent[i][j]) +
                  " elements to participant " + std::to_string(j) + ", which expects " +
                  std::to_string(all[j].recv_counts[i]),
              "derive the pieces and the receive counts from the same gathered counts");
  for (std::size_t j = 0; j < n; ++j) {
    auto& r = ranges[j];
    std::sort(r.begin(), r.end());
    const std::uint64_t needed = r.empty() ? 0 : std::max_element(r.begin(), r.end(), [](auto& x, auto& y) {
                                                   return x.second < y.second;
                                                 })->second;
    if (needed > all[j].recv_capacity)
      throw_error(ErrorCode::out_of_memory,
                  "all_to_all_placed: the receive buffer of " + participant_name(int(j), size) + " holds " +
                      std::to_string(all[j].recv_capacity) + " elements but needs " + std::to_string(needed),
                  "give it a receive buffer that reaches past every piece sent to it");
    for (std::size_t k = 1; k < r.size(); ++k)
      require(r[k - 1].second <= r[k].first,
              "all_to_all_placed: two pieces overlap in the receive buffer of " + participant_name(int(j), size) +
                  " at element " + std::to_string(r[k].first),
              "place every piece in its own range");
  }
}

void throw_participant_failed(const char* op, int participant, int size, const std::string& message) {
  throw_error(ErrorCode::invalid_argument,
              std::string(op) + ": " + participant_name(participant, size) + " failed: " + message,
              "see the failing participant's own error above; every participant of the mesh stops at this step");
}

void throw_timeout(const char* op, std::span<const int> missing, int size, std::chrono::milliseconds waited) {
  std::string who;
  for (int p : missing) who += (who.empty() ? "" : ", ") + std::to_string(p);
  throw_error(ErrorCode::device,
              std::string(op) + ": participant" + (missing.size() == 1 ? " " : "s ") + who + " of " +
                  std::to_string(size) + " did not arrive within " + std::to_string(waited.count()) +
                  " ms; this communicator is broken now",
              "make sure every process calls the same collectives in the same order (a process that stopped "
              "early or threw outside radixmesh never arrives); raise RXM_COMM_TIMEOUT_S if it was only slow");
}

}  // namespace radixmesh::comm
