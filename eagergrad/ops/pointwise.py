"""Pointwise arithmetic with torch's promotion: add, sub, rsub, mul, div, remainder,
floor_divide, pow, clamp, maximum/minimum and where, and the helpers the other pointwise
files share (traced scalars, scalar checks, broadcasting errors). Unary math is in unary.py,
comparisons and logic in compare.py. Formulas are torch's derivatives.yaml entries
(conjugates for complex inputs)."""
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes as D
from .._cache import KeyedFloat, keyed
from .._shapes import conj_scalar as _conj
from ._args import as_t, float_of, promote
from ._table import Baked, defop, call_op
from ..tensor import Tensor, _zeros_meta


def _c(dt):
    return dt.np


# ---- Python numbers as traced kernel arguments --------------------------------------------
# NOTE [traced scalars]: the Python numbers an op takes that vary from call to call (pow's
# exponent, clamp's bounds, add's alpha, the activations' slopes and thresholds, fill_'s
# value) are `dynamic` attributes: the kernel takes them as traced scalars, so that one
# executable serves every value (a compile costs 10-100 ms; `x.clamp(min=lr * k)` in a
# loop must not compile every step). A traced Python number keeps its weak type, so the
# kernel's promotion is the one it had with the number as a constant. The executable's
# key keeps of each number its Python type (int, float, complex and bool trace to
# different dtypes) and, through OpDef.static_of, whatever the kernel's structure depends
# on: pow's exponents that XLA (and torch) compute specially, add's alpha == 1. The node
# keeps the actual values (its formulas read them).
_SCALAR_TYPES = {bool: bool, int: int, float: float, KeyedFloat: float, complex: complex,
                 type(None): None}


def scalar_type(v):
    """A dynamic number's part of an executable's key: its Python type (None: None)."""
    return _SCALAR_TYPES.get(v.__class__, v.__class__)


def scalar_types(attrs):
    """static_of for an op whose attributes are all dynamic numbers."""
    get = _SCALAR_TYPES.get
    return tuple([get(v.__class__, v.__class__) for v in attrs])


# A traced number must give what the number as a constant gave, bit for bit, so the
# kernels spell out what XLA's simplifier does with a constant: x * 1 is x and x * -1 is
# -x (a product would flush a subnormal x to 0: XLA:CPU runs with FTZ/DAZ), max(x, -inf)
# and min(x, inf) are x, x / c is x * (1 / c) (not bf16's).
def times(v, s):
    """v * s, s a traced scalar of v's dtype, bitwise as v * s for a constant s."""
    return jnp.where(s == 1, v, jnp.where(s == -1, -v, v * s))


def over(v, s):
    """v / s, s a traced scalar of v's dtype, bitwise as v / s for a constant s."""
    return v / s if v.dtype == jnp.bfloat16 else times(v, 1 / s)


def _at_least(x, lo):  # jnp.maximum(x, lo), lo traced (x's dtype)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.maximum(x, lo)
    return jnp.where(lo == -jnp.inf, x, jnp.maximum(x, lo))


def _at_most(x, hi):  # jnp.minimum(x, hi), hi traced (x's dtype)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.minimum(x, hi)
    return jnp.where(hi == jnp.inf, x, jnp.minimum(x, hi))


# the C++ type torch's checked_convert names in its overflow error
_CONVERT_NAMES = {D.uint8: "uint8_t", D.int8: "int8_t", D.int16: "int16_t", D.int32: "int",
                  D.int64: "int64_t"}


_INT64_MIN, _INT64_END = -2 ** 63, 2 ** 63


def check_int64(v):
    """torch's argument parser: an int past int64 raises (before any dtype is known)."""
    if v.__class__ is int and not _INT64_MIN <= v < _INT64_END:
        raise OverflowError("int too big to convert")


def check_scalar(v, dt):
    """torch's c10::checked_convert of a Python number to an integral dtype: out of range,
    NaN, infinite, or complex with an imaginary part raises torch's error. (A traced
    conversion would wrap or saturate where the number as a constant raised or wrapped;
    torch raises.) Ints in [-255, 0) fit uint8 (two's complement, as torch). An int past
    int64 raises the OverflowError of torch's argument parser, whatever the dtype."""
    if v.__class__ is int and not _INT64_MIN <= v < _INT64_END:
        raise OverflowError("int too big to convert")
    if dt._kind != 1 or v is None or isinstance(v, (bool, np.bool_)):
        return
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        bad = v.imag != 0
        v = v.real
    else:
        bad = False
    info = np.iinfo(dt.np)
    if isinstance(v, numbers.Integral):
        v = int(v)
        lo = -info.max if info.min == 0 else info.min
        bad = bad or not lo <= v <= info.max
    else:
        v = float(v)
        bad = bad or not info.min <= v <= info.max  # (NaN and infinities too)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAMES[dt]} without "
                           "overflow")


