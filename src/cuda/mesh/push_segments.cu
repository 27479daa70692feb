#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/mesh/push_segments.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

namespace {

constexpr int push_threads = 512;
constexpr int bytes_in_flight = 128;  // per thread: the loads of one batch, issued before its stores

// Every segment has its own blocks (first_block[s] up to first_block[s + 1]), in proportion to its
// bytes, so a sender drives every destination's link at once. Striding all blocks over all
// segments in order would have every sender start on destination 0 together: that GPU's ingress
// would take every sender's bytes while the other links idle.
struct SegmentTable {
  PushSegment segment[max_push_segments];
  std::uint32_t first_block[max_push_segments + 1];
  std::uint8_t word[max_push_segments];  // the widest word both ends of the segment align to
  int count;
};

// The body of one segment in words of `Word`, chunk by chunk over the segment's blocks; a full
// chunk's words are loaded together (bytes_in_flight per thread) and then stored, so remote
// stores stream.
template <class Word>
__device__ void copy_words(const Word* from, Word* to, std::uint64_t words, std::uint32_t rank, std::uint32_t blocks) {
  constexpr int batch = bytes_in_flight / int(sizeof(Word)) < 32 ? bytes_in_flight / int(sizeof(Word)) : 32;
  constexpr std::uint64_t chunk = std::uint64_t(batch) * push_threads;
  for (std::uint64_t base = std::uint64_t(rank) * chunk; base < words; base += std::uint64_t(blocks) * chunk) {
    if (base + chunk <= words) {
      Word w[batch];
#pragma unroll
      for (int k = 0; k < batch; ++k) w[k] = from[base + std::uint64_t(k) * push_threads + threadIdx.x];
#pragma unroll
      for (int k = 0; k < batch; ++k) to[base + std::uint64_t(k) * push_threads + threadIdx.x] = w[k];
    } else {
      for (std::uint64_t i = base + threadIdx.x; i < words; i += push_threads) to[i] = from[i];
    }
  }
}

__global__ void __launch_bounds__(push_threads) push_kernel(const __grid_constant__ SegmentTable table) {
  int s = 0;
  while (blockIdx.x >= table.first_block[s + 1]) ++s;
  const PushSegment& seg = table.segment[s];
  const std::uint32_t rank = blockIdx.x - table.first_block[s], blocks = table.first_block[s + 1] - table.first_block[s];
  const std::uint32_t w = table.word[s];
  const auto* src = static_cast<const unsigned char*>(seg.src);
  auto* dst = static_cast<unsigned char*>(seg.dst);
  // Head bytes up to the word boundary (src and dst share their offset within a word), the body
  // in words, and the tail bytes after it; the segment's first block copies head and tail.
  const std::uint64_t to_word = (w - reinterpret_cast<std::uintptr_t>(src) % w) % w;
  const std::uint64_t head = to_word < seg.bytes ? to_word : seg.bytes;
  const std::uint64_t words = (seg.bytes - head) / w, tail_at = head + words * w;
  if (rank == 0) {
    for (std::uint64_t i = threadIdx.x; i < head; i += push_threads) dst[i] = src[i];
    for (std::uint64_t i = tail_at + threadIdx.x; i < seg.bytes; i += push_threads) dst[i] = src[i];
  }
  src += head;
  dst += head;
  switch (w) {
    case 16: copy_words(reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(dst), words, rank, blocks); break;
    case 8: copy_words(reinterpret_cast<const std::uint64_t*>(src), reinterpret_cast<std::uint64_t*>(dst), words, rank, blocks); break;
    case 4: copy_words(reinterpret_cast<const std::uint32_t*>(src), reinterpret_cast<std::uint32_t*>(dst), words, rank, blocks); break;
    case 2: copy_words(reinterpret_cast<const std::uint16_t*>(src), reinterpret_cast<std::uint16_t*>(dst), words, rank, blocks); break;
    default: copy_words(src, dst, words, rank, blocks); break;
  }
}

// The widest word w with src and dst at the same offset within a word: after a head of fewer than
// w bytes, both ends are w-aligned.
std::uint8_t shared_word(const PushSegment& s) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(s.src), b = reinterpret_cast<std::uintptr_t>(s.dst);
  for (std::uint8_t w : {16, 8, 4, 2})
    if (a % w == b % w) return w;
  return 1;
}

int grid_blocks() {
  int device = 0, sms = 0;
  RXM_CUDA_CHECK(cudaGetDevice(&device));
  RXM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * 2;
}

}  // namespace

void push_segments(std::span<const PushSegment> segments, cudaStream_t stream) {
  SegmentTable table{};
  std::uint64_t total = 0;
  for (const PushSegment& s : segments) {
    if (s.bytes == 0) continue;
    if (table.count == int(max_push_segments))
      throw_error(ErrorCode::internal, "push_segments: more than " + std::to_string(max_push_segments) + " segments",
                  "split the list (a bug in radixmesh: please report it)");
    table.segment[table.count] = s;
    table.word[table.count] = shared_word(s);
    total += s.bytes;
    ++table.count;
  }
  if (table.count == 0) return;
  // Blocks in proportion to bytes, at least one per segment and no more than its 64 KiB pieces.
  const std::uint64_t grid = std::uint64_t(std::max(grid_blocks(), table.count));
  std::uint32_t at = 0;
  for (int s = 0; s < table.count; ++s) {
    table.first_block[s] = at;
    const std::uint64_t bytes = table.segment[s].bytes;
    const std::uint64_t share = std::max<std::uint64_t>(1, (grid * bytes + total / 2) / total);
    at += std::uint32_t(std::min<std::uint64_t>(share, (bytes + 65535) / 65536));
  }
  table.first_block[table.count] = at;
  push_kernel<<<at, push_threads, 0, stream>>>(table);
  RXM_CUDA_CHECK_LAUNCH();
}

}  // namespace radixmesh::detail
