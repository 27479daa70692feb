#!/usr/bin/env python3
"""torch.sort as a peer of radixmesh's GPU sort: same n and key width, timed with CUDA events.

Prints one JSON object: {"median_ms", "min_ms", "max_ms", "reps", "torch", "dtype", "what"}.
Keys only: torch.sort(keys, stable=True) (it always makes int64 indices too). Pairs: the same sort
followed by values[indices], which is how a torch user carries values along. Unsigned keys use the
signed torch dtype of the same width (torch's CUDA sort has no unsigned 16/32/64-bit path): the
bytes moved and the radix passes are the same.
"""
import argparse
import sys

from peer_timing import print_result, time_cuda

DTYPES = {
    "u8": "uint8", "i8": "int8", "u16": "int16", "i16": "int16", "u32": "int32", "i32": "int32",
    "u64": "int64", "i64": "int64", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--type", required=True, choices=sorted(DTYPES))
    p.add_argument("--values", type=int, default=0, choices=[0, 4, 8])
    p.add_argument("--descending", action="store_true")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args()
    import torch

    dtype = getattr(torch, DTYPES[a.type])
    g = torch.Generator(device="cuda").manual_seed(42)
    if dtype.is_floating_point:
        keys = torch.randn(a.n, device="cuda", generator=g).to(dtype)
    else:
        info = torch.iinfo(dtype)
        keys = torch.randint(info.min, info.max, (a.n,), device="cuda", dtype=dtype, generator=g)
    values = None
    if a.values:
        values = torch.arange(a.n, device="cuda", dtype=torch.int32 if a.values == 4 else torch.int64)

    def run():
        sorted_keys, idx = torch.sort(keys, stable=True, descending=a.descending)
        if values is not None:
            return sorted_keys, values[idx]
        return sorted_keys, idx

    print_result(time_cuda(torch, run, a.warmup, a.reps),
                 torch=torch.__version__, dtype=str(dtype),
                 what="torch.sort(stable)" + (" + values[indices]" if values is not None else ""))


if __name__ == "__main__":
    sys.exit(main())