# ---- binary arithmetic (dtype is the promoted result type) --------------------------
def _scaled(b, alpha, one):
    """other * alpha in add and sub's kernels (alpha traced unless it is 1: then none)."""
    return b if one else b * alpha


def _alpha_key(attrs):
    """add/sub/rsub's static_of: (dtype, alpha == 1 (no product then), alpha's type) in
    dtype's place; alpha traced, or baked in when it is 1 (the kernel ignores it)."""
    dt, alpha = attrs
    if alpha.__class__ is int and alpha == 1:  # (a + b: every call, the hot path)
        k = _ALPHA_ONE.get(dt)
        if k is None:
            k = _ALPHA_ONE[dt] = ((dt, True, int), Baked(1))
        return k
    one = alpha == 1
    return ((dt, one, scalar_type(alpha)), Baked(alpha) if one else None)


_ALPHA_ONE = {}  # dtype -> _alpha_key((dtype, 1))


# (`dtype`, in the kernels, is _alpha_key's triple)
ADD = defop("add", lambda self, other, dtype, alpha:
            (self.astype(_c(dtype[0])) + _scaled(other.astype(_c(dtype[0])), alpha, dtype[1])
             ).astype(_c(dtype[0])),
            inputs=("self", "other"), attrs=("dtype", "alpha"), dynamic=("alpha",),
            self=lambda grad: grad,
            other=lambda grad, alpha: grad if alpha == 1 else grad * _conj(alpha))
SUB = defop("sub", lambda self, other, dtype, alpha:
            (self.astype(_c(dtype[0])) - _scaled(other.astype(_c(dtype[0])), alpha, dtype[1])
             ).astype(_c(dtype[0])),
            inputs=("self", "other"), attrs=("dtype", "alpha"), dynamic=("alpha",),
            self=lambda grad: grad,
            other=lambda grad, alpha: -grad if alpha == 1 else -grad * _conj(alpha))
RSUB = defop("rsub", lambda self, other, dtype, alpha:
             (other.astype(_c(dtype[0])) - _scaled(self.astype(_c(dtype[0])), alpha, dtype[1])
              ).astype(_c(dtype[0])),
             inputs=("self", "other"), attrs=("dtype", "alpha"), node="RsubBackward0",
             dynamic=("alpha",),
             self=lambda grad, alpha: -grad if alpha == 1 else -grad * _conj(alpha),
             other=lambda grad: grad)
RSUB_S = defop("rsub_scalar", lambda self, other, dtype, alpha:
               (other.astype(_c(dtype[0])) - _scaled(self.astype(_c(dtype[0])), alpha, dtype[1])
                ).astype(_c(dtype[0])),
               inputs=("self", "other"), attrs=("dtype", "alpha"), node="RsubBackward1",
               dynamic=("alpha",),
               self=lambda grad, alpha: -grad if alpha == 1 else -grad * _conj(alpha))
for _op in (ADD, SUB, RSUB, RSUB_S):
    _op.static_of = _alpha_key
del _op


def _mul(self, other, dtype):
    a, b = self.astype(_c(dtype)), other.astype(_c(dtype))
    # XLA rewrites x * convert(mask) as select(mask, x, 0), which gives 0 for inf * False
    # where IEEE (and torch) give NaN: keep x * 0 on the unselected side
    if dtype is not _bool:
        if self.dtype == jnp.bool_:
            return jnp.where(self, b, b * 0)
        if other.dtype == jnp.bool_:
            return jnp.where(other, a, a * 0)
    return a * b


MUL = defop("mul", _mul, inputs=("self", "other"), attrs=("dtype",),
            self=lambda grad, other: grad * other.conj(),
            other=lambda grad, self: grad * self.conj())
DIV = defop("div", lambda self, other, dtype: self.astype(_c(dtype)) / other.astype(_c(dtype)),
            inputs=("self", "other"), attrs=("dtype",),
            self=lambda grad, other: grad / other.conj(),
            other=lambda grad, self, other: -grad * ((self / other) / other).conj())
