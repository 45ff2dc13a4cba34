"""Unary math (exp, log, trigonometric, sigmoid, relu, abs, sgn, rounding, ...) as one
op each, round(decimals=), atan2, nan_to_num, angle, and complex tensors from parts
(complex, polar). Formulas are torch's derivatives.yaml entries (conjugates for complex
inputs)."""
import math

import jax.numpy as jnp
from jax import lax

from .. import _dtypes as D
from .._cache import keyed
from ._args import float_of, promote
from ._table import defop, call_op
from .inplace import inplace
from ._autocast import autocast_op
from ..engine.grad_mode import STATE
from .pointwise import (_c, _check_broadcast, _CLAMP_COMPLEX, _cpu_kernel, _need_tensors, _no_out,
                        _run, scalar_types, where, _zeros)


LN2, LN10 = math.log(2.0), math.log(10.0)


# ---- unary math -----------------------------------------------------------------------
def _unary(name, fn, float_result=True, **formula):
    op = defop(name, fn, node=_NODE_NAMES.get(name), complex_error=_NO_COMPLEX.get(name),
               **formula)
    op.float_result = float_result
    return op


_NODE_NAMES = {"log1p": "Log1PBackward0"}  # torch's codegen spells these differently
_NO_COMPLEX = dict(
    sign=(NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
          "numbers. Please use torch.sgn instead."),
    floor=(NotImplementedError, "floor is not supported for complex inputs"),
    ceil=(NotImplementedError, "ceil is not supported for complex inputs"),
    trunc=(NotImplementedError, "trunc is not supported for complex inputs"),
    frac=_cpu_kernel("frac_cpu"), round=_cpu_kernel("round_vml_cpu"),
    erf=_cpu_kernel("erf_vml_cpu"), relu=_CLAMP_COMPLEX)


# relu's backward (and threshold's: ops/activation.py NOTE [mask backwards])
THRESHOLD_BACKWARD = defop(
    "threshold_backward", lambda grad_output, self, threshold: jnp.where(
        self <= jnp.asarray(threshold, self.dtype), jnp.zeros((), grad_output.dtype),
        grad_output), inputs=("grad_output", "self"), attrs=("threshold",),
    dynamic=("threshold",), self=_zeros,
    grad_output=lambda grad, self, threshold:
    call_op(THRESHOLD_BACKWARD, (grad, self), (threshold,)))
THRESHOLD_BACKWARD.static_of = scalar_types


_SPECS = dict(
    neg=(jnp.negative, False, lambda grad: -grad),
    exp=(jnp.exp, True, lambda grad, result: grad * result.conj()),
    exp2=(jnp.exp2, True, lambda grad, result: grad * result.conj() * LN2),
    expm1=(jnp.expm1, True, lambda grad, result: grad * (result.conj() + 1)),
    log=(jnp.log, True, lambda grad, self: grad / self.conj()),
    log2=(jnp.log2, True, lambda grad, self: grad / (self.conj() * LN2)),
    log10=(jnp.log10, True, lambda grad, self: grad / (self.conj() * LN10)),
    log1p=(jnp.log1p, True, lambda grad, self: grad / (self + 1).conj()),
    sqrt=(jnp.sqrt, True, lambda grad, result: grad / (2 * result.conj())),
    rsqrt=(lax.rsqrt, True, lambda grad, result: -0.5 * grad * result.pow(3).conj()),
    sin=(jnp.sin, True, lambda grad, self: grad * self.cos().conj()),
    cos=(jnp.cos, True, lambda grad, self: grad * -self.sin().conj()),
    tan=(jnp.tan, True, lambda grad, result: grad * (1 + result.pow(2)).conj()),
    asin=(jnp.arcsin, True, lambda grad, self: grad * (-self * self + 1).rsqrt().conj()),
    acos=(jnp.arccos, True, lambda grad, self: grad * -((-self * self + 1).rsqrt()).conj()),
    atan=(jnp.arctan, True, lambda grad, self: grad / (self * self + 1).conj()),
    sinh=(jnp.sinh, True, lambda grad, self: grad * self.cosh().conj()),
    cosh=(jnp.cosh, True, lambda grad, self: grad * self.sinh().conj()),
    tanh=(jnp.tanh, True, lambda grad, result: grad * (1 - result * result).conj()),
    sigmoid=(lambda a: 1 / (1 + jnp.exp(-a)) if jnp.iscomplexobj(a) else lax.logistic(a),
             True, lambda grad, result: grad * (result * (1 - result)).conj()),
    erf=(lax.erf, True, lambda grad, self: 2.0 / math.sqrt(math.pi) * (-self.pow(2)).exp() * grad),
    reciprocal=(jnp.reciprocal, True, lambda grad, result: -grad * (result * result).conj()),
    relu=(lambda a: jnp.maximum(a, 0), False,
          lambda grad, result: call_op(THRESHOLD_BACKWARD, (grad, result), (0,))),
    abs=(jnp.abs, False, lambda grad, self: grad * self.sgn()),
    sgn=(lambda a: jnp.where(a == 0, 0, a / jnp.where(a == 0, 1, jnp.abs(a)))
         if jnp.iscomplexobj(a) else jnp.sign(a), False,
         lambda grad, self, result: _sgn_backward(grad, self, result)),
    sign=(jnp.sign, False, _zeros),
    floor=(jnp.floor, False, _zeros),
    ceil=(jnp.ceil, False, _zeros),
    round=(jnp.round, False, _zeros),
    trunc=(jnp.trunc, False, _zeros),
    frac=(lambda a: a - jnp.trunc(a), False, lambda grad: grad),
    conj_physical=(jnp.conj, False, lambda grad: grad.conj()),
)


