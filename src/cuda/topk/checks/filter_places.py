# CPU emulation of stable_filter's placement math (src/cuda/topk/topk_sample_select.cuh): every
# taken element's place (tile prefix + rounds before q + groups j' < j of round q + the threads
# before this one in group j + its rank among the thread's taken elements of the group) must be
# its rank among all taken elements in index order. Written in session 4 after the H200 run 2 found
# the group offset missing (no device time was left to test the fix on a GPU); it fails without
# the `base +=` line and passes with it, for 1 and 8 rounds and 2-, 4- and 8-element groups.
#   python3 src/cuda/topk/checks/filter_places.py
import random
THREADS, LOADS = 256, 4
def check(R, V, p, n_tiles=3, n_extra=0):
    T = THREADS * LOADS * V * R
    n = n_tiles * T - n_extra
    take = [random.random() < p for _ in range(n)]
    expected = {}
    c = 0
    for i in range(n):
        if take[i]: expected[i] = c; c += 1
    got = {}
    prefix = 0
    for tile in range((n + T - 1) // T):
        taken = 0
        rounds = []
        for q in range(R):
            masks, packed = [], []
            for t in range(THREADS):
                m = 0
                for j in range(LOADS):
                    first = tile * T + ((q * LOADS + j) * THREADS + t) * V
                    for v in range(V):
                        i = first + v
                        if i < n and take[i]: m |= 1 << (8 * j + v)
                masks.append(m)
                packed.append(sum(bin((m >> (8 * j)) & 0xff).count('1') << (16 * j) for j in range(LOADS)))
            before, acc = [], 0
            for t in range(THREADS): before.append(acc); acc += packed[t]
            sums = acc
            rounds.append((masks, before, sums, taken))
            taken += sum((sums >> (16 * j)) & 0xffff for j in range(LOADS))
        for q in range(R):
            masks, before, sums, base_q = rounds[q]
            for t in range(THREADS):
                if not masks[t]: continue
                base = prefix + base_q
                for j in range(LOADS):
                    bits = (masks[t] >> (8 * j)) & 0xff
                    place = base + ((before[t] >> (16 * j)) & 0xffff)
                    base += (sums >> (16 * j)) & 0xffff
                    first = tile * T + ((q * LOADS + j) * THREADS + t) * V
                    while bits:
                        v = (bits & -bits).bit_length() - 1; bits &= bits - 1
                        got[first + v] = place; place += 1
        prefix += taken
    assert got == expected, (R, V, p)
    return c
random.seed(1)
for R in (1, 8):
    for V in (2, 4, 8):
        for p in (0.0, 0.01, 0.5, 1.0):
            check(R, V, p, n_tiles=2, n_extra=37)
print("placement math ok")
