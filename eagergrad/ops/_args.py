"""Argument handling shared by the op wrappers: Python scalars as torch's wrapped
numbers, and torch's type promotion over tensors."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._cache import keyed, put_bounded
from ..creation import tensor
from ..tensor import Tensor, _make

_scalar_cache = {}


def wrapped(v, dt=None):
    """A Python number as a 0-dim "wrapped number" tensor: it takes part in type
    promotion only by its category, as torch's wrapped numbers do."""
    if dt is None:
        dt = D.scalar_dtype(v)
    key = (type(v), keyed(v), dt)
    arr = _scalar_cache.get(key)
    if arr is None:
        arr = jnp.asarray(v, dt.np)
        if not isinstance(arr, jax.core.Tracer):  # never keep a tracer past its trace
            put_bounded(_scalar_cache, key, arr, 4096)
    t = _make(arr)
    t._wrapped = True
    return t


def as_t(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return wrapped(x)
    if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__jax_array__") or \
            type(x).__module__.startswith("jax"):
        return _make(jnp.asarray(x))
    return tensor(x)


_prom_cache = {}


def promote(*ts):
    """torch.result_type over tensors (0-dim and wrapped numbers by category)."""
    if len(ts) == 2:  # fast paths for the common binary cases
        a, b = ts
        if not a._wrapped:
            if a.dtype is b.dtype and not b._wrapped:
                return a.dtype
            if b._wrapped and b.dtype._kind <= a.dtype._kind:
                return a.dtype
    # (the default dtype decides what a wrapped float or complex promotes to)
    key = (D._default[0], *[(t.dtype, 2 if t._wrapped else (1 if not t._shape else 0))
                            for t in ts])
    r = _prom_cache.get(key)
    if r is None:
        groups = ([], [], [])
        for d, g in key[1:]:
            groups[g].append(d)
        r = put_bounded(_prom_cache, key, D.result_type(*groups), 4096)
    return r


def float_of(dt):
    """The dtype a float-valued op computes in: integers and bool become the default."""
    return dt if dt.is_differentiable else D.get_default_dtype()


def result_type(a, b):
    return promote(as_t(a), as_t(b))


result_type.__module__ = "eagergrad"  # (torch.result_type's is "torch")


def no_out(out, name, dtype=None):
    """torch's `out=` keyword, which eagergrad does not implement: NotImplementedError (a
    RuntimeError, as torch's complaints about an `out` are) after the checks of torch's that
    come first; `dtype`: the dtype out must have (torch's message for another)."""
    if out is None:
        return
    for o in out if isinstance(out, (tuple, list)) else (out,):
        if dtype is not None and isinstance(o, Tensor) and o.dtype is not dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {dtype.cpp_name}, but got "
                               f"{o.dtype.cpp_name} instead")
    raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")
