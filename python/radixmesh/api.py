"""radixmesh's operations on NumPy arrays, shaped like numpy.sort and torch.sort / torch.topk."""
import ctypes
import functools
import math

from . import _lib
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


_default = None


def default_context():
    """The context the functions use when none is given: Context(), made on first use."""
    global _default
    if _default is None:
        _default = Context()
    return _default


def _host_contiguous(x):
    if not isinstance(x, np.ndarray) or x.dtype == object:
        raise Error(1, f"{type(x).__name__} is not a NumPy array. fix: pass a numpy.ndarray "
                       "(PyTorch and CuPy arrays are not supported yet)")
    key_type(x.dtype)
    return np.ascontiguousarray(x)


def _rows_view(x, dim):
    """x with `dim` moved last, as a C-contiguous (rows, length) copy, and how to shape results back."""
    if dim is None:
        flat = np.ascontiguousarray(x).reshape(-1).copy()
        return flat.reshape(1, -1), lambda r: r.reshape(-1)
    moved = np.moveaxis(x, dim, -1)
    shape = moved.shape
    rows = np.ascontiguousarray(moved).reshape(-1, shape[-1]).copy()
    return rows, lambda r: np.moveaxis(r.reshape(shape[:-1] + (r.shape[-1],)), -1, dim)


def _sort_rows(rows, indices, descending, ctx):
    """Sorts every row of a C-contiguous (rows, length) array in place, indices moving along."""
    options = _lib.SortOptions(ctypes.sizeof(_lib.SortOptions), int(descending), 0, -1)
    check(_lib.rxm_sort_rows(ctx._handle, key_type(rows.dtype), rows.ctypes.data, rows.size, rows.shape[-1],
                             indices.ctypes.data if indices is not None else None, 8 if indices is not None else 0,
                             ctypes.byref(options)))


def sort(x, dim=-1, descending=False, stable=True, ctx=None):
    """Sorts x along `dim` (None: flattened), each row on its own, like torch.sort. Returns
    (values, indices): new arrays, int64 indices into the row. Always stable (`stable` is taken
    for compatibility). Order: radixmesh's total order: every NaN after +inf (as numpy.sort does;
    positive NaNs first, then those with the sign bit set), and -0.0 before +0.0 (numpy.sort keeps
    them in input order). One library call sorts every row (rxm::sort_rows: on the CPU, one thread
    per row). The input is copied (the copy is sorted), so any layout is accepted."""
    x = np.asarray(x)
    key_type(x.dtype)
    if x.ndim == 0:
        return x.copy(), np.zeros((), dtype=np.int64)
    if x.size == 0:
        shape = (0,) if dim is None else x.shape
        return x.reshape(shape).copy(), np.zeros(shape, dtype=np.int64)
    ctx = ctx or default_context()
    rows, back = _rows_view(x, dim)
    indices = np.broadcast_to(np.arange(rows.shape[1], dtype=np.int64), rows.shape).copy()
    _sort_rows(rows, indices, descending, ctx)
    return back(rows), back(indices)


def sort_(x, descending=False, ctx=None):
    """Sorts a C-contiguous, writable NumPy array in place along its last dimension (each row on
    its own; a 1-D array as a whole) and returns it. Zero copy: the library sorts x's own memory.
    Anything else is an error, not a silent copy."""
    if not isinstance(x, np.ndarray) or not x.flags.c_contiguous or not x.flags.writeable:
        raise Error(1, "sort_ needs a C-contiguous, writable numpy.ndarray. fix: use sort(), which copies")
    key_type(x.dtype)
    if x.ndim == 0 or x.size == 0:
        return x
    _sort_rows(x.reshape(-1, x.shape[-1]), None, descending, ctx or default_context())
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
    on its own, like torch.topk. Returns (values, indices) with `dim` of size k; int64 indices
    into the row. sorted=True: best first, equal values by ascending index; sorted=False:
    ascending index. Ties go to the lower index. NaN ranks below every number unless include_nan
    (then above +inf). k > the row length is an error. Rows come from one C-contiguous copy when x
    is not already laid out so; one library call takes every row."""
    x = np.asarray(x)
    kt = key_type(x.dtype)
    if x.ndim == 0:
        raise Error(1, "topk of a 0-d array. fix: pass an array with at least one dimension")
    ctx = ctx or default_context()
    last = dim is not None and (dim == -1 or dim == x.ndim - 1)
    data = np.ascontiguousarray(x.reshape(-1) if dim is None else x if last else np.moveaxis(x, dim, -1))
    rows, length = (1, data.size) if dim is None else (math.prod(data.shape[:-1]), data.shape[-1])
    out_shape = (k,) if dim is None else data.shape[:-1] + (k,)
    if rows == 0 or length == 0:
        raise Error(1, f"topk of an empty array (shape {x.shape}). fix: pass at least one value per row")
    values = np.empty(out_shape, dtype=x.dtype)
    indices = np.empty(out_shape, dtype=np.int64)
    options = _topk_options(bool(largest), bool(sorted), bool(include_nan))[1]
    check(_lib.rxm_topk(ctx._handle, kt, data.ctypes.data, data.size, -1, rows, None, k, options,
                        values.ctypes.data, indices.ctypes.data, 8))
    if dim is not None and not last:
        values, indices = np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)
    return values, indices


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
    out[offsets[b]:offsets[b + 1]], keys in input order; offsets has M + 1 int64 entries."""
    x = _host_contiguous(np.asarray(x))
    if x.ndim != 1:
        raise Error(1, f"multisplit of a {x.ndim}-d array. fix: pass a 1-D array (x.reshape(-1))")
    spec, m = _bucket_spec(buckets)
    out = np.empty_like(x)
    offsets = np.zeros(max(m, 0) + 1, dtype=np.uint64)
    v_in = v_out = None
    if values is not None:
        v_in = np.ascontiguousarray(values)
        if v_in.shape != x.shape or v_in.itemsize not in (4, 8):
            raise Error(1, "values must be one 4- or 8-byte entry per key. fix: pass values of x's shape")
        v_out = np.empty_like(v_in)
    check(_lib.rxm_multisplit(ctx._handle if ctx else default_context()._handle, key_type(x.dtype), x.ctypes.data,
                              out.ctypes.data, v_in.ctypes.data if v_in is not None else None,
                              v_out.ctypes.data if v_out is not None else None,
                              v_in.itemsize if v_in is not None else 0, x.size, -1, ctypes.byref(spec),
                              offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_size_t)), offsets.size))
    offsets = offsets.astype(np.int64)
    return (out, offsets) if values is None else (out, v_out, offsets)
