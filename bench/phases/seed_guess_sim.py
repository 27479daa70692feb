# The row-stream blocks' guessed seed (src/cuda/topk/topk_row_stream.cuh, estimate_lanes), simulated
# on the host: rows of normal values (sums of 4 uniforms, as bench_topk_llm's logits), the first
# tile of 4096 values as the kernel holds it (thread t: vectors t and 256 + t of 8 values), each
# thread's best of its 16, each warp's m-th best of its 32 threads', the least over the 8 warps;
# then how many of the row's values reach it, in units of k, and how often fewer than k do (the
# block would stream its segment again). --nearest: m rounded to nearest (the kernel rounds up).
#   /usr/bin/python3 bench/phases/seed_guess_sim.py [ROWS] [--nearest]
import math
import sys
import numpy as np

rng = np.random.default_rng(1)
args = [a for a in sys.argv[1:] if a != "--nearest"]
nearest = "--nearest" in sys.argv[1:]
trials = int(args[0]) if args else 300


def lanes(k, values, c=1.5):  # estimate_lanes, in floating point as the kernel computes it
    q = c * k / values
    x = 32 * (1 - (1 - q) ** 16)
    return int(min(32, max(1, round(x) if nearest else math.ceil(x))))


for values in [16384, 21376, 32000, 64128, 128256, 256000]:
    for k in [50, 256, 1024]:
        if values < max(8 * k, 8192):
            continue  # guesses_seed: such segments keep the bound (or none)
        m = lanes(k, values)
        reach = []
        for _ in range(trials):
            x = rng.random((values, 4), dtype=np.float32).sum(1)
            thread_best = x[:4096].reshape(2, 256, 8).max(axis=(0, 2))
            warp_mth = np.sort(thread_best.reshape(8, 32), axis=1)[:, ::-1][:, m - 1]
            reach.append(int((x >= warp_mth.min()).sum()))
        r = np.array(reach) / k
        print(f"values {values:6d} k {k:4d} m {m:2d}: reach / k min {r.min():.2f} median {np.median(r):.2f} "
              f"max {r.max():.2f}; below k in {np.mean(r < 1) * 100:.1f} % of {trials} rows")
