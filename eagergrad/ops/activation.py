"""Activation functions as op-table entries, with torch's CPU node names and formulas
(derivatives.yaml): gelu (GeluBackward0), silu, mish, elu (EluBackward0; selu is an elu
call), celu, leaky_relu, softplus, hardtanh (relu6 too), hardswish, hardsigmoid,
log_sigmoid (LogSigmoidBackward0, with its buffer), glu, threshold, _prelu_kernel
(PreluKernelBackward0), hardshrink, softshrink and rrelu_with_noise.

In-place variants that torch records with a `...Backward1` node saving the result (elu_,
celu_, leaky_relu_, rrelu_) have their own entries; the others (hardtanh_, silu_, ...)
record their out-of-place node on the old value, as torch does. The torch-level functions
(torch.selu, torch.prelu, torch.threshold_, ...) are here; F.* live in
nn/_functional/activation.py.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import _next_key, from_jax
from .._shapes import wrap_dim as _wrap_dim
from ..engine.grad_mode import STATE
from ._table import call_op, defop
from ._autocast import autocast_op
from .inplace import inplace
from .pointwise import (_at_least, _at_most, check_scalar, over, scalar_type, scalar_types,
                        times, where, _zeros)
from .shape import cat
from .unary import THRESHOLD_BACKWARD

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = 1 / math.sqrt(2)
_GELU_BETA = math.sqrt(2 / math.pi)  # torch's kBeta = M_SQRT2 * M_2_SQRTPI * 0.5
_GELU_KAPPA = 0.044715
_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid_backward: a float constant


def _hide_attrs(op, *names):
    """Attributes the kernel needs but torch's node does not keep (no `_saved_<name>`)."""
    for k in names:
        delattr(op.Node, f"_saved_{k}")
        delattr(op.Node, f"_raw_saved_{k}")


def _kernel_error(kernel):
    return NotImplementedError, f"\"{kernel}\" not implemented for '{{}}'"


def _check_float(input, kernel, half=True):
    """torch's error for a dtype the CPU kernel is not compiled for (integers, bool,
    complex; half types too when not `half`)."""
    dt = input.dtype
    if not dt.is_floating_point or not half and dt in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _s(v, x):
    """A Python number as a scalar of x's dtype (no promotion of x)."""
    return jnp.asarray(v, x.dtype)


# ---- gelu -----------------------------------------------------------------------------------
def _gelu_k(self, approximate):
    if approximate == "tanh":
        inner = _s(_GELU_BETA, self) * (self + _s(_GELU_KAPPA, self) * self * self * self)
        return _s(0.5, self) * self * (1 + jnp.tanh(inner))
    return self * _s(0.5, self) * (1 + jax.lax.erf(self * _s(_SQRT1_2, self)))


def _gelu_back(grad, self, approximate):
    if approximate == "tanh":
        inner = _GELU_BETA * (self + _GELU_KAPPA * self * self * self)
        t = inner.tanh()
        left_d = 0.5 * (1 + t)
        right_d = 0.5 * self * (1 - t * t) * _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        return grad * (left_d + right_d)
    cdf = 0.5 * (1 + (self * _SQRT1_2).erf())
    pdf = (-0.5 * self * self).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


GELU = defop("gelu", _gelu_k, attrs=("approximate",),
             complex_error=_kernel_error("GeluKernelImpl"), self=_gelu_back)


def _gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check_float(input, "GeluKernelImpl")
    return call_op(GELU, (input,), (approximate,))


# ---- silu / mish ---------------------------------------------------------------------------
def _silu_back(grad, self):
    s = self.sigmoid()
    return grad * (s * (1 + self * (1 - s))).conj()


SILU = defop("silu", lambda self: self * jax.nn.sigmoid(self) if not jnp.iscomplexobj(self)
             else self / (1 + jnp.exp(-self)), self=_silu_back)


def _mish_back(grad, self):
    t = call_op(SOFTPLUS, (self,), (1, 20)).tanh()  # at::softplus, as torch's formula
    return grad * (t + self * self.sigmoid() * (1 - t * t))


MISH = defop("mish", lambda self: self * jnp.tanh(jax.nn.softplus(self)),
             complex_error=_kernel_error("mish_cpu"), self=_mish_back)


def _silu(input):
    if not input.dtype.is_complex:
        _check_float(input, "silu_cpu")
    elif input.requires_grad and STATE.grad:
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return call_op(SILU, (input,))


