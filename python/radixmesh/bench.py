"""Benchmarks from Python: radixmesh.sort and radixmesh.topk on NumPy arrays beside NumPy in the
same run, and the Python layer's cost per call on a small array.

  python3 -m radixmesh.bench [--out FILE] [--reps N] [--quick] [--gpu]

- sort: radixmesh.sort(x) (values and int64 indices, stable) against numpy.argsort(kind="stable")
  plus the gather of the values (the same result), with numpy.sort(kind="stable") (values only)
  beside it; 1-D and row by row.
- topk: radixmesh.topk(x, k) (sorted, best first) against numpy.argpartition and a sort of the k
  taken, row by row: what a NumPy user writes today.
- overhead: the same calls on 1024 values against the bare C API call with its arguments prepared
  once (ctypes' own call cost stays in the bare figure); the difference is the Python layer.

--gpu: the same on CUDA tensors (PyTorch; CuPy beside it where installed), against torch.sort,
torch.topk and cupy.sort / cupy.argsort in the same run: sort of 2^28 int32 with indices, of
(4096, 32768) and (64, 2^20) float32 rows; top-k of 2^28 float32 with k = 1024 and of
(4096, 128256) bfloat16 with k = 50; times from CUDA events around each call. The overhead
case times the Python layer on a 1024-value CUDA tensor against the bare C call (host time per
call, calls back to back, the GPU kept busy behind them).

Every result is checked against NumPy's (--gpu: against torch's, where the orders agree). Lines in the benchmark harness's JSON format (ours and
each peer, median / min / max ms) are appended to $RXM_RESULTS_DIR/python.jsonl (default
bench/results/ under the working directory) unless --out says otherwise; RXM_COMMIT names the
commit when set, else git does.
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import subprocess
import sys
import time

from . import _lib
from ._dtypes import key_type, numpy
from .api import default_context, sort, topk


def _stats(times_ms):
    times_ms = sorted(times_ms)
    mid = len(times_ms) // 2
    median = times_ms[mid] if len(times_ms) % 2 else 0.5 * (times_ms[mid - 1] + times_ms[mid])
    return {"median_ms": median, "min_ms": times_ms[0], "max_ms": times_ms[-1], "reps": len(times_ms)}


def _time(run, reps, warmup=2):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        start = time.perf_counter_ns()
        run()
        times.append((time.perf_counter_ns() - start) / 1e6)
    return _stats(times)


def _commit():
    if os.environ.get("RXM_COMMIT"):
        return os.environ["RXM_COMMIT"]
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


class Case:
    """One case: ours and its peers on the same input, printed as a table and kept as JSON lines."""

    def __init__(self, benchmark, parameters, items, unit):
        self.benchmark, self.parameters, self.items, self.unit = benchmark, parameters, items, unit
        self.entries = []

    def add(self, name, stats, ours=False, diagnostic=False):
        self.entries.append((name, stats, ours, diagnostic))

    def lines(self, info):
        ours = next((s for n, s, o, d in self.entries if o), None)
        out = []
        for name, stats, is_ours, diagnostic in self.entries:
            line = {"benchmark": self.benchmark, "parameters": self.parameters, "implementation": name,
                    "ours": is_ours, **stats, "items": self.items, "item_unit": self.unit,
                    "throughput_per_s": self.items / (stats["median_ms"] * 1e-3) if stats["median_ms"] > 0 else 0,
                    **info}
            if diagnostic:
                line["diagnostic"] = True
            if ours and not is_ours and not diagnostic and ours["median_ms"] > 0:
                line["speedup_of_ours"] = stats["median_ms"] / ours["median_ms"]
            out.append(line)
        return out

    def print(self):
        print(f"\n{self.benchmark} {json.dumps(self.parameters, sort_keys=True)}")
        ours = next((s for n, s, o, d in self.entries if o), None)
        for name, stats, is_ours, diagnostic in self.entries:
            ratio = stats["median_ms"] / ours["median_ms"] if ours and ours["median_ms"] > 0 else 0
            tag = "  (ours)" if is_ours else ("  (diagnostic)" if diagnostic else "")
            print(f"  {name:<72} {stats['median_ms']:10.4f} ms  min {stats['min_ms']:10.4f}  {ratio:6.2f}x{tag}")


def _check(ok, what):
    if not ok:
        raise SystemExit(f"radixmesh.bench: {what} differs from NumPy's result. fix: report this as a bug")


def sort_cases(np, reps, quick, rng):
    cases = []
    shapes = [(1 << 18,), (64, 4096)] if quick else [(1 << 24,), (1024, 32768)]
    for shape in shapes:
        x = rng.random(shape, dtype=np.float32)
        c = Case("python_sort", {"shape": list(shape), "type": "f32", "distribution": "uniform"}, x.size, "keys")
        got = sort(x)
        want_i = np.argsort(x, axis=-1, kind="stable")
        _check(numpy().array_equal(got[1], want_i) and numpy().array_equal(got[0], np.take_along_axis(x, want_i, -1)),
               f"sort of shape {shape}")
        c.add("radixmesh.sort (values, indices)", _time(lambda: sort(x), reps), ours=True)
        c.add("numpy.argsort(kind=stable) + take_along_axis",
              _time(lambda: np.take_along_axis(x, np.argsort(x, axis=-1, kind="stable"), -1), reps))
        c.add("numpy.sort(kind=stable), values only", _time(lambda: np.sort(x, axis=-1, kind="stable"), reps),
              diagnostic=True)
        cases.append(c)
    return cases


def _numpy_topk(np, x, k):
    """The k largest of every row, best first, ties to the lower index: argpartition, then a
    stable sort of the k taken by descending value."""
    part = np.argpartition(-x, k - 1, axis=-1)[..., :k]
    part.sort(axis=-1)  # ascending index first, so the stable sort below breaks ties by index
    order = np.argsort(-np.take_along_axis(x, part, -1), axis=-1, kind="stable")
    idx = np.take_along_axis(part, order, -1)
    return np.take_along_axis(x, idx, -1), idx


def topk_cases(np, reps, quick, rng):
    cases = []
    shapes = [((64, 32768), 50), ((1 << 20,), 1024)] if quick else [((4096, 32768), 50), ((1 << 26,), 1024)]
    for shape, k in shapes:
        x = rng.random(shape, dtype=np.float32)
        c = Case("python_topk", {"shape": list(shape), "k": k, "type": "f32", "sorted": True,
                                 "distribution": "uniform"}, x.size, "values")
        got, want = topk(x, k), _numpy_topk(np, x, k)
        _check(numpy().array_equal(got[0], want[0]), f"topk values of shape {shape}")
        c.add("radixmesh.topk (sorted)", _time(lambda: topk(x, k), reps), ours=True)
        c.add("numpy.argpartition + sort of the k", _time(lambda: _numpy_topk(np, x, k), reps))
        cases.append(c)
    return cases


def overhead_cases(np, reps, rng):
    """The Python layer's cost: radixmesh.sort / topk on 1024 values against the bare C call."""
    ctx = default_context()
    n, k = 1024, 8
    x = rng.random(n, dtype=np.float32)
    kt = key_type(x.dtype)
    cases = []
    # sort: the bare call sorts a prepared copy in place, indices moving along (what sort() does
    # after its copies).
    rows, idx, iota = x.copy(), np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64)
    options = _lib.SortOptions(ctypes.sizeof(_lib.SortOptions), 0, 0, -1)
    args = (ctx._handle, kt, rows.ctypes.data, n, n, idx.ctypes.data, 8, ctypes.byref(options))

    def bare_sort():  # the same work as sort(): fresh keys and positions, then the call
        np.copyto(rows, x)
        np.copyto(idx, iota)
        _lib.rxm_sort_rows(*args)

    c = Case("python_overhead", {"call": "sort", "n": n, "type": "f32", "backend": ctx.backend}, n, "keys")
    c.add("radixmesh.sort (Python layer + C call)", _time(lambda: sort(x), reps), ours=True)
    c.add("bare rxm_sort_rows through ctypes (arguments prepared, input restored)", _time(bare_sort, reps),
          diagnostic=True)
    cases.append(c)
    values, indices = np.empty(k, dtype=np.float32), np.empty(k, dtype=np.int64)
    toptions = _lib.TopkOptions(ctypes.sizeof(_lib.TopkOptions), 1, 1, 0)
    targs = (ctx._handle, kt, x.ctypes.data, n, -1, 1, None, k, ctypes.byref(toptions), values.ctypes.data,
             indices.ctypes.data, 8)
    c = Case("python_overhead", {"call": "topk", "n": n, "k": k, "type": "f32", "backend": ctx.backend}, n, "values")
    c.add("radixmesh.topk (Python layer + C call)", _time(lambda: topk(x, k), reps), ours=True)
    c.add("bare rxm_topk through ctypes (arguments prepared)", _time(lambda: _lib.rxm_topk(*targs), reps),
          diagnostic=True)
    cases.append(c)
    return cases


