#include "comm/in_process.hpp"

#include <cstring>

#include "radixmesh/error.hpp"

namespace radixmesh::comm {

namespace {
std::string str(std::uint64_t x) { return std::to_string(x); }
}  // namespace

InProcessCommunicator::InProcessCommunicator(int participants) : participants_(participants) {
  require(participants >= 1, "a mesh of " + std::to_string(participants) + " participants",
          "make a context of at least one device");
}

void InProcessCommunicator::throw_if_failed(const char* call) const {
  if (failure_)
    throw_error(ErrorCode::device, std::string(call) + ": a participant of this process failed: " + *failure_,
                "fix the failure reported first; the mesh cannot go on after it");
}

void InProcessCommunicator::all_gather(std::span<const std::span<const std::byte>> local_in,
                                       std::span<std::byte> out) {
  throw_if_failed("all_gather");
  require(local_in.size() == std::size_t(participants_),
          "all_gather: " + str(local_in.size()) + " inputs for " + str(participants_) + " participants",
          "pass one input per local participant");
  const std::size_t each = local_in.empty() ? 0 : local_in[0].size();
  for (std::size_t i = 0; i < local_in.size(); ++i)
    require(local_in[i].size() == each,
            "all_gather: participant " + str(i) + " gives " + str(local_in[i].size()) + " bytes, participant 0 " +
                str(each),
            "give the same number of bytes on every participant");
  require(out.size() == each * local_in.size(),
          "all_gather: the output holds " + str(out.size()) + " bytes for " + str(each * local_in.size()),
          "pass an output of size() * bytes per participant");
  for (std::size_t i = 0; i < local_in.size(); ++i)
    if (each) std::memcpy(out.data() + i * each, local_in[i].data(), each);
}

void InProcessCommunicator::all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in,
                                           std::span<std::uint64_t> out) {
  throw_if_failed("all_reduce_sum");
  require(local_in.size() == std::size_t(participants_),
          "all_reduce_sum: " + str(local_in.size()) + " inputs for " + str(participants_) + " participants",
          "pass one input per local participant");
  for (std::size_t i = 0; i < local_in.size(); ++i)
    require(local_in[i].size() == out.size(),
            "all_reduce_sum: participant " + str(i) + " gives " + str(local_in[i].size()) + " values for an output of " +
                str(out.size()),
            "give arrays of the output's length on every participant");
  for (std::size_t e = 0; e < out.size(); ++e) {
    std::uint64_t sum = 0;
    for (const auto& in : local_in) sum += in[e];
    out[e] = sum;
  }
}

void InProcessCommunicator::barrier() { throw_if_failed("barrier"); }

void InProcessCommunicator::fail(const std::string& message) {
  if (!failure_) failure_ = message;
}

void InProcessCommunicator::check_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes,
                                             const char* call) const {
  throw_if_failed(call);
  const std::size_t p = std::size_t(participants_);
  require(elem_bytes > 0, std::string(call) + ": elements of 0 bytes", "pass the element size in bytes");
  require(local.size() == p, std::string(call) + ": " + str(local.size()) + " entries for " + str(p) + " participants",
          "pass one entry per local participant");
  for (std::size_t i = 0; i < p; ++i) {
    const AllToAllV& e = local[i];
    require(e.send_counts.size() == p && e.send_displs.size() == p && e.recv_counts.size() == p &&
                e.recv_displs.size() == p,
            std::string(call) + ": participant " + str(i) + "'s count or displacement arrays do not have " + str(p) +
                " entries",
            "pass one count and one displacement per participant");
  }
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j < p; ++j) {
      const std::uint64_t sent = local[i].send_counts[j], expected = local[j].recv_counts[i];
      require(sent == expected,
              std::string(call) + ": participant " + str(i) + " sends " + str(sent) + " elements to participant " +
                  str(j) + ", which expects " + str(expected),
              "exchange the counts first (all_gather of the send counts) and take the receive counts from them");
      const AllToAllV& r = local[j];
      const std::uint64_t end = r.recv_displs[i] + expected;
      require(end >= r.recv_displs[i] && end <= r.recv_capacity,
              std::string(call) + ": participant " + str(j) + " receives elements [" + str(r.recv_displs[i]) + ", " +
                  str(end) + ") from participant " + str(i) + " into a buffer of " + str(r.recv_capacity) +
                  " elements (" + str(end * elem_bytes) + " bytes needed, " + str(r.recv_capacity * elem_bytes) +
                  " there)",
              "allocate receive buffers of the summed receive counts");
      require(sent == 0 || (local[i].send != nullptr && r.recv != nullptr),
              std::string(call) + ": a null buffer between participants " + str(i) + " and " + str(j),
              "pass the send and receive storage");
    }
  }
}

}  // namespace radixmesh::comm
