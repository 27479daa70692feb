# Host model of the row-filter variant's first step, for many rows at large k (docs/design/topk.md,
# "The row-filter variant"; src/cuda/topk/topk_row_filter.cuh): each row's threshold guessed from its first
# tile as the row-stream blocks guess it (estimate_lanes: each warp's m-th best of its threads'
# maxima, the least over the warps), every value at or above it appended to a per-row buffer in
# global memory, and optionally the threshold raised at tile boundaries to the k-th best appended
# rank once `raise_at` keys were appended (and again after every k more, as the kernel does; its raise,
# kth_floor in src/cuda/topk/topk_row_filter.cuh, stops after two 8-bit radix passes below the bits the appended keys
# share: exact at a 16-bit rank, ~9 mantissa bits of an f32 one, so its bucket keeps a few more
# keys than this exact raise). Rows of bench_topk_llm's
# logits (2 x (sum of 4 uniforms - 2)), f32 or rounded to bf16, and an ascending row (the
# adversary: every tile beats the last). Prints, in units of k: the appends (kernel 1's writes;
# above the capacity a row falls back), the survivors of the final threshold (kernel 2's select),
# and the share of rows that overflow the kernel's 5 k slots or end below k, with its first raise
# at 3 k appends (filter_slots_per_row, filter_raise_after) and without raises on the way.
#   /usr/bin/python3 bench/phases/row_filter_model.py [ROWS] [--costs]
import math
import sys

import numpy as np

rng = np.random.default_rng(1)
TILE = 4096  # values in a row-stream tile: 256 threads x 2 vectors of 8


def to_bf16(x):
    b = x.astype(np.float32).view(np.uint32)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.view(np.float32)


def lanes(k, values, c=1.5):  # estimate_lanes
    q = c * k / values
    return int(min(32, max(1, math.ceil(32 * (1 - (1 - q) ** 16)))))


def make_row(values, kind):
    x = 2.0 * (rng.random((values, 4), dtype=np.float32).sum(1) - 2.0)
    if kind != "f32":
        x = to_bf16(x)
    if kind == "ascending":
        x = np.sort(x)
    return x


def simulate(x, k, raise_at):
    first = x[:TILE].reshape(2, 256, 8).max(axis=(0, 2))
    threshold = np.sort(first.reshape(8, 32), axis=1)[:, ::-1][:, lanes(k, len(x)) - 1].min()
    appended, next_raise, raises = [], raise_at, 0
    for t0 in range(0, len(x), TILE):
        tile = x[t0:t0 + TILE]
        appended.extend(tile[tile >= threshold].tolist())
        if len(appended) >= next_raise:
            kth = np.sort(np.array(appended))[::-1][k - 1]  # values at or above it: at least k
            if kth > threshold:
                threshold, raises = kth, raises + 1
            next_raise = len(appended) + k
    a = np.array(appended)
    return len(a), int((a >= threshold).sum()), raises


def costs(x, k, first_raise, then_every, final_raise, E):
    """What row_filter's block does for a row, in the units its cost grows with: appends (one
    shared atomic each when lanes append one at a time), warp steps with an append (one atomic a
    warp step when a warp scan reserves the places, as c6c45b4 did: measured slower, call HR in
    docs/design/topk.md), and keys read by the raises
    (three reads each: the shared bits and two passes). Vectors of E values, 16 bytes."""
    V = 16 // E
    first = x[:TILE].reshape(V, 256, E).max(axis=(0, 2))
    threshold = np.sort(first.reshape(8, 32), axis=1)[:, ::-1][:, lanes(k, len(x)) - 1].min()
    appended, steps, reads, next_raise = 0, 0, 0, first_raise
    kept = []
    for t0 in range(0, len(x), TILE):
        tile = np.full(TILE, -np.inf, dtype=np.float32)
        tile[:len(x) - t0 if len(x) - t0 < TILE else TILE] = x[t0:t0 + TILE]
        taken = tile >= threshold
        steps += int(taken.reshape(V, 8, 32, E).any(axis=(2, 3)).sum())
        kept.extend(tile[taken].tolist())
        appended += int(taken.sum())
        if appended >= next_raise:
            reads += 3 * appended
            threshold = max(threshold, np.sort(np.array(kept))[::-1][k - 1])
            next_raise = appended + then_every
    if final_raise:
        reads += 3 * appended
    return appended, steps, reads


rows = int(sys.argv[1]) if len(sys.argv) > 1 else 40
if len(sys.argv) > 2 and sys.argv[2] == "--costs":
    # The kernel as first built (35be8a9: raises after 2 k appends and every k after, atomics a key),
    # with the last raise (861f14e), and with warp-reserved appends and the first raise at 3 k
    # (c6c45b4), in units of k a row (medians over the rows).
    for kind, E in [("bf16", 8), ("f32", 4)]:
        for values in [32000, 128256]:
            for k in [256, 1024]:
                kk = max(k, 256)
                v1 = np.array([costs(make_row(values, kind), k, 2 * kk, k, False, E) for _ in range(rows)])
                v3 = np.array([costs(make_row(values, kind), k, 3 * kk, k, True, E) for _ in range(rows)])
                med = lambda a: np.median(a) / k
                print(f"{kind:5s} {values:6d} k={k:4d}: appends {med(v1[:, 0]):.2f} (35be8a9: an atomic each) -> "
                      f"warp steps with an append {med(v3[:, 1]):.2f} (c6c45b4); keys read by raises "
                      f"{med(v1[:, 2]):.2f} (35be8a9) -> {med(v3[:, 2]):.2f} (c6c45b4, with the last raise)")
    sys.exit(0)
k, capacity = 1024, 5 * 1024
for kind in ["f32", "bf16", "ascending"]:
    for values in [32000, 128256, 256000]:
        for raise_at in [3 * k, None]:
            res = np.array([simulate(make_row(values, kind), k, raise_at or 1 << 40) for _ in range(rows)])
            ap, sv = res[:, 0] / k, res[:, 1] / k
            print(f"{kind:9s} {values:6d} raise at {str(raise_at or 'never'):>5}: appends / k median {np.median(ap):.2f} "
                  f"max {ap.max():.2f}, over 5 k in {np.mean(ap > capacity / k) * 100:3.0f} %; survivors / k median "
                  f"{np.median(sv):.2f} max {sv.max():.2f}, below k in {np.mean(sv < 1) * 100:.0f} %; raises median "
                  f"{np.median(res[:, 2]):.0f} ({rows} rows)")
