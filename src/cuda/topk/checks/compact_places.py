# CPU emulation of compact_read + DeviceScan + place_tiles (src/cuda/topk/topk_compact_read.cuh):
# tiles arrive at the staging list in a random order (the atomicAdd); each taken element's place
# in the final list must be its rank among all taken elements in index order, and the list must
# hold (index) in order. Emulates the packed 16-bit pair scans per warp, warp 0's scan of the 64
# (group, warp) counts and the copy. Written in round 2 before the device run.
#   python3 src/cuda/topk/checks/compact_places.py
import random
THREADS, LOADS, WARPS = 256, 8, 8
def check(V, p, n):
    T = THREADS * LOADS * V
    tiles = (n + T - 1) // T
    take = [random.random() < p for _ in range(n)]
    expected = [i for i in range(n) if take[i]]
    stage, count, offset = [None] * n, [0] * tiles, [0] * tiles
    cursor = 0
    for tile in random.sample(range(tiles), tiles):
        t0 = tile * T
        tk = [[0] * LOADS for _ in range(THREADS)]
        for t in range(THREADS):
            for j in range(LOADS):
                for v in range(V):
                    i = t0 + (j * THREADS + t) * V + v
                    if i < n and take[i]: tk[t][j] |= 1 << v
        if not any(tk[t][j] for t in range(THREADS) for j in range(LOADS)):
            count[tile] = 0; continue
        lane_before = [[0] * LOADS for _ in range(THREADS)]
        s_before = [0] * (LOADS * WARPS)
        for w in range(WARPS):
            for j in range(0, LOADS, 2):
                inc = 0
                for lane in range(32):
                    t = w * 32 + lane
                    packed = bin(tk[t][j]).count('1') | bin(tk[t][j + 1]).count('1') << 16
                    inc += packed
                    exc = inc - packed
                    lane_before[t][j], lane_before[t][j + 1] = exc & 0xffff, exc >> 16
                s_before[j * WARPS + w], s_before[(j + 1) * WARPS + w] = inc & 0xffff, inc >> 16
        inc = 0
        for lane in range(32):
            a, b = s_before[2 * lane], s_before[2 * lane + 1]
            inc += a + b
            s_before[2 * lane], s_before[2 * lane + 1] = inc - a - b, inc - b
        total = inc
        base = cursor; cursor += total
        count[tile], offset[tile] = total, base
        for t in range(THREADS):
            w = t // 32
            for j in range(LOADS):
                at = base + s_before[j * WARPS + w] + lane_before[t][j]
                first = t0 + (j * THREADS + t) * V
                for v in range(V):
                    if tk[t][j] >> v & 1:
                        assert stage[at] is None; stage[at] = first + v; at += 1
    assert cursor == len(expected)
    out, place = [None] * cursor, 0
    for tile in range(tiles):
        for e in range(count[tile]): out[place + e] = stage[offset[tile] + e]
        place += count[tile]
    assert out == expected, (V, p, n)
random.seed(1)
for V in (2, 4, 8):
    T = THREADS * LOADS * V
    for p in (0.0, 0.001, 0.05, 0.5, 1.0):
        check(V, p, 3 * T - 37)
print("compact_read placement: OK")
