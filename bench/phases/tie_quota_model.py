# A host model of the row-cluster's ties (src/cuda/topk/topk_row_cluster.cuh): cluster-wide passes
# of 8-bit digits over the rank bits of (rank, complemented position) keys, then the k-th rank's
# equals taken in block order from every block's count of them, the block where the places run out
# taking its first ones by position. Checks the winners against the top k by (rank descending,
# position ascending) on random rows heavy in ties; the bound and the radix passes of the
# boundary block are left out (a sort stands for them).
#   python3 bench/phases/tie_quota_model.py      prints "bad 0" when every case agrees
import random
def run(n, k, blocks, W, nranks, seed):
    rnd = random.Random(seed)
    ranks = [rnd.randrange(nranks) for _ in range(n)]
    ib = max(1, n.bit_length()); mask = (1 << ib) - 1
    low = 64 - W - ib; rank_low = 64 - W
    key = lambda i: (ranks[i] << rank_low) | ((mask - i) << low)
    seg = (n + blocks - 1) // blocks
    slices = [list(range(b * seg, min(n, (b + 1) * seg))) for b in range(blocks)]
    wanted = min(k, n); need = wanted; high = 64; prefix = 0; ties = False; last_counts = None
    while need > 0 and high > rank_low:
        shift = max(high - 8, low); width = high - shift
        counts = [[0] * 256 for _ in range(blocks)]
        for b in range(blocks):
            for i in slices[b]:
                kk = key(i)
                if high == 64 or (kk >> high) == prefix: counts[b][(kk >> shift) & ((1 << width) - 1)] += 1
        tot = [sum(counts[b][d] for b in range(blocks)) for d in range(256)]
        before = 0
        for d in range(255, -1, -1):
            if before < need <= before + tot[d]: digit, above, bucket = d, before, tot[d]; break
            before += tot[d]
        need -= above; prefix = (0 if high == 64 else prefix << width) | digit; high = shift
        if bucket == need: break
        if high == rank_low: ties = True; last_counts = [counts[b][digit] for b in range(blocks)]
    win = []
    for b in range(blocks):
        quota = equals = 0; floor = 0
        if ties:
            before = sum(last_counts[:b]); equals = last_counts[b]
            quota = min(need - before, equals) if need > before else 0
            if 0 < quota < equals:
                eq = sorted((key(i) for i in slices[b] if (key(i) >> high) == prefix), reverse=True)
                floor = eq[quota - 1]
        for i in slices[b]:
            kk = key(i); top = kk >> high
            ok = top >= prefix if not ties else (top > prefix or (top == prefix and quota > 0 and (quota == equals or kk >= floor)))
            if ok: win.append(i)
    ref = sorted(range(n), key=lambda i: (-ranks[i], i))[:wanted]
    return sorted(win) == sorted(ref), len(win), wanted
bad = 0
for s in range(3000):
    r = random.Random(s)
    n = r.choice([1, 2, 5, 17, 100, 1000, 4097, 32000 // 8]); k = r.choice([2, 3, 50, 256, 1024, n])
    blocks = r.choice([1, 2, 4, 8, 16]); W = r.choice([16, 32]); nr = r.choice([1, 2, 3, 10, 300, 65536])
    ok, got, want = run(n, k, blocks, W, nr, s)
    if not ok: bad += 1; print('FAIL', n, k, blocks, W, nr, got, want)
print('bad', bad)
