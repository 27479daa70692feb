#include "comm/mpi_transport.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "comm/collective_checks.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::comm {
namespace {

// MPI guarantees tags up to 32767; the communicator is radixmesh's own duplicate, so small tags
// meet no one else's messages.
constexpr int agree_tag = 1;
constexpr int data_tag = 2;
static_assert(agree_tag != data_tag);

// The agreement message: three words (failed, message length, payload length), the message, the payload.
constexpr std::size_t header_words = 3;

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw_error(ErrorCode::device, std::string(call) + " failed: " + std::string(text, std::size_t(length)),
              "check the MPI installation and that every rank is still running");
}

// Polls `done` until it says so or the deadline passes; yields the core while waiting (ranks are
// often more than cores: mpirun --oversubscribe). Waiting for a peer to arrive, it naps after 64
// polls; moving data (`busy`), it only yields: a shared-memory transfer advances only inside MPI
// calls, and 100 us naps between them held 2e9 u32 keys over 4 ranks of one host to about 1 GB/s
// per rank (call AT, docs/design/mesh-sort.md).
template <class Done> bool poll_until(std::chrono::steady_clock::time_point deadline, Done&& done, bool busy = false) {
  for (unsigned idle = 0;; ++idle) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (busy || idle < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm, std::size_t max_message_bytes)
    : max_message_bytes_(std::max<std::size_t>(1, std::min<std::size_t>(max_message_bytes, std::size_t(1) << 30))) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  require(initialized && !finalized, "Context::mpi: MPI is not initialized (or already finalized)",
          "call MPI_Init before making the context and MPI_Finalize after its last use");
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && !broken_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiTransport::require_usable(const char* op) const {
  if (broken_)
    throw_error(ErrorCode::device,
                std::string(op) + ": this MPI mesh timed out earlier and may still have messages in flight",
                "make a new context (Context::mpi) on every rank");
}

void MpiTransport::require_one_entry(const char* op, std::size_t entries) const {
  require(entries == 1, std::string(op) + ": " + std::to_string(entries) + " entries on an MPI rank",
          "pass exactly one entry: an MPI rank drives one mesh device");
}

void MpiTransport::fail(int participant, const std::string& message) {
  require(participant == rank_,
          "fail: participant " + std::to_string(participant) + " is not this rank (" + std::to_string(rank_) + ")",
          "name this rank's own participant, first_local()");
  failed_ = true;
  failure_ = message;
}

void MpiTransport::wait_all(const char* op, std::vector<MPI_Request>& requests, const std::vector<int>& peer_of,
                            std::chrono::steady_clock::time_point deadline) {
  const bool done = poll_until(deadline, [&] {
    int flag = 0;
    check(MPI_Testall(int(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
    return flag != 0;
  }, /*busy=*/true);
  if (done) return;
  std::vector<int> missing;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    int flag = 0;
    MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
    if (flag) continue;
    if (std::find(missing.begin(), missing.end(), peer_of[i]) == missing.end()) missing.push_back(peer_of[i]);
    MPI_Cancel(&requests[i]);
    MPI_Request_free(&requests[i]);
  }
  std::sort(missing.begin(), missing.end());
  broken_ = true;
  throw_timeout(op, missing, size_, timeout());
}

std::vector<std::vector<std::byte>> MpiTransport::agree(const char* op, std::span<const std::byte> payload) {
  require_usable(op);
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  std::vector<std::byte> mine(header_words * 8 + failure_.size() + payload.size());
  const std::uint64_t header[header_words] = {failed_ ? 1u : 0u, failure_.size(), payload.size()};
  std::memcpy(mine.data(), header, sizeof header);
  std::memcpy(mine.data() + sizeof header, failure_.data(), failure_.size());
  if (!payload.empty()) std::memcpy(mine.data() + sizeof header + failure_.size(), payload.data(), payload.size());
  failed_ = false;  // this step carries the failure to every rank
  failure_.clear();
  require(mine.size() <= std::size_t(INT32_MAX), std::string(op) + ": an agreement message over 2 GiB",
          "use fewer participants");

  std::vector<MPI_Request> sends;
  std::vector<int> send_peer;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    sends.emplace_back();
    send_peer.push_back(q);
    check(MPI_Isend(mine.data(), int(mine.size()), MPI_BYTE, q, agree_tag, comm_, &sends.back()), "MPI_Isend");
  }
  std::vector<std::vector<std::byte>> got(static_cast<std::size_t>(size_));
  std::vector<bool> have(std::size_t(size_), false);
  got[std::size_t(rank_)] = mine;
  have[std::size_t(rank_)] = true;
  int left = size_ - 1;
  // One message from each peer, probed peer by peer: a fast peer's message of the next step must
  // not be taken for this one.
  const bool arrived = poll_until(deadline, [&] {
    for (int q = 0; q < size_; ++q) {
      if (have[std::size_t(q)]) continue;
      int flag = 0;
      MPI_Status status;
      check(MPI_Iprobe(q, agree_tag, comm_, &flag, &status), "MPI_Iprobe");
      if (!flag) continue;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      got[std::size_t(q)].resize(std::size_t(bytes));
      check(MPI_Recv(got[std::size_t(q)].data(), bytes, MPI_BYTE, q, agree_tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
      have[std::size_t(q)] = true;
      --left;
    }
    return left == 0;
  });
  if (!arrived) {
    std::vector<int> missing;
    for (int q = 0; q < size_; ++q)
      if (!have[std::size_t(q)]) missing.push_back(q);
    for (auto& r : sends) MPI_Request_free(&r);
    broken_ = true;
    throw_timeout(op, missing, size_, timeout());
  }
  wait_all(op, sends, send_peer, deadline);

  std::vector<std::vector<std::byte>> payloads(static_cast<std::size_t>(size_));
  for (int q = 0; q < size_; ++q) {
    const auto& m = got[std::size_t(q)];
    std::uint64_t h[header_words];
    std::memcpy(h, m.data(), sizeof h);
    if (h[0]) throw_participant_failed(op, q, size_, std::string(reinterpret_cast<const char*>(m.data()) + sizeof h, h[1]));
    payloads[std::size_t(q)].assign(m.begin() + std::ptrdiff_t(sizeof h + h[1]), m.end());
  }
  return payloads;
}

void MpiTransport::all_gather(std::span<const std::span<const std::byte>> local_in, std::span<std::byte> out) {
  require_one_entry("all_gather", local_in.size());
  auto all = agree("all_gather", local_in[0]);
  const std::size_t each = all[0].size();
  for (int q = 0; q < size_; ++q)
    require(all[std::size_t(q)].size() == each,
            "all_gather: participant " + std::to_string(q) + " passes " + std::to_string(all[std::size_t(q)].size()) +
                " bytes, participant 0 passes " + std::to_string(each),
            "pass the same number of bytes from every participant");
  require(out.size() == each * std::size_t(size_),
          "all_gather: the output has " + std::to_string(out.size()) + " bytes for " + std::to_string(size_) +
              " arrays of " + std::to_string(each),
          "pass an output of size() * bytes_per_participant bytes");
  for (int q = 0; q < size_; ++q)
    if (each) std::memcpy(out.data() + std::size_t(q) * each, all[std::size_t(q)].data(), each);
}

void MpiTransport::all_reduce_sum(std::span<const std::span<const std::uint64_t>> local_in,
                                  std::span<std::uint64_t> out) {
  require_one_entry("all_reduce_sum", local_in.size());
  auto all = agree("all_reduce_sum", std::as_bytes(local_in[0]));
  for (int q = 0; q < size_; ++q)
    require(all[std::size_t(q)].size() == out.size() * 8,
            "all_reduce_sum: participant " + std::to_string(q) + " passes " +
                std::to_string(all[std::size_t(q)].size() / 8) + " entries for an output of " +
                std::to_string(out.size()),
            "pass arrays of the output's length from every participant");
  std::fill(out.begin(), out.end(), 0);
  for (const auto& a : all)
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint64_t v;
      std::memcpy(&v, a.data() + i * 8, 8);
      out[i] += v;
    }
}

void MpiTransport::barrier() { agree("barrier", {}); }

void MpiTransport::agree_all_to_all(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  const char* op = "all_to_all_v";
  require_one_entry(op, local.size());
  const AllToAllV& a = local[0];
  const auto row = declaration_row(a, size_, elem_bytes);
  auto all = agree(op, std::as_bytes(std::span(row)));
  std::vector<std::uint64_t> rows(static_cast<std::size_t>(size_) * row.size());
  for (int q = 0; q < size_; ++q) {
    require(all[std::size_t(q)].size() == row.size() * 8,
            "all_to_all_v: participant " + std::to_string(q) + " declares a mesh of another size",
            "call all_to_all_v on the same communicator on every rank");
    std::memcpy(rows.data() + std::size_t(q) * row.size(), all[std::size_t(q)].data(), row.size() * 8);
  }
  check_declarations(rows, size_);
}

void MpiTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  const char* op = "all_to_all_v";
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  agree_all_to_all(local, elem_bytes);
  const AllToAllV& a = local[0];
  std::vector<MPI_Request> requests;
  std::vector<int> peer_of;
  auto post = [&](bool receive, int q, std::byte* base, std::uint64_t count) {
    const std::uint64_t bytes = count * elem_bytes;
    for (std::uint64_t at = 0; at < bytes; at += max_message_bytes_) {
      const int len = int(std::min<std::uint64_t>(max_message_bytes_, bytes - at));
      requests.emplace_back();
      peer_of.push_back(q);
      if (receive)
        check(MPI_Irecv(base + at, len, MPI_BYTE, q, data_tag, comm_, &requests.back()), "MPI_Irecv");
      else
        check(MPI_Isend(base + at, len, MPI_BYTE, q, data_tag, comm_, &requests.back()), "MPI_Isend");
    }
  };
  auto* recv = static_cast<std::byte*>(a.recv);
  auto* send = const_cast<std::byte*>(static_cast<const std::byte*>(a.send));  // MPI-3 takes const; older headers not
  for (int q = 0; q < size_; ++q) {
    const std::size_t sq = std::size_t(q);
    if (q == rank_) {
      if (a.send_counts[sq])
        std::memcpy(recv + a.recv_displs[sq] * elem_bytes, send + a.send_displs[sq] * elem_bytes,
                    a.send_counts[sq] * elem_bytes);
      continue;
    }
    post(true, q, recv + a.recv_displs[sq] * elem_bytes, a.recv_counts[sq]);
    post(false, q, send + a.send_displs[sq] * elem_bytes, a.send_counts[sq]);
  }
  wait_all(op, requests, peer_of, deadline);
}

}  // namespace radixmesh::comm
