"""radixmesh's Python package on GPU arrays: PyTorch tensors and CuPy arrays on CUDA, against the
C++ API on the host (the same library through a CPU context) and against torch.sort / torch.topk
where their orders agree. Zero copy is checked by data pointers, the current stream by a
producer on a non-blocking stream, and a CPU context given CUDA data must be a clear error.

Runs under pytest (skipped where PyTorch, CuPy or a GPU is missing), or on its own where the GPU
machine has no pytest: python3 python/tests/test_gpu.py (scripts/gpu-check does that)."""
import sys

import numpy as np

import radixmesh
from radixmesh import _arrays

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None

HAS_TORCH_CUDA = torch is not None and torch.cuda.is_available()


def _cupy_has_gpu():
    try:
        return cupy is not None and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # CuPy without a usable driver
        return False


HAS_CUPY_CUDA = _cupy_has_gpu()


class Skip(Exception):
    pass


def require(flag, what):
    if not flag:
        if "pytest" in sys.modules:
            import pytest
            pytest.skip(what)
        raise Skip(what)


_cpu = None


def cpu():
    """The C++ API on the host: the reference every GPU result must equal."""
    global _cpu
    if _cpu is None:
        _cpu = radixmesh.Context(cpu=True)
    return _cpu


def same_bytes(a, b):
    """Equal shapes and equal bytes (NaN payloads and -0.0 included)."""
    if torch is not None and isinstance(a, torch.Tensor):
        a, b = a.detach().cpu().contiguous(), b.detach().cpu().contiguous()
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.uint8), b.view(torch.uint8))
    a, b = cupy.asnumpy(a) if cupy is not None and isinstance(a, cupy.ndarray) else a, \
        cupy.asnumpy(b) if cupy is not None and isinstance(b, cupy.ndarray) else b
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


TORCH_DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8", "uint8"]


def torch_sample(dtype, shape, seed, distinct=None):
    g = torch.Generator().manual_seed(seed)
    t = getattr(torch, dtype)
    if t.is_floating_point:
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 100
        if distinct:
            x = torch.round(x.abs() % distinct)
        x = x.to(t)
        flat = x.view(-1)
        if flat.numel() > 20 and not distinct:  # specials: NaN, infinities, zeros of both signs
            flat[3], flat[7], flat[11], flat[13], flat[17] = float("nan"), float("inf"), float("-inf"), 0.0, -0.0
        return x
    info = torch.iinfo(t)
    hi = distinct if distinct else info.max
    lo = 0 if distinct else info.min
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(t)


def test_torch_sort_equals_the_cpp_api():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    shapes = [(37, 1000), (3, 70001), ((1 << 20) + 3,), (5, 6, 7)]
    for dtype in TORCH_DTYPES:
        for shape in shapes:
            for distinct in (None, 5):
                for descending in (False, True):
                    x = torch_sample(dtype, shape, 7, distinct)
                    for dim in ([-1] if len(shape) < 3 else [-1, 1, None]):
                        got_v, got_i = radixmesh.sort(x.cuda(), dim=dim, descending=descending)
                        want_v, want_i = radixmesh.sort(x, dim=dim, descending=descending, ctx=cpu())
                        what = f"sort {dtype} {shape} distinct={distinct} descending={descending} dim={dim}"
                        assert got_v.is_cuda and got_i.is_cuda and got_i.dtype == torch.int64, what
                        assert same_bytes(got_v, want_v) and same_bytes(got_i, want_i), what


def test_torch_sort_agrees_with_torch_sort():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    for shape in [(4096, 300), (64, 70000), (1 << 20,)]:
        x = torch.randint(-1000, 1000, shape, dtype=torch.int32, device="cuda")  # ties: stability shows
        v, i = radixmesh.sort(x)
        tv, ti = torch.sort(x, stable=True)
        assert torch.equal(v, tv) and torch.equal(i, ti), shape
        v, i = radixmesh.sort(x, descending=True)
        tv, ti = torch.sort(x, descending=True, stable=True)
        assert torch.equal(v, tv) and torch.equal(i, ti), shape


def test_torch_topk_equals_the_cpp_api_and_torch():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    cases = [((64, 32000), 50), ((8, 128256), 1), ((3, 256000), 1024), ((1 << 20,), 1024), ((7, 1000), 1000),
             ((4, 5, 300), 10)]
    for dtype in ["float32", "float16", "bfloat16", "int32", "float64"]:
        for shape, k in cases:
            for largest in (True, False):
                for sorted_ in (True, False):
                    x = torch_sample(dtype, shape, 11)
                    got_v, got_i = radixmesh.topk(x.cuda(), k, largest=largest, sorted=sorted_)
                    want_v, want_i = radixmesh.topk(x, k, largest=largest, sorted=sorted_, ctx=cpu())
                    what = f"topk {dtype} {shape} k={k} largest={largest} sorted={sorted_}"
                    assert got_v.is_cuda and same_bytes(got_v, want_v) and same_bytes(got_i, want_i), what
    x = torch.randn(5, 300, 7, device="cuda")  # another dimension than the last
    v, i = radixmesh.topk(x, 4, dim=1)
    tv, ti = torch.topk(x, 4, dim=1)
    assert torch.equal(v, tv) and torch.equal(i, ti)
    x = torch.randperm(1 << 20, device="cuda").float()  # distinct values: torch.topk's order is ours
    v, i = radixmesh.topk(x.view(16, -1), 50)
    tv, ti = torch.topk(x.view(16, -1), 50)
    assert torch.equal(v, tv) and torch.equal(i, ti)


