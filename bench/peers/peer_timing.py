"""CUDA-event timing shared by the Python peers (torch_sort.py, torch_topk.py): the same method as
the C++ harness (warm-up, then one event pair per repetition, median and min), printed as the one
JSON object that bench/harness's run_python_peer reads."""
import json


def time_cuda(torch, run, warmup, reps):
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    mid = len(times) // 2
    median = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
    return {"median_ms": median, "min_ms": times[0], "max_ms": times[-1], "reps": len(times)}


def print_result(stats, **fields):
    print(json.dumps({**stats, **fields}))