def _mish(input):
    _check_float(input, "mish_cpu")
    return call_op(MISH, (input,))


# ---- elu / celu ----------------------------------------------------------------------------
def _elu_k(self, alpha, scale, input_scale):
    # (alpha traced, and celu's input_scale, 1 / alpha: `times`, see pointwise.py)
    return jnp.where(self <= 0, times(jnp.expm1(times(self, _s(input_scale, self))),
                                      _s(alpha * scale, self)),
                     self * _s(scale, self))


def _below0(x):
    """x, differentiable only where x < 0: torch's elu_double_backward masks with x < 0
    while the first derivative takes the x <= 0 branch at 0."""
    return where(x < 0, x, x.detach())


def _elu_back(grad, self, alpha, scale, input_scale):
    return where(self <= 0, grad * (input_scale * alpha * scale) *
                 (_below0(self) * input_scale).exp(), grad * scale)


def _elu_back_result(grad, result, alpha, scale, input_scale):
    if not alpha * scale >= 0:  # (NaN too, as torch's check)
        raise RuntimeError("In-place elu backward calculation is triggered with a negative "
                           "slope which is not supported. This is caused by calling in-place "
                           "forward function with a negative slope, please call out-of-place "
                           "version instead.")
    return where(result <= 0, grad * input_scale * (_below0(result) + alpha * scale),
                 grad * scale)


# NOTE [mask backwards]: torch computes the gradients of the piecewise-linear activations
# with ops of their own (threshold_backward, leaky_relu_backward, hardtanh_backward,
# hardshrink_backward, softshrink_backward; threshold_backward, relu's, in unary.py) whose
# nodes take the saved input (or result)
# as a differentiable input with a zero derivative: under create_graph the first-order
# gradient requires grad through it (ThresholdBackwardBackward0 -> ReluBackward0), so a
# gradient penalty through relu runs, as in torch. A mask computed by a comparison would
# leave that gradient constant.
def _mask_backward(name, kernel, attrs, grad_output, dynamic=()):
    """One of these ops (threshold_backward, relu's, is in unary.py)."""
    op = defop(name, kernel, inputs=("grad_output", "self"), attrs=attrs, dynamic=dynamic,
               grad_output=grad_output, self=_zeros)
    if dynamic:
        op.static_of = scalar_types
    return op


def _zero_where(mask, g):
    return jnp.where(mask, jnp.zeros((), g.dtype), g)


def _in_band(self, lambd):
    return (self >= -lambd) & (self <= lambd)


LEAKY_RELU_BACKWARD = _mask_backward(
    "leaky_relu_backward", lambda grad_output, self, negative_slope: jnp.where(
        self > 0, grad_output, times(grad_output, _s(negative_slope, grad_output))),
    ("negative_slope",), lambda grad, self, negative_slope:
    _leaky_relu_backward(grad, self, negative_slope), ("negative_slope",))
HARDTANH_BACKWARD = _mask_backward(
    "hardtanh_backward", lambda grad_output, self, min_val, max_val: _zero_where(
        (self <= _s(min_val, self)) | (self >= _s(max_val, self)), grad_output),
    ("min_val", "max_val"), lambda grad, self, min_val, max_val:
    call_op(HARDTANH_BACKWARD, (grad, self), (min_val, max_val)), ("min_val", "max_val"))
HARDSHRINK_BACKWARD = _mask_backward(
    "hardshrink_backward", lambda grad_output, self, lambd: _zero_where(
        _in_band(self, lambd), grad_output), ("lambd",),
    lambda grad, self, lambd: call_op(HARDSHRINK_BACKWARD, (grad, self), (lambd,)))
SOFTSHRINK_BACKWARD = _mask_backward(
    "softshrink_backward", lambda grad_output, self, lambd: _zero_where(
        _in_band(self, lambd), grad_output), ("lambd",),
    lambda grad, self, lambd: call_op(SOFTSHRINK_BACKWARD, (grad, self), (lambd,)))


def _leaky_relu_backward(grad, self, negative_slope):
    return call_op(LEAKY_RELU_BACKWARD, (grad, self), (negative_slope,))


