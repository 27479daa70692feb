"""The C library (libradixmesh_c, include/radixmesh/radixmesh.h) through ctypes: where it is
found, the prototypes of its calls, and the check that turns a failed call into radixmesh.Error.

Found as, in order: the file named by the environment variable RXM_C_LIBRARY; the library installed
beside this package (the package lives in <prefix>/lib/radixmesh/python/radixmesh, the library in
<prefix>/lib); the loader's own search (LD_LIBRARY_PATH, ldconfig). Where none loads, the package
still imports (the plots need no library) and every call raises Error naming the paths tried."""
import ctypes
import os

_SONAME = "libradixmesh_c.so.0"


class Error(RuntimeError):
    """A failed radixmesh call: `status` is the C API's rxm_status (1 invalid argument, 2 I/O,
    3 out of memory, 4 unsupported, 5 device, 6 internal) and the message names the problem and
    its fix."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _candidates():
    named = os.environ.get("RXM_C_LIBRARY")
    if named:
        yield named
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, "..", "..", "..", _SONAME))
    yield _SONAME


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise Error(4, "libradixmesh_c could not be loaded; tried " + "; ".join(tried) +
                ". fix: install radixmesh (cmake --install), or set RXM_C_LIBRARY to the library's path")


try:
    lib = _load()
    _missing = None
except Error as e:  # `import radixmesh` still works (plots, `python3 -m radixmesh info`); calls raise
    lib, _missing = None, e

c_size = ctypes.c_size_t
c_void = ctypes.c_void_p
c_int = ctypes.c_int
ctx_p = ctypes.c_void_p


class SortOptions(ctypes.Structure):
    _fields_ = [("size", c_size), ("descending", c_int), ("begin_bit", c_int), ("end_bit", c_int)]


class TopkOptions(ctypes.Structure):
    _fields_ = [("size", c_size), ("largest", c_int), ("sorted", c_int), ("include_nan", c_int)]


class Buckets(ctypes.Structure):
    _fields_ = [("size", c_size), ("kind", c_int), ("shift", c_int), ("bits", c_int), ("m", ctypes.c_uint32),
                ("checked", c_int)]


def _proto(name, restype, *argtypes):
    if lib is None:
        def unavailable(*args):
            raise _missing
        return unavailable
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


rxm_c_api_version = _proto("rxm_c_api_version", c_int)
rxm_version = _proto("rxm_version", ctypes.c_char_p)
rxm_last_error = _proto("rxm_last_error", ctypes.c_char_p)
rxm_context_create_cpu = _proto("rxm_context_create_cpu", c_int, ctypes.c_uint, ctypes.POINTER(ctx_p))
rxm_context_create_local = _proto("rxm_context_create_local", c_int, ctypes.POINTER(c_int), c_size, c_int,
                                  ctypes.POINTER(ctx_p))
rxm_context_create_cpu_mesh = _proto("rxm_context_create_cpu_mesh", c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.POINTER(ctx_p))
rxm_context_destroy = _proto("rxm_context_destroy", None, ctx_p)
rxm_context_mesh_size = _proto("rxm_context_mesh_size", c_int, ctx_p)
rxm_context_local_count = _proto("rxm_context_local_count", c_int, ctx_p)
rxm_context_backend = _proto("rxm_context_backend", c_int, ctx_p)
rxm_sort = _proto("rxm_sort", c_int, ctx_p, c_int, c_void, c_size, c_int, c_void, c_size,
                  ctypes.POINTER(SortOptions))
rxm_sort_shards = _proto("rxm_sort_shards", c_int, ctx_p, c_int, ctypes.POINTER(c_void), ctypes.POINTER(c_size),
                         ctypes.POINTER(c_int), ctypes.POINTER(c_void), c_size, ctypes.POINTER(SortOptions))
rxm_sort_rows = _proto("rxm_sort_rows", c_int, ctx_p, c_int, c_void, c_size, c_size, c_void, c_size,
                       ctypes.POINTER(SortOptions))
rxm_topk = _proto("rxm_topk", c_int, ctx_p, c_int, c_void, c_size, c_int, c_size, c_void, c_size,
                  ctypes.POINTER(TopkOptions), c_void, c_void, c_size)
rxm_sort_rows_device = _proto("rxm_sort_rows_device", c_int, ctx_p, c_int, c_int, c_void, c_void, c_void, c_void, c_size,
                              c_size, c_size, ctypes.POINTER(SortOptions), c_void)
rxm_topk_device = _proto("rxm_topk_device", c_int, ctx_p, c_int, c_int, c_void, c_size, c_size, c_size, c_size,
                         ctypes.POINTER(TopkOptions), c_void, c_void, c_size, c_void)
rxm_topk_shards = _proto("rxm_topk_shards", c_int, ctx_p, c_int, ctypes.POINTER(c_void), ctypes.POINTER(c_size),
                         ctypes.POINTER(c_int), c_size, c_int, c_size, ctypes.POINTER(TopkOptions), c_void, c_void,
                         c_size)
rxm_multisplit = _proto("rxm_multisplit", c_int, ctx_p, c_int, c_void, c_void, c_void, c_void, c_size, c_size, c_int,
                        ctypes.POINTER(Buckets), ctypes.POINTER(c_size), c_size)


def check(status):
    """Raises Error with the library's message when a call failed."""
    if status != 0:
        raise Error(status, rxm_last_error().decode("utf-8", "replace"))
