#include "comm/in_process.hpp"

#include <algorithm>
#include <cstring>

#include "comm/collective_checks.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::comm {

InProcessCommunicator::InProcessCommunicator(int participants, const char* what) : size_(participants) {
  require(participants >= 1, "a mesh of " + std::to_string(participants) + " " + what,
          "ask for at least one device");
}

void InProcessCommunicator::require_entries(const char* op, std::size_t entries) const {
  require(entries == std::size_t(size_),
          std::string(op) + ": " + std::to_string(entries) + " entries for " + std::to_string(size_) +
              " local participants",
          "pass one entry per local participant (local_count())");
}

void InProcessCommunicator::take_failures(const char* op) {
  if (failed_.empty()) return;
  auto first = std::move(failed_.front());
  failed_.clear();
  throw_participant_failed(op, first.first, size_, first.second);
}

void InProcessCommunicator::fail(int participant, const std::string& message) {
  require(participant >= 0 && participant < size_,
          "fail: participant " + std::to_string(participant) + " is not in this mesh of " + std::to_string(size_),
          "name a local participant");
  failed_.emplace_back(participant, message);
}

void InProcessCommunicator::all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) {
  take_failures("all_gather");
  require_entries("all_gather", local_in.size());
  const std::size_t each = local_in[0].size();
  for (const auto& in : local_in)
    require(in.size() == each, "all_gather: participants pass arrays of different lengths",
            "pass the same number of bytes from every participant");
  require(out.size() == each * std::size_t(size_),
          "all_gather: the output has " + std::to_string(out.size()) + " bytes for " + std::to_string(size_) +
              " arrays of " + std::to_string(each),
          "pass an output of size() * bytes_per_participant bytes");
  for (std::size_t p = 0; p < local_in.size(); ++p)
    if (each) std::memcpy(out.data() + p * each, local_in[p].data(), each);
}

void InProcessCommunicator::all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in,
                                      std::span<std::uint64_t> out) {
  take_failures("all_reduce_sum");
  require_entries("all_reduce_sum", local_in.size());
  for (const auto& in : local_in)
    require(in.size() == out.size(),
            "all_reduce_sum: an input of " + std::to_string(in.size()) + " entries for an output of " +
                std::to_string(out.size()),
            "pass arrays of the output's length from every participant");
  std::fill(out.begin(), out.end(), 0);
  for (const auto& in : local_in)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += in[i];
}

void InProcessCommunicator::barrier() { take_failures("barrier"); }

void InProcessCommunicator::begin_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  take_failures("all_to_all_v");
  require_entries("all_to_all_v", local.size());
  std::vector<std::uint64_t> rows;
  rows.reserve(local.size() * declaration_row_length(size_));
  for (const AllToAllV& a : local) {
    const auto row = declaration_row(a, size_, elem_bytes);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  check_declarations(rows, size_);
}

void InProcessCommunicator::begin_all_to_all_placed(std::span<const AllToAllPlaced> local) {
  take_failures("all_to_all_placed");
  require_entries("all_to_all_placed", local.size());
  check_placed(local, size_);
}

}  // namespace radixmesh::comm
