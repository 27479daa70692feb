// radixmesh/multisplit_tuning.hpp — the GPU multisplit's tuning knobs, in one struct passed with
// each call: MultisplitOptions::tuning for the host API (radixmesh/multisplit.hpp), the last
// argument of the device-level entries (radixmesh/device/multisplit.cuh) and of the digit split
// (radixmesh/device/multisplit_digit.hpp). Every setting gives the same, stable result; only the
// kernels that run and their cost differ. A default MultisplitTuning runs the measured rules
// (figures, device and commands: docs/design/multisplit.md). The CPU backend ignores it. Plain
// C++, no CUDA headers.
#pragma once

namespace radixmesh {

// How a warp finds the lanes that hold its key's bucket id, in the block-tile scatter pass.
enum class MultisplitRankMethod {
  automatic,  // one __match_any_sync per window for m <= 4, the id class's ballots above
  ballot,     // one ballot per id bit
  match_any,  // one __match_any_sync per window
};

// The scatter pass of a one-pass split with m <= 32 (splits of more buckets always take block_tiles).
enum class MultisplitScatterKernel {
  automatic,        // keys only: warp_owned for m <= 2, thread_counters for 3 <= m <= 32; pairs: block_tiles
  block_tiles,      // tiles ranked warp by warp (ballots or __match_any_sync), reordered in shared memory
  warp_owned,       // each warp owns a contiguous part of the chunk, bucket cursors in lane registers
  thread_counters,  // tiles ranked by per-thread packed 16-bit shared counters, no ballots
};

struct MultisplitTuning {
  MultisplitRankMethod rank_method = MultisplitRankMethod::automatic;  // forces the ranking (see above)
  MultisplitScatterKernel scatter_kernel = MultisplitScatterKernel::automatic;  // forces the m <= 32 pass
  // Tile buffers of the block-tile scatter pass: 0 = two, or one where two do not fit in shared
  // memory or a chunk is one tile; 1 or 2 force that many (two still fall back to one where they do not fit).
  int scatter_stages = 0;
  // Windows of 32 keys per sub-tile of the warp-owned pass: 0 = 16 for 4-byte keys-only splits
  // (8 for 5-8 bytes of key and value, 4 above); 8 = 8 for 4-byte keys-only splits (others ignore it).
  int warp_scatter_windows = 0;
};

// Whether every knob holds a value it can take: scatter_stages 0, 1 or 2; warp_scatter_windows 0 or 8.
constexpr bool valid_tuning(const MultisplitTuning& tuning) {
  return tuning.scatter_stages >= 0 && tuning.scatter_stages <= 2 &&
         (tuning.warp_scatter_windows == 0 || tuning.warp_scatter_windows == 8);
}

}  // namespace radixmesh