REMAINDER = defop("remainder", lambda self, other, dtype: _remainder(self, other, dtype),
                  inputs=("self", "other"), attrs=("dtype",), node="RemainderBackward1",
                  self=lambda grad: grad,
                  other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"))
REMAINDER_S = defop("remainder_scalar", lambda self, other, dtype: _remainder(self, other, dtype),
                    inputs=("self", "other"), attrs=("dtype",), node="RemainderBackward0",
                    self=lambda grad: grad)


def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _zeros(grad):
    """torch's zeros_like(grad) in a formula: a constant, so under create_graph the
    gradient does not require grad (as torch's does not)."""
    return _zeros_meta(grad._shape, grad.dtype)


def _run(op, tensors, attrs=()):
    """`run` for ops of several tensors: jax's broadcasting error becomes torch's."""
    try:
        return call_op(op, tensors, attrs)
    except (ValueError, TypeError):
        _check_broadcast(*[t._shape for t in tensors])
        raise


def _check_broadcast(*shapes):
    out = list(shapes[0])
    for shape in shapes[1:]:
        n = max(len(out), len(shape))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of "
                                   f"tensor b ({b[i]}) at non-singleton dimension {i}")
        out = [x if x != 1 else y for x, y in zip(a, b)]


# torch records these with a node named NotImplemented that fails in backward
FLOOR_DIVIDE = defop("floor_divide", lambda self, other, dtype: _floor_divide(self, other, dtype),
                     inputs=("self", "other"), attrs=("dtype",), node="NotImplemented",
                     self=_not_implemented("floor_divide"),
                     other=_not_implemented("floor_divide"))
FLOOR_DIVIDE_S = defop("floor_divide_scalar", lambda self, other, dtype:
                       _floor_divide(self, other, dtype), inputs=("self", "other"),
                       attrs=("dtype",), node="NotImplemented",
                       self=_not_implemented("floor_divide"))
REMAINDER_RS = defop("remainder_rscalar", lambda self, other, dtype:
                     _remainder(self, other, dtype), inputs=("self", "other"),
                     attrs=("dtype",), node="NotImplemented",
                     other=_not_implemented("remainder"))


# fmod-based, as torch's (and numpy's): -7 // 0.7 is -11 and 1 % 0.1 is 0.0999...,
# where floor(a / b) would give -10 and 0
def _remainder(a, b, dt):
    return jnp.remainder(a.astype(_c(dt)), b.astype(_c(dt)))


def _floor_divide(a, b, dt):
    return jnp.floor_divide(a.astype(_c(dt)), b.astype(_c(dt)))


def _div_mode(self, other, dtype, rounding_mode):
    if rounding_mode == "floor":
        return _floor_divide(self, other, dtype)
    a, b = jnp.broadcast_arrays(self.astype(_c(dtype)), other.astype(_c(dtype)))
    return jnp.trunc(a / b) if dtype.is_differentiable else lax.div(a, b)


DIV_MODE = defop("div_mode", _div_mode, inputs=("self", "other"),
                 attrs=("dtype", "rounding_mode"), node="DivBackward2",
                 self=_zeros, other=_zeros)


def _binary(op, a, b, *extra):
    if not isinstance(a, Tensor):
        a = as_t(a)
    if not isinstance(b, Tensor):
        b = as_t(b)
    try:  # (_run's, inlined: every a + b comes here)
        return call_op(op, (a, b), (promote(a, b), *extra))
    except (ValueError, TypeError):
        _check_broadcast(a._shape, b._shape)
        raise


def add(input, other, *, alpha=1, out=None):
    """torch.add: input + alpha * other.

    >>> import eagergrad as torch
    >>> torch.add(torch.tensor([1.0]), torch.tensor([2.0]), alpha=3)
    tensor([7.])
    """
    if out is not None:
        _no_out("add")
    if alpha == 1 and type(alpha) is int:
        return _binary(ADD, input, other, alpha)
    a, b = as_t(input), as_t(other)
    dt = promote(a, b)
    _check_alpha(dt, alpha)
    return _run(ADD, (a, b), (dt, alpha))