# NOTE [traced scalars] (pointwise.py): the activations' numbers (elu's alpha, leaky_relu's
# slope, softplus' beta and threshold, hardtanh's bounds, threshold's threshold and value)
# are traced; elu's scale and input_scale (constants: 1, or selu's) stay in the key
_ELU_ERR = _kernel_error("elu_cpu")
ELU = defop("elu", _elu_k, attrs=("alpha", "scale", "input_scale"), complex_error=_ELU_ERR,
            dynamic=("alpha",), self=_elu_back)
ELU_ = defop("elu_", _elu_k, attrs=("alpha", "scale", "input_scale"), node="EluBackward1",
             complex_error=_ELU_ERR, dynamic=("alpha",), self=_elu_back_result)
ELU.static_of = ELU_.static_of = lambda a: (scalar_type(a[0]), a[1], a[2])


def _celu_scale(alpha):
    # torch's celu backward takes 1 / alpha.toFloat(): alpha rounded to float32
    return 1.0 / float(np.float32(alpha))


CELU = defop("celu", lambda self, alpha: _elu_k(self, alpha, 1, 1.0 / alpha), attrs=("alpha",),
             complex_error=_ELU_ERR, dynamic=("alpha",), self=lambda grad, self, alpha:
             _elu_back(grad, self, alpha, 1, _celu_scale(alpha)))
CELU_ = defop("celu_", lambda self, alpha: _elu_k(self, alpha, 1, 1.0 / alpha), attrs=("alpha",),
              node="CeluBackward1", complex_error=_ELU_ERR, dynamic=("alpha",),
              self=lambda grad, result, alpha:
              _elu_back_result(grad, result, alpha, 1, _celu_scale(alpha)))


def _elu(input, alpha=1.0, scale=1, input_scale=1):
    _check_float(input, "elu_cpu")
    check_scalar(alpha, input.dtype)
    return call_op(ELU, (input,), (alpha, scale, input_scale))


def _elu_inplace(input, alpha=1.0, scale=1, input_scale=1):
    _check_float(input, "elu_cpu")
    check_scalar(alpha, input.dtype)
    return inplace(input, _elu_r, alpha, scale, input_scale)


def _elu_r(input, alpha, scale, input_scale):
    return call_op(ELU_, (input,), (alpha, scale, input_scale))


def selu(input):
    """torch.selu: scale * elu(input, alpha) with SELU's constants (EluBackward0).

    >>> import eagergrad as torch
    >>> torch.selu(torch.tensor([1.0]))
    tensor([1.0507])
    """
    return _elu(input, SELU_ALPHA, SELU_SCALE, 1)


def selu_(input):
    """torch.selu_: selu in place (EluBackward1)."""
    return _elu_inplace(input, SELU_ALPHA, SELU_SCALE, 1)


def _check_celu(alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def celu(input, alpha=1.0):
    """torch.celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (CeluBackward0).

    >>> import eagergrad as torch
    >>> torch.celu(torch.tensor([-1.0, 1.0]), 2.0)
    tensor([-0.7869,  1.0000])
    """
    _check_celu(alpha)
    _check_float(input, "elu_cpu")
    check_scalar(alpha, input.dtype)
    return call_op(CELU, (input,), (alpha,))


def celu_(input, alpha=1.0):
    """torch.celu_: celu in place (CeluBackward1)."""
    _check_celu(alpha)
    _check_float(input, "elu_cpu")
    check_scalar(alpha, input.dtype)
    return inplace(input, lambda x, a: call_op(CELU_, (x,), (a,)), alpha)


# ---- leaky_relu ----------------------------------------------------------------------------
def _leaky_k(self, negative_slope):
    return jnp.where(self > 0, self, times(self, _s(negative_slope, self)))


def _leaky_back_result(grad, result, negative_slope):
    if not negative_slope >= 0:  # (NaN too, as torch's check)
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place "
            "leakRelu backward calculation with negative slope")
    return _leaky_relu_backward(grad, result, negative_slope)


_LEAKY_ERR = _kernel_error("leaky_relu_cpu")
LEAKY_RELU = defop("leaky_relu", _leaky_k, attrs=("negative_slope",), complex_error=_LEAKY_ERR,
                   dynamic=("negative_slope",), self=lambda grad, self, negative_slope:
                   _leaky_relu_backward(grad, self, negative_slope))
LEAKY_RELU_ = defop("leaky_relu_", _leaky_k, attrs=("negative_slope",),
                    node="LeakyReluBackward1", complex_error=_LEAKY_ERR,
                    dynamic=("negative_slope",), self=_leaky_back_result)


