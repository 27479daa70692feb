// radixmesh/device/multisplit/warp_match.cuh — the lanes of a warp that hold the same id as this
// lane (paper §5.4): the ranking primitive of the scatter pass.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace radixmesh::device::multisplit_detail {

// The ballot of "bit `bit_mask` of id is set", inverted on lanes where it is not set: ANDed over
// the id's bits this leaves the lanes with the same id (§5.4). Five PTX instructions, the AND
// at the call site included (as in CUB's MatchAny).
__device__ __forceinline__ std::uint32_t same_bit_lanes(std::uint32_t id, std::uint32_t bit_mask) {
  std::uint32_t mask;
  asm("{\n\t.reg .pred p;\n\tand.b32 %0, %1, %2;\n\tsetp.ne.u32 p, %0, 0;\n\t"
      "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t@!p not.b32 %0, %0;\n\t}"
      : "=r"(mask)
      : "r"(id), "r"(bit_mask));
  return mask;
}

// Lanes whose id equals this lane's: IdBits ballots, unrolled with no branch (the id class is a
// template argument: ids below 2^IdBits have zeros above their bit width, whose ballots would be
// empty and AND in as all-ones), or one __match_any_sync (`match_any`, warp-uniform; which is
// faster per m is measured by bench_multisplit, see RankMethod).
template <int IdBits> __device__ __forceinline__ std::uint32_t warp_peers(std::uint32_t id, bool match_any) {
  if (match_any) return __match_any_sync(0xFFFFFFFFu, id);
  std::uint32_t peers = 0xFFFFFFFFu;
#pragma unroll
  for (int bit = 0; bit < IdBits; ++bit) peers &= same_bit_lanes(id, 1u << bit);
  return peers;
}

}  // namespace radixmesh::device::multisplit_detail
