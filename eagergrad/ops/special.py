"""Special and the remaining pointwise math functions: inverse hyperbolics, the gamma
family (lgamma, digamma, polygamma, mvlgamma, the incomplete gammas, zeta), the error
functions (erfc, erfinv, erfcx, ndtri, log_ndtr), Bessel, Airy and the orthogonal
polynomials of torch.special, xlogy / xlog1py, logaddexp, hypot, fmod, copysign,
nextafter, ldexp, frexp, lerp, addcmul / addcdiv, fmax / fmin, heaviside, gcd / lcm, the
shifts, and the predicates (signbit, isposinf, isneginf, isreal).

One op each, with torch's node names and derivatives.yaml formulas (conjugates for complex
inputs); the numerical kernels are in _specfun.py. Integer inputs of the float-valued
functions compute in the default dtype, as torch's int_to_float kernels do; the Bessel and
Airy functions and the polynomials are not differentiable (torch: non_differentiable).

>>> import eagergrad as torch
>>> torch.lgamma(torch.tensor([1.0, 3.0]))
tensor([0.0000, 0.6931])
"""
import math

import jax.numpy as jnp
from jax import lax

from .. import _dtypes as D
from .._cache import keyed
from ..engine.grad_mode import STATE
from ..tensor import Tensor
from . import _specfun as K
from ._args import as_t, float_of, promote
from ._table import call_op, defop
from .inplace import inplace
from .pointwise import (_c, _check_int_divisor, _cpu_kernel, _need_tensors, _not_implemented,
                        _run, _zeros, check_int64, check_scalar, div, mul, pow, scalar_types, sub,
                        where)
from .unary import acos, asin, atan, atan2, trunc

_SQRT_PI = math.sqrt(math.pi)
_LN2 = math.log(2.0)
# torch's M_PI_180 and M_180_PI (deg2rad and rad2deg multiply by these doubles)
_PI_180 = 0.017453292519943295769236907684886127134428718885417
_180_PI = 57.295779513082320876798154814105170332405472466564


def _to_float(input):
    """torch's int_to_float kernels: integer and bool inputs compute in the default dtype
    (a cast never recorded: they cannot require grad)."""
    return input if input.dtype.is_differentiable else input.to(D.get_default_dtype())


def _derivative_not_implemented(what):
    """torch's not_implemented("...") formula: NotImplementedError in backward."""
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return formula


def _no_kernel(kernel, dt):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _eps(dt):
    return float(jnp.finfo(dt.np).eps)


# ---- unary, float-valued (one op each) ---------------------------------------------------
def _acosh_grad(grad, self):
    if self.is_complex():  # (torch saves an rsqrt in the real case: sqrt(xy) = sqrt(x) sqrt(y))
        return grad * ((self + 1).rsqrt() * (self - 1).rsqrt()).conj()
    return grad * (self * self - 1).rsqrt()


def _sinc_grad(grad, self):
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    out = grad * ((self_pi * self_pi.cos() - self_pi.sin()) / self_squared_pi).conj()
    return where(self_squared_pi == 0, 0.0, out)


def _i1_grad(i0_of, shift):
    """torch's i1_backward / i1e_backward: the limit 1/2 where |x| <= eps."""
    def formula(grad, self, result):
        eps = _eps(self.dtype)
        not_tiny = self.abs() > eps
        safe = where(not_tiny, self, eps)
        gradx = i0_of(safe) - result * shift(safe)
        return grad * where(not_tiny, gradx, 0.5)
    return formula


def _no_complex(name, kernel=None):
    return _cpu_kernel(kernel or f"{name}_cpu")