def _leaky_relu(input, negative_slope=0.01):
    _check_float(input, "leaky_relu_cpu")
    check_scalar(negative_slope, input.dtype)
    return call_op(LEAKY_RELU, (input,), (negative_slope,))


def _leaky_relu_(input, negative_slope=0.01):
    _check_float(input, "leaky_relu_cpu")
    check_scalar(negative_slope, input.dtype)
    return inplace(input, lambda x, s: call_op(LEAKY_RELU_, (x,), (s,)), negative_slope)


# ---- softplus ------------------------------------------------------------------------------
def _softplus_k(self, beta, threshold):
    b = _s(beta, self)
    xb = times(self, b)
    return jnp.where(xb > threshold, self, over(jnp.log1p(jnp.exp(xb)), b))


def _softplus_back(grad, self, beta, threshold):
    # (torch's double backward masks with beta * x < threshold: 0 at the threshold)
    xb = self * beta
    xb = where(xb < threshold, xb, xb.detach())
    return where(self * beta > threshold, grad, grad * xb.sigmoid())


SOFTPLUS = defop("softplus", _softplus_k, attrs=("beta", "threshold"),
                 complex_error=_kernel_error("softplus_cpu"), dynamic=("beta", "threshold"),
                 self=_softplus_back)


def _softplus(input, beta=1, threshold=20):
    _check_float(input, "softplus_cpu")
    check_scalar(beta, input.dtype)
    check_scalar(threshold, input.dtype)
    return call_op(SOFTPLUS, (input,), (beta, threshold))


# ---- hardtanh ------------------------------------------------------------------------------
def _hardtanh_k(self, min_val, max_val):
    return _at_most(_at_least(self, _s(min_val, self)), _s(max_val, self))


HARDTANH = defop("hardtanh", _hardtanh_k, attrs=("min_val", "max_val"),
                 complex_error=(NotImplementedError, "clamp is not supported for complex types"),
                 dynamic=("min_val", "max_val"),
                 self=lambda grad, self, min_val, max_val:
                 call_op(HARDTANH_BACKWARD, (grad, self), (min_val, max_val)))


def _hardtanh(input, min_val=-1.0, max_val=1.0):
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    check_scalar(min_val, input.dtype)
    check_scalar(max_val, input.dtype)
    return call_op(HARDTANH, (input,), (min_val, max_val))


# ---- hardswish / hardsigmoid ---------------------------------------------------------------
def _hardswish_k(self):
    return self * jnp.minimum(jnp.maximum(self + 3, 0), 6) / 6


def _hardswish_back(grad, self):
    return where(self <= -3.0, 0.0, where(self < 3.0, grad * (self / 3 + 0.5), grad))


HARDSWISH = defop("hardswish", _hardswish_k, complex_error=_kernel_error("hardswish_cpu"),
                  self=_hardswish_back)
HARDSIGMOID = defop("hardsigmoid", lambda self: jnp.minimum(jnp.maximum(self + 3, 0), 6) / 6,
                    complex_error=_kernel_error("hardsigmoid_cpu"),
                    self=lambda grad, self: where((self > -3.0) & (self < 3.0), grad * _SIXTH,
                                                  0.0))


def _hardswish(input):
    _check_float(input, "hardswish_cpu")
    return call_op(HARDSWISH, (input,))


def _hardsigmoid(input):
    _check_float(input, "hardsigmoid_cpu")
    return call_op(HARDSIGMOID, (input,))


# ---- log_sigmoid ---------------------------------------------------------------------------
def _log_sigmoid_k(self):
    z = jnp.exp(-jnp.abs(self))
    return jnp.minimum(self, 0) - jnp.log1p(z), z


# d/dx log(sigmoid(x)) = sigmoid(-x), torch's (max_deriv - sign * buffer / (1 + buffer));
# written with self so that its derivative is torch's log_sigmoid_double_backward
LOG_SIGMOID = defop("log_sigmoid_forward", _log_sigmoid_k, outputs=("output", "buffer"),
                    node="LogSigmoidBackward0", nondiff=(1,),
                    complex_error=_kernel_error("log_sigmoid_cpu"),
                    self=lambda grad, self, buffer: grad * (-self).sigmoid())


def _log_sigmoid(input):
    _check_float(input, "log_sigmoid_cpu")
    return call_op(LOG_SIGMOID, (input,))[0]


