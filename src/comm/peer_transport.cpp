#include "comm/peer_transport.hpp"

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"

namespace radixmesh::comm {

PeerTransport::PeerTransport(std::vector<PeerParticipant> participants)
    : InProcessCommunicator(int(participants.size()), "GPU devices"), participants_(std::move(participants)) {
  const std::size_t p = participants_.size();
  copy_streams_.assign(p * p, nullptr);
  copied_.assign(p * p, nullptr);
  ready_.assign(p, nullptr);
  try {
    for (std::size_t i = 0; i < p; ++i) {
      detail::DeviceGuard guard(participants_[i].cuda_device);
      RXM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[i], cudaEventDisableTiming));
      for (std::size_t j = 0; j < p; ++j) {
        RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_streams_[i * p + j], cudaStreamNonBlocking));
        RXM_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[i * p + j], cudaEventDisableTiming));
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

void PeerTransport::all_to_all_v(std::span<const AllToAllV> local, std::size_t elem_bytes) {
  begin_all_to_all(local, elem_bytes);
  const std::size_t p = participants_.size();
  for (std::size_t i = 0; i < p; ++i) {
    detail::DeviceGuard guard(participants_[i].cuda_device);
    RXM_CUDA_CHECK(cudaEventRecord(ready_[i], participants_[i].stream));
  }
  for (std::size_t i = 0; i < p; ++i) {
    const int from = participants_[i].cuda_device;
    detail::DeviceGuard guard(from);
    for (std::size_t j = 0; j < p; ++j) {
      const std::uint64_t count = local[i].send_counts[j];
      if (count == 0) continue;
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
  for (std::size_t j = 0; j < p; ++j) {
    detail::DeviceGuard guard(participants_[j].cuda_device);
    for (std::size_t i = 0; i < p; ++i)
      if (local[i].send_counts[j] != 0) RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, copied_[i * p + j], 0));
    // A sender's buffer is free again once its copies are done: its stream waits for them too.
    for (std::size_t d = 0; d < p; ++d)
      if (d != j && local[j].send_counts[d] != 0)
        RXM_CUDA_CHECK(cudaStreamWaitEvent(participants_[j].stream, copied_[j * p + d], 0));
  }
}

}  // namespace radixmesh::comm