# name: (kernel, complex error (None: complex supported), self formula (None: not
# differentiable), node name when not the default)
_UNARY = dict(
    acosh=(jnp.arccosh, None, _acosh_grad, None),
    asinh=(jnp.arcsinh, None, lambda grad, self: grad * (self.pow(2) + 1).rsqrt().conj(), None),
    atanh=(jnp.arctanh, None, lambda grad, self: grad * 1 / (1 - self.pow(2)).conj(), None),
    erfc=(lax.erfc, _cpu_kernel("erfc_vml_cpu"),
          lambda grad, self: -2.0 / _SQRT_PI * (-(self.pow(2))).exp() * grad, None),
    erfinv=(K.erfinv, _cpu_kernel("erfinv_vml_cpu"),
            lambda grad, self: 0.5 * _SQRT_PI * erfinv(self).pow(2).exp() * grad, None),
    lgamma=(K.lgamma, _cpu_kernel("lgamma_vml_cpu"),
            lambda grad, self: grad * digamma(self), None),
    digamma=(K.digamma, _cpu_kernel("digamma"),
             lambda grad, self: grad * polygamma(1, self), None),
    i0=(K.i0, _cpu_kernel("i0_vml_cpu"), lambda grad, self: grad * special_i1(self), None),
    sinc=(jnp.sinc, None, _sinc_grad, None),
    deg2rad=(lambda a: a * _PI_180, (RuntimeError, "deg2rad is not supported for complex tensors."),
             lambda grad: grad * _PI_180, "Deg2RadBackward0"),
    rad2deg=(lambda a: a * _180_PI, (RuntimeError, "rad2deg is not supported for complex tensors."),
             lambda grad: grad * _180_PI, "Rad2DegBackward0"),
    special_erfcx=(K.erfcx, _no_complex("erfcx"),
                   lambda grad, self, result: (2.0 * self * result - 2.0 / _SQRT_PI) * grad, None),
    special_i0e=(K.i0e, _no_complex("i0e"),
                 lambda grad, self, result: grad * (special_i1e(self) - self.sgn() * result),
                 "SpecialI0EBackward0"),
    special_i1=(K.i1, _no_complex("i1"),
                _i1_grad(lambda x: i0(x), lambda x: x.reciprocal()), None),
    special_i1e=(K.i1e, _no_complex("i1e"),
                 _i1_grad(lambda x: special_i0e(x), lambda x: x.sgn() + x.reciprocal()),
                 "SpecialI1EBackward0"),
    special_ndtri=(K.ndtri, _no_complex("ndtri"),
                   lambda grad, result: grad * math.sqrt(2 * math.pi) * (result.pow(2) / 2).exp(),
                   None),
    special_log_ndtr=(K.log_ndtr, _no_complex("log_ndtr"),
                      lambda grad, self, result: grad / math.sqrt(2 * math.pi) *
                      (result + self.pow(2) / 2).neg().exp(), None),
    special_entr=(K.entr, _no_complex("entr"), lambda grad, self: grad * (-(1 + self.log())),
                  None),
    # not differentiable (torch: non_differentiable)
    special_airy_ai=(K.airy_ai, _no_complex("airy_ai"), None, None),
    special_bessel_j0=(K.bessel_j0, _no_complex("bessel_j0"), None, None),
    special_bessel_j1=(K.bessel_j1, _no_complex("bessel_j1"), None, None),
    special_bessel_y0=(K.bessel_y0, _no_complex("bessel_y0"), None, None),
    special_bessel_y1=(K.bessel_y1, _no_complex("bessel_y1"), None, None),
    special_modified_bessel_i0=(K.modified_bessel_i0, _no_complex("modified_bessel_i0"), None,
                                None),
    special_modified_bessel_i1=(K.modified_bessel_i1, _no_complex("modified_bessel_i1"), None,
                                None),
    special_modified_bessel_k0=(K.modified_bessel_k0, _no_complex("modified_bessel_k0"), None,
                                None),
    special_modified_bessel_k1=(K.modified_bessel_k1, _no_complex("modified_bessel_k1"), None,
                                None),
    special_scaled_modified_bessel_k0=(K.scaled_modified_bessel_k0,
                                       _no_complex("scaled_modified_bessel_k0"), None, None),
    special_scaled_modified_bessel_k1=(K.scaled_modified_bessel_k1,
                                       _no_complex("scaled_modified_bessel_k1"), None, None),
    special_spherical_bessel_j0=(K.spherical_bessel_j0, _no_complex("spherical_bessel_j0"),
                                 None, None),
)
# (nondiff: no tangent in forward mode either, as torch's non_differentiable outputs)
UNARY = {name: defop(name, fn, node=node, complex_error=err, nondiff=() if f else (0,),
                     **({} if f is None else {"self": f}))
         for name, (fn, err, f, node) in _UNARY.items()}


def _unary_fn(name):
    op = UNARY[name]

    def f(input):
        return call_op(op, (_to_float(input),))
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"torch.{name.replace('special_', 'special.')}, elementwise."
    return f


acosh = _unary_fn("acosh")
asinh = _unary_fn("asinh")
atanh = _unary_fn("atanh")
erfc = _unary_fn("erfc")
erfinv = _unary_fn("erfinv")
lgamma = _unary_fn("lgamma")
digamma = _unary_fn("digamma")
i0 = _unary_fn("i0")
sinc = _unary_fn("sinc")
deg2rad = _unary_fn("deg2rad")
rad2deg = _unary_fn("rad2deg")
special_erfcx = _unary_fn("special_erfcx")
special_i0e = _unary_fn("special_i0e")
special_i1 = _unary_fn("special_i1")
special_i1e = _unary_fn("special_i1e")
special_ndtri = _unary_fn("special_ndtri")
special_log_ndtr = _unary_fn("special_log_ndtr")
special_entr = _unary_fn("special_entr")
special_airy_ai = _unary_fn("special_airy_ai")
special_bessel_j0 = _unary_fn("special_bessel_j0")
special_bessel_j1 = _unary_fn("special_bessel_j1")
special_bessel_y0 = _unary_fn("special_bessel_y0")
special_bessel_y1 = _unary_fn("special_bessel_y1")
special_modified_bessel_i0 = _unary_fn("special_modified_bessel_i0")
special_modified_bessel_i1 = _unary_fn("special_modified_bessel_i1")
special_modified_bessel_k0 = _unary_fn("special_modified_bessel_k0")
special_modified_bessel_k1 = _unary_fn("special_modified_bessel_k1")
special_scaled_modified_bessel_k0 = _unary_fn("special_scaled_modified_bessel_k0")
special_scaled_modified_bessel_k1 = _unary_fn("special_scaled_modified_bessel_k1")
special_spherical_bessel_j0 = _unary_fn("special_spherical_bessel_j0")
arccosh, arcsinh, arctanh = acosh, asinh, atanh
arccos, arcsin, arctan, arctan2 = acos, asin, atan, atan2
fix = trunc


