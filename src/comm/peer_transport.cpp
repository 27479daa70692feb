#include "comm/peer_transport.hpp"

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
  for (std::size_t j = 0; j < p; ++j) {
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

void PeerTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  begin_all_to_all(local, elem_bytes);
  const std::size_t p = participants_.size();
  for (std::size_t i = 0; i < p; ++i) {
    detail::DeviceGuard guard(participants_[i].cuda_device);
    RXM_CUDA_CHECK(cudaEventRecord(ready_[i], participants_[i].stream));
  }
  for (std::size_t i = 0; i < p; ++i) {
    detail::DeviceGuard guard(participants_[i].cuda_device);
    if (method_ == PeerCopy::sm)
      copy_with_sms(i, local, elem_bytes);
    else
      copy_with_engines(i, local, elem_bytes);
  }
  for (std::size_t j = 0; j < p; ++j) {
    detail::DeviceGuard guard(participants_[j].cuda_device);
    for (std::size_t i = 0; i < p; ++i)
      if (local[i].send_counts[j] != 0) RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, done(i, j), 0));
    // A sender's buffer is free again once its copies are done: its stream waits for them too.
    for (std::size_t d = 0; d < p; ++d)
      if (d != j && local[j].send_counts[d] != 0)
        RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, done(j, d), 0));
  }
}

}  // namespace radixmesh::comm
