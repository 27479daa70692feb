"""The array types radixmesh takes from Python, read in place: NumPy arrays (host memory),
PyTorch tensors (CPU or CUDA) and CuPy arrays (CUDA). Each adapter gives the C API what it needs
(the data pointer, the device, the dtype's name, the current stream) and makes results of the
caller's own type on the caller's device. Other arrays that speak DLPack (`__dlpack__`: JAX, ...)
are taken through torch.from_dlpack or cupy.from_dlpack (zero copy), and their results come back
as tensors of that library.

Zero copy: the data is read where it is. A copy is made only where the layout asks for it (a
dimension other than the last, or non-contiguous strides): into a contiguous array of the same
type on the same device, as the docstrings of the operations say."""
import sys

from ._dtypes import key_type, key_type_of_name
from ._lib import Error

_torch_key_types = {}  # torch dtype -> rxm_key_type


class _NumpyLike:
    """What NumPy and CuPy arrays share: the same array API under another module (`xp`)."""

    def __init__(self, xp):
        self.xp = xp

    def key_type(self, x):
        return key_type(x.dtype)

    def rows(self, x, dim):
        """x with `dim` last (None: flattened), C-contiguous (a copy only where needed)."""
        xp = self.xp
        if dim is None:
            return xp.ascontiguousarray(x).reshape(-1)
        if dim != -1 and dim != x.ndim - 1:
            x = xp.moveaxis(x, dim, -1)
        return xp.ascontiguousarray(x)

    def back(self, r, dim):
        return r if dim is None or dim == -1 or dim == r.ndim - 1 else self.xp.moveaxis(r, -1, dim)

    def copy(self, x):
        return x.copy()

    def contiguous(self, x):
        return x.flags.c_contiguous


class _Numpy(_NumpyLike):
    name = "numpy"

    def device(self, x):
        return -1

    def ptr(self, x):
        return x.ctypes.data

    def stream(self, x):
        return None

    def empty(self, like, shape, index=False):
        return self.xp.empty(shape, dtype=self.xp.int64 if index else like.dtype)

    def positions(self, like, shape):
        """int64 positions along the last dimension, of `shape`."""
        xp = self.xp
        return xp.broadcast_to(xp.arange(shape[-1], dtype=xp.int64), shape).copy()

    def writable(self, x):
        return x.flags.writeable

    def synchronize(self, x):
        pass

    def from_host(self, like, array):
        return array


class _Torch:
    name = "torch"

    def __init__(self, torch):
        self.torch = torch

    def key_type(self, x):
        known = _torch_key_types.get(x.dtype)
        if known is None:
            known = _torch_key_types[x.dtype] = key_type_of_name(str(x.dtype).rpartition(".")[2])
        return known

    def device(self, x):
        return x.device.index if x.is_cuda else -1

    def ptr(self, x):
        return x.data_ptr()

    def stream(self, x):
        return self.torch.cuda.current_stream(x.device).cuda_stream

    def rows(self, x, dim):
        if dim is None:
            return x.contiguous().reshape(-1)
        if dim != -1 and dim != x.dim() - 1:
            x = x.movedim(dim, -1)
        return x.contiguous()

    def back(self, r, dim):
        return r if dim is None or dim == -1 or dim == r.dim() - 1 else r.movedim(-1, dim)

    def empty(self, like, shape, index=False):
        return self.torch.empty(shape, dtype=self.torch.int64 if index else like.dtype, device=like.device)

    def copy(self, x):
        return x.clone()

    def positions(self, like, shape):
        return self.torch.arange(shape[-1], dtype=self.torch.int64, device=like.device).expand(shape).contiguous()

    def contiguous(self, x):
        return x.is_contiguous()

    def writable(self, x):
        return True

    def synchronize(self, x):
        if x.is_cuda:
            self.torch.cuda.current_stream(x.device).synchronize()

    def from_host(self, like, array):
        return self.torch.as_tensor(array, device=like.device)


class _Cupy(_NumpyLike):
    name = "cupy"

    def device(self, x):
        return x.device.id

    def ptr(self, x):
        return x.data.ptr

    def stream(self, x):
        return self.xp.cuda.get_current_stream().ptr

    def empty(self, like, shape, index=False):
        with like.device:
            return self.xp.empty(shape, dtype=self.xp.int64 if index else like.dtype)

    def positions(self, like, shape):
        xp = self.xp
        with like.device:
            return xp.ascontiguousarray(xp.broadcast_to(xp.arange(shape[-1], dtype=xp.int64), shape))

    def writable(self, x):
        return True

    def synchronize(self, x):
        self.xp.cuda.get_current_stream().synchronize()

    def from_host(self, like, array):
        with like.device:
            return self.xp.asarray(array)


_adapters = {}  # by type: the lookup is on every call's path


def adapter(x):
    """The adapter for x's type, and x itself (DLPack producers converted): (adapter, array)."""
    t = type(x)
    a = _adapters.get(t)
    if a is not None:
        return a, x
    module = t.__module__.partition(".")[0]
    if module == "numpy":
        from ._dtypes import numpy
        a = _Numpy(numpy())
    elif module == "torch" and "torch" in sys.modules:
        a = _Torch(sys.modules["torch"])
    elif module == "cupy" and "cupy" in sys.modules:
        a = _Cupy(sys.modules["cupy"])
    elif hasattr(x, "__dlpack__"):
        return _from_dlpack(x)
    else:
        from ._dtypes import numpy
        return _Numpy(numpy()), numpy().asarray(x)
    _adapters[t] = a
    return a, x


def _from_dlpack(x):
    """Another library's DLPack array, through a library radixmesh knows (zero copy)."""
    device_type = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    for name in (("numpy",) if device_type == 1 else ()) + ("torch", "cupy"):
        try:
            module = __import__(name)
            converted = module.from_dlpack(x)
        except Exception:
            continue
        return adapter(converted)
    raise Error(1, f"{type(x).__name__} speaks DLPack, but neither torch nor cupy could take it. fix: pass a "
                   "numpy array, a torch tensor or a cupy array")