# torch's in-place inverse hyperbolics record a node of their own whose backward raises
# (derivatives.yaml: acosh_: not_implemented("inplace version of acosh"))
_INPLACE_HYP = {n: defop(n + "_", getattr(jnp, "arc" + n[1:]), node=n.capitalize() + "Backward1",
                         self=_derivative_not_implemented(f"inplace version of {n}"))
                for n in ("acosh", "asinh", "atanh")}


def _hyperbolic_(name):
    op = _INPLACE_HYP[name]

    def twin(x):
        return call_op(op, (_to_float(x),))

    def f(input):
        return inplace(input, twin)
    f.__name__ = f.__qualname__ = name + "_"
    f.__doc__ = f"Tensor.{name}_(): {name} in place (torch records AcoshBackward1-style nodes)."
    return f


acosh_ = arccosh_ = _hyperbolic_("acosh")
asinh_ = arcsinh_ = _hyperbolic_("asinh")
atanh_ = arctanh_ = _hyperbolic_("atanh")


def square(input):
    """torch.square: input ** 2 (PowBackward0; bool gives int64, as torch's pow).

    >>> import eagergrad as torch
    >>> torch.square(torch.tensor([-2.0, 3.0]))
    tensor([4., 9.])
    """
    return pow(input, 2)


def positive(input):
    """torch.positive: input itself (bool refused, as torch's unary +)."""
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- polygamma, mvlgamma, logit -------------------------------------------------------------
_POLYGAMMA_KERNELS = {0: "digamma", 1: "trigamma"}


def _polygamma_k(self, n):
    if jnp.iscomplexobj(self):
        _no_kernel(_POLYGAMMA_KERNELS.get(n, "polygamma"), D.FROM_NP[jnp.dtype(self.dtype)])
    return K.polygamma(n, self)


POLYGAMMA = defop("polygamma", _polygamma_k, attrs=("n",),
                  self=lambda grad, self, n: grad * polygamma(n + 1, self))
POLYGAMMA_ = defop("polygamma_", _polygamma_k, attrs=("n",), node="PolygammaBackward1",
                   self=lambda grad, self, n: grad * polygamma(n + 1, self))


def _check_n(n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n, input):
    """torch.polygamma(n, input), the n-th derivative of digamma (as a method:
    `input.polygamma(n)`).

    >>> import eagergrad as torch
    >>> torch.polygamma(1, torch.tensor([1.0]))
    tensor([1.6449])
    """
    if isinstance(n, Tensor) and not isinstance(input, Tensor):  # Tensor.polygamma(self, n)
        n, input = input, n
    _check_n(n)
    return call_op(POLYGAMMA, (_to_float(input),), (int(n),))


def polygamma_(input, n):
    """Tensor.polygamma_(n) (torch's PolygammaBackward1)."""
    _check_n(n)
    return inplace(input, lambda x: call_op(POLYGAMMA_, (_to_float(x),), (int(n),)))


def _mvlgamma_k(self, p):
    if jnp.iscomplexobj(self):
        _no_kernel("arange_cpu", D.FROM_NP[jnp.dtype(self.dtype)])
    return K.mvlgamma(self, p)


def _mvlgamma_grad(grad, self, p):
    from ..creation import arange
    args = arange(-p / 2. + 0.5, 0.5, 0.5, dtype=self.dtype) + self.unsqueeze(-1)
    return grad * digamma(args).sum(-1)


MVLGAMMA = defop("mvlgamma", _mvlgamma_k, attrs=("p",), self=_mvlgamma_grad)