def _check_alpha(dt, alpha):
    """torch's alpha_check: alpha's kind must fit the result dtype."""
    if isinstance(alpha, bool):
        if dt is not _bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dt.is_differentiable and not isinstance(alpha, int):
        raise RuntimeError("For integral input tensors, argument alpha must not be a "
                           "floating point number.")
    if isinstance(alpha, complex) and not dt.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    check_scalar(alpha, dt)


def sub(input, other, *, alpha=1, out=None):
    if out is not None:
        _no_out("sub")
    a, b = as_t(input), as_t(other)
    _check_bool_sub(a, b)
    dt = promote(a, b)
    _check_alpha(dt, alpha)
    return _run(SUB, (a, b), (dt, alpha))


def _check_bool_sub(a, b):
    if a.dtype is _bool or b.dtype is _bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead."
                           if a.dtype is b.dtype else
                           "Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def rsub(input, other, *, alpha=1):
    _tensor_self("rsub", input, other)
    a, b = as_t(input), as_t(other)
    _check_bool_sub(a, b)
    dt = promote(a, b)
    _check_alpha(dt, alpha)
    return _run(RSUB_S if b._wrapped else RSUB, (a, b), (dt, alpha))


def mul(input, other, *, out=None):
    if out is not None:
        _no_out("mul")
    return _binary(MUL, input, other)


def div(input, other, *, rounding_mode=None, out=None):
    if out is not None:
        _no_out("div")
    a, b = as_t(input), as_t(other)
    dt = promote(a, b)
    if rounding_mode is None:
        return _run(DIV, (a, b), (float_of(dt),))
    if rounding_mode in ("floor", "trunc"):
        _check_int_divisor(dt, b, f"div_{rounding_mode}_cpu")
        return _run(DIV_MODE, (a, b), (dt, rounding_mode))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


def remainder(input, other):
    _tensor_self("remainder", input, other, number_self=True)
    a, b = as_t(input), as_t(other)
    dt = promote(a, b)
    _check_int_divisor(dt, b, "remainder_cpu")
    op = REMAINDER_RS if a._wrapped else (REMAINDER_S if b._wrapped else REMAINDER)
    return _run(op, (a, b), (dt,))


def floor_divide(input, other):
    a, b = as_t(input), as_t(other)
    dt = promote(a, b)
    _check_int_divisor(dt, b, "div_floor_cpu")
    return _run(FLOOR_DIVIDE_S if b._wrapped else FLOOR_DIVIDE, (a, b), (dt,))


def _check_int_divisor(dt, b, kernel):
    """torch's integer division kernels: no Bool, and a zero divisor raises (this reads
    the divisor's values; on jax tracers nothing is checked)."""
    if dt is _bool or dt.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")
    if dt.is_differentiable:
        return
    v = b._value
    if isinstance(v, jax.core.Tracer):
        return
    if b._wrapped or b.numel() == 1:
        zero = b.item() == 0
    else:
        zero = not bool(jnp.all(v != 0))
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _no_out(name):
    raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")


# ---- pow ------------------------------------------------------------------------------
def _pow_self(grad, self, exponent):
    return where(exponent == 0, 0.0, grad * (exponent * self.pow(exponent - 1)).conj())


def _pow_exp(grad, base, exponent, result):
    # torch: a complex exponent counts as nonnegative when it is real and >= 0
    nonneg = ((exponent.imag == 0) & (exponent.real >= 0) if exponent.is_complex()
              else exponent >= 0)
    cond = (base == 0) & nonneg
    # an integer base (a Python int, an int tensor) takes its log in the result's dtype, as
    # torch's (its Scalar log is double; its int tensor base is cast to the promoted dtype)
    log = (base if base.dtype is result.dtype else base.to(result.dtype)).log()
    return grad * where(cond, 0.0, (result * log).conj())


# XLA computes a power with these constant exponents otherwise (x * x for 2, a sqrt for
# 0.5, ...), as torch's kernel does: they stay constants (part of the key), every other
# exponent is traced (NOTE [traced scalars])
_POW_SPECIAL = frozenset((0, 1, 2, 3, -1, -2, 0.5, -0.5))
_TINY = float(np.finfo(np.float64).tiny)


def _subnormal(e):  # (XLA:CPU flushes a traced subnormal to 0; as a constant it stays)
    return e != 0 and -_TINY < e < _TINY  # (abs is torch.abs here)


def _pow_const(e):
    """Whether a float exponent stays a constant: a special value, or subnormal."""
    return e in _POW_SPECIAL or _subnormal(e)