# ---- glu -----------------------------------------------------------------------------------
def _glu_k(self, dim, wdim):
    a, b = jnp.split(self, 2, axis=wdim)
    return a * jax.nn.sigmoid(b)


def _glu_back(grad, self, dim, wdim):
    a, b = self.chunk(2, wdim)
    s = b.sigmoid()
    return cat([grad * s, grad * a * s * (1 - s)], wdim)


GLU = defop("glu", _glu_k, attrs=("dim", "wdim"), complex_error=_kernel_error("glu_cpu"),
            self=_glu_back)
_hide_attrs(GLU, "wdim")


def _glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    wdim = _wrap_dim(dim, input.ndim)
    if input.shape[wdim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wdim} is size "
                           f"{input.shape[wdim]}")
    _check_float(input, "glu_cpu")
    return call_op(GLU, (input,), (dim % 2 ** 64, wdim))


# ---- threshold -----------------------------------------------------------------------------
def _threshold_k(self, threshold, value):
    # (threshold in self's dtype, as torch: an integer tensor compares with it truncated)
    return jnp.where(self <= _s(threshold, self), _s(value, self), self)


def _threshold_back(grad, self, threshold, value):
    return call_op(THRESHOLD_BACKWARD, (grad, self), (threshold,))


_THR_ERR = _kernel_error("threshold_cpu")
THRESHOLD = defop("threshold", _threshold_k, attrs=("threshold", "value"),
                  complex_error=_THR_ERR, dynamic=("threshold", "value"), self=_threshold_back)
THRESHOLD_ = defop("threshold_", _threshold_k, attrs=("threshold", "value"),
                   node="ThresholdBackward1", complex_error=_THR_ERR,
                   dynamic=("threshold", "value"), self=_threshold_back)
for _op in (CELU, CELU_, LEAKY_RELU, LEAKY_RELU_, SOFTPLUS, HARDTANH, THRESHOLD, THRESHOLD_):
    _op.static_of = scalar_types
del _op
_hide_attrs(THRESHOLD, "value")
_hide_attrs(THRESHOLD_, "value")