def mvlgamma(input, p):
    """torch.mvlgamma: the multivariate log-gamma of dimension p.

    >>> import eagergrad as torch
    >>> torch.mvlgamma(torch.tensor([2.5]), 1)
    tensor([0.2847])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return call_op(MVLGAMMA, (_to_float(input),), (int(p),))


def _logit_k(self, eps):
    if eps is not None:  # torch clamps for eps >= 0 (and keeps x for a negative eps)
        lo, hi = eps, 1 - eps
        clamped = jnp.where(self < lo, lo, jnp.where(self > hi, hi, self)).astype(self.dtype)
        self = jnp.where(eps < 0, self, clamped)
    return jnp.log(self / (1 - self))


def _logit_grad(grad, self, eps):
    g = grad / (self * (1 - self))
    if STATE.grad:  # torch's infinitely_differentiable_logit_backward (create_graph)
        if eps is None:
            return where((self >= 0) & (self <= 1), g, math.nan)
        return where((self >= eps) & (self <= 1 - eps), g, 0.0)
    if eps is None or eps < 0:  # torch's logit_backward kernel
        return where((self < 0) | (self > 1), math.nan, g)
    return where((self < eps) | (self > 1 - eps), 0.0, g)


LOGIT = defop("logit", _logit_k, attrs=("eps",), dynamic=("eps",),
              complex_error=_cpu_kernel("logit_cpu"), self=_logit_grad)
LOGIT.static_of = scalar_types


def logit(input, eps=None):
    """torch.logit: log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given.

    >>> import eagergrad as torch
    >>> torch.logit(torch.tensor([0.5, 0.75]))
    tensor([0.0000, 1.0986])
    """
    return call_op(LOGIT, (_to_float(input),), (None if eps is None else keyed(float(eps)),))


# ---- predicates (bool results) --------------------------------------------------------------
def _pred(name, fn, complex_error=None):
    op = defop(name, fn, complex_error=complex_error)

    def f(input):
        return call_op(op, (input,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}, elementwise (a bool tensor)."
    return f


def _signbit_k(a):
    if a.dtype == jnp.bool_ or jnp.issubdtype(a.dtype, jnp.unsignedinteger):
        return jnp.zeros(a.shape, bool)
    return jnp.signbit(a) if jnp.issubdtype(a.dtype, jnp.floating) else a < 0


def _isinf_sign(sign):
    def k(a):
        if not jnp.issubdtype(a.dtype, jnp.floating):
            return jnp.zeros(a.shape, bool)
        return a == sign * jnp.inf
    return k


signbit = _pred("signbit", _signbit_k,
                (NotImplementedError, "signbit is not implemented for complex tensors."))
isposinf = _pred("isposinf", _isinf_sign(1),
                 (RuntimeError, "isposinf does not support complex inputs."))
isneginf = _pred("isneginf", _isinf_sign(-1),
                 (RuntimeError, "isneginf does not support complex inputs."))
isreal = _pred("isreal", lambda a: a.imag == 0 if jnp.iscomplexobj(a)
               else jnp.ones(a.shape, bool))


# ---- frexp -------------------------------------------------------------------------------------
def _frexp_k(self):
    m, e = jnp.frexp(self)
    finite = jnp.isfinite(self)  # torch (std::frexp): inf and nan keep themselves, exponent 0
    return jnp.where(finite, m, self), jnp.where(finite, e, 0).astype(jnp.int32)


FREXP = defop("frexp", _frexp_k, outputs=("mantissa", "exponent"), nondiff=(1,),
              self=lambda grad, exponent: grad / exponent.exp2())


def frexp(input):
    """torch.frexp: (mantissa, exponent) with input = mantissa * 2 ** exponent.

    >>> import eagergrad as torch
    >>> torch.frexp(torch.tensor([8.0])).exponent
    tensor([4], dtype=torch.int32)
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = call_op(FREXP, (input,))
    return _frexp_result(m, e)


class _FrexpResult(tuple):
    """torch.return_types.frexp: (mantissa, exponent) with names."""
    __slots__ = ()

    @property
    def mantissa(self):
        return self[0]

    @property
    def exponent(self):
        return self[1]

    def __repr__(self):
        return f"eagergrad.return_types.frexp(\nmantissa={self[0]!r},\nexponent={self[1]!r})"


_FrexpResult.__name__ = _FrexpResult.__qualname__ = "frexp"
_FrexpResult.__module__ = "eagergrad.return_types"


def _frexp_result(m, e):
    return _FrexpResult((m, e))


# ---- binary, float-valued with scalar variants: xlogy, xlog1py, zeta -----------------------
def _binary_float(name, kernel, self_f, other_f, node, scalar_nodes, complex_kernel, api):
    """Three ops as torch's three overloads: (Tensor, Tensor), (Scalar, Tensor) and (Tensor,
    Scalar), the scalar a wrapped 0-dim tensor without a formula."""
    def k(self, other, dtype):
        return kernel(self.astype(_c(dtype)), other.astype(_c(dtype)))
    kw = dict(inputs=("self", "other"), attrs=("dtype",),
              complex_error=_cpu_kernel(complex_kernel))
    base = node[:-1]
    ops = (defop(name, k, node=node, self=self_f, other=other_f, **kw),
           defop(name + "_scalar_self", k, node=base + scalar_nodes[0], other=other_f, **kw),
           defop(name + "_scalar_other", k, node=base + scalar_nodes[1], self=self_f, **kw))

    def f(input, other):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            _numbers_error(api, input, other)
        a, b = as_t(input), as_t(other)
        op = ops[1] if a._wrapped else (ops[2] if b._wrapped else ops[0])
        return _run(op, (a, b), (float_of(promote(a, b)),))
    f.__name__ = f.__qualname__ = api
    return ops, f


def _numbers_error(api, a, b):
    """torch's argument parser on (Number, Number) for the (Tensor | Number) overloads."""
    raise TypeError(f"{api}() received an invalid combination of arguments - got "
                    f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
                    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                    " * (Number self, Tensor other, *, Tensor out = None)\n"
                    " * (Tensor input, Number other, *, Tensor out = None)\n")


def _xlogy_self(grad, self, other):
    return where((self == 0) & (other <= 0), 0.0, xlogy(grad, other))


def _xlog1py_self(grad, self, other):
    return where((self == 0) & (other <= -1), 0.0, special_xlog1py(grad, other))


XLOGY_OPS, xlogy = _binary_float(
    "xlogy_tensor", K.xlogy, _xlogy_self, lambda grad, self, other: grad * self / other,
    "XlogyBackward0", ("1", "2"), "xlogy_cpu", "xlogy")
