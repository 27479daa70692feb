#!/usr/bin/env python3
"""torch.topk as a peer of radixmesh's GPU top-k: the same shape, dtype and distribution
(uniform in [lo, hi)), largest (or --smallest), unsorted (or --sorted), along the last dimension, timed with CUDA events after
warm-up. Prints one JSON object: {"median_ms", "min_ms", "max_ms", "reps", "torch", "dtype", "what"}.
"""
import argparse
import sys

from peer_timing import print_result, time_cuda


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--length", type=int, required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--lo", type=float, default=0.0)
    p.add_argument("--hi", type=float, default=1.0)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--sorted", action="store_true")
    p.add_argument("--smallest", action="store_true")
    a = p.parse_args()
    import torch

    g = torch.Generator(device="cuda").manual_seed(42)
    x = torch.rand(a.rows, a.length, device="cuda", generator=g, dtype=torch.float32)
    x = (x * (a.hi - a.lo) + a.lo).to(getattr(torch, a.dtype))
    if a.rows == 1:
        x = x.view(-1)

    def run():
        return torch.topk(x, a.k, dim=-1, largest=not a.smallest, sorted=a.sorted)

    print_result(time_cuda(torch, run, a.warmup, a.reps),
                 torch=torch.__version__, dtype=str(x.dtype),
                 what="torch.topk(%s, sorted=%s)" % ("smallest" if a.smallest else "largest", a.sorted))


if __name__ == "__main__":
    sys.exit(main())
