#!/usr/bin/env python3
"""torch.topk as the peer of radixmesh at LLM-sampling shapes (bench_topk_llm): for every shape
ROWSxVOCAB:K:DTYPE, logits from torch.randn, `calls` calls of torch.topk(x, k, dim=-1,
largest=True, sorted=True) captured in one CUDA graph, each replay timed with CUDA events; the
time per call is the replay's divided by `calls`, as serving code inside a graph sees it. Prints
one JSON object per shape: {"key", "median_ms", "min_ms", "max_ms", "reps", "torch", "dtype", "what"}.
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", required=True, help="comma-separated ROWSxVOCAB:K:DTYPE (dtype float32 or bfloat16)")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args()
    import torch

    for shape in a.shapes.split(","):
        dims, k, dtype = shape.split(":")
        rows, vocab = (int(x) for x in dims.split("x"))
        k = int(k)
        g = torch.Generator(device="cuda").manual_seed(42)
        x = torch.randn(rows, vocab, device="cuda", generator=g, dtype=torch.float32).to(getattr(torch, dtype))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                torch.topk(x, k, dim=-1, largest=True, sorted=True)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(a.calls):
                torch.topk(x, k, dim=-1, largest=True, sorted=True)
        for _ in range(2):
            graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(a.reps):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / a.calls)
        times.sort()
        mid = len(times) // 2
        median = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
        print(json.dumps({"key": shape, "median_ms": median, "min_ms": times[0], "max_ms": times[-1],
                          "reps": len(times), "torch": torch.__version__, "dtype": str(x.dtype),
                          "what": "torch.topk(largest, sorted=True), CUDA graph of %d calls" % a.calls}), flush=True)
        del graph, x
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