xlogy.__doc__ = """torch.xlogy: x * log(y), 0 where x == 0 (unless y is NaN).

    >>> import eagergrad as torch
    >>> torch.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
XLOG1PY_OPS, special_xlog1py = _binary_float(
    "special_xlog1py", K.xlog1py, _xlog1py_self,
    lambda grad, self, other: grad * self / (other + 1), "SpecialXlog1PyBackward0", ("1", "2"),
    "xlog1py_cpu", "special_xlog1py")
ZETA_OPS, special_zeta = _binary_float(
    "special_zeta", K.zeta, _derivative_not_implemented("zeta"),
    lambda grad, self, other: grad * -self * special_zeta(self + 1., other),
    "SpecialZetaBackward0", ("1", "2"), "zeta_cpu", "special_zeta")


def _igamma_grad(sign):
    def formula(grad, self, other):
        return sign * grad * ((self - 1) * other.log() - other - lgamma(self)).exp()
    return formula


def _igamma(name, kernel, api=None):
    op = defop(name, lambda self, other, dtype: kernel(self.astype(_c(dtype)),
                                                      other.astype(_c(dtype))),
               inputs=("self", "other"), attrs=("dtype",),
               self=_derivative_not_implemented(f"{name}: input"),
               other=_igamma_grad(1 if name == "igamma" else -1))

    def f(input, other):
        _need_tensors(api or name, input, other)
        dt = promote(input, other)
        if not dt.is_floating_point:
            _no_kernel(f"{name}_cpu", dt)
        return _run(op, (input, other), (dt,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}: the regularized {'lower' if name == 'igamma' else 'upper'} " \
        "incomplete gamma function of (input, other)."
    return f


igamma = _igamma("igamma", K.igamma)
igammac = _igamma("igammac", K.igammac)


# ---- binary: logaddexp, logaddexp2, hypot, nextafter, fmax, fmin --------------------------
def _binary(name, kernel, formulas, complex_error, node=None, floats_only=True):
    op = defop(name, lambda self, other, dtype: kernel(self.astype(_c(dtype)),
                                                      other.astype(_c(dtype))),
               inputs=("self", "other"), attrs=("dtype",), node=node, **formulas)

    def f(input, other):
        _need_tensors(name, input, other)
        dt = promote(input, other)
        if dt.is_complex and complex_error is not None:
            exc, msg = complex_error
            raise exc(msg.format(dt.scalar_name))
        if floats_only and not dt.is_differentiable:
            _no_kernel(f"{name}_cpu", dt)
        return _run(op, (input, other), (dt,))
    f.__name__ = f.__qualname__ = name
    return f


logaddexp = _binary(
    "logaddexp", K.logaddexp,
    dict(self=lambda grad, self, other: grad / (1 + (other - self).exp()).conj(),
         other=lambda grad, self, other: grad / (1 + (self - other).exp()).conj()), None)
logaddexp2 = _binary(
    "logaddexp2", K.logaddexp2,
    dict(self=lambda grad, self, other: grad / (1 + pow(2, other - self)),
         other=lambda grad, self, other: grad / (1 + pow(2, self - other))),
    _cpu_kernel("logaddexp2_cpu"))
hypot = _binary(
    "hypot", jnp.hypot,
    dict(self=lambda grad, self, result: grad * self / result,
         other=lambda grad, other, result: grad * other / result), _cpu_kernel("hypot_cpu"))
nextafter = _binary(
    "nextafter", K.nextafter,
    dict(self=lambda grad, self, other: where(self != other, grad, 0.0), other=_zeros),
    _cpu_kernel("nextafter_cpu"))


def _fmax_keep(self, other):
    return (self >= other) | other.isnan()


def _fmin_keep(self, other):
    return (self <= other) | other.isnan()


fmax = _binary(
    "fmax", jnp.fmax,
    dict(self=lambda grad, self, other: where(_fmax_keep(self, other), grad, 0.0),
         other=lambda grad, self, other: where(_fmax_keep(self, other), 0.0, grad)),
    (RuntimeError, "fmax not implemented for complex tensors."), floats_only=False)
fmin = _binary(
    "fmin", jnp.fmin,
    dict(self=lambda grad, self, other: where(_fmin_keep(self, other), grad, 0.0),
         other=lambda grad, self, other: where(_fmin_keep(self, other), 0.0, grad)),
    (RuntimeError, "fmin not implemented for complex tensors."), floats_only=False)
for _f, _d in ((logaddexp, "log(exp(input) + exp(other))"),
               (logaddexp2, "log2(2 ** input + 2 ** other)"),
               (hypot, "sqrt(input ** 2 + other ** 2)"),
               (nextafter, "the next float after input towards other"),
               (fmax, "the maximum, ignoring NaNs"), (fmin, "the minimum, ignoring NaNs")):
    _f.__doc__ = f"torch.{_f.__name__}: {_d}, elementwise."
del _f, _d


# ---- fmod, copysign (tensor and scalar overloads) ------------------------------------------
def _fmod_k(self, other, dtype):
    return jnp.fmod(self.astype(_c(dtype)), other.astype(_c(dtype)))


FMOD = defop("fmod", _fmod_k, inputs=("self", "other"), attrs=("dtype",), node="FmodBackward1",
             self=lambda grad: grad,
             other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"))
FMOD_S = defop("fmod_scalar", _fmod_k, inputs=("self", "other"), attrs=("dtype",),
               node="FmodBackward0", self=lambda grad: grad)


def _overloads_error(name, a, b, params="Tensor input, Tensor other"):
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
                    f" * ({params}, *, Tensor out = None)\n"
                    " * (Tensor input, Number other, *, Tensor out = None)\n")


def fmod(input, other):
    """torch.fmod: the C remainder (the sign of the dividend).

    >>> import eagergrad as torch
    >>> torch.fmod(torch.tensor([-7.0, 7.0]), 2)
    tensor([-1.,  1.])
    """
    if not isinstance(input, Tensor):
        _overloads_error("fmod", input, other)
    b = as_t(other)
    dt = promote(input, b)
    if dt is D.bool_ or dt.is_complex:
        _no_kernel("fmod_cpu", dt)
    _check_int_divisor(dt, b, "fmod_cpu")
    return _run(FMOD_S if b._wrapped else FMOD, (input, b), (dt,))


def _copysign_grad(grad, self, result):
    return grad * where(self == 0, 0.0, result / self)


def _copysign_k(self, other, dtype):
    return jnp.copysign(self.astype(_c(dtype)), other.astype(_c(dtype)))


COPYSIGN = defop("copysign", _copysign_k, inputs=("self", "other"), attrs=("dtype",),
                 self=_copysign_grad, other=_zeros)
COPYSIGN_S = defop("copysign_scalar", _copysign_k, inputs=("self", "other"), attrs=("dtype",),
                   node="CopysignBackward1", self=_copysign_grad)


def copysign(input, other):
    """torch.copysign: |input| with the sign of other (integers compute in floats).

    >>> import eagergrad as torch
    >>> torch.copysign(torch.tensor([1.0, -2.0]), -1.0)
    tensor([-1., -2.])
    """
    if not isinstance(input, Tensor):
        _overloads_error("copysign", input, other)
    b = as_t(other)
    dt = _float_dt(promote(input, b), "copysign_cpu")
    return _run(COPYSIGN_S if b._wrapped else COPYSIGN, (input, b), (dt,))


def _float_dt(dt, kernel):
    dt = float_of(dt)
    if dt.is_complex:
        _no_kernel(kernel, dt)
    return dt


# ---- ldexp ---------------------------------------------------------------------------------------
def _ldexp_k(self, other, mode, pdt, dtype):
    if mode == "int":  # torch's std::ldexp kernel (float self, integer exponent): exact
        x, e = jnp.broadcast_arrays(self, other)
        return jnp.ldexp(x, e.astype(jnp.int32)).astype(_c(dtype))
    p = jnp.power(jnp.asarray(2.0, _c(pdt)), other.astype(_c(pdt)))
    return (self.astype(_c(dtype)) * p.astype(_c(dtype))).astype(_c(dtype))


LDEXP = defop("ldexp", _ldexp_k, inputs=("self", "other"), attrs=("mode", "pdt", "dtype"),
              # (an integer `other` takes torch's integer pow: 2 ** -1 is 0 there)
              self=lambda grad, other: grad * pow(2, other).conj(),
              other=lambda grad, result: grad * result.conj() * _LN2)


def ldexp(input, other):
    """torch.ldexp: input * 2 ** other.

    >>> import eagergrad as torch
    >>> torch.ldexp(torch.tensor([1.0]), torch.tensor([3]))
    tensor([8.])
    """
    _need_tensors("ldexp", input, other)
    sdt = input.dtype
    if not other.dtype.is_differentiable and sdt.is_floating_point:
        return _run(LDEXP, (input, other), ("int", None, sdt))
    # torch's _pow2: 2.0 ** other as a wrapped number, or as a 0-dim tensor of input's dtype
    two = as_t(2.0) if (not sdt.is_differentiable or sdt is D.float32) else \
        _zero_dim(sdt)
    pdt = promote(two, other)
    dt = float_of(promote(input, _meta_like(pdt)))
    return _run(LDEXP, (input, other), ("pow", pdt, dt))


def _zero_dim(dt):
    from ..creation import tensor
    return tensor(2.0, dtype=dt)


def _meta_like(dt):
    from ..creation import zeros
    return zeros(1, dtype=dt)


# ---- lerp, addcmul, addcdiv ------------------------------------------------------------------
def _lerp_s_k(self, end, weight):
    return K.lerp(self, end, jnp.asarray(weight, self.dtype))


def _conj_num(w):
    return w.conjugate() if isinstance(w, complex) else w


LERP_S = defop("lerp_scalar", _lerp_s_k, inputs=("self", "end"), attrs=("weight",),
               dynamic=("weight",), node="LerpBackward0",
               self=lambda grad, weight: grad * (1 - _conj_num(weight)),
               end=lambda grad, weight: grad * _conj_num(weight))
LERP_S.static_of = scalar_types
LERP = defop("lerp", lambda self, end, weight: K.lerp(*jnp.broadcast_arrays(self, end, weight)),
             inputs=("self", "end", "weight"), node="LerpBackward1",
             self=lambda grad, weight: grad * (1 - weight).conj(),
             end=lambda grad, weight: grad * weight.conj(),
             weight=lambda grad, self, end: grad * (end - self).conj())


def _cpp_type(dt):
    return {D.float32: "float", D.float64: "double", D.complex64: "c10::complex<float>",
            D.complex128: "c10::complex<double>", D.float16: "c10::Half",
            D.bfloat16: "c10::BFloat16"}.get(dt, dt.scalar_name)


def lerp(input, end, weight):
    """torch.lerp: input + weight * (end - input) (weight a number or a tensor).

    >>> import eagergrad as torch
    >>> torch.lerp(torch.tensor([0.0]), torch.tensor([10.0]), 0.25)
    tensor([2.5000])
    """
    _need_tensors("lerp", input, end)
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"expected dtype {_cpp_type(dt)} for `end` but got dtype "
                           f"{_cpp_type(end.dtype)}")
    if isinstance(weight, Tensor):
        if weight.ndim > 0 and weight.dtype is not dt:
            raise RuntimeError(f"expected dtype {_cpp_type(dt)} for `weight` but got dtype "
                               f"{_cpp_type(weight.dtype)}")
        if not dt.is_differentiable:
            _no_kernel("lerp_kernel_tensor", dt)
        return _run(LERP, (input, end, weight.to(dt)))
    if not dt.is_differentiable:
        _no_kernel("lerp_kernel_scalar", dt)
    check_int64(weight)
    if isinstance(weight, complex) and not dt.is_complex:
        raise RuntimeError(f"value cannot be converted to type {_cpp_type(dt)} without overflow")
    return _run(LERP_S, (input, end), (keyed(weight),))


def _addc_k(div_):
    def k(self, tensor1, tensor2, value, dtype):
        a, b, c = (t.astype(_c(dtype)) for t in (self, tensor1, tensor2))
        v = jnp.asarray(value, _c(dtype))
        return (a + v * b / c if div_ else a + v * b * c).astype(_c(dtype))
    return k


ADDCMUL = defop("addcmul", _addc_k(False), inputs=("self", "tensor1", "tensor2"),
                attrs=("value", "dtype"), dynamic=("value",),
                self=lambda grad: grad,
                tensor1=lambda grad, tensor2, value: grad * (tensor2 * value).conj(),
                tensor2=lambda grad, tensor1, value: grad * (tensor1 * value).conj())
ADDCDIV = defop("addcdiv", _addc_k(True), inputs=("self", "tensor1", "tensor2"),
                attrs=("value", "dtype"), dynamic=("value",),
                self=lambda grad: grad,
                tensor1=lambda grad, tensor2, value: grad * (value / tensor2).conj(),
                tensor2=lambda grad, tensor1, tensor2, value:
                -grad * (value * tensor1 / (tensor2 * tensor2)).conj())
for _op in (ADDCMUL, ADDCDIV):
    _op.static_of = lambda attrs: (scalar_types(attrs[:1])[0], attrs[1])
del _op

_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future  release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _addc(name, op, input, tensor1, tensor2, value):
    for arg, pos, x in (("input", 1, input), ("tensor1", 2, tensor1), ("tensor2", 3, tensor2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")
    dt = promote(input, tensor1, tensor2)
    if dt is D.bool_:
        _no_kernel(f"{name}_cpu_out", dt)
    check_int64(value)
    if isinstance(value, complex) and not dt.is_complex:
        raise RuntimeError(f"value cannot be converted to type {_cpp_type(dt)} without overflow")
    if not dt.is_differentiable:  # torch converts value to the integer type (truncation)
        value = int(value.real if isinstance(value, complex) else value)
        check_scalar(value, dt)
    return _run(op, (input, tensor1, tensor2), (keyed(value), dt))


def addcmul(input, tensor1, tensor2, *, value=1):
    """torch.addcmul: input + value * tensor1 * tensor2.

    >>> import eagergrad as torch
    >>> torch.addcmul(torch.tensor([1.0]), torch.tensor([2.0]), torch.tensor([3.0]), value=0.5)
    tensor([4.])
    """
    return _addc("addcmul", ADDCMUL, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """torch.addcdiv: input + value * tensor1 / tensor2 (integer tensor1 and tensor2 refused).

    >>> import eagergrad as torch
    >>> torch.addcdiv(torch.tensor([1.0]), torch.tensor([2.0]), torch.tensor([4.0]), value=2)
    tensor([2.])
    """
    if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and \
            not tensor1.dtype.is_differentiable and not tensor2.dtype.is_differentiable:
        raise RuntimeError(_ADDCDIV_INT)
    return _addc("addcdiv", ADDCDIV, input, tensor1, tensor2, value)


# ---- float_power, true_divide and the other aliases ---------------------------------------------
def float_power(input, exponent):
    """torch.float_power: pow in double precision (complex128 if either is complex).

    >>> import eagergrad as torch
    >>> torch.float_power(torch.tensor([2]), 3).dtype
    torch.float64
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        _overloads_error("float_power", input, exponent,
                         "Tensor input, Tensor exponent")
    dt = _float_power_dtype(input, exponent)
    a = input.to(dt) if isinstance(input, Tensor) else input
    b = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return pow(a, b)


