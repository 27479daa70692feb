#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/mesh/push_segments.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

namespace {

constexpr int push_threads = 512;
constexpr std::uint64_t chunk_bytes = 64 * 1024;  // one block's step: 8 16-byte words per thread
constexpr int words_in_flight = int(chunk_bytes / 16 / push_threads);

struct SegmentTable {
  PushSegment segment[max_push_segments];
  std::uint64_t first_chunk[max_push_segments + 1];  // chunk index where each segment starts
  int count;
};

// Blocks stride over the chunks of all segments; a chunk's words are loaded into registers
// together (several loads in flight per thread) and then stored, so remote stores stream.
template <class Word>
__global__ void __launch_bounds__(push_threads) push_kernel(const __grid_constant__ SegmentTable table) {
  const std::uint64_t chunks = table.first_chunk[table.count];
  int s = 0;
  for (std::uint64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    while (c >= table.first_chunk[s + 1]) ++s;  // chunks only grow, so the segment only moves on
    const PushSegment& seg = table.segment[s];
    const std::uint64_t begin = (c - table.first_chunk[s]) * chunk_bytes;
    const std::uint64_t left = seg.bytes - begin;
    const std::uint64_t bytes = left < chunk_bytes ? left : chunk_bytes;
    const auto* from = reinterpret_cast<const Word*>(static_cast<const unsigned char*>(seg.src) + begin);
    auto* to = reinterpret_cast<Word*>(static_cast<unsigned char*>(seg.dst) + begin);
    const std::uint32_t words = std::uint32_t(bytes / sizeof(Word));
    constexpr int per_thread = int(chunk_bytes / sizeof(Word) / push_threads);
    if (words == chunk_bytes / sizeof(Word)) {
      constexpr int batch = per_thread < words_in_flight ? per_thread : words_in_flight;
      Word w[batch];
      for (int first = 0; first < per_thread; first += batch) {
#pragma unroll
        for (int k = 0; k < batch; ++k) w[k] = from[(first + k) * push_threads + threadIdx.x];
#pragma unroll
        for (int k = 0; k < batch; ++k) to[(first + k) * push_threads + threadIdx.x] = w[k];
      }
    } else {
      for (std::uint32_t i = threadIdx.x; i < words; i += push_threads) to[i] = from[i];
    }
  }
}

std::size_t widest_word(std::span<const PushSegment> segments) {
  std::uint64_t bits = 0;
  for (const PushSegment& s : segments)
    bits |= reinterpret_cast<std::uintptr_t>(s.src) | reinterpret_cast<std::uintptr_t>(s.dst) | s.bytes;
  for (std::size_t w : {16u, 8u, 4u, 2u})
    if (bits % w == 0) return w;
  return 1;
}

int blocks_for(std::uint64_t chunks) {
  int device = 0, sms = 0;
  RXM_CUDA_CHECK(cudaGetDevice(&device));
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return int(std::min<std::uint64_t>(chunks, std::uint64_t(sms) * 2));
}

}  // namespace

void push_segments(std::span<const PushSegment> segments, cudaStream_t stream) {
  SegmentTable table{};
  std::uint64_t chunks = 0;
  for (const PushSegment& s : segments) {
    if (s.bytes == 0) continue;
    if (table.count == int(max_push_segments))
      throw_error(ErrorCode::internal, "push_segments: more than " + std::to_string(max_push_segments) + " segments",
                  "split the list (a bug in radixmesh: please report it)");
    table.segment[table.count] = s;
    table.first_chunk[table.count] = chunks;
    chunks += (s.bytes + chunk_bytes - 1) / chunk_bytes;
    ++table.count;
  }
  table.first_chunk[table.count] = chunks;
  if (chunks == 0) return;
  const int blocks = blocks_for(chunks);
  switch (widest_word(std::span(table.segment, std::size_t(table.count)))) {
    case 16: push_kernel<uint4><<<blocks, push_threads, 0, stream>>>(table); break;
    case 8: push_kernel<std::uint64_t><<<blocks, push_threads, 0, stream>>>(table); break;
    case 4: push_kernel<std::uint32_t><<<blocks, push_threads, 0, stream>>>(table); break;
    case 2: push_kernel<std::uint16_t><<<blocks, push_threads, 0, stream>>>(table); break;
    default: push_kernel<unsigned char><<<blocks, push_threads, 0, stream>>>(table); break;
  }
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace radixmesh::detail
