// Many small device-to-device copies in one launch: the mesh's regroup steps move thousands of
// bucket-sized chunks, where one cudaMemcpyAsync each would cost a launch per chunk.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace radixmesh::detail {

// One copy within one device: `bytes` bytes from src + from to dst + to.
struct CopyPiece {
  std::uint64_t from = 0, to = 0, bytes = 0;
};

// Copies every piece on `stream` (device memory of the current device; pieces must not overlap
// their destinations). Few pieces go as plain cudaMemcpyAsync calls; many are split into pieces of
// at most 64 KiB and copied by one kernel, with the widest word that every offset, length and base
// pointer allows. The piece table is staged through `staging` (device memory of at least
// pieces_table_bytes(pieces) bytes; may be null when copy_pieces_needs_table() is false).
bool copy_pieces_needs_table(std::span<const CopyPiece> pieces);
std::size_t pieces_table_bytes(std::span<const CopyPiece> pieces);
void copy_pieces(const void* src, void* dst, std::span<const CopyPiece> pieces, void* staging, cudaStream_t stream);

}  // namespace radixmesh::detail
