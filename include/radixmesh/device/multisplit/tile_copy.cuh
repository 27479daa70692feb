// radixmesh/device/multisplit/tile_copy.cuh — copying a tile of keys or values from global to
// shared memory: 16-byte cp.async copies that hold no registers (full, aligned tiles), or plain
// loads (the input's last tile, unaligned inputs), in the plain layout or the swizzled one of the
// thread-counter pass. The caller waits (copy_async_wait_all) and syncs the block before reading
// the copy.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "radixmesh/device/multisplit/common.cuh"

namespace radixmesh::device::multisplit_detail {

// Copies `valid` elements of a tile to shared memory: 16-byte loads when the tile is full and the
// input aligned (all loads issued before the stores), else one element per thread at a time.
template <int Bytes, int TileElems>
__device__ __forceinline__ void load_tile(const void* in, std::size_t base, std::uint32_t valid, bool vector_loads,
                                          void* shared) {
  static_assert(TileElems * Bytes % (16 * block_threads) == 0);
  if (vector_loads && valid == TileElems) {
    constexpr int vectors = TileElems * Bytes / 16 / block_threads;
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
    uint4 r[vectors];
#pragma unroll
    for (int i = 0; i < vectors; ++i) r[i] = src[i * block_threads + threadIdx.x];
    uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
    for (int i = 0; i < vectors; ++i) dst[i * block_threads + threadIdx.x] = r[i];
  } else {
    using T = typename raw_of<Bytes < 4 ? 4 : Bytes>::type;
    if constexpr (Bytes >= 4) {
      const T* src = static_cast<const T*>(in) + base;
      T* dst = static_cast<T*>(shared);
      for (std::uint32_t i = threadIdx.x; i < valid; i += block_threads) dst[i] = src[i];
    } else {
      const unsigned char* src = static_cast<const unsigned char*>(in) + base * Bytes;
      unsigned char* dst = static_cast<unsigned char*>(shared);
      for (std::uint32_t i = threadIdx.x; i < valid * Bytes; i += block_threads) dst[i] = src[i];
    }
  }
}

__device__ __forceinline__ void copy_async_16(void* shared, const void* global) {
  const unsigned address = unsigned(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Starts copying a tile into shared memory: asynchronous 16-byte copies (cp.async, no registers
// held) when full and aligned, else plain loads (the last tile of the input, or unaligned inputs).
template <int Bytes, int TileElems>
__device__ __forceinline__ void start_tile_copy(const void* in, std::size_t base, std::uint32_t valid, bool vector_loads,
                                                void* shared) {
  if (vector_loads && valid == TileElems) {
    constexpr int vectors = TileElems * Bytes / 16 / block_threads;
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
    uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
    for (int i = 0; i < vectors; ++i) copy_async_16(dst + i * block_threads + threadIdx.x, src + i * block_threads + threadIdx.x);
  } else {
    load_tile<Bytes, TileElems>(in, base, valid, false, shared);
  }
}

__device__ __forceinline__ void copy_async_wait_all_but_one() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }
// Waits until at most `Pending` of this thread's latest committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// One warp copies `valid` elements (of Elems) from global to its own shared buffer: 16-byte
// cp.async copies when the piece is whole, the input aligned and the piece a whole number of
// 512-byte rows (32 lanes x 16 bytes); else lane-strided plain loads and stores (the input's last
// piece, unaligned inputs, narrow elements in small pieces). The caller commits, waits and
// __syncwarp()s before reading.
template <int Bytes, int Elems>
__device__ __forceinline__ void start_warp_copy(const void* in, std::size_t base, std::uint32_t valid,
                                                bool vector_loads, void* shared) {
  const std::uint32_t lane = threadIdx.x % 32;
  if constexpr (Elems * Bytes % 512 == 0) {
    if (vector_loads && valid == Elems) {
      constexpr int rows = Elems * Bytes / 512;
      const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
      uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
      for (int i = 0; i < rows; ++i) copy_async_16(dst + i * 32 + lane, src + i * 32 + lane);
      return;
    }
  }
  using T = typename raw_of<Bytes>::type;
  const T* src = static_cast<const T*>(in) + base;
  T* dst = static_cast<T*>(shared);
  for (std::uint32_t i = lane; i < valid; i += 32) dst[i] = src[i];
}

// 16-byte chunk c of a tile is stored at swizzled_chunk(c). Thread t reads chunks Chunks * t + i
// (its blocked slots); a 16-byte load is served 8 threads (128 bytes, all 32 banks) at a time, and
// unswizzled those 8 threads would hit only 8 / Chunks distinct 16-byte bank groups. The XOR of
// c's bits 0-2 with (c >> 3) & (Chunks - 1) gives them 8 distinct groups: for Chunks = 4,
// c = 4t + i, c >> 3 = t >> 1, so the group is 4 (t & 1) + (i ^ ((t >> 1) & 3)), distinct over the
// 8 values of (t & 1, (t >> 1) & 3); likewise Chunks = 2 (2 (t & 3) + (i ^ ((t >> 2) & 1))) and 8
// (i ^ (t & 7)). The copy's stores (8 consecutive chunks per 8 threads) are permuted within their
// aligned group of 8, so they stay conflict-free too.
template <int Chunks> __host__ __device__ constexpr std::uint32_t swizzled_chunk(std::uint32_t c) {
  static_assert(Chunks == 1 || Chunks == 2 || Chunks == 4 || Chunks == 8);
  return c ^ ((c >> 3) & std::uint32_t(Chunks - 1));
}

// Starts copying `valid` elements of a tile into `shared` in the swizzled layout: 16-byte cp.async
// copies when the tile is full and the input aligned, else element by element (the input's last
// tile, unaligned inputs). The caller commits, waits and syncs.
template <int Bytes, int TileElems>
__device__ __forceinline__ void start_swizzled_copy(const void* in, std::size_t base, std::uint32_t valid,
                                                    bool vector_loads, void* shared) {
  constexpr int chunks_per_thread = TileElems * Bytes / 16 / block_threads;
  static_assert(chunks_per_thread * 16 * block_threads == TileElems * Bytes);
  if (vector_loads && valid == TileElems) {
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(in) + base * Bytes);
    uint4* dst = static_cast<uint4*>(shared);
#pragma unroll
    for (int i = 0; i < chunks_per_thread; ++i) {
      const std::uint32_t c = i * block_threads + threadIdx.x;
      copy_async_16(dst + swizzled_chunk<chunks_per_thread>(c), src + c);
    }
  } else {
    using T = typename raw_of<Bytes>::type;
    const T* src = static_cast<const T*>(in) + base;
    T* dst = static_cast<T*>(shared);
    constexpr std::uint32_t per_chunk = 16 / Bytes;
    for (std::uint32_t e = threadIdx.x; e < valid; e += block_threads)
      dst[swizzled_chunk<chunks_per_thread>(e / per_chunk) * per_chunk + e % per_chunk] = src[e];
  }
}

// Starts copying one tile (keys, and values when ValueBytes != 0) into a stage of the block's tile
// buffers, in the plain layout (start_tile_copy) or the swizzled one (start_swizzled_copy), and
// commits the copy group. The block scatter passes stream their chunk through it.
template <int ValueBytes, int TileElems, bool Swizzled, class K>
__device__ __forceinline__ void start_stage_copy(const K* keys, const void* values, std::size_t base,
                                                 std::uint32_t valid, bool vector_loads, K* key_stage,
                                                 void* value_stage) {
  auto copy = [&](auto bytes, const void* in, void* shared) {
    if constexpr (Swizzled) start_swizzled_copy<decltype(bytes)::value, TileElems>(in, base, valid, vector_loads, shared);
    else start_tile_copy<decltype(bytes)::value, TileElems>(in, base, valid, vector_loads, shared);
  };
  copy(std::integral_constant<int, int(sizeof(K))>{}, keys, key_stage);
  if constexpr (ValueBytes != 0) copy(std::integral_constant<int, ValueBytes>{}, values, value_stage);
  copy_async_commit();
}

}  // namespace radixmesh::device::multisplit_detail