def _float_power_dtype(a, b):
    cplx = any(x.is_complex() if isinstance(x, Tensor) else isinstance(x, complex)
               for x in (a, b))
    return D.complex128 if cplx else D.float64


def float_power_(input, exponent):
    """Tensor.float_power_: only for a float64 (complex128) tensor, as torch."""
    dt = _float_power_dtype(input, exponent)
    if input.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {input.dtype.scalar_name} "
                           f"but the operation's result requires dtype {dt.scalar_name}")
    return inplace(input, float_power, exponent)



def true_divide(input, other):
    """torch.true_divide: div without rounding."""
    return div(input, other)


multiply = mul
subtract = sub
divide = div


# ---- heaviside -------------------------------------------------------------------------------
def _heaviside_k(self, values):
    zero = jnp.zeros((), self.dtype)
    return jnp.where(self == 0, values, (self > zero).astype(self.dtype)).astype(self.dtype)


HEAVISIDE = defop("heaviside", _heaviside_k, inputs=("self", "values"), node="NotImplemented",
                  self=_not_implemented("heaviside"), values=_not_implemented("heaviside"))
HEAVISIDE_ = defop("heaviside_", _heaviside_k, inputs=("self", "values"), node="NotImplemented",
                   self=_not_implemented("heaviside_"), values=_not_implemented("heaviside_"))


