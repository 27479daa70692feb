#include "comm/peer_transport.hpp"

#include "cuda/mesh/copy_pieces.hpp"
#include "cuda/mesh/push_segments.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::comm {

PeerTransport::PeerTransport(std::vector<PeerParticipant> participants, PeerCopy method)
    : InProcessCommunicator(int(participants.size()), "GPU devices"),
      participants_(std::move(participants)),
      method_(method) {
  const std::size_t p = participants_.size();
  if (method_ == PeerCopy::sm && p > detail::max_push_segments)
    throw_error(ErrorCode::unsupported,
                "the peer-sm transport takes at most " + std::to_string(detail::max_push_segments) +
                    " mesh devices; this mesh has " + std::to_string(p),
                "use the peer transport (copy engines) for larger meshes");
  copy_streams_.assign(p * p, nullptr);
  copied_.assign(p * p, nullptr);
  ready_.assign(p, nullptr);
  can_store_.assign(p * p, 0);
  try {
    for (std::size_t i = 0; i < p; ++i) {
      const int from = participants_[i].cuda_device;
      detail::DeviceGuard guard(from);
      RXM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[i], cudaEventDisableTiming));
      for (std::size_t j = 0; j < p; ++j) {
        RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_streams_[i * p + j], cudaStreamNonBlocking));
        RXM_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[i * p + j], cudaEventDisableTiming));
        const int to = participants_[j].cuda_device;
        int access = from == to;
        if (!access) RXM_CUDA_CHECK(cudaDeviceCanAccessPeer(&access, from, to));
        can_store_[i * p + j] = char(access != 0);
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

PeerTransport::~PeerTransport() { release(); }

void PeerTransport::release() noexcept {
  for (auto s : copy_streams_)
    if (s) cudaStreamDestroy(s);
  for (auto e : copied_)
    if (e) cudaEventDestroy(e);
  for (auto e : ready_)
    if (e) cudaEventDestroy(e);
  copy_streams_.clear();
  copied_.clear();
  ready_.clear();
}

cudaEvent_t PeerTransport::done(std::size_t i, std::size_t j) const {
  const std::size_t p = participants_.size();
  // The SM method copies all of a sender's reachable segments in one kernel, ending at one event.
  if (method_ == PeerCopy::sm && stores_reach(i, j)) return copied_[i * p + i];
  return copied_[i * p + j];
}

void PeerTransport::copy_with_engines(std::size_t i, std::span<const AllToAllV> local, std::size_t elem_bytes) {
  const std::size_t p = participants_.size();
  const int from = participants_[i].cuda_device;
  // Sender i starts with destination i + 1, so the senders' first copies go to different GPUs.
  for (std::size_t step = 1; step <= p; ++step) {
    const std::size_t j = (i + step) % p;
    const std::uint64_t count = local[i].send_counts[j];
    if (count == 0 || (method_ == PeerCopy::sm && stores_reach(i, j))) continue;
    cudaStream_t s = copy_streams_[i * p + j];
    const int to = participants_[j].cuda_device;
    const auto* src = static_cast<const std::byte*>(local[i].send) + local[i].send_displs[j] * elem_bytes;
    auto* dst = static_cast<std::byte*>(local[j].recv) + local[j].recv_displs[i] * elem_bytes;
    RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[i], 0));
    if (j != i) RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[j], 0));
    if (from == to)
      RXM_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * elem_bytes, cudaMemcpyDeviceToDevice, s));
    else
      RXM_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to, src, from, count * elem_bytes, s));
    RXM_CUDA_CHECK(cudaEventRecord(copied_[i * p + j], s));
  }
}

void PeerTransport::copy_with_sms(std::size_t i, std::span<const AllToAllV> local, std::size_t elem_bytes) {
  const std::size_t p = participants_.size();
  cudaStream_t s = copy_streams_[i * p + i];
  std::vector<detail::PushSegment> segments;
  for (std::size_t j = 0; j < p; ++j) {
    const std::uint64_t count = local[i].send_counts[j];
    if (count == 0 || !stores_reach(i, j)) continue;
    RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[j], 0));
    segments.push_back({static_cast<const std::byte*>(local[i].send) + local[i].send_displs[j] * elem_bytes,
                        static_cast<std::byte*>(local[j].recv) + local[j].recv_displs[i] * elem_bytes,
                        count * elem_bytes});
  }
  RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[i], 0));
  detail::push_segments(segments, s);
  RXM_CUDA_CHECK(cudaEventRecord(copied_[i * p + i], s));
  copy_with_engines(i, local, elem_bytes);  // the pairs that stores cannot reach
}

