// Moving a host array to the device and back through pinned memory, overlapped.
//
// Pageable host memory cannot be DMA'd directly at full PCIe speed, and pinning the caller's
// array costs more than copying it. So each direction goes through a ring of pinned slots: host
// threads copy one chunk into a slot while the copy engine moves the chunks in the others,
// and the per-chunk kernels (encode on the way in, decode on the way out) are queued on the same
// stream right behind their chunk. Pinned input or output is DMA'd directly, without staging.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace radixmesh::detail {

// Whether `host` is page-locked host memory (cudaMallocHost, cudaHostRegister), which the copy
// engines reach directly.
bool is_pinned_host(const void* host);

// Called with the first element and the count of a chunk, to queue work on the stream.
using ChunkWork = std::function<void(std::size_t first, std::size_t count)>;

class HostStaging {
 public:
  // host_threads: threads for the host-side copies (the CPU side of the pipe).
  HostStaging(cudaStream_t stream, unsigned host_threads);
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Copies count elements host -> device; after_chunk runs (stream-ordered) after each chunk lands.
  void upload(void* device_dst, const void* host_src, std::size_t count, std::size_t element_bytes,
              const ChunkWork& after_chunk = {});
  // Copies count elements device -> host; before_chunk is queued before each chunk leaves.
  // Returns when every element is in host_dst.
  void download(void* host_dst, const void* device_src, std::size_t count, std::size_t element_bytes,
                const ChunkWork& before_chunk = {});

  // Four slots of 16 MiB (0.3 ms at 55 GB/s each): the copy engine always has a chunk queued while
  // the host threads copy another. bench/phases/pageable_staging.cu, call DC on one H200, median
  // GB/s up / down: two 32 MiB slots 48.8 / 47.6, four of 16 MiB 50.6 / 54.7 against a 55.2 link
  // (uploads through the cache, downloads with streaming stores).
  static constexpr std::size_t slots = 4;
  static constexpr std::size_t chunk_bytes = std::size_t(16) << 20;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixmesh::detail
