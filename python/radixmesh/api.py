"""radixmesh's operations on NumPy arrays, shaped like numpy.sort and torch.sort / torch.topk."""
import ctypes
import functools
import math

from . import _lib
from ._arrays import adapter
from ._dtypes import key_type, numpy


class _LazyNumpy:
    """numpy, imported at the first array call (a clear Error where this Python has none)."""

    def __getattr__(self, name):
        return getattr(numpy(), name)


np = _LazyNumpy()
from ._lib import Error, check


class Context:
    """Where radixmesh runs. Context() uses the GPU when one is usable (host arrays are staged
    through it), else the CPU; Context(cpu=True) the CPU backend with `threads` host threads (0:
    all); Context(devices=[0, 1, 2, 3]) those GPUs as a mesh (an ordinal listed again is a logical
    device of that GPU); Context(cpu_mesh=n) n CPU mesh devices in this process."""

    def __init__(self, devices=None, cpu=False, cpu_mesh=None, threads=0):
        handle = _lib.ctx_p()
        if cpu_mesh is not None:
            check(_lib.rxm_context_create_cpu_mesh(int(cpu_mesh), int(threads), ctypes.byref(handle)))
        elif cpu:
            check(_lib.rxm_context_create_cpu(int(threads), ctypes.byref(handle)))
        else:
            ids = list(devices or [])
            array = (ctypes.c_int * max(1, len(ids)))(*ids)
            check(_lib.rxm_context_create_local(array, len(ids), 0, ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _lib.rxm_context_destroy(handle)
            self._handle = None

    @property
    def mesh_size(self):
        """Mesh devices of the whole mesh."""
        return _lib.rxm_context_mesh_size(self._handle)

    @property
    def local_count(self):
        """Mesh devices this process drives: topk_shards takes one shard for each."""
        return _lib.rxm_context_local_count(self._handle)

    @property
    def backend(self):
        """'cpu' or 'cuda'."""
        return {1: "cpu", 2: "cuda"}.get(_lib.rxm_context_backend(self._handle), "auto")

    def topk_shards(self, shards, k, rows=None, largest=True, sorted=True):
        """The top-k over one 1-D NumPy shard per local mesh device, as if the shards were one
        array (rows=None; indices are positions in the concatenation), or, with rows=R, over rows
        split by columns: every shard holds R rows of its own columns (R x columns_d, row-major)
        and row r of the whole is row r of every shard side by side. Returns (values, indices):
        shape (k,) or (R, k), int64 global indices, equal to topk of the concatenated data."""
        shards = [_host_contiguous(s) for s in shards]
        if len(shards) != self.local_count:
            raise Error(1, f"{len(shards)} shards for {self.local_count} local mesh devices. "
                           "fix: pass one shard per local mesh device (Context.local_count)")
        dtype = shards[0].dtype if shards else np.dtype(np.float32)
        if any(s.dtype != dtype for s in shards):
            raise Error(1, "the shards have different dtypes. fix: give every shard the same dtype")
        n_rows = 1 if rows is None else int(rows)
        values = np.empty((n_rows, k), dtype=dtype)
        indices = np.empty((n_rows, k), dtype=np.int64)
        pointers = (ctypes.c_void_p * len(shards))(*[s.ctypes.data for s in shards])
        sizes = (ctypes.c_size_t * len(shards))(*[s.size for s in shards])
        options = _lib.TopkOptions(ctypes.sizeof(_lib.TopkOptions), int(largest), int(sorted), 0)
        check(_lib.rxm_topk_shards(self._handle, key_type(dtype), pointers, sizes, None, n_rows,
                                   int(rows is not None), k, ctypes.byref(options), values.ctypes.data,
                                   indices.ctypes.data, 8))
        return (values[0], indices[0]) if rows is None else (values, indices)


    def sort_shards(self, shards, values=None, descending=False):
        """Sorts one 1-D NumPy shard per local mesh device in place, together: afterwards every
        key of shard i is <= every key of shard i + 1 (>= when descending), each shard keeps its
        length, and the shards read in order equal a stable sort of their concatenation. values:
        one array of 4- or 8-byte entries per shard, the same lengths, moved with their keys.
        Shards must be C-contiguous and writable (they are sorted where they are). Returns
        shards (and values)."""
        if len(shards) != self.local_count:
            raise Error(1, f"{len(shards)} shards for {self.local_count} local mesh devices. "
                           "fix: pass one shard per local mesh device (Context.local_count)")
        arrays = list(shards) + (list(values) if values is not None else [])
        for a in arrays:
            if not isinstance(a, np.ndarray) or a.ndim != 1 or not a.flags.c_contiguous or not a.flags.writeable:
                raise Error(1, "sort_shards needs 1-D, C-contiguous, writable numpy arrays. fix: pass "
                               "np.ascontiguousarray copies (the shards are sorted in place)")
        dtype = shards[0].dtype if shards else np.dtype(np.uint32)
        if any(a.dtype != dtype for a in shards):
            raise Error(1, "the shards have different dtypes. fix: give every shard the same dtype")
        count = len(shards)
        pointers = (ctypes.c_void_p * count)(*[a.ctypes.data for a in shards])
        sizes = (ctypes.c_size_t * count)(*[a.size for a in shards])
        value_pointers, value_bytes = None, 0
        if values is not None:
            if len(values) != count or any(v.size != a.size for v, a in zip(values, shards)):
                raise Error(1, "values must be one array per shard, of its shard's length. fix: pass matching values")
            value_bytes = values[0].itemsize if count else 0
            if any(v.itemsize != value_bytes for v in values) or (count and value_bytes not in (4, 8)):
                raise Error(1, "values must all be 4- or 8-byte entries. fix: use e.g. int32/uint32 or int64/float64")
            value_pointers = (ctypes.c_void_p * count)(*[v.ctypes.data for v in values])
        check(_lib.rxm_sort_shards(self._handle, key_type(dtype), pointers, sizes, None, value_pointers, value_bytes,
                                   _sort_options(bool(descending))[1]))
        return shards if values is None else (shards, values)


_default = None


def default_context():
    """The context the functions use when none is given: Context(), made on first use."""
    global _default
    if _default is None:
        _default = Context()
    return _default


def _host_contiguous(x):
    if not isinstance(x, np.ndarray) or x.dtype == object:
        raise Error(1, f"{type(x).__name__} is not a NumPy array: topk_shards takes host shards. fix: pass "
                       "numpy.ndarray shards (x.cpu().numpy() for a tensor)")
    key_type(x.dtype)
    return np.ascontiguousarray(x)


@functools.lru_cache(maxsize=None)
def _sort_options(descending):
    """The C options struct, made once per order (a pointer to it is what the calls take)."""
    options = _lib.SortOptions(ctypes.sizeof(_lib.SortOptions), int(descending), 0, -1)
    return options, ctypes.byref(options)


def _sort_rows(ctx, kt, a, keys, values, descending):
    """Sorts every row of a C-contiguous (..., length) host array in place, int64 values moving along."""
    check(_lib.rxm_sort_rows(ctx._handle, kt, a.ptr(keys), math.prod(keys.shape), keys.shape[-1],
                             a.ptr(values) if values is not None else None, 8 if values is not None else 0,
                             _sort_options(bool(descending))[1]))


def sort(x, dim=-1, descending=False, stable=True, ctx=None):
    """Sorts x along `dim` (None: flattened), each row on its own, like torch.sort. x is a NumPy
    array, a PyTorch tensor (CPU or CUDA) or a CuPy array; the results are of x's type on x's
    device. Returns (values, indices): new arrays, int64 indices into the row. Always stable
    (`stable` is taken for compatibility). Order: radixmesh's total order: every NaN after +inf
    (as numpy.sort does; positive NaNs first, then those with the sign bit set), and -0.0 before
    +0.0 (numpy.sort keeps them in input order). One library call sorts every row; a 1-D host
    array on a Context of several mesh devices is sorted by all of them together. On a GPU it
    is queued on the current stream (PyTorch's or CuPy's) and reads x in place when `dim` is its
    last, contiguous dimension (else from a contiguous copy); host arrays are copied, and the copy
    is sorted."""
    a, x = adapter(x)
    kt = a.key_type(x)
    if x.ndim == 0:
        indices = a.empty(x, (), index=True)
        indices[...] = 0
        return a.copy(x), indices
    ctx = ctx or default_context()
    data = a.rows(x, dim)
    shape = tuple(data.shape)
    n = math.prod(shape)
    if n == 0:
        return a.back(a.copy(data), dim), a.back(a.empty(data, shape, index=True), dim)
    device = a.device(data)
    if device >= 0:
        values, indices = a.empty(data, shape), a.empty(data, shape, index=True)
        check(_lib.rxm_sort_rows_device(ctx._handle, kt, device, a.ptr(data), a.ptr(values), None, a.ptr(indices), 8,
                                        n, shape[-1], _sort_options(bool(descending))[1], a.stream(data)))
    else:
        values = a.copy(data)
        indices = a.positions(values, shape)
        if len(shape) == 1 and ctx.mesh_size > 1:  # one array on a mesh: its devices sort it together
            check(_lib.rxm_sort(ctx._handle, kt, a.ptr(values), n, -1, a.ptr(indices), 8,
                                _sort_options(bool(descending))[1]))
        else:
            _sort_rows(ctx, kt, a, values, indices, descending)
    return a.back(values, dim), a.back(indices, dim)


def sort_(x, descending=False, ctx=None):
    """Sorts a C-contiguous, writable array in place along its last dimension (each row on its
    own; a 1-D array as a whole) and returns it: a NumPy array, a PyTorch tensor or a CuPy array.
    Zero copy: the library sorts x's own memory (on a GPU, queued on the current stream, through a
    temporary copy in the library's pool). Anything else is an error, not a silent copy."""
    a, x = adapter(x)
    if not a.contiguous(x) or not a.writable(x):
        raise Error(1, "sort_ needs a C-contiguous, writable array. fix: use sort(), which copies")
    kt = a.key_type(x)
    if x.ndim == 0 or math.prod(x.shape) == 0:
        return x
    ctx = ctx or default_context()
    device = a.device(x)
    if device >= 0:
        check(_lib.rxm_sort_rows_device(ctx._handle, kt, device, a.ptr(x), a.ptr(x), None, None, 0,
                                        math.prod(x.shape), x.shape[-1], _sort_options(bool(descending))[1],
                                        a.stream(x)))
    else:
        _sort_rows(ctx, kt, a, x, None, descending)
    return x


def argsort(x, dim=-1, descending=False, ctx=None):
    """The indices that sort x along `dim` (None: flattened), stable: sort(x, dim, descending)[1]."""
    return sort(x, dim=dim, descending=descending, ctx=ctx)[1]


@functools.lru_cache(maxsize=None)
def _topk_options(largest, sorted, include_nan):
    """The C options struct, made once per combination (a pointer to it is what the call takes)."""
    options = _lib.TopkOptions(ctypes.sizeof(_lib.TopkOptions), int(largest), int(sorted), int(include_nan))
    return options, ctypes.byref(options)


def topk(x, k, dim=-1, largest=True, sorted=True, include_nan=False, ctx=None):
    """The k largest (largest=False: smallest) entries of x along `dim` (None: flattened), each row
    on its own, like torch.topk. x is a NumPy array, a PyTorch tensor (CPU or CUDA) or a CuPy
    array; the results are of x's type on x's device. Returns (values, indices) with `dim` of
    size k; int64 indices into the row. sorted=True: best first, equal values by ascending index;
    sorted=False: ascending index. Ties go to the lower index. NaN ranks below every number unless
    include_nan (then above +inf). k > the row length is an error. One library call takes every
    row; x is read in place when `dim` is its last, contiguous dimension, else from a contiguous
    copy. On a GPU the call is queued on the current stream (PyTorch's or CuPy's), allocates only
    the results, and never waits for the GPU."""
    a, x = adapter(x)
    kt = a.key_type(x)
    if x.ndim == 0:
        raise Error(1, "topk of a 0-d array. fix: pass an array with at least one dimension")
    ctx = ctx or default_context()
    data = a.rows(x, dim)
    shape = tuple(data.shape)
    length = shape[-1]
    rows = math.prod(shape[:-1])
    if rows == 0 or length == 0:
        raise Error(1, f"topk of an empty array (shape {tuple(x.shape)}). fix: pass at least one value per row")
    out_shape = shape[:-1] + (k,)
    values, indices = a.empty(data, out_shape), a.empty(data, out_shape, index=True)
    options = _topk_options(bool(largest), bool(sorted), bool(include_nan))[1]
    device = a.device(data)
    if device >= 0:
        check(_lib.rxm_topk_device(ctx._handle, kt, device, a.ptr(data), rows, length, 0, k, options, a.ptr(values),
                                   a.ptr(indices), 8, a.stream(data)))
    else:
        check(_lib.rxm_topk(ctx._handle, kt, a.ptr(data), rows * length, -1, rows, None, k, options, a.ptr(values),
                            a.ptr(indices), 8))
    return a.back(values, dim), a.back(indices, dim)


def _bucket_spec(buckets):
    kind, _, rest = str(buckets).partition(":")
    parts = rest.split(":") if rest else []
    try:
        if kind == "radix" and len(parts) == 2:
            shift, bits = int(parts[0]), int(parts[1])
            return _lib.Buckets(ctypes.sizeof(_lib.Buckets), 0, shift, bits, 1, 1), (1 << bits if 0 <= bits <= 16 else 0)
        if kind in ("hash", "identity") and len(parts) == 1:
            m = int(parts[0])
            return _lib.Buckets(ctypes.sizeof(_lib.Buckets), 1 if kind == "hash" else 2, 0, 0, m, 1), m
    except ValueError:
        pass
    raise Error(1, f"buckets '{buckets}' is not radix:SHIFT:BITS, hash:M or identity:M. "
                   "fix: e.g. buckets='radix:24:8' or 'hash:1024'")


def multisplit(x, buckets, values=None, ctx=None):
    """Stable multisplit of a 1-D array by bucket: 'radix:SHIFT:BITS' (the digit of the key's
    order-preserving encoding), 'hash:M' or 'identity:M' (integer keys below M). Returns (out,
    offsets), or (out, out_values, offsets) with values (4- or 8-byte per key): bucket b holds
    out[offsets[b]:offsets[b + 1]], keys in input order; offsets has M + 1 int64 entries. All of
    x's type on x's device. On a GPU the call waits for the current stream first and returns
    once the split is done (the offsets are read on the host)."""
    a, x = adapter(x)
    if x.ndim != 1:
        raise Error(1, f"multisplit of a {x.ndim}-d array. fix: pass a 1-D array (x.reshape(-1))")
    kt = a.key_type(x)
    x = a.rows(x, -1)
    spec, m = _bucket_spec(buckets)
    out = a.empty(x, tuple(x.shape))
    offsets = np.zeros(max(m, 0) + 1, dtype=np.uint64)
    v_in = v_out = None
    itemsize = 0
    if values is not None:
        va, v_in = adapter(values)
        v_in = va.rows(v_in, -1)
        itemsize = v_in.element_size() if a.name == "torch" else v_in.itemsize
        if va is not a or tuple(v_in.shape) != tuple(x.shape) or itemsize not in (4, 8):
            raise Error(1, "values must be one 4- or 8-byte entry per key, of x's type. fix: pass values of x's shape")
        v_out = a.empty(v_in, tuple(v_in.shape))
    a.synchronize(x)
    check(_lib.rxm_multisplit(ctx._handle if ctx else default_context()._handle, kt, a.ptr(x), a.ptr(out),
                              a.ptr(v_in) if v_in is not None else None, a.ptr(v_out) if v_out is not None else None,
                              itemsize, math.prod(x.shape), a.device(x),
                              ctypes.byref(spec), offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_size_t)),
                              offsets.size))
    offsets = a.from_host(x, offsets.astype(np.int64))
    return (out, offsets) if values is None else (out, v_out, offsets)
