"""torch's sym_* helpers (torch.sym_max, sym_float, ...). torch writes them for symbolic
sizes under tracing; eagergrad has no symbolic sizes, so they compute on numbers (Python
and numpy numbers, 0-d tensors where torch's turn them into numbers) with torch's rules:
sym_max/sym_min give a float when either argument is one. SymInt, SymFloat and SymBool
are the classes of torch's symbolic numbers, for isinstance checks and type hints: no
eagergrad value is one.

>>> import eagergrad as torch
>>> torch.sym_max(2, 3.0), torch.sym_int(2.7), torch.sym_ite(False, 1, 2)
(3.0, 2, 2)
>>> isinstance(3, torch.SymInt), torch.sym_fresh_size(4)
(False, 4)
"""
import builtins
import math

import numpy as np

from .creation import tensor as _tensor
from .tensor import Tensor

__all__ = ["SymBool", "SymFloat", "SymInt", "sym_constrain_range",
           "sym_constrain_range_for_size", "sym_float", "sym_fresh_size", "sym_int", "sym_ite",
           "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum"]

_ALL = (np.integer, np.floating, int, float)
_FLOAT = (np.floating, float)


def _pair(fn, a, b):
    for v in (a, b):
        if not isinstance(v, _ALL):
            raise AssertionError(f"expected {_ALL}, got {type(v)}")
    if isinstance(a, _FLOAT) or isinstance(b, _FLOAT):
        return builtins.float(fn(a, b))
    return fn(a, b)


def sym_max(a, b):
    """max(a, b) of two ints or floats, a float if either is one."""
    return _pair(builtins.max, a, b)


def sym_min(a, b):
    """min(a, b) of two ints or floats, a float if either is one."""
    return _pair(builtins.min, a, b)


def sym_float(a):
    return builtins.float(a)


def sym_int(a):
    return builtins.int(a)


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of the numbers, given as arguments or as one list or tuple."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_ite(b, t, f):
    """`t if b else f`; b must be a bool, t and f of one type."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


# ---- symbolic numbers: eagergrad's sizes are ints, so nothing is a SymInt -------------
class _Symbolic:
    def __init__(self, node):
        raise NotImplementedError(
            f"eagergrad does not implement torch.{type(self).__name__}: it has no symbolic "
            "shapes (its sizes and numbers are plain Python numbers)")


class SymInt(_Symbolic):
    """torch's symbolic int (a size under torch.compile); in eager code only for isinstance
    checks and type hints.

    >>> import eagergrad as torch
    >>> isinstance(3, torch.SymInt)
    False
    """


class SymFloat(_Symbolic):
    """torch's symbolic float; in eager code only for isinstance checks and type hints."""


class SymBool(_Symbolic):
    """torch's symbolic bool; in eager code only for isinstance checks and type hints."""


# ---- the range constraints of torch.export, checked on plain numbers ------------------
_I64 = (-2 ** 63, 2 ** 63 - 1)
_OVERFLOW = "value cannot be converted to type int64_t without overflow"


def _type_name(v):
    t = type(v)
    return "Tensor" if isinstance(v, Tensor) else \
        t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _parse(name, args, kwargs):
    """(size, min, max) parsed as torch's `(Scalar size, *, int? min=None, int? max=None)`."""
    if len(args) > 1:
        raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
    if args:
        size, where = args[0], " (position 1)"
        if "size" in kwargs:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
    elif "size" in kwargs:
        size, where = kwargs["size"], ""
    else:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    ok = isinstance(size, (bool, int, float, complex, np.bool_, np.number)) or \
        (isinstance(size, Tensor) and size.dim() == 0 and not size.requires_grad)
    if not ok:
        raise TypeError(f"{name}(): argument 'size'{where} must be Number, not "
                        f"{_type_name(size)}")
    bounds = []
    for key in ("min", "max"):
        v = kwargs.get(key)
        if v is not None:
            if isinstance(v, (bool, np.bool_)) or not hasattr(v, "__index__"):
                raise TypeError(f"{name}(): argument '{key}' must be int, not {_type_name(v)}")
            v = v.__index__()
            if not _I64[0] <= v <= _I64[1]:
                raise ValueError("Overflow when unpacking long long")
        bounds.append(v)
    for key in kwargs:
        if key not in ("size", "min", "max"):
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return size, bounds[0], bounds[1]


def _as_long(size):
    """torch's Scalar.toLong(): a bool or an int as is, a float truncated, a complex by its
    real part when its imaginary part is 0; out of int64's range, torch's errors."""
    if isinstance(size, Tensor):
        size = size.item()
    if isinstance(size, (bool, np.bool_)):
        return int(size)
    if isinstance(size, (int, np.integer)):
        v = int(size)
        if v >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if v < _I64[0]:
            raise OverflowError("can't convert negative int to unsigned")
        if v > _I64[1]:  # (torch holds it as a uint64, which int64 cannot)
            raise RuntimeError(_OVERFLOW)
        return v
    if isinstance(size, (complex, np.complexfloating)):
        if size.imag != 0:
            raise RuntimeError(_OVERFLOW)
        size = size.real
    v = float(size)
    if not -2.0 ** 63 <= v < 2.0 ** 63:  # (NaN fails both)
        raise RuntimeError(_OVERFLOW)
    return int(v)


def _constrain(size, lo, hi):
    v = _as_long(size)
    lo = _I64[0] if lo is None else lo
    hi = _I64[1] if hi is None else hi
    if hi < lo:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={lo} max={hi}")
    if not lo <= v <= hi:
        raise RuntimeError(f"Invalid value range for {v} between [{lo}, {hi}].")


def sym_constrain_range(*args, **kwargs):
    """sym_constrain_range(size, *, min=None, max=None): check that the number `size` (as an
    int64, a float truncated) lies in [min, max]; torch's RuntimeError if it does not.

    >>> import eagergrad as torch
    >>> torch.sym_constrain_range(3, min=0, max=5)
    """
    size, lo, hi = _parse("sym_constrain_range", args, kwargs)
    _constrain(size, lo, hi)


def sym_constrain_range_for_size(*args, **kwargs):
    """sym_constrain_range_for_size(size, *, min=None, max=None): sym_constrain_range for a
    size: min defaults to 0, and a max must be above 2.

    >>> import eagergrad as torch
    >>> torch.sym_constrain_range_for_size(0)
    """
    size, lo, hi = _parse("sym_constrain_range_for_size", args, kwargs)
    if hi is not None and hi <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: "
                           f"{hi}")
    _constrain(size, 0 if lo is None else lo, hi)


def sym_fresh_size(expr):
    """A fresh size of value `expr`: eagerly, torch's `torch.tensor(expr).item()`."""
    return _tensor(expr).item()


sym_sqrt.__name__ = sym_sqrt.__qualname__ = "_sym_sqrt"  # (torch's name)
for _f in (sym_max, sym_min, sym_float, sym_int, sym_not, sym_sqrt, sym_sum, sym_ite,
           SymInt, SymFloat, SymBool, sym_constrain_range, sym_constrain_range_for_size,
           sym_fresh_size):
    _f.__module__ = "eagergrad"
del _f
