// A block's stable LSD radix sort of up to 32 x Items x Warps 64-bit keys in shared memory,
// descending by a range of their bits, 8 bits a pass, four barriers a pass (a bitonic sort of 1024
// keys takes 55): the row-family top-k's sort of its winners. The row-smem kernel's winners arrive
// in position order, so the rank bits alone decide and equal ranks stay by lowest position; the
// row-stream blocks sort their StreamKeys on every bit that differs. Design and measurements:
// docs/design/topk.md.
#pragma once
#include <cstdint>

#include "radixmesh/device/block_scan.cuh"

namespace radixmesh::detail::topk_gpu {

// Shared memory the sort takes besides the keys: the other half of the keys (`size` entries, a
// multiple of 2), then two tables of a count per (digit, warp): this pass's counts and their first
// places.
template <int Warps> constexpr std::size_t block_radix_sort_scratch_bytes(unsigned size) {
  return std::size_t(size) * sizeof(unsigned long long) + 2 * 256 * Warps * sizeof(std::uint16_t);
}

// Sorts keys[0, count) (count <= 32 x Items x Warps) descending by bits [low_bit, high_bit) of each key,
// stable, and returns where they ended: `keys` or `other` (`capacity` >= count entries, 16-byte
// aligned, followed by the tables). Every thread of the block (32 x Warps) calls it; it begins
// and ends with a barrier.
//
// Warp w ranks places [32 Items w, 32 Items (w + 1)), lane l places 32 (Items w + j) + l for j = 0,
// 1, ... (in that order, so that a warp's rounds keep position order): `__match_any_sync` groups the lanes of one
// digit, whose lowest lane adds their count to the warp's entry of that digit. A block scan of
// the counts in (digit, warp) order (a thread takes 8 entries, 16 bytes) gives every entry its
// first place, zeroing the counts for the next pass on the way, and each key moves there.
template <int Warps, int Items>
__device__ unsigned long long* block_radix_sort_descending(unsigned long long* keys, unsigned long long* other,
                                                          unsigned capacity, unsigned count, int low_bit,
                                                          int high_bit, unsigned* warp_sums) {
  constexpr unsigned kNone = 256;  // the digit of an empty place: ranked by nobody
  using Table = std::uint16_t[256][Warps];
  Table& counts = *reinterpret_cast<Table*>(other + capacity);
  Table& starts = *reinterpret_cast<Table*>(&counts[0][0] + 256 * Warps);
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const unsigned lower = (1u << lane) - 1;
  reinterpret_cast<uint4*>(&counts[0][0])[t] = uint4{};  // 256 x Warps entries: 8 a thread
  __syncthreads();
  for (int bit = low_bit; bit < high_bit; bit += 8) {
    const unsigned mask = (1u << (high_bit - bit < 8 ? high_bit - bit : 8)) - 1;
    unsigned long long key[Items];
    unsigned digit[Items], rank[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      const unsigned at = 32 * (Items * warp + j) + lane;
      key[j] = at < count ? keys[at] : 0ull;
      digit[j] = at < count ? mask - (unsigned(key[j] >> bit) & mask) : kNone;  // descending
      const unsigned peers = __match_any_sync(0xffffffffu, digit[j]);
      const unsigned before = digit[j] == kNone ? 0u : counts[digit[j]][warp];
      rank[j] = before + unsigned(__popc(peers & lower));
      __syncwarp();  // every lane read its entry before the lowest lane raises it
      if (digit[j] != kNone && (peers & lower) == 0) counts[digit[j]][warp] = std::uint16_t(before + __popc(peers));
      __syncwarp();
    }
    __syncthreads();  // every warp's counts
    std::uint16_t entry[8];
    const uint4 mine = reinterpret_cast<const uint4*>(&counts[0][0])[t];
    memcpy(entry, &mine, 16);
    unsigned sum = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) sum += entry[e];
    unsigned total = 0;
    unsigned first = ::radixmesh::device::block_scan::block_exclusive_scan<unsigned, false, Warps>(sum, warp_sums, total);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const unsigned c = entry[e];
      entry[e] = std::uint16_t(first);
      first += c;
    }
    uint4 places;
    memcpy(&places, entry, 16);
    reinterpret_cast<uint4*>(&starts[0][0])[t] = places;
    reinterpret_cast<uint4*>(&counts[0][0])[t] = uint4{};
    __syncthreads();  // every entry's first place
#pragma unroll
    for (int j = 0; j < Items; ++j)
      if (digit[j] != kNone) other[starts[digit[j]][warp] + rank[j]] = key[j];
    __syncthreads();  // the keys moved: `other` is the next pass's input
    unsigned long long* swap = keys;
    keys = other, other = swap;
  }
  return keys;
}

}  // namespace radixmesh::detail::topk_gpu
