"""Comparisons and logic (eq, lt, logical_*, bitwise_*, isnan, isinf, isfinite,
isclose, allclose, equal): never differentiable, results bool (bitwise ops: the promoted
dtype)."""
import jax.numpy as jnp

from ._args import as_t, promote
from ._table import defop, call_op
from .pointwise import _c, _cpu_kernel, _need_tensors, _run, _tensor_self


# ---- comparisons and logic (never differentiable) ---------------------------------------
def _cmp(name, fn, complex_error=None, number_self=False, tensors=False):
    """torch.<name>(input, other); input a Tensor (number_self: or a number when other is
    a Tensor), other a Tensor or a number (tensors: a Tensor)."""
    op = defop(name, lambda self, other, dtype: fn(self.astype(_c(dtype)), other.astype(_c(dtype))),
               inputs=("self", "other"), attrs=("dtype",), complex_error=complex_error)

    def f(input, other):
        if tensors:
            _need_tensors(name, input, other)
        else:
            _tensor_self(name, input, other, number_self)
        a, b = as_t(input), as_t(other)
        return _run(op, (a, b), (promote(a, b),))
    f.__name__ = name
    return f


eq = _cmp("eq", jnp.equal)
ne = _cmp("ne", jnp.not_equal)
lt = _cmp("lt", jnp.less, _cpu_kernel("lt_cpu"))
le = _cmp("le", jnp.less_equal, _cpu_kernel("le_cpu"))
gt = _cmp("gt", jnp.greater, _cpu_kernel("gt_cpu"))
ge = _cmp("ge", jnp.greater_equal, _cpu_kernel("ge_cpu"))
logical_and = _cmp("logical_and", jnp.logical_and, tensors=True)
logical_or = _cmp("logical_or", jnp.logical_or, tensors=True)
logical_xor = _cmp("logical_xor", jnp.logical_xor, tensors=True)
bitwise_and = _cmp("bitwise_and", jnp.bitwise_and, _cpu_kernel("bitwise_and_cpu"), True)
bitwise_or = _cmp("bitwise_or", jnp.bitwise_or, _cpu_kernel("bitwise_or_cpu"), True)
bitwise_xor = _cmp("bitwise_xor", jnp.bitwise_xor, _cpu_kernel("bitwise_xor_cpu"), True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
_LNOT = defop("logical_not", lambda self: jnp.logical_not(self))
_BNOT = defop("bitwise_not", lambda self: ~self)
_ISNAN = defop("isnan", jnp.isnan)
_ISINF = defop("isinf", jnp.isinf)
_ISFIN = defop("isfinite", jnp.isfinite)


def logical_not(input):
    return call_op(_LNOT, (input,))


def bitwise_not(input):
    if input.dtype.is_differentiable:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return call_op(_BNOT, (input,))


def isnan(input):
    return call_op(_ISNAN, (input,))


def isinf(input):
    return call_op(_ISINF, (input,))


def isfinite(input):
    return call_op(_ISFIN, (input,))


_ISCLOSE = defop("isclose", lambda self, other, rtol, atol, equal_nan, dtype:
                 jnp.isclose(self.astype(_c(dtype)), other.astype(_c(dtype)), rtol, atol,
                             equal_nan),
                 inputs=("self", "other"), attrs=("rtol", "atol", "equal_nan", "dtype"))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _need_tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.scalar_name} did not match {other.dtype.scalar_name}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not v >= 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    return _run(_ISCLOSE, (input, other), (rtol, atol, equal_nan, promote(input, other)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A Python bool (reads values: not for use on jax tracers)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same shape and elements (reads values)."""
    return input._shape == other._shape and bool(eq(input, other).all())
