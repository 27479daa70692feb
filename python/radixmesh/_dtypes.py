"""NumPy dtypes and the C API's key types (rxm_key_type)."""
import numpy as np

from ._lib import Error

# rxm_key_type values (include/radixmesh/radixmesh.h)
_KEY_TYPES = {
    np.dtype(np.uint8): 0, np.dtype(np.uint16): 1, np.dtype(np.uint32): 2, np.dtype(np.uint64): 3,
    np.dtype(np.int8): 4, np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7,
    np.dtype(np.float16): 8, np.dtype(np.float32): 10, np.dtype(np.float64): 11,
}
BF16 = 9


def key_type(dtype):
    """The rxm_key_type of a NumPy dtype (bfloat16 by its name, as ml_dtypes spells it)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return BF16
    if dtype.newbyteorder("=") in _KEY_TYPES and dtype.byteorder in "=|<":
        return _KEY_TYPES[dtype.newbyteorder("=")]
    raise Error(1, f"dtype {dtype} is not a radixmesh key type. fix: use uint8/16/32/64, int8/16/32/64, "
                   "float16, bfloat16, float32 or float64 (native byte order)")
