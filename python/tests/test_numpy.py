"""radixmesh's Python package on NumPy arrays (CPU), against NumPy's own results: every dtype,
ties and NaN, non-contiguous input, empty, 0-d and n-d arrays, wrong dtypes, the C API's error
paths, multisplit, and top-k over the shards of a CPU mesh. Run by ctest (python_numpy, label cpu)."""
import numpy as np
import pytest

import radixmesh

DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32,
          np.float64]
rng = np.random.default_rng(20261126)


def sample(dtype, shape, distinct=None):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(shape) * 1000
        if distinct:
            x = np.round(x % distinct)
        return np.abs(x).astype(dtype) if distinct else x.astype(dtype)  # no -0.0: numpy orders it with +0.0
    info = np.iinfo(dtype)
    hi = min(int(info.max), distinct or int(info.max))
    lo = 0 if distinct else int(info.min)
    return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)


def expected_order(x, descending):
    """Stable order of a 1-D array (equal keys keep their positions), ascending or descending."""
    if not descending:
        return np.argsort(x, kind="stable")
    _, inverse = np.unique(x, return_inverse=True)
    return np.lexsort((np.arange(x.size), -inverse))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy_stable_order(dtype, descending):
    for distinct in (None, 7):
        x = sample(dtype, 3001, distinct)
        values, indices = radixmesh.sort(x, descending=descending)
        order = expected_order(x, descending)
        assert np.array_equal(indices, order)
        assert np.array_equal(values, x[order])
        assert indices.dtype == np.int64 and values.dtype == x.dtype


def test_argsort_and_n_d_along_each_dim():
    x = sample(np.int32, (5, 6, 7), 4)
    for dim in (0, 1, 2, -1):
        values, indices = radixmesh.sort(x, dim=dim)
        assert np.array_equal(values, np.sort(x, axis=dim, kind="stable"))
        assert np.array_equal(indices, np.argsort(x, axis=dim, kind="stable"))
        assert np.array_equal(radixmesh.argsort(x, dim=dim), indices)
    flat_values, flat_indices = radixmesh.sort(x, dim=None)
    assert np.array_equal(flat_indices, np.argsort(x.reshape(-1), kind="stable"))


def test_nan_and_signed_zero_take_radixmesh_total_order():
    # Like numpy, every NaN sorts after +inf (positive NaNs first, then those with the sign bit);
    # unlike numpy, -0.0 sorts before +0.0 wherever they stand in the input.
    nan = np.float32(np.nan)
    x = np.array([1.0, nan, 0.0, -0.0, -np.inf, -nan, np.inf, -1.0], dtype=np.float32)
    values, indices = radixmesh.sort(x)
    assert list(indices) == [4, 7, 3, 2, 0, 6, 1, 5]  # -inf, -1, -0.0, +0.0, 1, +inf, NaN, -NaN
    assert np.signbit(values[2]) and not np.signbit(values[3])


def test_sort_in_place_is_zero_copy_and_refuses_other_layouts():
    x = sample(np.float32, (4, 1000))
    want = np.sort(x, axis=1)
    pointer = x.ctypes.data
    assert radixmesh.sort_(x) is x and x.ctypes.data == pointer
    assert np.array_equal(x, want)
    with pytest.raises(radixmesh.Error, match="C-contiguous, writable"):
        radixmesh.sort_(x[:, ::2])
    strided = sample(np.int64, (3, 40))[:, ::2]
    assert np.array_equal(radixmesh.sort(strided)[0], np.sort(strided, axis=1))  # sort() copies


def test_empty_zero_d_and_wrong_dtypes():
    values, indices = radixmesh.sort(np.array([], dtype=np.float32))
    assert values.size == 0 and indices.size == 0
    values, indices = radixmesh.sort(np.float64(2.5))
    assert values == 2.5 and indices.shape == ()
    for bad in (np.array([1 + 2j]), np.array([True, False]), np.array(["a", "b"]), np.array([1, 2], dtype=">i4")):
        with pytest.raises(radixmesh.Error, match="not a radixmesh key type"):
            radixmesh.sort(bad)
    with pytest.raises(radixmesh.Error, match="0-d"):
        radixmesh.topk(np.float32(1), 1)
    with pytest.raises(radixmesh.Error, match="empty"):
        radixmesh.topk(np.zeros((3, 0), dtype=np.float32), 1)


def expected_topk(row, k, largest, sorted_):
    order = expected_order(row, descending=largest)
    winners = order[:k]
    return winners if sorted_ else np.sort(winners)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_topk_matches_numpy(dtype, largest, sorted_):
    x = sample(dtype, (6, 777), 50)
    if np.dtype(dtype).itemsize == 1:
        with pytest.raises(radixmesh.Error, match="is not supported"):
            radixmesh.topk(x, 1)
        return
    for k in (1, 13, 777):
        values, indices = radixmesh.topk(x, k, largest=largest, sorted=sorted_)
        assert values.shape == (6, k) and indices.dtype == np.int64
        for r in range(6):
            want = expected_topk(x[r], k, largest, sorted_)
            assert np.array_equal(indices[r], want), (r, k)
            assert np.array_equal(values[r], x[r][want])