def _pow_key(attrs):
    """POW_S's static_of: (dtype, how the kernel takes the exponent) in dtype's place:
    "int" (a traced int: binary exponentiation), "float" or "complex" (traced, lax.pow),
    or (its type, its value) for a constant: special values, bools, ints in [-4, 4]
    (x ** 2: straight-line products) and numbers of other types."""
    e, dt = attrs
    t = type(e)
    if t is int:
        kind = (int, e) if -4 <= e <= 4 else "int"
    elif t is float or t is KeyedFloat:
        kind = (float, e) if _pow_const(e) else "float"
    elif t is complex:
        const = _pow_const(e.real) if e.imag == 0 else _subnormal(e.real) or \
            _subnormal(e.imag)
        kind = (complex, e) if const else "complex"
    else:
        kind = (t, keyed(e))
    return (None if kind.__class__ is str else Baked(e), (dt, kind))


def _int_pow_loop(x, n):
    """x ** n for a traced integer n, bitwise lax.integer_pow(x, n): the same binary
    exponentiation (the same products in the same order), in a loop over n's bits."""
    m = jnp.abs(n).astype(jnp.uint64)  # (|-2**63| wraps to 2**63 as uint64: right)

    def body(c):
        acc, base, m, started = c
        bit = (m & 1) == 1
        acc = jnp.where(bit, jnp.where(started, acc * base, base), acc)
        return acc, base * base, m >> 1, started | bit

    acc = lax.while_loop(lambda c: c[2] > 0, body,
                         (jnp.ones_like(x), x, m, jnp.zeros((), bool)))[0]
    if not jnp.issubdtype(x.dtype, jnp.inexact):  # (integers: pow's front-end takes n >= 0)
        return acc
    return jnp.where(n < 0, lax.div(jnp.ones_like(acc), acc), acc)


@jax.custom_jvp
def _int_pow_inexact(x, n):
    return _int_pow_loop(x, n)


@_int_pow_inexact.defjvp
def _int_pow_jvp(primals, tangents):
    # lax.integer_pow's rule, n * x ** (n - 1) (n != 0 here): a kernel run under jax.grad
    # (jaxify) has no reverse mode through the loop, but has one through this
    x, n = primals
    return _int_pow_inexact(x, n), tangents[0] * (n.astype(x.dtype) * _int_pow_inexact(x, n - 1))


def _int_pow(x, n):
    n = jnp.asarray(n, jnp.int64)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return _int_pow_inexact(x, n)
    return _int_pow_loop(x, n)


def _pow_s_k(self, exponent, dtype):
    dt, kind = dtype  # (_pow_key)
    x = self.astype(_c(dt))
    if kind == "int":
        r = _int_pow(x, exponent)
    elif kind.__class__ is tuple:  # a constant
        r = jnp.power(x, kind[1])
    else:
        r = jnp.power(x, exponent)
    return r.astype(_c(dt))


POW_S = defop("pow", _pow_s_k, attrs=("exponent", "dtype"), dynamic=("exponent",),
              self=lambda grad, self, exponent:
              _zeros(grad) if exponent == 0 else grad * (exponent * self.pow(exponent - 1)).conj())
POW_S.static_of = _pow_key


def _int_power(b, e):
    """torch's integer pow: a negative exponent gives 0, except for bases 1 and -1."""
    p = jnp.power(b, jnp.maximum(e, 0))
    if not jnp.issubdtype(b.dtype, jnp.signedinteger):
        return p
    neg = jnp.where(b == 1, 1, jnp.where(b == -1, 1 - 2 * (e & 1), 0)).astype(b.dtype)
    return jnp.where(e < 0, neg, p)


def _power(b, e, dtype):
    b, e = b.astype(_c(dtype)), e.astype(_c(dtype))
    if jnp.issubdtype(b.dtype, jnp.integer):
        return _int_power(b, e)
    r = jnp.power(b, e)
    if jnp.iscomplexobj(r):  # torch's exp(e * log(0)) at a zero base, by the sign of Re e
        nan = jnp.array(complex(math.nan, math.nan), r.dtype)
        at_zero = jnp.where(e.real > 0, 0, jnp.where(e.real < 0, complex(math.inf, math.nan),
                                                      nan)).astype(r.dtype)
        r = jnp.where(b == 0, at_zero, r)
    return r


