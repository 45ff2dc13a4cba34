"""Tensor.apply_, map_ and map2_: a Python callable applied element by element on the
host, as torch's CPU loops (tensor_apply.cpp) do.

torch visits self's elements in the row-major order of its shape, reads each argument's
element from memory when it gets there, and stores the callable's result at once: with
an expanded self (several elements at one memory location), or an argument sharing self's
storage, later calls see earlier results; a conj view is read and written as its memory
holds it (its conj bit ignored). eagergrad does the same on a host copy of each storage:
a tensor's elements are found by reading its view chain on the positions of its storage
(`_positions`). The version counter does not move (torch writes through the data pointer)
and autograd sees nothing: a tensor requiring grad is refused, as torch does. Values are
read, so these run eagerly only, never on jax tracers.
"""
import operator

import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from .._mode import CAPTURING, FUNC
from .._storage import view_of
from ..tensor import Tensor


def apply_(self, callable, /):
    """Tensor.apply_: each element replaced by `callable(element)` (a Python number),
    in place, on the CPU; not for tensors requiring grad.

    >>> import eagergrad as torch
    >>> torch.tensor([1, 2, 3]).apply_(lambda v: v * 10)
    tensor([10, 20, 30])
    """
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    return _run("apply_", self, (), callable)


def map_(self, other, callable):
    """Tensor.map_: each element replaced by `callable(element, other's element)`, other
    broadcast to self's shape, in place, on the CPU.

    >>> import eagergrad as torch
    >>> torch.tensor([1.0, 2.0]).map_(torch.tensor([10.0, 20.0]), lambda a, b: a + b)
    tensor([11., 22.])
    """
    _tensor_arg("map_", other, "other", 1)
    if self.requires_grad or other.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    _same_type("map_", self, other, "'other'")
    return _run("map_", self, (other.expand(self._shape),), callable)


def map2_(self, x, y, callable):
    """Tensor.map2_: each element replaced by `callable(element, x's element, y's
    element)`, x and y broadcast to self's shape, in place, on the CPU.

    >>> import eagergrad as torch
    >>> torch.zeros(2).map2_(torch.ones(2), torch.tensor([2.0, 3.0]), lambda a, b, c: b * c)
    tensor([2., 3.])
    """
    _tensor_arg("map2_", x, "x", 1)
    _tensor_arg("map2_", y, "y", 2)
    if self.requires_grad or x.requires_grad or y.requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use "
                           "var.detach().map2_() instead.")
    _same_type("map2_", self, x, "argument 'x'")
    _same_type("map2_", self, y, "argument 'y'")
    return _run("map2_", self, (x.expand(self._shape), y.expand(self._shape)), callable)


def _tensor_arg(fn, v, name, pos):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


def _same_type(fn, self, other, what):
    if other.dtype is not self.dtype or other.device != self.device:
        raise TypeError(f"{fn}: expected {self.type()} for {what} (got {other.type()})")


def _run(name, self, others, fn):
    tensors = (self,) + others
    for t in tensors:
        if t.device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")
        if isinstance(t._storage.array, Tracer) or CAPTURING.n and FUNC.capture is not None:
            raise NotImplementedError(f"eagergrad does not implement {name} on a traced "
                                      "tensor (inside a torch.func transform or a jax trace)")
    buffers = {}  # id(storage) -> (storage, its host copy, flat)
    cells = []  # per tensor: (its elements' flat array, their positions in row-major order)
    for t in tensors:
        st = t._storage
        if id(st) not in buffers:
            buffers[id(st)] = (st, np.array(st.array).reshape(-1))
        flat = buffers[id(st)][1]
        if flat.dtype != t.dtype.np:  # a real or imaginary part: the storage as pairs
            flat = flat.view(t.dtype.np)
        cells.append((flat, _positions(t).reshape(-1)))
    out, at = cells[0]
    load = _LOAD[self.dtype._kind]
    store = _store_fn(self.dtype)
    try:
        for k in range(at.size):
            args = [load(a[p[k]]) for a, p in cells]
            with np.errstate(over="ignore"):
                out[at[k]] = store(fn(*args))
    finally:  # (the elements stored before an exception stay, as in torch's memory)
        if at.size:
            st, host = buffers[id(self._storage)]
            st.array = jnp.asarray(host.reshape(st.array.shape))
            st.generation += 1
    return self


def _positions(t):
    """The positions in its storage's (flattened) array of t's elements, shaped as t; for
    a real view of a complex storage (its real or imaginary part), in the storage read as
    (real, imaginary) pairs."""
    a = t._storage.array
    n = a.size
    if t._vchain is None:
        return np.arange(n).reshape(t._shape)
    if a.dtype == t.dtype.np:  # (complex: conj views keep the real part, the position)
        iota = jnp.arange(n, dtype=jnp.complex128 if jnp.iscomplexobj(a) else jnp.int64)
        return np.real(np.asarray(view_of(iota.reshape(a.shape), t._vchain))).astype(np.int64)
    if jnp.iscomplexobj(a) and not t.dtype.is_complex:
        k = jnp.arange(n, dtype=jnp.float64) * 2
        iota = (k + 1j * (k + 1)).astype(jnp.complex128).reshape(a.shape)
        # (a negated part, conj().imag, reads -position)
        return np.abs(np.asarray(view_of(iota, t._vchain))).astype(np.int64)
    raise NotImplementedError("eagergrad does not implement apply_, map_ or map2_ on a complex "
                              "view of a real tensor yet")


# torch's load_scalar: what the callable is given
_LOAD = {0: bool, 1: int, 2: float, 3: complex}
_INT_LIMITS = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1),
               "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}


def _double(obj):
    """CPython's PyFloat_AsDouble (torch's THPUtils_unpackDouble)."""
    if isinstance(obj, float):
        return float(obj)
    cls = type(obj)
    if not hasattr(cls, "__float__") and not hasattr(cls, "__index__"):
        raise TypeError(f"must be real number, not {cls.__name__}")
    return float(obj)


def _store_fn(dt):
    """torch's store_scalar for dtype dt: the callable's result as an element, with its
    checks and errors."""
    kind, name = dt._kind, dt.name
    if kind == 0:
        def store(obj):
            if isinstance(obj, float):
                return bool(obj)
            if isinstance(obj, complex):
                return obj != 0
            return bool(operator.index(obj))
        return store
    if kind == 1:
        lo, hi = _INT_LIMITS[name]
        bits = 8 * dt.itemsize

        def store(obj):
            if isinstance(obj, float):  # (c10::checked_convert from double: then truncated)
                d = float(obj)
                if d != d or d < lo or d > float(hi):
                    raise RuntimeError(f"value cannot be converted to type {name} without "
                                       "overflow")
                v = int(d)
            else:
                v = operator.index(obj)
                if not -2 ** 63 <= v < 2 ** 63:
                    raise ValueError("Overflow when unpacking long long")
                # (an unsigned type takes negative values down to -max, wrapping)
                if v > hi or (v < -hi if lo == 0 else v < lo):
                    raise RuntimeError(f"value cannot be converted to type {name} without "
                                       "overflow")
            v %= 1 << bits
            return v - (1 << bits) if lo and v > hi else v
        return store
    if kind == 2:
        if dt.itemsize < 4:  # (c10's Half and BFloat16 from double: through float)
            return lambda obj: np.float32(_double(obj))
        return lambda obj: dt.np.type(_double(obj))

    def store(obj):
        if isinstance(obj, complex):
            return obj
        if hasattr(type(obj), "__complex__"):
            return complex(obj)
        return complex(_double(obj))
    return store