def test_topk_dims_nan_and_errors():
    x = sample(np.float32, (7, 5, 9))
    values, indices = radixmesh.topk(x, 3, dim=1)
    assert values.shape == (7, 3, 9)
    assert np.array_equal(np.take_along_axis(x, indices, axis=1), values)
    flat_v, flat_i = radixmesh.topk(x, 4, dim=None)
    assert np.array_equal(flat_i, expected_topk(x.reshape(-1), 4, True, True))
    y = np.array([np.nan, 1.0, 3.0, np.nan, 2.0], dtype=np.float32)
    assert list(radixmesh.topk(y, 3)[1]) == [2, 4, 1]                    # NaN below every number
    assert list(radixmesh.topk(y, 4)[1]) == [2, 4, 1, 0]                 # fewer numbers than k: NaN fills
    assert list(radixmesh.topk(y, 2, include_nan=True)[1]) == [0, 3]     # NaN above +inf
    with pytest.raises(radixmesh.Error, match=r"k = 6 is larger than n = 5") as e:
        radixmesh.topk(y, 6)
    assert e.value.status == 1


def test_multisplit():
    x = sample(np.uint32, 5000)
    out, offsets = radixmesh.multisplit(x, "radix:28:4")
    assert offsets[0] == 0 and offsets[-1] == x.size and offsets.size == 17
    for b in range(16):
        part = out[offsets[b]:offsets[b + 1]]
        assert np.all(part >> 28 == b)
        assert np.array_equal(part, x[x >> 28 == b])  # stable
    values = np.arange(x.size, dtype=np.uint32)
    out, moved, offsets = radixmesh.multisplit(x, "hash:7", values=values)
    assert np.array_equal(x[moved], out) and offsets.size == 8
    with pytest.raises(radixmesh.Error, match="is not radix:SHIFT:BITS"):
        radixmesh.multisplit(x, "radix:3")
    with pytest.raises(radixmesh.Error, match="identity buckets over f32"):
        radixmesh.multisplit(np.zeros(4, dtype=np.float32), "identity:4")
    with pytest.raises(radixmesh.Error, match="bucket id"):
        radixmesh.multisplit(x, "identity:4")


def test_topk_over_the_shards_of_a_cpu_mesh():
    mesh = radixmesh.Context(cpu_mesh=3)
    assert mesh.mesh_size == 3 and mesh.local_count == 3 and mesh.backend == "cpu"
    whole = sample(np.float32, 3000, 40)
    shards = [whole[:1000], whole[1000:1000], whole[1000:]]
    values, indices = mesh.topk_shards(shards, 50)
    want_v, want_i = radixmesh.topk(whole, 50, ctx=radixmesh.Context(cpu=True))
    assert np.array_equal(indices, want_i) and np.array_equal(values, want_v)
    logits = sample(np.float32, (8, 90))
    columns = [logits[:, :30].copy(), logits[:, 30:31].copy(), logits[:, 31:].copy()]
    values, indices = mesh.topk_shards([c.reshape(-1) for c in columns], 5, rows=8)
    assert np.array_equal(indices, radixmesh.topk(logits, 5)[1])
    with pytest.raises(radixmesh.Error, match="2 shards for 3 local mesh devices"):
        mesh.topk_shards(shards[:2], 5)


def test_sort_shards_and_sort_on_a_cpu_mesh():
    mesh = radixmesh.Context(cpu_mesh=3)
    for dtype in (np.uint32, np.float64, np.int16):
        for descending in (False, True):
            whole = sample(dtype, 5000, 50)
            shards = [whole[:1000].copy(), whole[1000:1000].copy(), whole[1000:].copy()]
            values = [np.arange(s.size, dtype=np.int64) + off for s, off in zip(shards, (0, 1000, 1000))]
            mesh.sort_shards(shards, values, descending=descending)
            order = expected_order(whole, descending)
            assert [s.size for s in shards] == [1000, 0, 4000]
            assert np.array_equal(np.concatenate(shards), whole[order]), (dtype, descending)
            assert np.array_equal(np.concatenate(values), order), (dtype, descending)
            got_v, got_i = radixmesh.sort(whole, descending=descending, ctx=mesh)
            assert np.array_equal(got_v, whole[order]) and np.array_equal(got_i, order), (dtype, descending)
    with pytest.raises(radixmesh.Error, match="2 shards for 3 local mesh devices"):
        mesh.sort_shards([np.zeros(3, np.uint32)] * 2)
    with pytest.raises(radixmesh.Error, match="C-contiguous, writable"):
        mesh.sort_shards([np.zeros(6, np.uint32)[::2], np.zeros(3, np.uint32), np.zeros(3, np.uint32)])


def test_other_dlpack_producers_come_in_through_numpy():
    class Producer:  # an array type radixmesh does not know, speaking DLPack on the host
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    x = sample(np.float32, (7, 300))
    values, indices = radixmesh.sort(Producer(x))
    assert isinstance(values, np.ndarray)
    assert np.array_equal(indices, np.argsort(x, axis=-1, kind="stable"))
    values, indices = radixmesh.topk(Producer(x), 5)
    assert np.array_equal(values, -np.sort(-x, axis=-1)[:, :5])


def test_version_and_context_errors():
    assert radixmesh.version() == "0.1.0"
    with pytest.raises(radixmesh.Error, match="not a radixmesh key type"):
        radixmesh.sort({"not": "an array"})
    with pytest.raises(radixmesh.Error, match="not a NumPy array"):
        radixmesh.Context(cpu=True).topk_shards([[1.0, 2.0]], 1)


def test_imports_without_numpy_and_says_what_is_missing():
    # A Python without NumPy (simulated: the import of numpy fails) still imports the package and
    # reaches the library; an array call names the missing module and the fix.
    import os
    import subprocess
    import sys
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import radixmesh\n"
            "print(radixmesh.version())\n"
            "try:\n"
            "    radixmesh.sort([3, 1])\n"
            "except radixmesh.Error as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == radixmesh.version()
    assert "NumPy is not installed" in lines[1] and "fix:" in lines[1]
