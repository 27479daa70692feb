#include <algorithm>
#include <vector>

#include "cuda/mesh/copy_pieces.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace radixmesh::detail {

namespace {

constexpr std::size_t few_pieces = 32;               // up to here, one cudaMemcpyAsync each
constexpr std::uint64_t max_piece_bytes = 64 * 1024;  // one block's share in the kernel
constexpr int copy_threads = 256;

// Pieces of arbitrary element offsets often allow only 4-byte words, so each thread keeps
// `in_flight` loads outstanding before it stores them: one load at a time left the regroup at
// half the copy rate (H100, bench_shuffle: 5-6 ms for 8 bytes a key where the device copy of the
// same bytes took 2.9 ms).
constexpr int in_flight = 8;

template <class Word>
__global__ void __launch_bounds__(copy_threads) copy_pieces_kernel(const CopyPiece* pieces, const unsigned char* src,
                                                                   unsigned char* dst) {
  const CopyPiece p = pieces[blockIdx.x];
  const auto* __restrict__ from = reinterpret_cast<const Word*>(src + p.from);
  auto* __restrict__ to = reinterpret_cast<Word*>(dst + p.to);
  const std::uint64_t words = p.bytes / sizeof(Word);
  constexpr std::uint64_t step = std::uint64_t(copy_threads) * in_flight;
  std::uint64_t first = 0;
  for (; first + step <= words; first += step) {
    Word w[in_flight];
#pragma unroll
    for (int k = 0; k < in_flight; ++k) w[k] = from[first + std::uint64_t(k) * copy_threads + threadIdx.x];
#pragma unroll
    for (int k = 0; k < in_flight; ++k) to[first + std::uint64_t(k) * copy_threads + threadIdx.x] = w[k];
  }
  for (std::uint64_t i = first + threadIdx.x; i < words; i += copy_threads) to[i] = from[i];
}

// The widest word (16, 8, 4, 2 or 1 bytes) dividing every offset, length and base address.
std::size_t word_bytes(const void* src, void* dst, std::span<const CopyPiece> pieces) {
  std::uint64_t bits = reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst);
  for (const CopyPiece& p : pieces) bits |= p.from | p.to | p.bytes;
  for (std::size_t w : {16u, 8u, 4u, 2u})
    if (bits % w == 0) return w;
  return 1;
}

std::vector<CopyPiece> split_pieces(std::span<const CopyPiece> pieces) {
  std::vector<CopyPiece> out;
  for (const CopyPiece& p : pieces)
    for (std::uint64_t at = 0; at < p.bytes; at += max_piece_bytes)
      out.push_back({p.from + at, p.to + at, std::min(max_piece_bytes, p.bytes - at)});
  return out;
}

std::size_t split_count(std::span<const CopyPiece> pieces) {
  std::size_t n = 0;
  for (const CopyPiece& p : pieces) n += std::size_t((p.bytes + max_piece_bytes - 1) / max_piece_bytes);
  return n;
}

}  // namespace

bool copy_pieces_needs_table(std::span<const CopyPiece> pieces) { return pieces.size() > few_pieces; }

std::size_t pieces_table_bytes(std::span<const CopyPiece> pieces) {
  return copy_pieces_needs_table(pieces) ? split_count(pieces) * sizeof(CopyPiece) : 0;
}

void copy_pieces(const void* src, void* dst, std::span<const CopyPiece> pieces, void* staging, cudaStream_t stream) {
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  if (!copy_pieces_needs_table(pieces)) {
    for (const CopyPiece& p : pieces)
      if (p.bytes) RXM_CUDA_CHECK(cudaMemcpyAsync(d + p.to, s + p.from, p.bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const std::vector<CopyPiece> table = split_pieces(pieces);
  if (table.empty()) return;
  RXM_CUDA_CHECK(cudaMemcpyAsync(staging, table.data(), table.size() * sizeof(CopyPiece), cudaMemcpyHostToDevice,
                                 stream));
  const auto* device_table = static_cast<const CopyPiece*>(staging);
  const unsigned blocks = unsigned(table.size());
  switch (word_bytes(src, dst, pieces)) {
    case 16: copy_pieces_kernel<uint4><<<blocks, copy_threads, 0, stream>>>(device_table, s, d); break;
    case 8: copy_pieces_kernel<std::uint64_t><<<blocks, copy_threads, 0, stream>>>(device_table, s, d); break;
    case 4: copy_pieces_kernel<std::uint32_t><<<blocks, copy_threads, 0, stream>>>(device_table, s, d); break;
    case 2: copy_pieces_kernel<std::uint16_t><<<blocks, copy_threads, 0, stream>>>(device_table, s, d); break;
    default: copy_pieces_kernel<unsigned char><<<blocks, copy_threads, 0, stream>>>(device_table, s, d); break;
  }
  RXM_CUDA_CHECK_LAUNCH();
  // `table` may go now: a copy from pageable memory returns once its bytes are staged (CUDA's
  // API synchronization rules), so the call stays stream-ordered without a host wait.
}

}  // namespace radixmesh::detail
