"""In-place ops: the out-of-place op, then its result written into the tensor's storage.

Writing through a view scatters into the base array at the positions the view reads
(its index map: the view chain applied to an iota of the base). Autograd through
in-place ops on views (CopySlices) is the next issue's; until then it raises
NotImplementedError rather than give a wrong gradient.
"""
import jax
import jax.numpy as jnp

from ..engine.grad_mode import STATE
from ..tensor import Tensor

_index_maps = {}


def _index_map(chain, base_shape):
    key = (chain, base_shape)
    m = _index_maps.get(key)
    if m is None:
        n = 1
        for s in base_shape:
            n *= s
        a = jnp.arange(n, dtype=jnp.int64).reshape(base_shape)
        for f, i in chain:
            a = f(a) if i is None else f(a)[i]
        if not isinstance(a, jax.core.Tracer):
            _index_maps[key] = a
        m = a
    return m


@jax.jit
def _scatter(base, idx, value):
    return base.reshape(-1).at[idx.reshape(-1)].set(value.reshape(-1)).reshape(base.shape)


def scatter_into_base(base_arr, chain, value):
    return _scatter(base_arr, _index_map(chain, base_arr.shape), value)


def _can_cast(src, dst):
    if src.is_complex and not dst.is_complex:
        return False
    if src._kind == 2 and dst._kind < 2:
        return False
    if src._kind > 0 and dst._kind == 0:
        return False
    return True


def _type_word(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
            "float16": "Half", "bfloat16": "BFloat16", "uint8": "Byte", "int8": "Char",
            "int16": "Short"}[dt.name]


def inplace(self, fn, *args, **kwargs):
    """`self.op_(*args)`: run `fn(self, *args)` and write its result into self."""
    if self._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    record = STATE.grad and (self._rg or any(isinstance(a, Tensor) and a._rg for a in args))
    if not record:
        out = fn(self, *args, **kwargs)
        _check_cast(out, self)
        self._write(out._value)
        self._vc.v += 1
        return self
    if self.grad_fn is None and self._rg and self._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if self._base is not None:
        if self._base.grad_fn is None and self._base._rg:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        raise NotImplementedError("eagergrad does not implement autograd through in-place "
                                  "ops on views yet")
    snap = self.detach()           # the value before the write, with self's history
    snap._vc = type(self._vc)()
    snap._rg, snap.grad_fn, snap._out_nr = self._rg, self.grad_fn, self._out_nr
    snap._acc = self._acc
    out = fn(snap, *args, **kwargs)
    _check_cast(out, self)
    if out.dtype is not self.dtype:
        out = out.to(self.dtype)
    self._write(out._value)
    self._vc.v += 1
    self.grad_fn, self._out_nr, self._rg = out.grad_fn, out._out_nr, out._rg
    for s in getattr(out.grad_fn, "_saved", {}).values():
        if getattr(s, "_is_output", False):  # a saved result is now this tensor
            s._vc, s._version = self._vc, self._vc.v
    return self


def _check_cast(out, self):
    if out.dtype is not self.dtype and not _can_cast(out.dtype, self.dtype):
        raise RuntimeError(f"result type {_type_word(out.dtype)} can't be cast to the desired "
                           f"output type {_type_word(self.dtype)}")
