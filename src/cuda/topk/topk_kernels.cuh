// Top-k kernels, instantiated per key width U (u16, u32, u64), never per key type: the type only
// picks the rank transform (topk_rank, topk.hpp) at run time.
//
// The select works on a combined key per element: its W-bit rank, then IB bits of the complement
// of its position, so that the composite is unique and a larger composite is better (higher rank,
// then lower index). MSD radix passes over the composite find a lower bound L with exactly k
// elements >= L (RadiK §2.3.1, with the index digits making ties deterministic instead of atomic-
// order dependent). Each pass: block histograms in shared memory merged into a global histogram
// (RadiK §3.1.1 hierarchical atomics); the last block to finish picks the bucket and updates the
// row's state, so a pass is one launch and nothing returns to the host. A row whose bucket count
// equals the places left is done (early exit) and later passes skip it.
//
// Delegates (Dr. Top-k): a pass over the input writes the maximum rank of every subrange of S = 2^α
// elements and, fused into it, the first digit histogram of those delegates. The k-th largest
// delegate T is a lower bound of the k-th largest element (k subranges each hold an element >= T),
// so only subranges whose delegate is >= T hold winners: they are rescanned and their elements
// >= T compacted into candidates, and the exact select runs on those alone.
#pragma once
#include "cuda/topk/topk_block_select.cuh"
#include "cuda/topk/topk_compact_read.cuh"
#include "cuda/topk/topk_delegate_pass.cuh"
#include "cuda/topk/topk_output.cuh"
#include "cuda/topk/topk_sample_select.cuh"
#include "cuda/topk/topk_scaling.cuh"
#include "cuda/topk/topk_select_passes.cuh"