POW_T = defop("pow_tensor", lambda self, exponent, dtype: _power(self, exponent, dtype),
              inputs=("self", "exponent"), attrs=("dtype",), node="PowBackward1",
              self=_pow_self,
              exponent=lambda grad, self, exponent, result: _pow_exp(grad, self, exponent, result))
POW_ST = defop("pow_scalar", lambda self, exponent, dtype: _power(self, exponent, dtype),
               inputs=("self", "exponent"), attrs=("dtype",), node="PowBackward2",
               exponent=lambda grad, self, exponent, result: _pow_exp(grad, self, exponent,
                                                                      result))


def pow(input, exponent):
    """torch.pow with tensor or scalar base and exponent."""
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):  # (pow(Number, Number) has no overload)
            raise TypeError(f"pow() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(exponent).__name__})")
        e = exponent
        b = as_t(input)
        return call_op(POW_ST, (b, e), (_pow_dtype(b, e),))
    if isinstance(exponent, Tensor):
        e = exponent
        return _run(POW_T, (input, e), (_pow_dtype(input, e),))
    check_int64(exponent)
    dt = promote(input, as_t(exponent))
    if not dt.is_differentiable and type(exponent) is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    check_scalar(exponent, dt)
    return call_op(POW_S, (input,), (exponent, dt))


def _pow_dtype(b, e):
    dt = promote(b, e)
    if dt is _bool:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    return dt


# ---- torch's errors and checks (shared with unary.py and compare.py) --------------------
def _cpu_kernel(kernel):
    """torch's error for a CPU kernel not compiled for a dtype: `"floor_cpu" not ...`."""
    return NotImplementedError, f"\"{kernel}\" not implemented for '{{}}'"


_CLAMP_COMPLEX = NotImplementedError, "clamp is not supported for complex types"


def _tensor_self(name, input, other, number_self=False):
    """torch's binding of `name(input, other)`: input must be a Tensor (`number_self`: or a
    number with a Tensor other, the (Number self, Tensor other) overload)."""
    if isinstance(input, Tensor) or number_self and isinstance(other, Tensor):
        return
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__})")


