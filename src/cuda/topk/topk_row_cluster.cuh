// The row-cluster path of the GPU top-k: few rows with a large k (LLM sampling at decoding batch
// sizes with k in the hundreds). One thread-block cluster per row: each block copies its slice of
// the row into shared memory once, and the cluster runs an MSD radix select over the composite
// keys (rank, complemented position; StreamKey) on those copies, 8 bits a pass, the blocks' digit
// histograms summed through distributed shared memory, every block taking the same decision from
// the same sums. The select stops at the first digit whose bucket holds exactly the places left
// (real logits: two or three passes); the winners then go to block 0's shared memory, which sorts
// them and writes the row (write_row, as the row-stream path does). Design and measurements:
// docs/design/topk.md.
#pragma once
#include <cooperative_groups.h>

#include "cuda/topk/topk_row_stream.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kClusterThreads = 512;
constexpr int kClusterWarps = kClusterThreads / 32;
constexpr int kClusterDigitBits = 8;
constexpr int kClusterBins = 1 << kClusterDigitBits;

// A block's slice of the row in shared memory: slot s holds the row's value at position
// `origin + s`, where origin is the slice's first position rounded down to a 16-byte boundary of
// the row (slots before the slice's own first position are never read), so the slice's aligned
// middle is copied by 16-byte vectors into 16-byte aligned slots.
template <class T> struct ClusterSlice {
  using U = key_bits_t<T>;
  static constexpr int E = 16 / int(sizeof(U));
  U* slots;
  std::uint64_t first, last, origin;  // positions within the row

  __device__ void load(const U* row) {
    const auto address = reinterpret_cast<std::uintptr_t>(row + first);
    origin = first - (address % 16) / sizeof(U);
    std::uint64_t head = ((16 - address % 16) % 16) / sizeof(U);
    if (head > last - first) head = last - first;
    const std::uint64_t aligned = first + head, vectors = (last - aligned) / E, tail = aligned + vectors * E;
    for (std::uint64_t i = threadIdx.x; i < head; i += blockDim.x) slots[first + i - origin] = row[first + i];
    const uint4* from = reinterpret_cast<const uint4*>(row + aligned);
    uint4* to = reinterpret_cast<uint4*>(slots + (aligned - origin));
#pragma unroll 4
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) to[v] = __ldcs(from + v);
    for (std::uint64_t i = tail + threadIdx.x; i < last; i += blockDim.x) slots[i - origin] = row[i];
  }
};

// Shared state of a cluster block besides its slice (dynamic shared memory) and block 0's list.
struct ClusterShared {
  unsigned warp_hist[kClusterWarps][kClusterBins];  // each warp's counts of the pass's digit
  unsigned block_hist[2][kClusterBins];             // the block's, read by every block (by pass parity)
  unsigned total[kClusterBins];                     // the cluster's
  unsigned listed;                                  // block 0: winners placed in its list
  StreamShared stream;                              // find_digit's decision; block 0's sort and write
};

