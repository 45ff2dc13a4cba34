"""Every Tensor method defined outside tensor.py, bound here once: the package's __init__
imports this module after all the modules the methods come from.

The order is the old import order and matters: the op functions only take names still free
(`not hasattr`), the Python operators reuse in-place methods bound before them
(`__iadd__` is `add_`), and the torch.Tensor attributes still absent at the end are marked
(NotImplementedAPI on access).
"""
from . import _dtypes as D
from ._torch_names import INPLACE_FUNCTIONS, TENSOR_ATTRIBUTES, mark_missing_tensor_attributes
from .autograd._api import _tensor_backward
from .device import device as _device
from .mtia import _NO_MTIA
from .xpu import _NO_XPU
from .creation import _legacy, _legacy_new, _reduce_ex, new_empty_strided
from .engine import graph as _graph
from .ops import (FUNCTIONS as F, INPLACE, _cast, _imag, _inplace_method, _method_where, _new,
                  _new_full, _new_tensor, _rdiv, _real, _rfloordiv, _rmatmul, _rmod, _rpow)
from .ops import call_op, shape as S
from .ops.fill import _copy, _fill, _zero
from .ops.inplace import _inplace_function, inplace
from .ops.sampling import INPLACE_SAMPLERS
from .ops.views import _sync_view
from .spectral import istft, stft
from .storage import TENSOR_METHODS as _STORAGE_METHODS
from .tensor import Tensor

# the Python operators: name -> FUNCTIONS key (the op, wherever in ops/ it is defined)
_OPERATORS = dict(
    __add__="add", __radd__="add", __sub__="sub", __rsub__="rsub", __mul__="mul",
    __rmul__="mul", __truediv__="div", __floordiv__="floor_divide", __mod__="remainder",
    __pow__="pow", __matmul__="matmul", __neg__="neg", __abs__="abs", __invert__="bitwise_not",
    __and__="bitwise_and", __rand__="bitwise_and", __or__="bitwise_or", __ror__="bitwise_or",
    __xor__="bitwise_xor", __rxor__="bitwise_xor", __eq__="eq", __ne__="ne", __lt__="lt",
    __le__="le", __gt__="gt", __ge__="ge", __getitem__="getitem", __setitem__="setitem")

_REFLECTED = ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__")