def _need_tensors(name, input, other):
    for arg, pos, x in (("input", 1, input), ("other", 2, other)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")


# ---- clamp, maximum/minimum, where ------------------------------------------------------
def _clamp_k(self, min, max):
    if min is not None:
        self = _at_least(self, jnp.asarray(min, self.dtype))
    if max is not None:
        self = _at_most(self, jnp.asarray(max, self.dtype))
    return self


def _clamp_grad(grad, self, min, max):
    if min is not None and max is not None:
        return where((self >= min) & (self <= max), grad, 0.0)
    if min is not None:
        return where(self >= min, grad, 0.0)
    return where(self <= max, grad, 0.0)


# the bounds are traced (NOTE [traced scalars]); a missing one (None) is the kernel's
# structure: the key has None there, as it has each bound's type
CLAMP = defop("clamp", _clamp_k, attrs=("min", "max"), node="ClampBackward1",
              complex_error=_CLAMP_COMPLEX, dynamic=("min", "max"), self=_clamp_grad)
CLAMP_MIN = defop("clamp_min", lambda self, min: _clamp_k(self, min, None), attrs=("min",),
                  complex_error=_CLAMP_COMPLEX, dynamic=("min",),
                  self=lambda grad, self, min: where(self >= min, grad, 0.0))
CLAMP_MAX = defop("clamp_max", lambda self, max: _clamp_k(self, None, max), attrs=("max",),
                  complex_error=_CLAMP_COMPLEX, dynamic=("max",),
                  self=lambda grad, self, max: where(self <= max, grad, 0.0))
for _op in (CLAMP, CLAMP_MIN, CLAMP_MAX):
    _op.static_of = scalar_types
del _op
CLAMP_T = defop("clamp_tensor", lambda self, min, max: jnp.minimum(jnp.maximum(self, min), max),
                inputs=("self", "min", "max"), node="ClampBackward0",
                complex_error=_CLAMP_COMPLEX,
                self=lambda grad, self, min, max: where((self >= min) & (self <= max), grad, 0.0),
                # torch's clamp_backward_min_max: where min > max, max takes the gradient
                min=lambda grad, self, min, max: where((self < min) & (min < max), grad, 0.0),
                max=lambda grad, self, min, max: where((self > max) | (max < min), grad, 0.0))


def clamp(input, min=None, max=None):
    """torch.clamp; gradient flows where min <= x <= max (inclusive), as torch."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    check_int64(min)
    check_int64(max)
    dt = _clamp_dtype(input, min, max)
    if dt is not input.dtype:  # an integer tensor with float bounds: float (not recorded)
        input = input.to(dt)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = as_t(min if min is not None else -math.inf).to(dt)
        hi = as_t(max if max is not None else math.inf).to(dt)
        return call_op(CLAMP_T, (input, lo, hi))
    check_scalar(min, dt)
    check_scalar(max, dt)
    return call_op(CLAMP, (input,), (keyed(min), keyed(max)))


def _clamp_dtype(input, min, max):
    """clamp's result dtype: torch.result_type over input and the bounds given."""
    if min is None and max is None:
        return input.dtype
    return promote(input, *[as_t(b) for b in (min, max) if b is not None])


clip = clamp


def clamp_min(input, min):
    if isinstance(min, Tensor):
        return clamp(input, min)
    check_int64(min)
    dt = _clamp_dtype(input, min, None)
    check_scalar(min, dt)
    return call_op(CLAMP_MIN, (input if dt is input.dtype else input.to(dt),), (keyed(min),))


def clamp_max(input, max):
    if isinstance(max, Tensor):
        return clamp(input, None, max)
    check_int64(max)
    dt = _clamp_dtype(input, None, max)
    check_scalar(max, dt)
    return call_op(CLAMP_MAX, (input if dt is input.dtype else input.to(dt),), (keyed(max),))


for _f in (clamp, clamp_min, clamp_max):  # their in-place forms' cast error names the C++ type
    _f.cast_error_cpp = True


def _split_ties(grad, self, other, drop):
    return where(drop, 0.0, where(self == other, grad / 2, grad))


MAXIMUM = defop("maximum", lambda self, other, dtype: jnp.maximum(self.astype(_c(dtype)),
                                                                  other.astype(_c(dtype))),
                inputs=("self", "other"), attrs=("dtype",),
                self=lambda grad, self, other: _split_ties(grad, self, other, self < other),
                other=lambda grad, self, other: _split_ties(grad, self, other, self > other))
MINIMUM = defop("minimum", lambda self, other, dtype: jnp.minimum(self.astype(_c(dtype)),
                                                                  other.astype(_c(dtype))),
                inputs=("self", "other"), attrs=("dtype",),
                self=lambda grad, self, other: _split_ties(grad, self, other, self > other),
                other=lambda grad, self, other: _split_ties(grad, self, other, self < other))


def _max_min(op, name):
    def f(input, other):
        _need_tensors(name, input, other)
        dt = promote(input, other)
        if dt.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return _run(op, (input, other), (dt,))
    f.__name__ = name
    return f


maximum = _max_min(MAXIMUM, "maximum")
minimum = _max_min(MINIMUM, "minimum")


WHERE = defop("where", lambda condition, self, other, dtype:
              jnp.where(condition, self.astype(_c(dtype)), other.astype(_c(dtype))),
              inputs=("condition", "self", "other"), attrs=("dtype",),
              self=lambda grad, condition: where(condition, grad, 0.0),
              other=lambda grad, condition: where(condition, 0.0, grad))


def where(condition, input=None, other=None):
    """torch.where(condition, input, other)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    c, a, b = as_t(condition), as_t(input), as_t(other)
    if c.dtype is not D.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {c.dtype.name.capitalize()}")
    return _run(WHERE, (c, a, b), (promote(a, b),))


_bool = D.bool_


# ---- scalar arithmetic as torch's C++ composites record it --------------------------------
MUL_S = defop("mul_scalar", lambda self, other: self * jnp.asarray(other, self.dtype),
              attrs=("other",), node="MulBackward1",
              self=lambda grad, other: grad * other)
ADD_S = defop("add_scalar", lambda self, other: self + jnp.asarray(other, self.dtype),
              attrs=("other",), node="AddBackward1", self=lambda grad: grad)
DIV_S = defop("div_scalar", lambda self, other: self / jnp.asarray(other, self.dtype),
              attrs=("other",), node="DivBackward1",
              self=lambda grad, other: grad / other)


def _mul_s(t, v):
    return call_op(MUL_S, (t,), (float(v),))


def _add_s(t, v):
    return call_op(ADD_S, (t,), (float(v),))


def _div_s(t, v):
    return call_op(DIV_S, (t,), (float(v),))