def threshold(input, threshold, value):
    """torch.threshold: `value` where input <= threshold, else input (ThresholdBackward0).

    >>> import eagergrad as torch
    >>> torch.threshold(torch.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    _check_threshold(input, threshold, value)
    return call_op(THRESHOLD, (input,), (threshold, value))


def _check_threshold(input, threshold, value):
    dt = input.dtype
    if dt.is_complex or dt is D.bool_:
        raise NotImplementedError(f"\"threshold_cpu\" not implemented for "
                                  f"'{dt.scalar_name}'")
    check_scalar(threshold, dt)
    check_scalar(value, dt)


def threshold_(input, threshold, value):
    """torch.threshold_: threshold in place (ThresholdBackward1)."""
    _check_threshold(input, threshold, value)
    return inplace(input, lambda x, t, v: call_op(THRESHOLD_, (x,), (t, v)), threshold, value)


# ---- prelu ---------------------------------------------------------------------------------
def _prelu_self_back(grad, self, weight):
    """where(self > 0, grad, weight * grad), whose derivatives at self == 0 are torch's
    (its _prelu_kernel_backward double backward takes self >= 0 as the positive side)."""
    wg = weight * grad
    return where(self >= 0, grad, wg) + where(self == 0, (wg - grad).detach(), 0.0)


PRELU_KERNEL = defop(
    "_prelu_kernel", lambda self, weight: jnp.where(self > 0, self, weight * self),
    inputs=("self", "weight"), node="PreluKernelBackward0",
    complex_error=_kernel_error("prelu_cpu"),
    self=_prelu_self_back,
    weight=lambda grad, self, weight: where(self >= 0, 0.0, self * grad))


def _prelu_kernel(input, weight):
    """torch._prelu_kernel: input where positive, else weight * input (broadcast)."""
    _check_float(input, "prelu_cpu")
    return call_op(PRELU_KERNEL, (input, weight))


@autocast_op("prelu")
def prelu(input, weight):
    """torch.prelu: max(0, x) + weight * min(0, x), weight one value or one per channel
    (dim 1); the weight is reshaped to broadcast (ViewBackward0), as ATen does.

    >>> import eagergrad as torch
    >>> torch.prelu(torch.tensor([-2.0, 3.0]), torch.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        c = input.shape[1] if input.ndim > 1 else 1
        if c != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {c}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if input.ndim != weight.ndim:
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = n
        weight = weight.reshape(shape)
    return _prelu_kernel(input, weight)


# ---- hardshrink / softshrink ---------------------------------------------------------------
def _shrink_back(op):
    return lambda grad, self, lambd: call_op(op, (grad, self), (lambd,))


HARDSHRINK = defop("hardshrink", lambda self, lambd: jnp.where(
    _in_band(self, lambd), jnp.zeros((), self.dtype), self), attrs=("lambd",),
    complex_error=_kernel_error("hardshrink_cpu"), self=_shrink_back(HARDSHRINK_BACKWARD))


def _softshrink_k(self, lambd):
    lam = _s(lambd, self)
    return jnp.where(self > lam, self - lam, jnp.where(self < -lam, self + lam,
                                                       jnp.zeros((), self.dtype)))


SOFTSHRINK = defop("softshrink", _softshrink_k, attrs=("lambd",),
                   complex_error=_kernel_error("softshrink_check"),
                   self=_shrink_back(SOFTSHRINK_BACKWARD))


def hardshrink(input, lambd=0.5):
    """torch.hardshrink: input where |input| > lambd, else 0 (HardshrinkBackward0).

    >>> import eagergrad as torch
    >>> torch.hardshrink(torch.tensor([0.3, -1.0]))
    tensor([ 0., -1.])
    """
    _check_float(input, "hardshrink_cpu")
    return call_op(HARDSHRINK, (input,), (lambd,))


def _softshrink(input, lambd=0.5):
    _check_float(input, "softshrink_check")
    hi = float(jnp.finfo(input.dtype.np).max)
    if not 0 <= lambd <= hi:
        raise RuntimeError(f"lambda must be in range [0, {hi:.6g}] for input dtype "
                           f"{input.dtype.scalar_name}, but found {lambd:.6g}")
    return call_op(SOFTSHRINK, (input,), (lambd,))


# ---- rrelu ---------------------------------------------------------------------------------
def _rrelu_k(self, noise, lower, upper, training):
    if training:
        return jnp.where(self <= 0, self * noise, self)
    return _leaky_k(self, (lower + upper) / 2)


def _rrelu_back(grad, self, noise, lower, upper, training):
    if training and upper - lower > 1e-6:
        return grad * noise
    return where(self > 0, grad, grad * ((lower + upper) / 2))


def _rrelu_back_result(grad, result, noise, lower, upper, training):
    if training and upper - lower > 1e-6:
        return grad * noise
    return _leaky_back_result(grad, result, (lower + upper) / 2)


RRELU = defop("rrelu_with_noise", _rrelu_k, inputs=("self", "noise"),
              attrs=("lower", "upper", "training"), complex_error=_LEAKY_ERR,
              self=_rrelu_back)
RRELU_ = defop("rrelu_with_noise_", _rrelu_k, inputs=("self", "noise"),
               attrs=("lower", "upper", "training"), node="RreluWithNoiseBackward1",
               complex_error=_LEAKY_ERR, self=_rrelu_back_result)


def _rrelu_args(input, lower, upper, training, generator=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        _check_float(input, "rrelu_with_noise_out_cpu", half=False)
        u = from_jax(jax.random.uniform(_next_key(generator), tuple(input.shape), input.dtype.np,
                                        lower, upper))
        noise = where(input.detach() <= 0, u, 1.0)  # torch's noise: 1 where x > 0
    else:
        _check_float(input, "leaky_relu_cpu")
        noise = from_jax(jnp.zeros(tuple(input.shape), input.dtype.np))
    return noise


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu: leaky_relu with a slope drawn uniformly from [lower, upper] for each
    non-positive element when training (eagergrad's generator), else (lower + upper) / 2
    (RreluWithNoiseBackward0).

    >>> import eagergrad as torch
    >>> torch.rrelu(torch.tensor([-1.0, 2.0]), 0.2, 0.4)
    tensor([-0.3000,  2.0000])
    """
    noise = _rrelu_args(input, lower, upper, training, generator)
    return call_op(RRELU, (input, noise), (lower, upper, bool(training)))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu_: rrelu in place (RreluWithNoiseBackward1)."""
    noise = _rrelu_args(input, lower, upper, training, generator)
    return inplace(input, lambda x, n: call_op(RRELU_, (x, n), (lower, upper, bool(training))),
                   noise)
