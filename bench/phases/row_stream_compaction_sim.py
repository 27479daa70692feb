# The row-stream blocks' compactions on the way (src/cuda/topk/topk_row_stream.cuh, stream_best),
# simulated on the host for one segment a row: rows of normal bf16 or f32 values (sums of 4
# uniforms, as bench_topk_llm's logits), the guessed seed as the kernel takes it (seed_guess_sim.py),
# then tiles of 4096 values appended above the threshold; past compact_above = 2 k appends at a
# tile's end, a compaction keeps the k best (and the k-th rank's ties, up to k + k / 4) and raises
# the threshold to the k-th. Prints, per k, the compactions a row takes, the keys each sorts or
# selects (keep_best sorts up to 1024 keys by bitonic steps, selects more by radix passes), and the
# keys left for the output. Written for the lead "the row-stream blocks between k = 128 and 512 on
# long rows" in docs/design/topk.md (4096 x 128256 bf16 k = 192 0.568 ms against 0.526 at k = 512,
# call HV).
#   /usr/bin/python3 bench/phases/row_stream_compaction_sim.py [ROWS] [VALUES] [bf16|f32]
import math
import sys

import numpy as np

rng = np.random.default_rng(1)
trials = int(sys.argv[1]) if len(sys.argv) > 1 else 50
values = int(sys.argv[2]) if len(sys.argv) > 2 else 128256
dtype = sys.argv[3] if len(sys.argv) > 3 else "bf16"
TILE, BITONIC_MAX = 4096, 1024


def lanes(k, n, c=1.5):  # estimate_lanes
    q = c * k / n
    return int(min(32, max(1, math.ceil(32 * (1 - (1 - q) ** 16)))))


def to_type(x):
    if dtype == "f32":
        return x
    bits = x.view(np.uint32)  # bf16: round to nearest even on the top 16 bits
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def row(k):
    x = to_type(rng.random((values, 4), dtype=np.float32).sum(1))
    m = lanes(k, values)
    thread_best = x[:TILE].reshape(2, 256, 8).max(axis=(0, 2))
    threshold = np.sort(thread_best.reshape(8, 32), axis=1)[:, ::-1][:, m - 1].min()
    # keys above the threshold (a key is taken iff greater; the m-th keys themselves are taken)
    kept = np.empty(0, np.float32)
    threshold = np.nextafter(threshold, np.float32(-np.inf))
    sorts, selects = [], []
    for t in range(0, values, TILE):
        tile = x[t:t + TILE]
        kept = np.concatenate([kept, tile[tile > threshold]])
        if len(kept) > 2 * k:
            (sorts if len(kept) <= BITONIC_MAX else selects).append(len(kept))
            order = np.sort(kept)[::-1]
            kth = order[k - 1]
            at_or_above = order[order >= kth]  # the k best and the k-th rank's ties
            kept = at_or_above if len(at_or_above) <= k + k // 4 else order[:k]
            threshold = kth
    return sorts, selects, len(kept)


print(f"{values} {dtype} values a row, {trials} rows (one segment a row)")
for k in [128, 192, 256, 384, 512, 768, 1024]:
    if values < max(8 * k, 8192):
        continue
    rows = [row(k) for _ in range(trials)]
    n_sorts = np.array([len(s) for s, _, _ in rows])
    n_selects = np.array([len(s) for _, s, _ in rows])
    sorted_keys = np.array([sum(s) for s, _, _ in rows])
    left = np.array([c for _, _, c in rows])
    print(f"k {k:4d}: compactions by bitonic sort {n_sorts.mean():.1f} ({sorted_keys.mean():.0f} keys), "
          f"by radix passes {n_selects.mean():.1f}; keys left for the output median {np.median(left):.0f}")
