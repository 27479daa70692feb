#!/usr/bin/env python3
"""The way a tensor-parallel LLM server takes top-k today, as a peer of radixmesh's vocabulary-
parallel top-k: the vocabulary shards (rows x columns each, one per device of --devices, logical
devices of one GPU allowed) are gathered into one rows x (shards * columns) tensor on the first
device (torch.cat: the all-gather), then torch.topk (largest, sorted) along the last dimension.
Timed with CUDA events after warm-up, gather and top-k together. Prints one JSON object:
{"median_ms", "min_ms", "max_ms", "reps", "torch", "dtype", "what"}.
"""
import argparse
import sys

from peer_timing import print_result, time_cuda


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--columns", type=int, required=True, help="columns per shard")
    p.add_argument("--devices", default="0,0,0,0")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    import torch

    devices = [int(d) for d in a.devices.split(",")]
    shards = []
    for i, d in enumerate(devices):
        g = torch.Generator(device=f"cuda:{d}").manual_seed(42 + i)
        shards.append(torch.randn(a.rows, a.columns, device=f"cuda:{d}", generator=g))
    home = torch.device(f"cuda:{devices[0]}")

    def run():
        whole = torch.cat([s.to(home, non_blocking=True) for s in shards], dim=1)
        return torch.topk(whole, a.k, dim=-1, largest=True, sorted=True)

    print_result(time_cuda(torch, run, a.warmup, a.reps),
                 torch=torch.__version__, dtype=str(shards[0].dtype),
                 what="all-gather (torch.cat) + torch.topk(largest, sorted)")


if __name__ == "__main__":
    sys.exit(main())