def _heaviside_check(input, values):
    for arg, pos, x in (("input", 1, input), ("values", 2, values)):
        if not isinstance(x, Tensor):
            raise TypeError(f"heaviside(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def heaviside(input, values):
    """torch.heaviside: 0 below zero, values at zero, 1 above (no derivative, as torch).

    >>> import eagergrad as torch
    >>> torch.heaviside(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    _heaviside_check(input, values)
    return _run(HEAVISIDE, (input, values))


def heaviside_(input, values):
    """Tensor.heaviside_(values)."""
    _heaviside_check(input, values)
    return inplace(input, lambda x, v: _run(HEAVISIDE_, (x, v)), values)


# ---- integer ops: gcd, lcm, shifts --------------------------------------------------------------
def _int_binary(name, kernel, kernel_name, scalar_ok=False):
    op = defop(name, lambda self, other, dtype: kernel(self.astype(_c(dtype)),
                                                      other.astype(_c(dtype))),
               inputs=("self", "other"), attrs=("dtype",))

    def f(input, other):
        if scalar_ok:
            if not isinstance(input, Tensor) and not isinstance(other, Tensor):
                _overloads_error(name, input, other)
            a, b = as_t(input), as_t(other)
        else:
            _need_tensors(name, input, other)
            a, b = input, other
        dt = promote(a, b)
        if dt.is_differentiable or dt is D.bool_:
            _no_kernel(kernel_name, dt)
        return _run(op, (a, b), (dt,))
    f.__name__ = f.__qualname__ = name
    return f


gcd = _int_binary("gcd", jnp.gcd, "gcd_cpu")
lcm = _int_binary("lcm", lambda a, b: jnp.abs(jnp.lcm(a, b)).astype(a.dtype), "lcm_cpu")
bitwise_left_shift = _int_binary("bitwise_left_shift", K.shift_left, "lshift_cpu", True)
bitwise_right_shift = _int_binary("bitwise_right_shift", K.shift_right, "rshift_cpu", True)
gcd.__doc__ = "torch.gcd: the greatest common divisor (non-negative), of integer tensors."
lcm.__doc__ = "torch.lcm: the least common multiple (non-negative), of integer tensors."
bitwise_left_shift.__doc__ = "torch.bitwise_left_shift (past the width: 0, as torch)."
bitwise_right_shift.__doc__ = "torch.bitwise_right_shift (arithmetic for signed integers)."


# ---- the orthogonal polynomials of torch.special (x, n): not differentiable ------------------
_POLYNOMIALS = {
    f"{s}chebyshev_polynomial_{k}": K.chebyshev_polynomial(k, bool(s))
    for s in ("", "shifted_") for k in "tuvw"}
_POLYNOMIALS.update(hermite_polynomial_h=K.hermite_polynomial_h,
                    hermite_polynomial_he=K.hermite_polynomial_he,
                    laguerre_polynomial_l=K.laguerre_polynomial_l,
                    legendre_polynomial_p=K.legendre_polynomial_p)


def _polynomial(name, kernel):
    op = defop("special_" + name, lambda x, n, dtype: kernel(x.astype(_c(dtype)),
                                                            n.astype(_c(dtype))),
               inputs=("x", "n"), attrs=("dtype",), complex_error=_cpu_kernel(f"{name}_cpu"),
               nondiff=(0,))

    def f(input, n):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - "
                            f"got ({type(input).__name__}, {type(n).__name__}), but expected "
                            "one of:\n * (Tensor x, Tensor n, *, Tensor out = None)\n"
                            " * (Number x, Tensor n, *, Tensor out = None)\n"
                            " * (Tensor x, Number n, *, Tensor out = None)\n")
        x, nt = as_t(input), as_t(n)
        return _run(op, (x, nt), (float_of(promote(x, nt)),))
    f.__name__ = f.__qualname__ = "special_" + name
    f.__doc__ = f"torch.special.{name}(input, n): not differentiable (as torch)."
    return f


for _n, _k in _POLYNOMIALS.items():
    globals()["special_" + _n] = _polynomial(_n, _k)
del _n, _k


def special_ndtr(input):
    """torch.special.ndtr: the standard normal CDF, composed as torch's
    (1 + erf(x / sqrt 2)) / 2 (MulBackward1, AddBackward1, ErfBackward0, MulBackward1)."""
    from .pointwise import _add_s, _mul_s
    from .unary import erf
    x = _to_float(input)
    return _mul_s(_add_s(erf(_mul_s(x, K._SQRT1_2)), 1.0), 0.5)

