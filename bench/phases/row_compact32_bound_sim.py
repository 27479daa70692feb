#!/usr/bin/env python3
"""Host model of the row-compact top-k's sampled bound (src/cuda/topk/topk_row_compact.cuh): how
often a row's bound fails (fewer than k values pass, or a warp's region of R slots overflows), and
how many values pass, for the rule m = k f + 3 sqrt(k f) + 1 (f = 2048 / n) and a few others.

Rows are sums of 4 uniforms in bf16 precision, as phase_logits.hpp makes them. Each of the 8 warps
takes a contiguous eighth of the row, as the kernel's stream does.
    /usr/bin/python3 bench/phases/row_compact32_bound_sim.py [ROWS]
--vectors models the kernel's samples as they are now (16-byte vectors of 8 values, V a thread,
m = k f + 4 sqrt(k f) + 2, regions of 384) on rows of 65536 to 256000 values, with one vector a
thread at every length against V = ceil(n / 65536) (at most 4):
    /usr/bin/python3 bench/phases/row_compact32_bound_sim.py --vectors [ROWS]
"""
import sys

import numpy as np

SAMPLES, WARPS = 2048, 8


def bf16_ranks(x):
    bits = x.astype(np.float32).view(np.uint32) >> 16
    return np.where(bits & 0x8000, bits ^ 0xFFFF, bits ^ 0x8000).astype(np.int64)


def logit_ranks(n, rng):
    """The bf16 ranks of a row of n sums of 4 uniforms."""
    return bf16_ranks(rng.random((4, n), dtype=np.float32).sum(axis=0) - 2.0)


def per_warp_counts(mask, vectors):
    """How many of mask's values fall in each warp's contiguous eighth of `vectors` 8-value vectors."""
    return [int(mask[vectors * w // WARPS * 8:vectors * (w + 1) // WARPS * 8].sum()) for w in range(WARPS)]


def simulate(rows, n, k, margin, region, rng):
    failed_few = failed_overflow = 0
    passing = []
    f = SAMPLES / n
    kf = k * f
    m = min(SAMPLES, int(kf + margin * np.sqrt(kf)) + 1)
    positions = (np.arange(SAMPLES, dtype=np.int64) * n) // SAMPLES
    for _ in range(rows):
        r = logit_ranks(n, rng)
        bound = np.sort(r[positions])[::-1][m - 1]
        mask = r >= bound
        count = int(mask.sum())
        passing.append(count)
        per_warp = per_warp_counts(mask, n // 8)
        if count < k:
            failed_few += 1
        elif max(per_warp) > region:
            failed_overflow += 1
    return m, failed_few, failed_overflow, np.percentile(passing, [0, 50, 100])


def simulate_vectors(rows, n, k, per_thread, rng, region=384, margin=4.0):
    vectors = (n + 7) // 8
    sampled = min(256 * per_thread, vectors)
    chosen = (np.arange(sampled) * vectors) // sampled
    positions = (chosen[:, None] * 8 + np.arange(8)[None, :]).ravel()
    positions = positions[positions < n]
    s = len(positions)
    kf = k * s / n
    m = min(s - 14, int(kf + margin * np.sqrt(kf)) + 2)
    few = over = most = 0
    for _ in range(rows):
        r = logit_ranks(n, rng)
        mask = r >= np.sort(r[positions])[::-1][m - 1]
        per_warp = per_warp_counts(mask, vectors)
        most = max(most, max(per_warp))
        if mask.sum() < k:
            few += 1
        elif max(per_warp) > region:
            over += 1
    return m, few, over, most


def main_vectors(rows):
    rng = np.random.default_rng(2)
    print(f"{rows} rows each; failures: too few pass / a warp's region of 384 overflows")
    for n in (65536, 128256, 256000):
        for k in (256, 1024):
            for per_thread in sorted({1, min(4, -(-n // 65536))}):
                m, few, over, most = simulate_vectors(rows, n, k, per_thread, rng)
                print(f"n={n:6d} k={k:5d} vectors a thread={per_thread} m={m:4d}: failed {few} + {over} of {rows}; "
                      f"the most a warp kept {most}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--vectors":
        return main_vectors(int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    rng = np.random.default_rng(1)
    print(f"{rows} rows each; failures: too few pass / a warp's region overflows")
    for n in (32000, 50264, 65536):
        for k in (256, 1024):
            for margin in (3.0, 2.5):
                for region in (256, 384):
                    m, few, over, pct = simulate(rows, n, k, margin, region, rng)
                    print(f"n={n:6d} k={k:5d} margin={margin} m={m:4d} region={region}: "
                          f"failed {few} + {over} of {rows}; passing min/median/max {pct[0]:.0f}/{pct[1]:.0f}/{pct[2]:.0f}")


if __name__ == "__main__":
    main()
