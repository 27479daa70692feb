"""radixmesh from Python: sort, argsort, top-k and multisplit of NumPy arrays on the CPU or a GPU,
and top-k over shards of a mesh of devices, through the C API (libradixmesh_c) with ctypes. Pure
Python: no compiled module, so any Python 3.9 or later works.

    import numpy as np, radixmesh
    values, indices = radixmesh.topk(np.random.rand(4096, 32000).astype(np.float32), 50)
"""
from ._lib import Error
from ._lib import lib as _clib
from .api import Context, argsort, default_context, multisplit, sort, sort_, topk

__all__ = ["Context", "Error", "argsort", "default_context", "multisplit", "sort", "sort_", "topk", "version"]


def version():
    """The loaded library's version ("0.1.0")."""
    from ._lib import rxm_version
    return rxm_version().decode()
