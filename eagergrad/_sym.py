"""torch's sym_* helpers (torch.sym_max, sym_float, ...). torch writes them for symbolic
sizes under tracing; eagergrad has no symbolic sizes, so they compute on numbers (Python
and numpy numbers, 0-d tensors where torch's turn them into numbers) with torch's rules:
sym_max/sym_min give a float when either argument is one.

>>> import eagergrad as torch
>>> torch.sym_max(2, 3.0), torch.sym_int(2.7), torch.sym_ite(False, 1, 2)
(3.0, 2, 2)
"""
import builtins
import math

import numpy as np

__all__ = ["sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_sum"]

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


sym_sqrt.__name__ = sym_sqrt.__qualname__ = "_sym_sqrt"  # (torch's name)
for _f in (sym_max, sym_min, sym_float, sym_int, sym_not, sym_sqrt, sym_sum, sym_ite):
    _f.__module__ = "eagergrad"
del _f