def _time_cuda(torch, run, reps, warmup=2):
    """Milliseconds per call from CUDA events around each call (the GPU idle before it)."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return _stats(times)


def _time_per_call(torch, run, reps, calls=200):
    """Host milliseconds per call of `calls` calls back to back (what the Python layer costs
    while the GPU runs behind it), one figure per rep."""
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter_ns()
        for _ in range(calls):
            run()
        times.append((time.perf_counter_ns() - start) / 1e6 / calls)
        torch.cuda.synchronize()
    return _stats(times)


def _cupy():
    try:
        import cupy
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # not installed, or no usable driver
        return None


def gpu_cases(torch, reps, quick):
    """radixmesh on CUDA tensors against torch (and cupy) in the same run."""
    cp = _cupy()
    dev = torch.device("cuda", torch.cuda.current_device())
    cases = []
    sort_shapes = [((1 << 20,), "int32"), ((64, 4096), "float32")] if quick else \
        [((1 << 28,), "int32"), ((4096, 32768), "float32"), ((64, 1 << 20), "float32")]
    for shape, dtype in sort_shapes:
        t = getattr(torch, dtype)
        x = torch.randint(-(1 << 30), 1 << 30, shape, dtype=t, device=dev) if dtype == "int32" else \
            torch.rand(shape, dtype=t, device=dev)
        got, want = sort(x), torch.sort(x, stable=True)
        _check(torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]), f"gpu sort of shape {shape}")
        c = Case("python_gpu_sort", {"shape": list(shape), "type": dtype, "distribution": "uniform"}, x.numel(), "keys")
        c.add("radixmesh.sort (values, indices)", _time_cuda(torch, lambda: sort(x), reps), ours=True)
        c.add("torch.sort(stable=True) (values, indices)", _time_cuda(torch, lambda: torch.sort(x, stable=True), reps))
        if cp is not None:
            y = cp.asarray(x)
            c.add("cupy.argsort + take_along_axis (values, indices)",
                  _time_cuda(torch, lambda: cp.take_along_axis(y, cp.argsort(y, axis=-1), -1), reps))
            c.add("cupy.sort, values only", _time_cuda(torch, lambda: cp.sort(y, axis=-1), reps), diagnostic=True)
        cases.append(c)
        del x, got, want
    topk_shapes = [((1 << 20,), 1024, "float32"), ((64, 32000), 50, "bfloat16")] if quick else \
        [((1 << 28,), 1024, "float32"), ((4096, 128256), 50, "bfloat16")]
    for shape, k, dtype in topk_shapes:
        x = torch.randn(shape, dtype=getattr(torch, dtype), device=dev)
        got, want = topk(x, k), torch.topk(x, k)
        _check(torch.equal(got[0], want[0]), f"gpu topk values of shape {shape}")
        c = Case("python_gpu_topk", {"shape": list(shape), "k": k, "type": dtype, "sorted": True,
                                     "distribution": "normal"}, x.numel(), "values")
        c.add("radixmesh.topk (sorted)", _time_cuda(torch, lambda: topk(x, k), reps), ours=True)
        c.add("torch.topk (sorted)", _time_cuda(torch, lambda: torch.topk(x, k), reps))
        cases.append(c)
        del x, got, want
    # The Python layer on a small CUDA tensor, against the bare C call with everything prepared.
    ctx = default_context()
    n, k = 1024, 8
    x = torch.rand(n, device=dev)
    stream = torch.cuda.current_stream(dev).cuda_stream
    values, indices = torch.empty(k, device=dev), torch.empty(k, dtype=torch.int64, device=dev)
    options = _lib.TopkOptions(ctypes.sizeof(_lib.TopkOptions), 1, 1, 0)
    targs = (ctx._handle, key_type(numpy().dtype("float32")), dev.index, x.data_ptr(), 1, n, 0, k,
             ctypes.byref(options), values.data_ptr(), indices.data_ptr(), 8, stream)
    c = Case("python_overhead", {"call": "topk", "n": n, "k": k, "type": "f32", "backend": "cuda tensor"}, n, "values")
    c.add("radixmesh.topk (Python layer + C call)", _time_per_call(torch, lambda: topk(x, k), reps), ours=True)
    c.add("bare rxm_topk_device through ctypes (arguments prepared)",
          _time_per_call(torch, lambda: _lib.rxm_topk_device(*targs), reps), diagnostic=True)
    cases.append(c)
    sv, si = torch.empty(n, device=dev), torch.empty(n, dtype=torch.int64, device=dev)
    sopts = _lib.SortOptions(ctypes.sizeof(_lib.SortOptions), 0, 0, -1)
    sargs = (ctx._handle, key_type(numpy().dtype("float32")), dev.index, x.data_ptr(), sv.data_ptr(), None,
             si.data_ptr(), 8, n, n, ctypes.byref(sopts), stream)
    c = Case("python_overhead", {"call": "sort", "n": n, "type": "f32", "backend": "cuda tensor"}, n, "keys")
    c.add("radixmesh.sort (Python layer + C call)", _time_per_call(torch, lambda: sort(x), reps), ours=True)
    c.add("bare rxm_sort_rows_device through ctypes (arguments prepared)",
          _time_per_call(torch, lambda: _lib.rxm_sort_rows_device(*sargs), reps), diagnostic=True)
    cases.append(c)
    return cases


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m radixmesh.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="JSON lines file (default: bench/results/python.jsonl of the source tree)")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="small shapes (a smoke test)")
    p.add_argument("--gpu", action="store_true", help="CUDA tensors against torch / cupy (needs PyTorch and a GPU)")
    a = p.parse_args(argv)
    out = a.out or os.path.join(os.environ.get("RXM_RESULTS_DIR", os.path.join("bench", "results")), "python.jsonl")
    if not os.path.isdir(os.path.dirname(out) or "."):
        raise SystemExit(f"radixmesh.bench: no directory for {out}. fix: run from the source tree (bench/results) "
                         "or pass --out FILE")
    np = numpy()
    rng = np.random.default_rng(42)
    ctx = default_context()
    info = {"commit": _commit(), "device": _cpu_name() if ctx.backend == "cpu" else "cuda (host arrays staged)",
            "host_cpu": _cpu_name(), "command": "python3 -m radixmesh.bench " + " ".join(argv or sys.argv[1:]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(), "numpy": np.__version__}
    if a.gpu:
        try:
            import torch
        except ImportError:
            raise SystemExit("radixmesh.bench --gpu: PyTorch is not installed. fix: run it where torch is") from None
        if not torch.cuda.is_available() or ctx.backend != "cuda":
            raise SystemExit("radixmesh.bench --gpu: no usable GPU. fix: run it on a GPU machine")
        info.update(device=torch.cuda.get_device_name(), torch=torch.__version__)
        cases = gpu_cases(torch, a.reps, a.quick)
    else:
        cases = sort_cases(np, a.reps, a.quick, rng) + topk_cases(np, a.reps, a.quick, rng) + \
            overhead_cases(np, max(a.reps, 101), rng)
    for c in cases:
        c.print()
    for c in cases:
        if c.benchmark == "python_overhead":
            py = next(s for n, s, o, d in c.entries if o)["median_ms"]
            bare = next(s for n, s, o, d in c.entries if d)["median_ms"]
            print(f"python layer, {c.parameters['call']}: {py * 1e3:.1f} - {bare * 1e3:.1f} = "
                  f"{(py - bare) * 1e3:.1f} us per call ({c.parameters['backend']} backend)")
    with open(out, "a") as f:
        for c in cases:
            for line in c.lines(info):
                f.write(json.dumps(line, sort_keys=True) + "\n")
    print(f"\n{sum(len(c.entries) for c in cases)} JSON lines appended to {os.path.normpath(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