def _sgn_backward(grad, self, result):
    if not self.is_complex():
        return _zeros(grad)
    a = self.abs()
    return where(a == 0, 0.0, (grad - (grad * result.conj()).real * result) / a)


UNARY = {name: _unary(name, fn, flt, self=f) for name, (fn, flt, f) in _SPECS.items()}


def _unary_fn(name):
    op = UNARY[name]

    if op.float_result:
        def f(input):
            if not input.dtype.is_differentiable:  # integers compute in the default dtype
                input = input.to(D.get_default_dtype())  # (never recorded: no grad)
            return call_op(op, (input,))
    else:
        def f(input):
            return call_op(op, (input,))
    f.__name__ = name
    f.__doc__ = f"torch.{name}, elementwise."
    return f


for _n in _SPECS:
    globals()[_n] = _unary_fn(_n)


def neg(input):
    """torch.neg, elementwise (not of a bool tensor, as torch)."""
    if input.dtype is D.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return call_op(_NEG, (input,))


_NEG = UNARY["neg"]


def _round_dec(self, decimals):
    if decimals > 0:  # as torch: scale up, round half to even, scale back
        s = 10.0 ** decimals
        return jnp.round(self * s) / s
    s = 10.0 ** -decimals
    return jnp.round(self / s) * s


ROUND_DEC = defop("round_decimals", _round_dec, attrs=("decimals",), node="RoundBackward1",
                  complex_error=_cpu_kernel("round_cpu"), self=_zeros)


def _round(input, decimals=0):
    if decimals:
        return call_op(ROUND_DEC, (input,), (decimals,))
    return call_op(UNARY["round"], (input,))


globals()["round"] = _round


def conj_physical(input):
    """torch.conj_physical: a real tensor is returned as is, as torch."""
    return call_op(UNARY["conj_physical"], (input,)) if input.is_complex() else input


CONJ_PHYSICAL_ = defop("conj_physical_", lambda self: jnp.conj(self),
                       node="ConjPhysicalBackward1", self=lambda grad: grad.conj())


def conj_physical_(input):
    """Tensor.conj_physical_: the conjugate written in place (ConjPhysicalBackward1); a
    real tensor keeps its values, and its version moves and the node is recorded, as in
    torch.

    >>> import eagergrad as torch
    >>> torch.tensor([1 + 2j]).conj_physical_()
    tensor([1.-2.j])
    """
    return inplace(input, _conj_physical_)


def _conj_physical_(input):
    return call_op(CONJ_PHYSICAL_, (input,))
negative = neg
absolute = globals()["abs"]

ATAN2 = defop("atan2", lambda self, other, dtype: jnp.arctan2(self.astype(_c(dtype)),
                                                              other.astype(_c(dtype))),
              inputs=("self", "other"), attrs=("dtype",),
              self=lambda grad, self, other: grad * other * _atan2_recip(self, other),
              other=lambda grad, self, other: grad * -self * _atan2_recip(self, other))


def _atan2_recip(self, other):
    """1 / (self^2 + other^2), 0 where that is 0: atan2's gradient is 0 at (0, 0)."""
    d = self * self + other * other
    return where(d == 0, 0.0, d.reciprocal())