def test_torch_zero_copy_by_data_pointers():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    x = torch.randn(64, 4096, device="cuda")
    a, same = _arrays.adapter(x)
    assert a.rows(same, -1).data_ptr() == x.data_ptr()  # read in place: no staging copy
    before = x.data_ptr()
    want = torch.sort(x, stable=True)[0]
    assert radixmesh.sort_(x) is x and x.data_ptr() == before and torch.equal(x, want)
    v, i = radixmesh.topk(x, 8)
    assert v.device == x.device and i.device == x.device


def test_torch_current_stream_is_honoured():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    n = 1 << 26
    source = torch.randn(n, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.zeros(n, device="cuda")
        for _ in range(4):  # a producer the call must wait for, on the side stream only
            x.copy_(source)
            x.mul_(1.0)
        v, i = radixmesh.topk(x, 100)
        s, si = radixmesh.sort(x[: 1 << 20].view(16, -1))
    side.synchronize()
    want_v, want_i = torch.topk(source, 100)
    assert torch.equal(v, want_v) and torch.equal(i, want_i)
    assert torch.equal(s, torch.sort(source[: 1 << 20].view(16, -1), stable=True)[0])


def test_torch_cpu_tensors_stay_on_the_cpu():
    require(torch is not None, "PyTorch")
    x = torch_sample("bfloat16", (9, 500), 3)
    v, i = radixmesh.topk(x, 20)
    assert not v.is_cuda and v.dtype == torch.bfloat16
    v, i = radixmesh.sort(x)
    assert not v.is_cuda and same_bytes(v, radixmesh.sort(x, ctx=cpu())[0])


def test_torch_multisplit_on_the_gpu():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    x = torch.randint(0, 1 << 30, ((1 << 20) + 5,), dtype=torch.int32, device="cuda")
    out, offsets = radixmesh.multisplit(x, buckets="radix:22:8")
    want_out, want_offsets = radixmesh.multisplit(x.cpu().numpy(), buckets="radix:22:8", ctx=cpu())
    assert out.is_cuda and offsets.device == x.device
    assert np.array_equal(out.cpu().numpy(), want_out) and np.array_equal(offsets.cpu().numpy(), want_offsets)


def test_errors_name_the_problem():
    require(HAS_TORCH_CUDA, "PyTorch with CUDA")
    x = torch.randn(1000, device="cuda")
    for call in (lambda: radixmesh.topk(x, 5, ctx=cpu()), lambda: radixmesh.sort(x, ctx=cpu())):
        try:
            call()
            raise AssertionError("no error for CUDA data on a CPU context")
        except radixmesh.Error as e:
            assert "context is on the CPU backend" in str(e) and "fix:" in str(e), str(e)
    try:
        radixmesh.topk(x, 1001)
        raise AssertionError("no error for k > n")
    except radixmesh.Error as e:
        assert "k = 1001" in str(e), str(e)
    try:
        radixmesh.sort(torch.zeros(10, dtype=torch.complex64, device="cuda"))
        raise AssertionError("no error for a complex tensor")
    except radixmesh.Error as e:
        assert "complex64" in str(e), str(e)
    if torch.cuda.device_count() > 1:  # a tensor on a device the context does not use
        ctx = radixmesh.Context(devices=[0])
        try:
            radixmesh.topk(torch.randn(100, device="cuda:1"), 3, ctx=ctx)
            raise AssertionError("no error for a tensor on device 1 with a context of device 0")
        except radixmesh.Error as e:
            assert "device 1, which this context does not use" in str(e), str(e)


def test_cupy_sort_topk_and_stream():
    require(HAS_CUPY_CUDA, "CuPy with CUDA")
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float16, np.int32, np.uint64):
        host = (rng.standard_normal((33, 5000)) * 100).astype(dtype)
        x = cupy.asarray(host)
        v, i = radixmesh.sort(x, descending=True)
        wv, wi = radixmesh.sort(host, descending=True, ctx=cpu())
        assert isinstance(v, cupy.ndarray) and same_bytes(v, wv) and same_bytes(i, wi), dtype
        v, i = radixmesh.topk(x, 40)
        wv, wi = radixmesh.topk(host, 40, ctx=cpu())
        assert isinstance(v, cupy.ndarray) and same_bytes(v, wv) and same_bytes(i, wi), dtype
        before = x.data.ptr
        radixmesh.sort_(x)
        assert x.data.ptr == before and same_bytes(x, radixmesh.sort(host, ctx=cpu())[0])
    stream = cupy.cuda.Stream(non_blocking=True)
    source = cupy.asarray(rng.standard_normal(1 << 26).astype(np.float32))
    cupy.cuda.Device().synchronize()
    with stream:
        x = cupy.zeros(1 << 26, dtype=cupy.float32)
        for _ in range(4):
            cupy.copyto(x, source)
            x *= 1.0
        v, i = radixmesh.topk(x, 100)
    stream.synchronize()
    wv, wi = radixmesh.topk(cupy.asnumpy(source), 100, ctx=cpu())
    assert same_bytes(v, wv) and same_bytes(i, wi)


if __name__ == "__main__":
    failed = 0
    for name, test in [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]:
        try:
            test()
            print(f"PASS {name}")
        except Skip as s:
            print(f"SKIP {name}: {s}")
        except Exception as e:  # report every test, then fail
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
    print(f"{'FAILED' if failed else 'OK'}: {failed} failed")
    sys.exit(1 if failed else 0)