void PeerTransport::mark_ready() {
  for (std::size_t i = 0; i < participants_.size(); ++i) {
    detail::DeviceGuard guard(participants_[i].cuda_device);
    RXM_CUDA_CHECK(cudaEventRecord(ready_[i], participants_[i].stream));
  }
}

template <class Moves, class Event> void PeerTransport::wait_for_copies(Moves&& moves, Event&& event) {
  const std::size_t p = participants_.size();
  for (std::size_t j = 0; j < p; ++j) {
    detail::DeviceGuard guard(participants_[j].cuda_device);
    for (std::size_t i = 0; i < p; ++i)
      if (moves(i, j)) RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, event(i, j), 0));
    // A sender's buffer is free again once its copies are done: its stream waits for them too.
    for (std::size_t d = 0; d < p; ++d)
      if (d != j && moves(j, d)) RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, event(j, d), 0));
  }
}

void PeerTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  begin_all_to_all(local, elem_bytes);
  mark_ready();
  for (std::size_t i = 0; i < participants_.size(); ++i) {
    detail::DeviceGuard guard(participants_[i].cuda_device);
    if (method_ == PeerCopy::sm)
      copy_with_sms(i, local, elem_bytes);
    else
      copy_with_engines(i, local, elem_bytes);
  }
  wait_for_copies([&](std::size_t i, std::size_t j) { return local[i].send_counts[j] != 0; },
                  [&](std::size_t i, std::size_t j) { return done(i, j); });
}

void PeerTransport::all_to_all_placed(std::span<const AllToAllPlaced> local, std::size_t elem_bytes) {
  begin_all_to_all_placed(local);
  const std::size_t p = participants_.size();
  // Pieces by pair, in bytes relative to the sender's send and the receiver's receive buffer.
  std::vector<std::vector<detail::CopyPiece>> pieces(p * p);
  for (std::size_t i = 0; i < p; ++i)
    for (const PlacedPiece& piece : local[i].pieces)
      if (piece.count)
        pieces[i * p + std::size_t(piece.to)].push_back(
            {piece.from * elem_bytes, piece.at * elem_bytes, piece.count * elem_bytes});
  mark_ready();
  for (std::size_t i = 0; i < p; ++i) {
    const int from = participants_[i].cuda_device;
    detail::DeviceGuard guard(from);
    for (std::size_t j = 0; j < p; ++j) {
      const auto& pair = pieces[i * p + j];
      if (pair.empty()) continue;
      cudaStream_t s = copy_streams_[i * p + j];
      RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[i], 0));
      if (j != i) RXM_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[j], 0));
      const auto* src = static_cast<const unsigned char*>(local[i].send);
      auto* dst = static_cast<unsigned char*>(local[j].recv);
      if (stores_reach(i, j)) {
        // The piece table (for many pieces) lives in stream-ordered memory of this copy stream.
        void* table = nullptr;
        const std::size_t table_bytes = detail::pieces_table_bytes(pair);
        if (table_bytes) RXM_CUDA_CHECK(cudaMallocAsync(&table, table_bytes, s));
        detail::copy_pieces(src, dst, pair, table, s);
        if (table) RXM_CUDA_CHECK(cudaFreeAsync(table, s));
      } else {
        for (const detail::CopyPiece& c : pair)
          RXM_CUDA_CHECK(cudaMemcpyPeerAsync(dst + c.to, participants_[j].cuda_device, src + c.from, from, c.bytes, s));
      }
      RXM_CUDA_CHECK(cudaEventRecord(copied_[i * p + j], s));
    }
  }
  // Every pair with pieces recorded its own event (the sm method's one kernel per sender is not used here).
  wait_for_copies([&](std::size_t i, std::size_t j) { return !pieces[i * p + j].empty(); },
                  [&](std::size_t i, std::size_t j) { return copied_[i * p + j]; });
}

}  // namespace radixmesh::comm