// One cluster (gridDim.x blocks) per row of the launch chunk: the row's min(k, length) best keys,
// sorted and written as the row's output. p.segment_length is a block's slice; the dynamic shared
// memory holds block 0's list (p.capacity keys: k_pad, rounded up to 16 bytes), then the slice.
template <class T> __global__ void __launch_bounds__(kClusterThreads) row_cluster(StreamParams<T> p) {
  using U = key_bits_t<T>;
  constexpr int W = 8 * sizeof(U);
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char cluster_bytes[];
  __shared__ ClusterShared sh;
  unsigned long long* list = reinterpret_cast<unsigned long long*>(cluster_bytes);  // p.capacity keys
  const unsigned me = cluster.block_rank(), blocks = cluster.num_blocks();
  const std::size_t r = p.row0 + blockIdx.y;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  ClusterSlice<T> slice{reinterpret_cast<U*>(list + p.capacity), 0, 0, 0};
  slice.first = std::min<std::uint64_t>(length, me * p.segment_length);
  slice.last = std::min<std::uint64_t>(length, slice.first + p.segment_length);
  slice.load(p.values + begin);
  if (threadIdx.x == 0) sh.listed = 0;
  const StreamKey<W> key(p.index_bits);
  const StreamRank<T> rank(p.options);
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::uint64_t mine = slice.last - slice.first;
  auto key_at = [&](std::uint64_t i) {  // i < mine
    const std::uint64_t pos = slice.first + i;
    return key.make(rank(slice.slots[pos - slice.origin]), pos);
  };
  __syncthreads();

  // The select: bits [high, 64) of the winners' keys are resolved to `prefix`; `need` places are
  // left among the keys that share it. Every block runs the same passes (the same sums decide).
  const unsigned wanted = unsigned(std::min<std::uint64_t>(p.k, length));
  const int low = 64 - W - p.index_bits;  // the keys' lowest bit in use
  int high = 64;
  unsigned long long prefix = 0;
  unsigned need = wanted;
  for (int pass = 0; need > 0 && high > low; ++pass) {
    const int shift = high - kClusterDigitBits > low ? high - kClusterDigitBits : low, width = high - shift;
    for (int b = lane; b < kClusterBins; b += 32) sh.warp_hist[warp][b] = 0;
    __syncwarp();
    // Whole-warp rounds, so that lanes with the same digit add once (logits crowd a few digits).
    for (std::uint64_t base = 0; base < mine; base += blockDim.x) {
      const std::uint64_t i = base + threadIdx.x;
      unsigned digit = kClusterBins;  // none
      if (i < mine) {
        const unsigned long long k = key_at(i);
        if (high == 64 || (k >> high) == prefix) digit = unsigned(k >> shift) & ((1u << width) - 1);
      }
      const unsigned same = __match_any_sync(0xffffffffu, digit);
      if (digit < kClusterBins && lane == unsigned(__ffs(same) - 1))
        atomicAdd(&sh.warp_hist[warp][digit], unsigned(__popc(same)));
    }
    __syncthreads();
    unsigned* mine_hist = sh.block_hist[pass & 1];
    for (int b = threadIdx.x; b < kClusterBins; b += blockDim.x) {
      unsigned sum = 0;
      for (int w = 0; w < kClusterWarps; ++w) sum += sh.warp_hist[w][b];
      mine_hist[b] = sum;
    }
    // Every block's histogram is complete. The other parity's buffer is rewritten only after the
    // next sync, which every block reaches after reading this one.
    cluster.sync();
    for (int b = threadIdx.x; b < kClusterBins; b += blockDim.x) {
      unsigned sum = 0;
      for (unsigned c = 0; c < blocks; ++c) sum += cluster.map_shared_rank(mine_hist, c)[b];
      sh.total[b] = sum;
    }
    __syncthreads();
    if (threadIdx.x < 32) find_digit(sh.total, need, sh.stream);
    __syncthreads();
    const unsigned digit = sh.stream.digit, above = sh.stream.above, bucket = sh.stream.bucket;
    need -= above;
    prefix = (high == 64 ? 0ull : prefix << width) | digit;
    high = shift;
    if (bucket == need) break;  // every key of this bucket wins
  }

  // The winners, exactly `wanted` keys: those whose top bits reach the prefix, into block 0's list
  // (a warp reserves its places with one remote atomic).
  if (wanted > 0) {
    unsigned long long* list0 = cluster.map_shared_rank(list, 0);
    unsigned* listed0 = cluster.map_shared_rank(&sh.listed, 0);
    for (std::uint64_t base = 0; base < mine; base += blockDim.x) {
      const std::uint64_t i = base + threadIdx.x;
      unsigned long long k = 0;
      const bool wins = i < mine && ((k = key_at(i)) >> high) >= prefix;
      const unsigned ballot = __ballot_sync(0xffffffffu, wins);
      if (!ballot) continue;
      unsigned at = 0;
      if (lane == 0) at = atomicAdd(listed0, unsigned(__popc(ballot)));
      at = __shfl_sync(0xffffffffu, at, 0) + unsigned(__popc(ballot & ((1u << lane) - 1)));
      if (wins && at < p.k_pad) list0[at] = k;
    }
  }
  cluster.sync();  // block 0's list is complete; no block reads another's memory after this
  if (me != 0) return;
  StreamBuffer buf{list, list, sh.stream};
  write_row(p, buf, r, begin, wanted);
}

}  // namespace radixmesh::detail::topk_gpu