def _reflected(name, fn):
    """The reflected operator `name` over the op `fn`: its self must be a Tensor, as the
    method descriptor torch's is checks (`Tensor.__radd__(2, t)` raises)."""
    def op(self, *args, **kwargs):
        if not isinstance(self, Tensor):
            raise TypeError(f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't "
                            f"apply to a '{type(self).__name__}' object")
        return fn(self, *args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


def _tensor_new(self, *args, **kwargs):
    """Tensor.new, torch's legacy constructor in this tensor's dtype: sizes, data, a tensor
    of that dtype (an alias of it, a view), or nothing (an empty tensor)."""
    out = _legacy(self.dtype, args, kwargs)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return call_op(S.ALIAS, (args[0],))
    return out


def _device_method(kind, label, unavailable):
    """Tensor.xpu / .mtia / .ipu: a copy on that device, which eagergrad's jax never has
    (torch's errors: its argument's, then the missing backend's)."""
    def method(self, *args, **kwargs):
        if len(args) > 2:
            raise TypeError(f"{kind}() takes from 0 to 2 positional arguments but {len(args)} "
                            "were given")
        for k in kwargs:
            if k not in ("device", "non_blocking", "memory_format"):
                raise TypeError(f"{kind}() got an unexpected keyword argument '{k}'")
        dev = args[0] if args else kwargs.get("device")
        if dev is not None:
            if isinstance(dev, int) and not isinstance(dev, bool) and dev < 0:
                raise RuntimeError("Device index must not be negative")
            if not isinstance(dev, (int, str, _device)):
                raise TypeError(f"{kind}(): argument 'device' (position 1) must be torch.device, "
                                f"not {type(dev).__name__}")
            if _device(dev).type != kind:  # (an int: torch's accelerator error without one)
                raise RuntimeError(f"Invalid device, must be {label} device")
        raise unavailable()
    method.__name__ = method.__qualname__ = kind
    return method


def _bind():
    # the engine's (hooks, edges), views', creation's (legacy constructor, pickling),
    # autograd's
    for f in (_graph._edge, _graph._grad_accumulator, _graph.retain_grad,
              _graph._attach_retain, _graph.register_hook,
              _graph.register_post_accumulate_grad_hook):
        setattr(Tensor, f.__name__, f)
    Tensor._sync_view = _sync_view
    Tensor.__new__ = staticmethod(_legacy_new)
    Tensor.new = _tensor_new
    Tensor.__reduce_ex__ = _reduce_ex
    Tensor.backward = _tensor_backward

    # the ops as methods and Python operators
    skip = {"cat", "concat", "concatenate", "stack"}
    for name, fn in F.items():
        if name not in skip and name in TENSOR_ATTRIBUTES and not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    for name in INPLACE:
        if name + "_" in TENSOR_ATTRIBUTES:
            setattr(Tensor, name + "_", _inplace_method(F[name]))
    Tensor.zero_ = _inplace_method(_zero)
    Tensor.fill_ = _inplace_method(_fill)
    Tensor.copy_ = lambda self, src, non_blocking=False: inplace(self, _copy, src)
    Tensor.sum_to_size = S._sum_to_size
    Tensor.where = _method_where
    Tensor.T = property(S._T)
    Tensor.mT = property(S._mT)
    Tensor.mH = property(S.adjoint)
    Tensor.H = property(S._H)
    Tensor.real = property(_real)
    Tensor.imag = property(_imag)
    Tensor.new_zeros = _new(0)
    Tensor.new_ones = _new(1)
    Tensor.new_empty = _new(None)  # (torch's fill with deterministic algorithms on)
    Tensor.new_empty_strided = new_empty_strided
    Tensor.new_full = _new_full
    Tensor.new_tensor = _new_tensor
    for name, dt in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                     ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                     ("short", D.int16), ("char", D.int8), ("bool", D.bool_), ("byte", D.uint8),
                     ("cfloat", D.complex64), ("cdouble", D.complex128)):
        setattr(Tensor, name, _cast(dt))
    for name, key in _OPERATORS.items():
        setattr(Tensor, name, _reflected(name, F[key]) if name in _REFLECTED else F[key])
    Tensor.__iadd__, Tensor.__isub__, Tensor.__imul__ = Tensor.add_, Tensor.sub_, Tensor.mul_
    Tensor.__itruediv__, Tensor.__ifloordiv__ = Tensor.div_, Tensor.floor_divide_
    Tensor.__imod__, Tensor.__ipow__ = Tensor.remainder_, Tensor.pow_
    Tensor.__rtruediv__, Tensor.__rfloordiv__, Tensor.__rmod__ = _rdiv, _rfloordiv, _rmod
    Tensor.__rdiv__ = _rdiv  # (torch.Tensor.__rdiv__ is __rtruediv__)
    Tensor.__rpow__, Tensor.__rmatmul__ = _rpow, _rmatmul
    Tensor.__pos__ = lambda s: s

    # the in-place samplers (normal_, uniform_, cauchy_, random_, bernoulli_, ...)
    for name, fn in INPLACE_SAMPLERS.items():
        setattr(Tensor, name, fn)
    Tensor.stft, Tensor.istft = stft, istft
    Tensor.xpu = _device_method("xpu", "xpu", lambda: AssertionError(_NO_XPU))
    Tensor.mtia = _device_method("mtia", "MTIA", lambda: AssertionError(_NO_MTIA))
    Tensor.ipu = _device_method(
        "ipu", "ipu", lambda: RuntimeError("PyTorch is not linked with support for ipu devices"))
    for name, fn in _STORAGE_METHODS.items():  # (untyped_storage, storage, data_ptr, ...)
        setattr(Tensor, name, fn)


_bind()

# torch's module-level in-place functions (torch.relu_(x)) over the methods Tensor has,
# made before the absent attributes are marked (hasattr is True for those after)
INPLACE_TORCH_FUNCTIONS = {n: _inplace_function(n) for n in INPLACE_FUNCTIONS
                           if hasattr(Tensor, n)}
mark_missing_tensor_attributes(Tensor)
