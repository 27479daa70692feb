"""NumPy dtypes and the C API's key types (rxm_key_type). NumPy is imported when an array call
needs it, so that `import radixmesh` (and `python3 -m radixmesh info`) work without it."""
from ._lib import Error

# rxm_key_type values (include/radixmesh/radixmesh.h), by dtype name
_KEY_TYPES = {"uint8": 0, "uint16": 1, "uint32": 2, "uint64": 3, "int8": 4, "int16": 5, "int32": 6, "int64": 7,
              "float16": 8, "float32": 10, "float64": 11}
BF16 = 9


def numpy():
    """NumPy, or a clear Error naming the fix where this Python has none."""
    try:
        import numpy as np
    except ImportError:
        raise Error(1, "NumPy is not installed for this Python. fix: install it (Debian: apt install "
                       "python3-numpy; else python3 -m pip install numpy)") from None
    return np


_known = {}  # dtype -> rxm_key_type, filled as dtypes are met (the lookup is on every call's path)


def key_type(dtype):
    """The rxm_key_type of a NumPy dtype (bfloat16 by its name, as ml_dtypes spells it)."""
    known = _known.get(dtype)
    if known is not None:
        return known
    _known[dtype] = _key_type(dtype)
    return _known[dtype]


def _key_type(dtype):
    dtype = numpy().dtype(dtype)
    if dtype.name == "bfloat16":
        return BF16
    if dtype.kind in "uif" and dtype.name in _KEY_TYPES and dtype.byteorder in "=|<":
        return _KEY_TYPES[dtype.name]
    raise Error(1, f"dtype {dtype} is not a radixmesh key type. fix: use uint8/16/32/64, int8/16/32/64, "
                   "float16, bfloat16, float32 or float64 (native byte order)")


def key_type_of_name(name):
    """The rxm_key_type of a dtype named as NumPy and PyTorch name them ("float32", "bfloat16")."""
    if name == "bfloat16":
        return BF16
    if name in _KEY_TYPES:
        return _KEY_TYPES[name]
    raise Error(1, f"dtype {name} is not a radixmesh key type. fix: use uint8/16/32/64, int8/16/32/64, "
                   "float16, bfloat16, float32 or float64")