def atan2(input, other):
    _need_tensors("atan2", input, other)
    dt = promote(input, other)
    if dt.is_complex:
        raise NotImplementedError(f"\"atan2_cpu\" not implemented for '{dt.scalar_name}'")
    return _run(ATAN2, (input, other), (float_of(dt),))


arctan2 = atan2


NAN_TO_NUM = defop("nan_to_num", lambda self, nan, posinf, neginf: jnp.nan_to_num(
                   self, nan=nan, posinf=posinf, neginf=neginf),
                   attrs=("nan", "posinf", "neginf"),
                   self=lambda grad, self: grad * self.isfinite())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """torch.nan_to_num: NaN, +inf and -inf replaced (by default with 0 and the dtype's
    largest and lowest finite values); the gradient is 0 where the input was not finite.

    >>> import eagergrad as torch
    >>> torch.tensor([float("nan"), float("inf"), 1.0]).nan_to_num(posinf=9.0)
    tensor([0., 9., 1.])
    """
    if out is not None:
        _no_out("nan_to_num")
    if input.dtype.is_complex and input.requires_grad and STATE.grad:
        raise RuntimeError("nan_to_num does not support automatic differentiation for "
                           "outputs with complex dtype.")
    if not input.dtype.is_differentiable:
        return input.clone()
    return call_op(NAN_TO_NUM, (input,), (keyed(float(nan)), _bound(posinf), _bound(neginf)))


def _bound(v):
    return None if v is None else keyed(float(v))


# ---- angle (conj, real and imag are views: ops/shape.py) ------------------------------
_ANGLE = defop("angle", jnp.angle,
               self=lambda grad, self: _angle_grad(grad, self))


def _angle_grad(grad, self):
    if not self.is_complex():
        return _zeros(grad)
    return where(self == 0, 0.0, grad * self / self.abs().pow(2) * 1j)


def angle(input):
    return call_op(_ANGLE, (input,))


# ---- complex from parts -------------------------------------------------------------------
COMPLEX = defop("complex", lambda real, imag: lax.complex(*jnp.broadcast_arrays(real, imag)),
                inputs=("real", "imag"), real=lambda grad: grad.real,
                imag=lambda grad: grad.imag)
POLAR = defop("polar", lambda abs, angle: lax.complex(
              *jnp.broadcast_arrays(abs * jnp.cos(angle), abs * jnp.sin(angle))),
              inputs=("abs", "angle"),
              # torch's polar_backward (0 for abs where the result is 0: sgn(0) = 0)
              abs=lambda grad, result: (grad.conj() * result.sgn()).real,
              angle=lambda grad, result: (grad.conj() * (result * 1j)).real)


def _check_parts(a, b):
    if not (a.dtype.is_floating_point and b.dtype.is_floating_point):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.scalar_name} and {b.dtype.scalar_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.scalar_name} but got "
                           f"scalar type {b.dtype.scalar_name} for second argument")
    if a.dtype is not D.float32 and a.dtype is not D.float64:
        raise NotImplementedError(f"eagergrad does not implement complex tensors from "
                                  f"{a.dtype.scalar_name} parts (torch's complex32) yet")
    _check_broadcast(a._shape, b._shape)


def _check_complex_out(a, out, name):
    if out is not None:
        want = a.dtype.to_complex()
        if out.dtype is not want:
            raise RuntimeError(f"Expected object of scalar type {want.scalar_name} but got "
                               f"scalar type {out.dtype.scalar_name} for argument 'out'")
        _no_out(name)


def _complex(real, imag, *, out=None):  # (exported as torch.complex: the builtin stays usable here)
    """torch.complex: real + imag * 1j, from two float tensors of one dtype.

    >>> import eagergrad as torch
    >>> torch.complex(torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([1.+2.j])
    """
    _check_parts(real, imag)
    _check_complex_out(real, out, "complex")
    return call_op(COMPLEX, (real, imag))


@autocast_op("polar")
def polar(abs, angle, *, out=None):
    """torch.polar: abs * (cos(angle) + sin(angle) * 1j).

    >>> import eagergrad as torch
    >>> torch.polar(torch.tensor([2.0]), torch.tensor([0.0]))
    tensor([2.+0.j])
    """
    _check_parts(abs, angle)
    _check_complex_out(abs, out, "polar")
    return call_op(POLAR, (abs, angle))
