// Floating-point keys sorted by CUB's native float radix sort, then put into
// radixmesh's order.
//
// Why: an unsigned sort of our encoding (keys.hpp) needs an encode pass before
// and a decode pass after it (1.07 ms of 7.23 ms for 2^28 f32 keys on an H200),
// while CUB twiddles floats in registers for free. CUB's float order differs
// from ours in exactly two places (CUDA 13.0 headers: cub/util_type.cuh
// BaseTraits<FLOATING_POINT>::TwiddleIn,
// cub/block/radix_rank_sort_operations.cuh
// BaseDigitExtractor::ProcessFloatMinusZero, applied to __half and
// __nv_bfloat16 too):
//   1. sign-set NaNs. CUB's twiddle (negative: flip every bit; positive: set
//   the sign bit) puts them
//      below -inf; ours subtracts 2^M - 1 from that same twiddle, which wraps
//      exactly these keys round to the top. Inside the group both orders agree
//      (larger payload first, ascending).
//   2. -0.0 and +0.0. CUB digits -0.0 as +0.0 (a tie, so input order); ours
//   puts -0.0 first
//      (ascending) or +0.0 first (descending).
// Every other pair of keys compares the same (the subtraction does not wrap for
// them), descending is the complement in both, and both sorts are stable. So
// after CUB's sort the sign-set NaNs form a prefix (ascending) or suffix
// (descending) that belongs at the other end, and the zeros form one run, in
// input order, that needs a stable partition by sign. The fix-up finds both on
// the device by searching the sorted output and moves data only when one is
// present (a NaN: every key once, in place; both zeros: the zero run only):
// with neither (the usual case) its kernels read a few dozen keys, write a
// count and a flag per 4096 keys, scan the counts and return. No host
// synchronization is added, so the device-level API stays stream-ordered.
// (A rotation moves every key: the NaN group goes from one end to the other.)
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/sort/cub_engine.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/sort.hpp"

namespace radixmesh::detail {

// True where this path runs: asked for (FloatSortPath::automatic, SortOptions::float_path), a
// floating-point key type, every bit of it, CUB's engine, fewer than 2^32 keys (only 32-bit
// offsets are instantiated) and at least two keys.
bool native_float_path_applies(KeyType type, const EncodedSortShape& shape, SortEngine engine, FloatSortPath path);

// CUB's native float sort, instantiated per key width (16-bit keys as __half:
// bf16's twiddle and -0.0 are the same bit operations), ascending or
// descending. shape must cover all bits (native_float_path_applies). temp == nullptr:
// only sets temp_bytes. Contracts as cub_sort_copy/cub_sort_double_buffer.
void cub_native_float_sort_copy(Order order, void* temp, std::size_t& temp_bytes, const void* keys_in, void* keys_out,
                                const void* values_in, void* values_out, const EncodedSortShape& shape,
                                cudaStream_t stream);
void cub_native_float_sort_double_buffer(Order order, void* temp, std::size_t& temp_bytes, EncodedDoubleBuffer& buffers,
                                         const EncodedSortShape& shape, cudaStream_t stream);

// Device memory the fix-up needs besides its scratch arrays: its plan, two
// counts and a flag per 4096-key tile, and cub::DeviceScan's temp.
std::size_t native_order_fix_workspace_bytes(std::size_t n);

// Turns keys (and values) sorted in CUB's native float order into radixmesh's
// order, in place, stream-ordered. scratch_keys/scratch_values: n keys/values
// of spare device memory, of which only the sign-set NaN group (when 0 < count
// < n) and the zero run (when both signs are in it) are written, at their own
// indices. workspace: native_order_fix_workspace_bytes(n), 256-byte aligned.
void launch_native_order_fix(KeyType type, Order order, void* keys, void* values, int value_bytes, std::size_t n,
                             void* scratch_keys, void* scratch_values, void* workspace, cudaStream_t stream);

}  // namespace radixmesh::detail
