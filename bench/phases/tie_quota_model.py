# A host model of the row-cluster's ties (src/cuda/topk/topk_row_cluster.cuh): cluster-wide passes
# of 8-bit digits over the rank bits of (rank, complemented position) keys, then the k-th rank's
# equals taken in block order from every block's count of them, the block where the places run out
# taking its first ones by position. Checks the winners against the top k by (rank descending,
# position ascending) on random rows heavy in ties; the bound and the radix passes of the
# boundary block are left out (a sort stands for them). Where the kernel places the winners from the
# last pass's bins (by_bins: the rank resolved, every winner in that pass's histogram), checks those
# places, by rank and by position, against the reference order.
#   python3 bench/phases/tie_quota_model.py      prints "bad 0" when every case agrees
import random
def run(n, k, blocks, W, nranks, seed, offset=0):
    rnd = random.Random(seed)
    ranks = [offset + rnd.randrange(nranks) for _ in range(n)]
    ib = max(1, n.bit_length()); mask = (1 << ib) - 1
    low = 64 - W - ib; rank_low = 64 - W
    key = lambda i: (ranks[i] << rank_low) | ((mask - i) << low)
    seg = (n + blocks - 1) // blocks
    slices = [list(range(b * seg, min(n, (b + 1) * seg))) for b in range(blocks)]
    wanted = min(k, n); need = wanted; high = 64; prefix = 0; ties = False; last_counts = None
    pass_need = wanted; last = None
    while need > 0 and high > rank_low:
        pass_need = need
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
        last = (counts, digit, width)
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
    ok = sorted(win) == sorted(ref)
    # Places from the bins (the kernel's by_bins): where the rank is resolved and every winner lies
    # in the last pass's histogram, each block places its winners from the counts alone.
    global by_bins_cases
    if ok and last and high == rank_low and pass_need == wanted:
        by_bins_cases += 1
        counts, d, width = last
        placed_rank, placed_pos = [None] * wanted, [None] * wanted
        for b in range(blocks):
            mine = [i for i in win if slices[b] and slices[b][0] <= i <= slices[b][-1]]
            start = 0; base = {}
            for bb in range(255, d - 1, -1):
                before = sum(counts[c][bb] for c in range(b))
                if bb == d: before = min(before, need)
                above_all = sum(counts[c][x] for c in range(blocks) for x in range(bb + 1, 256) if x > d)
                above_mine = sum(counts[b][x] for x in range(bb + 1, 256) if x > d)
                base[bb] = above_all - above_mine + before
                start += before
            by_rank = sorted(mine, key=lambda i: -key(i))
            try:
                for j, i in enumerate(by_rank): placed_rank[base[(key(i) >> rank_low) & ((1 << width) - 1)] + j] = i
                for j, i in enumerate(sorted(mine)): placed_pos[start + j] = i
            except IndexError: return False, len(win), wanted  # a place past the output
        ok = placed_rank == ref and placed_pos == sorted(ref)
    return ok, len(win), wanted
bad = 0; by_bins_cases = 0
for s in range(3000):
    r = random.Random(s)
    n = r.choice([1, 2, 5, 17, 100, 1000, 4097, 32000 // 8]); k = r.choice([2, 3, 50, 256, 1024, n])
    blocks = r.choice([1, 2, 4, 8, 16]); W = r.choice([16, 32]); nr = r.choice([1, 2, 3, 10, 256, 300, 65536])
    ok, got, want = run(n, k, blocks, W, nr, s, r.choice([0, 0x4100]) if nr <= 300 else 0)
    if not ok: bad += 1; print('FAIL', n, k, blocks, W, nr, got, want)
print('bad', bad, '(places from the bins checked in', by_bins_cases, 'rows)')
