"""Sample inputs for every op in `eagergrad.ops.OPS`, shared by the op test suites.

SAMPLES maps each op-table name to a list of `Sample`s. A sample's `call(m, *tensors)`
uses only the public torch API, so the same function runs with `m=torch` and
`m=eagergrad`; its inputs are described by `Arg`s (shape, dtype, domain, requires_grad).
Internal ops (select_backward, index_put_acc, ...) are reached through the public call
whose backward uses them: the double-backward check differentiates the first-order
gradients w.r.t. the grad_outputs too, which runs these ops' own Backward nodes.

Dtype codes for `Arg.dtype`: "f" is the float dtype the test is parametrized over
(float32 / float64), "c" its complex counterpart (complex64 / complex128); anything else
is a fixed torch dtype name ("float32", "int64", "bool", ...).
"""
import copy
import math
import zlib

import numpy as np
import pytest

FLOAT = "f"
COMPLEX = "c"
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


class Arg:
    """One tensor input: shape, dtype code, values uniform in [lo, hi) (real and imaginary
    parts alike for complex; integers in [lo, hi) for integer dtypes) or fixed `value`."""

    def __init__(self, shape=(), dtype=FLOAT, lo=-2.0, hi=2.0, rg=None, value=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.lo, self.hi = lo, hi
        self.value = value
        self.rg = (dtype in (FLOAT, COMPLEX) or "float" in dtype or "complex" in dtype) \
            if rg is None else rg
        if value is not None:
            self.shape = np.shape(value)

    def dtype_name(self, fdt):
        if self.dtype == FLOAT:
            return fdt
        if self.dtype == COMPLEX:
            return _COMPLEX_OF[fdt]
        return self.dtype

    def make(self, fdt, rng):
        """The input values as a numpy array of the concrete dtype (fdt: float32/64)."""
        name = self.dtype_name(fdt)
        np_dt = np.dtype("bool" if name == "bool" else name)
        if self.value is not None:
            return np.asarray(self.value).astype(np_dt)
        if name == "bool":
            return rng.random(self.shape) < 0.5
        if np.issubdtype(np_dt, np.integer):
            return rng.integers(int(self.lo), int(self.hi), self.shape).astype(np_dt)
        a = rng.uniform(self.lo, self.hi, self.shape)
        if np.issubdtype(np_dt, np.complexfloating):
            a = a + 1j * rng.uniform(self.lo, self.hi, self.shape)
        return np.asarray(a).astype(np_dt)

    @property
    def parametrized(self):
        return self.dtype in (FLOAT, COMPLEX)

    @property
    def is_complex(self):
        return self.dtype == COMPLEX or "complex" in self.dtype


class Sample:
    """One way to call an op.

    nondiff: no output is differentiable (comparisons, integer results...); the tests
          check that no output requires grad, in torch and in eagergrad.
    backward_error: a phrase of the RuntimeError torch raises in backward (ops torch
          records with a NotImplemented node); grads are then not compared.
    double_backward: check second-order gradients against torch.
    jax / fd: include in the jax.vjp comparison / in finite differences.
    """

    def __init__(self, call, *args, name="", nondiff=False, backward_error=None,
                 double_backward=True, jax=True, fd=True, tol=None, xfail=None):
        self.call = call
        self.args = args
        self.name = name
        self.nondiff = nondiff
        grad = not nondiff
        self.backward_error = backward_error
        self.double_backward = double_backward and grad and backward_error is None
        self.jax = jax and grad and backward_error is None
        self.fd = fd and grad and backward_error is None and \
            not any(a.is_complex for a in args if a.rg)
        self.tol = tol  # (rtol, atol) for float32, else defaults
        self.xfail = xfail or {}  # aspect -> reason (strict xfail in the torch tests)
        self.id = None  # set below: "<op>:<i>"

    @property
    def differentiable(self):
        return not self.nondiff and any(a.rg for a in self.args)

    def dtypes(self):
        """Float dtypes this sample is run in: both if any input is parametrized."""
        if any(a.parametrized for a in self.args):
            return ("float32", "float64")
        return ("fixed",)

    def arrays(self, fdt):
        """Numpy inputs for float dtype fdt ("fixed" uses float64 for "f"/"c" codes)."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        fdt = "float64" if fdt == "fixed" else fdt
        return [a.make(fdt, rng) for a in self.args]

    def __repr__(self):
        return f"<Sample {self.id} {self.name}>"


# ---- shorthands -------------------------------------------------------------------
def F(*shape, lo=-2.0, hi=2.0, rg=True):
    """A float input (parametrized dtype)."""
    return Arg(shape, FLOAT, lo, hi, rg)


def C(*shape, lo=-1.5, hi=1.5, rg=True):
    """A complex input (parametrized dtype)."""
    return Arg(shape, COMPLEX, lo, hi, rg)


def T(dtype, *shape, lo=-2, hi=2, rg=None):
    """An input of a fixed dtype."""
    return Arg(shape, dtype, lo, hi, rg)


def V(value, dtype=FLOAT, rg=None):
    """An input with fixed values."""
    return Arg((), dtype, rg=rg, value=value)


def I(value):  # noqa: E743
    """An int64 index tensor with fixed values."""
    return Arg((), "int64", rg=False, value=value)


S = Sample
POS = dict(lo=0.5, hi=2.0)
UNIT = dict(lo=-0.9, hi=0.9)
CPOS = dict(lo=0.3, hi=1.5)  # complex in the first quadrant: away from branch cuts
NAN, INF = math.nan, math.inf
_FMOD_A = [1.0, -1.0, 5.5, 0.3, 7.0, -7.0]
_FMOD_B = [0.1, 0.1, -2.0, 0.1, 0.7, 0.7]
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]


def _setitem(t, index, value):
    t[index] = value
    return t


def _mul_view_(t, index, base=False):
    """t[index] *= 2 (an in-place op on a view); the view, or its base."""
    v = t[index]
    v.mul_(2)
    return t if base else v


def _mul_real_(z):
    """z.real *= 3 (an in-place op on a real view of a complex base); the base."""
    z.real.mul_(3)
    return z


def _add_imag_(z, y):
    z.imag.add_(y * y)
    return z


def _inplace_complex(m, t, w):
    m.view_as_complex(t).mul_(w)
    return t


def _add_view_(t, other, base=False):
    v = t[1]
    v.add_(other)
    return t if base else v


SAMPLES = {
    # ---- binary arithmetic -------------------------------------------------------
    "add": [
        S(lambda m, x, y: x + y, F(3, 4), F(4), name="bcast row"),
        S(lambda m, x, y: x + y, F(3, 1), F(1, 4), name="bcast outer"),
        S(lambda m, x: x + 2.5, F(3, 4), name="python scalar"),
        S(lambda m, x, y: x + y, F(), F(3, 4), name="0-dim"),
        S(lambda m, x, y: m.add(x, y, alpha=2), F(3, 4), F(3, 4), name="alpha"),
        S(lambda m, x, y: x + y, F(3, 4), T("float64"), name="f + float64 0-dim"),
        S(lambda m, x: x + 1.5, T("int64", 3, 4, lo=-5, hi=5), nondiff=True,
          name="int + float scalar"),
        S(lambda m, x, y: x + y, T("int32", 3, 4), T("int64", 4), nondiff=True, name="int32+int64"),
        S(lambda m, x, y: x + y, C(3, 4), C(4), name="complex"),
        S(lambda m, x, y: x + y, C(3, 4), F(3, 4), name="complex + real"),
        S(lambda m, x: x + (1 - 2j), F(3, 4), name="real + complex scalar"),
    ],
    "sub": [
        S(lambda m, x, y: x - y, F(3, 4), F(4)),
        S(lambda m, x: x - 2, F(3, 4), name="int scalar"),
        S(lambda m, x, y: m.sub(x, y, alpha=0.5), F(3, 1), F(1, 4), name="alpha"),
        S(lambda m, x, y: x - y, F(), F(3, 4), name="0-dim"),
        S(lambda m, x, y: x - y, C(3, 4), C(3, 4), name="complex"),
        S(lambda m, x, y: x.sub(y, alpha=2j), C(3, 4), C(4), name="complex alpha"),
    ],
    "rsub": [
        S(lambda m, x, y: m.rsub(x, y), F(3, 4), F(4)),
        S(lambda m, x, y: m.rsub(x, y, alpha=3), F(3, 4), F(3, 4), name="alpha"),
    ],
    "rsub_scalar": [
        S(lambda m, x: 2 - x, F(3, 4)),
        S(lambda m, x: 2.5 - x, C(3, 4), name="complex"),
        S(lambda m, x: 1 - x, T("int64", 3, 4), nondiff=True, name="int"),
    ],
    "mul": [
        S(lambda m, x, y: x * y, F(3, 4), F(4), name="bcast row"),
        S(lambda m, x, y: x * y, F(3, 1), F(1, 4), name="bcast outer"),
        S(lambda m, x: x * 3, F(3, 4), name="python scalar"),
        S(lambda m, x, y: x * y, F(), F(3, 4), name="0-dim"),
        S(lambda m, x, y: x * y, T("float32", 3, 4), T("float64"), name="float32*float64 0-dim"),
        S(lambda m, x, y: x * y, T("int64", 3, 4), F(3, 4), name="int * float"),
        S(lambda m, x, y: x * y, T("bool", 3, 4), F(4), name="bool * float"),
        S(lambda m, x, y: x * y, C(3, 4), C(4), name="complex"),
        S(lambda m, x, y: x * y, C(3, 4), F(3, 4), name="complex * real"),
        S(lambda m, x: x * 1j, F(3, 4), name="real * imaginary scalar"),
        S(lambda m, x, y: x * y, T("int64", 3, 4), T("int64", 3, 4), nondiff=True, name="int"),
    ],
    "div": [
        S(lambda m, x, y: x / y, F(3, 4), F(4, **POS), name="bcast"),
        S(lambda m, x: x / 4, F(3, 4), name="python scalar"),
        S(lambda m, x, y: x / y, F(), F(3, 4, **POS), name="0-dim"),
        S(lambda m, x, y: x / y, C(3, 4), C(3, 4, **CPOS), name="complex"),
        S(lambda m, x, y: x / y, T("int64", 3, 4), T("int64", 3, 4, lo=1, hi=5), nondiff=True,
          name="int / int -> float"),
        S(lambda m, x, y: m.div(x, y), F(3, 1), F(1, 4, lo=-2.0, hi=-0.5), name="torch.div"),
    ],
    "remainder": [
        S(lambda m, x, y: m.remainder(x, y), F(3, 4, lo=2.3, hi=2.8), F(4, lo=1.05, hi=1.1)),
        S(lambda m, x, y: x.remainder(y), F(3, 4, lo=-2.8, hi=-2.3), F(3, 4, lo=1.05, hi=1.1),
          name="negative"),
        S(lambda m, x, y: x % y, V(_FMOD_A, rg=False), V(_FMOD_B, rg=False), nondiff=True,
          name="fmod-based: 1 % 0.1 is 0.0999..."),
        S(lambda m, x, y: m.remainder(x, y), T("int64", 3, 4, lo=-9, hi=9),
          T("int64", 4, lo=1, hi=4), nondiff=True, name="int"),
    ],
    "floor_divide_scalar": [
        S(lambda m, x: x // 0.5, F(3, 4), backward_error="floor_divide is not implemented"),
        S(lambda m, x: m.floor_divide(x, 3), T("int64", 3, 4, lo=-9, hi=9), nondiff=True,
          name="int"),
    ],
    "remainder_scalar": [
        S(lambda m, x: x % 1.5, F(3, 4, lo=1.6, hi=2.9)),
        S(lambda m, x: x % 0.1, V(_FMOD_A, rg=False), nondiff=True, name="fmod-based"),
        S(lambda m, x: x % 3, T("int64", 3, 4, lo=-9, hi=9), nondiff=True, name="int"),
    ],
    "remainder_rscalar": [
        S(lambda m, x: 2.5 % x, F(3, 4, lo=1.0, hi=2.0),
          backward_error="derivative for aten::remainder is not implemented"),
    ],
    "div_mode": [
        S(lambda m, x, y: m.div(x, y, rounding_mode="floor"), F(3, 4), F(4, **POS)),
        S(lambda m, x: x.div(2.5, rounding_mode="trunc"), F(3, 4), name="trunc scalar"),
        S(lambda m, x, y: m.div(x, y, rounding_mode="trunc"), T("int64", 3, 4, lo=-9, hi=9),
          T("int64", 4, lo=1, hi=4), nondiff=True, name="int trunc"),
        S(lambda m, x, y: x.div(y, rounding_mode="floor"), V(_FMOD_A, rg=False),
          V(_FMOD_B, rg=False), nondiff=True, name="fmod-based floor"),
    ],
    "floor_divide": [
        S(lambda m, x, y: x // y, F(3, 4), F(4, **POS),
          backward_error="derivative for aten::floor_divide is not implemented"),
        S(lambda m, x, y: x // y, V(_FMOD_A, rg=False), V(_FMOD_B, rg=False), nondiff=True,
          name="fmod-based: -7 // 0.7 is -11"),
        S(lambda m, x, y: x // y, T("int64", 3, 4, lo=-9, hi=9), T("int64", 4, lo=1, hi=4),
          nondiff=True, name="int"),
        S(lambda m, x: x // 3, T("int64", 3, 4, lo=-9, hi=9), nondiff=True, name="int scalar"),
    ],
    "pow": [
        S(lambda m, x: x ** 2, F(3, 4), name="square"),
        S(lambda m, x: x.pow(0.5), F(3, 4, **POS), name="sqrt"),
        S(lambda m, x: m.pow(x, -1.5), F(3, 4, **POS), name="negative exponent"),
        S(lambda m, x: x ** 0, F(3, 4), name="zero exponent"),
        S(lambda m, x: x ** 3, F(), name="0-dim"),
        S(lambda m, x: x ** 3, C(3, 4), name="complex"),
        S(lambda m, x: x ** 0.5, C(3, 4, **CPOS), name="complex sqrt"),
        S(lambda m, x: x ** 2, T("int64", 3, 4, lo=-5, hi=5), nondiff=True, name="int"),
        S(lambda m, x: x ** 0.5, T("int64", 3, 4, lo=0, hi=9), nondiff=True, name="int ** float"),
    ],
    "pow_tensor": [
        S(lambda m, x, y: x ** y, F(3, 4, **POS), F(3, 4)),
        S(lambda m, x, y: m.pow(x, y), F(3, 4, **POS), F(4), name="bcast"),
        S(lambda m, x, y: x.pow(y), F(3, 4, **POS), F(), name="0-dim exponent"),
        S(lambda m, x, y: x ** y, C(3, 4, **CPOS), C(3, 4), name="complex"),
    ],
    "pow_scalar": [
        S(lambda m, x: 2.0 ** x, F(3, 4)),
        S(lambda m, x: m.pow(1.5, x), F(), name="torch.pow(scalar, 0-dim)"),
        S(lambda m, x: 2.0 ** x, C(3, 4), name="complex"),
    ],
    "atan2": [
        S(lambda m, x, y: m.atan2(x, y), F(3, 4), F(3, 4, **POS)),
        S(lambda m, x, y: x.atan2(y), F(3, 4), F(4, lo=-2.0, hi=-0.5), name="bcast"),
        S(lambda m, x, y: m.atan2(x, y), F(3, 4), F(), name="0-dim"),
    ],
    "maximum": [
        S(lambda m, x, y: m.maximum(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: x.maximum(y), F(3, 4), F(4), name="bcast"),
        S(lambda m, x, y: m.maximum(x, y), T("int64", 3, 4), F(3, 4), name="int, float"),
    ],
    "minimum": [
        S(lambda m, x, y: m.minimum(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: x.minimum(y), F(3, 1), F(1, 4), name="bcast"),
    ],
    "where": [
        S(lambda m, c, x, y: m.where(c, x, y), V(MASK, "bool"), F(3, 4), F(4)),
        S(lambda m, c, x: m.where(c, x, 0.0), V(MASK, "bool"), F(3, 4), name="scalar other"),
        S(lambda m, c, x, y: x.where(c, y), V(MASK, "bool"), F(3, 4), F(3, 1), name="method"),
        S(lambda m, c, x, y: m.where(c, x, y), V(MASK, "bool"), C(3, 4), C(3, 4),
          name="complex"),
        S(lambda m, c, x, y: m.where(c, x, y), V(MASK, "bool"), T("int64", 3, 4), F(3, 4),
          name="int, float"),
    ],
    # ---- clamp --------------------------------------------------------------------------
    "clamp": [
        S(lambda m, x: m.clamp(x, -0.5, 0.5), F(3, 4)),
        S(lambda m, x: x.clamp(min=0.1), F(3, 4), name="min only"),
        S(lambda m, x: x.clamp(max=-0.3), F(3, 4), name="max only"),
        S(lambda m, x: m.clip(x, -1, 1), F(3, 4), name="clip"),
    ],
    "clamp_tensor": [
        S(lambda m, x, lo, hi: m.clamp(x, lo, hi), F(3, 4), F(4, lo=-1.0, hi=-0.2),
          F(3, 1, lo=0.2, hi=1.0)),
        S(lambda m, x, lo: x.clamp(min=lo), F(3, 4), F(3, 4, lo=-1.0, hi=1.0), name="min only"),
    ],
    "clamp_min": [S(lambda m, x: x.clamp_min(0.2), F(3, 4))],
    "clamp_max": [S(lambda m, x: m.clamp_max(x, -0.1), F(3, 4))],
    # ---- comparisons and logic (never differentiable) -------------------------------
    "eq": [
        S(lambda m, x, y: x == y, T("int64", 3, 4, lo=0, hi=3), T("int64", 4, lo=0, hi=3),
          nondiff=True),
        S(lambda m, x: m.eq(x, 0.5), V([0.5, 1.0, -0.5]), nondiff=True, name="requires_grad in"),
        S(lambda m, x, y: x == y, C(3), C(3), nondiff=True, name="complex"),
    ],
    "ne": [S(lambda m, x, y: x != y, T("int64", 3, 4, lo=0, hi=3), T("int64", 3, 4, lo=0, hi=3),
             nondiff=True)],
    "lt": [S(lambda m, x, y: x < y, F(3, 4), F(4), nondiff=True)],
    "le": [S(lambda m, x, y: m.le(x, y), T("int64", 3, 4, lo=0, hi=3), F(3, 4, lo=0, hi=3),
             nondiff=True)],
    "gt": [S(lambda m, x: x > 0.5, F(3, 4), nondiff=True)],
    "ge": [S(lambda m, x, y: x.ge(y), F(3, 4), F(), nondiff=True)],
    "logical_and": [
        S(lambda m, a, b: m.logical_and(a, b), T("bool", 3, 4), T("bool", 3, 4), nondiff=True),
        S(lambda m, x, y: m.logical_and(x, y), V([0.0, 1.5, -2.0]), V([1.0, 0.0, 3.0]),
          nondiff=True, name="float"),
    ],
    "logical_or": [S(lambda m, a, b: m.logical_or(a, b), T("bool", 3, 4),
                     T("int64", 4, lo=0, hi=2), nondiff=True)],
    "logical_xor": [S(lambda m, a, b: a.logical_xor(b), T("bool", 3, 4), T("bool", 3, 4),
                      nondiff=True)],
    "logical_not": [
        S(lambda m, a: m.logical_not(a), T("bool", 3, 4), nondiff=True),
        S(lambda m, x: x.logical_not(), V([0.0, 1.5, -2.0]), nondiff=True, name="float"),
    ],
    "bitwise_and": [
        S(lambda m, a, b: a & b, T("int64", 3, 4, lo=0, hi=16), T("int64", 4, lo=0, hi=16),
          nondiff=True),
        S(lambda m, a, b: a & b, T("bool", 3, 4), T("bool", 3, 4), nondiff=True, name="bool"),
    ],
    "bitwise_or": [S(lambda m, a, b: a | b, T("int32", 3, 4, lo=0, hi=16),
                     T("int32", 3, 4, lo=0, hi=16), nondiff=True)],
    "bitwise_xor": [S(lambda m, a: a ^ 5, T("int64", 3, 4, lo=0, hi=16), nondiff=True)],
    "bitwise_not": [
        S(lambda m, a: ~a, T("int64", 3, 4, lo=-8, hi=8), nondiff=True),
        S(lambda m, a: m.bitwise_not(a), T("bool", 3, 4), nondiff=True, name="bool"),
    ],
    "isclose": [
        S(lambda m, x, y: m.isclose(x, y), V([1.0, 1.0 + 1e-9, 2.0, NAN]), V([1.0, 1.0, 2.1, NAN]),
          nondiff=True),
        S(lambda m, x, y: x.isclose(y, rtol=0.1, equal_nan=True), V([1.0, 1.05, 2.0, NAN]),
          V([1.0, 1.0, 2.5, NAN]), nondiff=True, name="rtol equal_nan"),
        S(lambda m, x, y: m.isclose(x, y), T("int64", 3, 4, lo=0, hi=3), T("int64", 4, lo=0, hi=3),
          nondiff=True, name="int"),
    ],
    "isnan": [S(lambda m, x: m.isnan(x), V([1.0, NAN, INF, -INF, 0.0]), nondiff=True)],
    "isinf": [S(lambda m, x: x.isinf(), V([1.0, NAN, INF, -INF, 0.0]), nondiff=True)],
    "isfinite": [S(lambda m, x: m.isfinite(x), V([1.0, NAN, INF, -INF, 0.0]), nondiff=True)],
}

# ---- unary math: (domain, complex domain or None) -------------------------------------
_UNARY = dict(
    neg=({}, {}), exp=({}, {}), exp2=({}, {}), expm1=({}, {}),
    log=(POS, CPOS), log2=(POS, CPOS), log10=(POS, CPOS), log1p=(dict(lo=-0.5, hi=2.0), CPOS),
    sqrt=(POS, CPOS), rsqrt=(POS, CPOS), sin=({}, {}), cos=({}, {}),
    tan=(dict(lo=-1.2, hi=1.2), dict(lo=-0.7, hi=0.7)), asin=(UNIT, dict(lo=-0.6, hi=0.6)),
    acos=(UNIT, dict(lo=-0.6, hi=0.6)), atan=({}, dict(lo=-0.6, hi=0.6)), sinh=({}, {}),
    cosh=({}, {}), tanh=({}, dict(lo=-0.7, hi=0.7)), sigmoid=({}, {}), erf=({}, None),
    reciprocal=(POS, CPOS), relu=({}, None), abs=({}, CPOS), sgn=({}, CPOS), sign=({}, None),
    floor=({}, None), ceil=({}, None), round=({}, None), trunc=({}, None), frac=({}, None),
    conj_physical=({}, {}),
)
_ZERO_DIM = ("exp", "log", "sqrt", "sin", "tanh", "sigmoid", "abs", "relu", "reciprocal",
             "floor", "neg", "sgn")  # 0-dim samples (each new shape costs compiles)
for _name, (_dom, _cdom) in _UNARY.items():
    _s = [S(lambda m, x, _n=_name: getattr(m, _n)(x), F(3, 4, **_dom))]
    if _name in _ZERO_DIM:
        _s.append(S(lambda m, x, _n=_name: getattr(x, _n)(), F(**_dom), name="0-dim method"))
    if _cdom is not None:
        _s.append(S(lambda m, x, _n=_name: getattr(m, _n)(x), C(3, 4, **_cdom), name="complex"))
    SAMPLES[_name] = _s
SAMPLES["neg"].append(S(lambda m, x: -x, T("int64", 3, 4), nondiff=True, name="int"))
SAMPLES["exp"].append(S(lambda m, x: m.exp(x), T("int64", 3, 4), nondiff=True, name="int"))
SAMPLES["abs"].append(S(lambda m, x: abs(x), T("int32", 3, 4), nondiff=True, name="int"))
SAMPLES["round"].append(S(lambda m, x: m.round(x), V([0.5, 1.5, 2.5, -0.5, -1.5]), fd=False,
                          name="half to even"))
SAMPLES["round_decimals"] = [
    S(lambda m, x: x.round(decimals=2), F(3, 4), fd=False),  # steps every 0.01
    S(lambda m, x: m.round(x, decimals=-1), F(3, 4, lo=-200.0, hi=200.0), fd=False,
      name="negative decimals"),
]
SAMPLES["sqrt"].append(S(lambda m, x: x.sqrt(), T("int64", 3, 4, lo=0, hi=9), nondiff=True,
                         name="int"))
SAMPLES["reciprocal"].append(S(lambda m, x: 2 / x, F(3, 4, **POS), name="rtruediv"))

SAMPLES.update({
    # ---- complex parts ----------------------------------------------------------------
    "view_as_real": [
        S(lambda m, z: m.view_as_real(z), C(3, 4)),
        S(lambda m, z: m.real(z), C(3, 4), name="torch.real"),
        S(lambda m, z: z.real * 2, C(3, 4), name="real property"),
        S(lambda m, z: m.imag(z), C(3, 4), name="torch.imag"),
        S(lambda m, z: z.imag.t(), C(3, 4), name="imag property"),
    ],
    "view_as_complex": [
        S(lambda m, x: m.view_as_complex(x), F(3, 4, 2)),
        S(lambda m, x: m.view_as_complex(x).exp(), F(3, 2), name="then exp"),
        S(lambda m, x, w: _inplace_complex(m, x * 1, w), F(3, 2), C(3),
          name="in-place through the view"),
    ],
    "conj": [S(lambda m, z: z.conj(), C(3, 4)),
        S(lambda m, z, w: z.conj() * w, C(3, 4), C(4), name="conj times")],
    "angle": [S(lambda m, z: m.angle(z), C(3, 4, **CPOS)),
              S(lambda m, x: x.angle(), F(3, 4), name="real")],
    "complex": [S(lambda m, x, y: m.complex(x, y), F(3, 4), F(3, 4)),
                S(lambda m, x, y: m.complex(x, y).exp(), F(3, 1), F(4), name="broadcast")],
    "polar": [S(lambda m, r, a: m.polar(r, a), F(3, 4, lo=0.5, hi=2.0), F(3, 4)),
              # (torch's formula takes abs >= 0: sgn(result) is the unit phasor only then)
              S(lambda m, r, a: m.polar(r, a) * m.polar(a, r), F(2, 1, lo=0.5, hi=2.0),
                F(3, lo=0.5, hi=2.0), name="broadcast, both ways")],
    "cumsum": [S(lambda m, x: x.cumsum(1), F(3, 4)),
               S(lambda m, x: m.cumsum(x, -1), C(5), name="complex"),
               S(lambda m, x: x.cumsum(0), F(), name="0-dim"),
               S(lambda m, x: x.cumsum(0, dtype=m.float64), T("float32", 3, 2), name="dtype"),
               S(lambda m, x: x.cumsum(0), T("int32", 4), nondiff=True, name="int -> int64")],
    "cumsum_backward": [S(lambda m, x: x.cumsum(0), F(4, 2), name="via double backward")],
    # ---- reductions -------------------------------------------------------------------
    "sum": [
        S(lambda m, x: x.sum(), F(3, 4)),
        S(lambda m, x: m.sum(x), F(), name="0-dim"),
        S(lambda m, x: x.sum(), C(3, 4), name="complex"),
        S(lambda m, x: x.sum(dtype=m.float64), T("float32", 3, 4), name="dtype"),
        S(lambda m, x: x.sum(), T("int32", 3, 4), nondiff=True, name="int -> int64"),
        S(lambda m, x: x.sum(), T("bool", 3, 4), nondiff=True, name="bool -> int64"),
    ],
    "sum_dim": [
        S(lambda m, x: x.sum(1), F(3, 4)),
        S(lambda m, x: m.sum(x, (0, 2), keepdim=True), F(2, 3, 4), name="tuple keepdim"),
        S(lambda m, x: x.sum(-1, keepdim=True), F(3, 4), name="keepdim"),
        S(lambda m, x: x.sum(0), C(3, 4), name="complex"),
    ],
    "all": [
        S(lambda m, b: b.all(), T("bool", 3, 4), nondiff=True),
        S(lambda m, x: m.all(x, 1), V([[1.0, 2.0, 0.0], [1.0, 3.0, -1.0]]), nondiff=True,
          name="float dim"),
        S(lambda m, x: x.all(0, keepdim=True), T("int64", 3, 4, lo=0, hi=3), nondiff=True,
          name="int keepdim"),
    ],
    "any": [
        S(lambda m, b: m.any(b), T("bool", 3, 4), nondiff=True),
        S(lambda m, x: x.any(1), V([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), nondiff=True,
          name="float dim"),
    ],
    "mean": [
        S(lambda m, x: x.mean(), F(3, 4)),
        S(lambda m, x: m.mean(x), C(3, 4), name="complex"),
        S(lambda m, x: x.mean(), F(), name="0-dim"),
    ],
    "mean_dim": [
        S(lambda m, x: x.mean(1), F(3, 4)),
        S(lambda m, x: m.mean(x, (0, 1), keepdim=True), F(3, 4), name="tuple keepdim"),
        S(lambda m, x: x.mean(-1), C(3, 4), name="complex"),
    ],
    "prod": [
        S(lambda m, x: x.prod(), F(3, 4, lo=0.5, hi=1.5)),
        S(lambda m, x: m.prod(x), V([1.5, 0.0, 2.0, -1.0, 0.7]), name="one zero"),
        S(lambda m, x: m.prod(x), V([1.5, 0.0, 2.0, 0.0, 0.7]), name="two zeros"),
        S(lambda m, x: x.prod(), C(3, 2, lo=0.5, hi=1.2), name="complex"),
    ],
    "prod_dim": [
        S(lambda m, x: x.prod(1), F(3, 4, lo=0.5, hi=1.5)),
        S(lambda m, x: x.prod(1, keepdim=True),
          V([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 1.0, 2.0], [1.2, 1.1, 0.9, -0.8]]),
          name="zeros keepdim"),
        S(lambda m, x: m.prod(x, 0), C(3, 2, lo=0.5, hi=1.2), name="complex"),
    ],
    "amax": [
        S(lambda m, x: x.amax(1), F(3, 4)),
        S(lambda m, x: m.amax(x, (0, 2), keepdim=True), F(2, 3, 4), name="tuple keepdim"),
        S(lambda m, x: x.amax(), F(3, 4), name="all"),
        S(lambda m, x: x.amax(1), V([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 1.0]]), fd=False,
          jax=False, name="ties"),
    ],
    "amin": [
        S(lambda m, x: x.amin(0), F(3, 4)),
        S(lambda m, x: x.amin(-1, keepdim=True), F(3, 4), name="keepdim"),
    ],
    "max": [
        S(lambda m, x: x.max(), F(3, 4)),
        S(lambda m, x: m.max(x), V([1.0, 3.0, -1.0, 3.0, 3.0]), fd=False, jax=False,
          name="ties"),
    ],
    "min": [S(lambda m, x: m.min(x), F(3, 4))],
    "max_dim": [
        S(lambda m, x: x.max(1), F(3, 4)),
        S(lambda m, x: m.max(x, 0, keepdim=True), F(3, 4), name="keepdim"),
        S(lambda m, x: x.max(-1).values, F(2, 3, 4), name="values"),
    ],
    "min_dim": [
        S(lambda m, x: x.min(0), F(3, 4)),
        S(lambda m, x: m.min(x, -1, keepdim=True), F(3, 4), name="keepdim"),
    ],
    "var": [
        S(lambda m, x: x.var(), F(3, 4)),
        S(lambda m, x: m.var(x, 1), F(3, 4), name="dim"),
        S(lambda m, x: x.var(1, keepdim=True, correction=0), F(3, 4), name="correction 0"),
        S(lambda m, x: x.var((0, 1), unbiased=False), F(3, 4), name="unbiased False"),
    ],
    "std": [
        S(lambda m, x: x.std(), F(3, 4)),
        S(lambda m, x: m.std(x, 0, keepdim=True), F(3, 4), name="dim keepdim"),
        S(lambda m, x: x.std(1, correction=2), F(3, 4), name="correction 2"),
    ],
    "linalg_vector_norm": [
        S(lambda m, x: x.norm(), F(3, 4)),
        S(lambda m, x: m.norm(x, p=1, dim=1), F(3, 4), name="p=1 dim"),
        S(lambda m, x: x.norm(p=3, dim=0, keepdim=True), F(3, 4), name="p=3 keepdim"),
        S(lambda m, x: x.norm(p=math.inf), F(3, 4), name="p=inf"),
        S(lambda m, x: x.norm(), C(3, 4), name="complex"),
        S(lambda m, x: x.norm(dim=1), C(3, 4), name="complex dim"),
        S(lambda m, x: m.norm(x, None, (0, 1)), F(3, 4), name="p=None, 2 dims"),
    ],
    "logsumexp": [
        S(lambda m, x: m.logsumexp(x, 1), F(3, 4)),
        S(lambda m, x: x.logsumexp((0, 1)), F(3, 4), name="tuple"),
        S(lambda m, x: x.logsumexp(0, keepdim=True), F(3, 4), name="keepdim"),
    ],
    "softmax": [
        S(lambda m, x: m.softmax(x, 1), F(3, 4)),
        S(lambda m, x: x.softmax(0), F(3, 4), name="method dim 0"),
        S(lambda m, x: x.softmax(-1), F(2, 3, 4), name="3d"),
    ],
    "log_softmax": [
        S(lambda m, x: x.log_softmax(1), F(3, 4)),
        S(lambda m, x: m.log_softmax(x, 0), F(3, 4), name="dim 0"),
    ],
    # ---- matrix products ----------------------------------------------------------------
    "mm": [
        S(lambda m, a, b: m.mm(a, b), F(3, 4), F(4, 2)),
        S(lambda m, a, b: a @ b, F(3, 4), F(4, 2), name="matmul 2d"),
        S(lambda m, a, b: a.mm(b), C(3, 4), C(4, 2), name="complex"),
        S(lambda m, a, b: a @ b, F(2, 3, 4), F(4, 2), name="matmul 3d @ 2d (folded)"),
        S(lambda m, a, b: a @ b, F(2, 3, 4), F(1, 4, 2), name="matmul batch-1 rhs squeezed"),
        S(lambda m, a, b: a @ b, F(3, 4), F(2, 4, 2), name="matmul 2d @ 3d (transposed fold)"),
    ],
    "bmm": [
        S(lambda m, a, b: m.bmm(a, b), F(2, 3, 4), F(2, 4, 2)),
        S(lambda m, a, b: a @ b, F(2, 3, 4), F(1, 4, 2, rg=False), name="matmul bcast"),
        S(lambda m, a, b: a @ b, F(2, 1, 3, 4), F(3, 4, 2), name="matmul 4d @ 3d"),
        S(lambda m, a, b: a @ b, F(4), F(2, 4, 3), name="matmul 1d @ 3d"),
        S(lambda m, a, b: a.bmm(b), C(2, 3, 4), C(2, 4, 2), name="complex"),
    ],
    "mv": [
        S(lambda m, a, b: m.mv(a, b), F(3, 4), F(4)),
        S(lambda m, a, b: a @ b, F(3, 4), F(4), name="matmul"),
        S(lambda m, a, b: a.mv(b), C(3, 4), C(4), name="complex"),
    ],
    "dot": [
        S(lambda m, a, b: m.dot(a, b), F(4), F(4)),
        S(lambda m, a, b: a @ b, F(4), F(4), name="matmul"),
        S(lambda m, a, b: a.dot(b), C(4), C(4), name="complex"),
    ],
    # ---- views and shape ops ---------------------------------------------------------
    "view": [
        S(lambda m, x: x.view(4, 3), F(3, 4)),
        S(lambda m, x: x.view(-1), F(3, 4), name="-1"),
        S(lambda m, x: x.view(1, 1), F(), name="0-dim"),
        S(lambda m, x: x.view(2, 6), C(3, 4), name="complex"),
        S(lambda m, x: x.reshape(2, 2, 3), F(3, 4), name="reshape"),
        S(lambda m, x: m.flatten(x), F(2, 3, 2), name="flatten"),
    ],
    "_unsafe_view": [
        S(lambda m, x: x.t().reshape(-1), F(3, 4), name="reshape non-contiguous"),
        S(lambda m, x: m.reshape(x.transpose(0, 1), (6, 2)), C(3, 2, 2), name="complex"),
        S(lambda m, a, b: a @ b, F(2, 3, 4), F(4), name="matmul 3d @ 1d"),
    ],
    "_reshape_alias": [
        S(lambda m, x: x.t().reshape(4, 3, 1), F(3, 4), name="reshape transposed, viewable"),
        S(lambda m, x: x[:, ::2].reshape(3, 2, 1), F(3, 4), name="reshape strided"),
        S(lambda m, a, b: a @ b, F(4), F(1, 4, 3), name="matmul 1d @ 3d (folded)"),
    ],
    "alias": [
        S(lambda m, x: x[...], F(3, 4)),
        S(lambda m, x: x[:, :], F(3, 4), name="full slices"),
    ],
    "unsqueeze": [
        S(lambda m, x: x.unsqueeze(1), F(3, 4)),
        S(lambda m, x: m.unsqueeze(x, -1), F(3, 4), name="negative dim"),
        S(lambda m, x: x[None], F(3, 4), name="None index"),
        S(lambda m, x: x.unsqueeze(0), F(), name="0-dim"),
        S(lambda m, x: x.unsqueeze(2), C(3, 4), name="complex"),
    ],
    "squeeze0": [
        S(lambda m, x: x.squeeze(), F(3, 1, 4)),
        S(lambda m, x: m.squeeze(x), F(1), name="to 0-dim"),
    ],
    "squeeze1": [
        S(lambda m, x: x.squeeze(1), F(3, 1, 4)),
        S(lambda m, x: x.squeeze(0), F(3, 4), name="not size 1"),
    ],
    "squeeze2": [S(lambda m, x: x.squeeze((0, 2)), F(1, 3, 1, 4))],
    "squeeze4": [
        S(lambda m, a, b: a @ b, F(4), F(4, 2), name="matmul 1d @ 2d"),
        S(lambda m, a, b: m.matmul(a, b), C(4), C(4, 2), name="complex"),
    ],
    "transpose": [
        S(lambda m, x: x.transpose(0, 1), F(3, 4)),
        S(lambda m, x: m.transpose(x, -1, 0), F(2, 3, 4), name="3d"),
        S(lambda m, x: x.mT, F(2, 3, 4), name="mT"),
        S(lambda m, x: x.transpose(0, 1), C(3, 4), name="complex"),
    ],
    "t": [
        S(lambda m, x: x.t(), F(3, 4)),
        S(lambda m, x: m.t(x), F(4), name="1d"),
    ],
    "permute": [
        S(lambda m, x: x.permute(2, 0, 1), F(2, 3, 4)),
        S(lambda m, x: m.permute(x, (1, 0)), C(3, 4), name="complex"),
        S(lambda m, x: x.T, F(3, 4), name="T"),
    ],
    "expand": [
        S(lambda m, x: x.expand(3, 4), F(1, 4)),
        S(lambda m, x: x.expand(2, 3, -1), F(3, 1), name="new dim"),
        S(lambda m, x: m.broadcast_to(x, (2, 4)), F(4), name="broadcast_to"),
        S(lambda m, x: x.expand(3), F(), name="0-dim"),
        S(lambda m, x, y: x.expand_as(y), C(4), C(3, 4, rg=False), name="complex expand_as"),
    ],
    "select": [
        S(lambda m, x: x[1], F(3, 4)),
        S(lambda m, x: x.select(1, -1), F(3, 4), name="negative index"),
        S(lambda m, x: x[1, 2], F(3, 4), name="to 0-dim"),
        S(lambda m, x: x[0], C(3, 4), name="complex"),
    ],
    "diagonal": [
        S(lambda m, x: x.diagonal(), F(3, 4)),
        S(lambda m, x: m.diagonal(x, 1), F(3, 4), name="offset"),
        S(lambda m, x: x.diagonal(-1, 0, 2), F(3, 2, 4), name="3d, negative offset"),
        S(lambda m, x: x.diagonal(), C(3, 3), name="complex"),
    ],
    "diagonal_backward": [S(lambda m, x: x.diagonal(1), F(3, 4), name="via double backward")],
    "unfold": [
        S(lambda m, x: x.unfold(1, 2, 1), F(3, 4)),
        S(lambda m, x: x.unfold(0, 2, 2), F(5, 2), name="step 2"),
        S(lambda m, x: x.unfold(0, 1, 1), F(), name="0-dim"),
    ],
    "unfold_backward": [S(lambda m, x: x.unfold(1, 3, 1), F(3, 4), name="via double backward")],
    "as_strided": [
        S(lambda m, x: x.as_strided((2, 2), (1, 2)), F(3, 4)),
        S(lambda m, x: m.as_strided(x, (3, 2), (4, 1), 1), F(3, 4), name="offset"),
        S(lambda m, x: x.as_strided((2, 3), (1, 1)), F(3, 4), name="overlapping"),
    ],
    "as_strided_backward": [S(lambda m, x: x.as_strided((2, 3), (1, 1)), F(3, 4),
                              name="via double backward")],
    "select_backward": [S(lambda m, x: x.select(1, 2), F(3, 4), name="via double backward")],
    "slice": [
        S(lambda m, x: x[1:3], F(3, 4)),
        S(lambda m, x: x[:, ::2], F(3, 4), name="step"),
        S(lambda m, x: x.narrow(1, 1, 2), F(3, 4), name="narrow"),
        S(lambda m, x: x[-2:], C(3, 4), name="complex"),
        S(lambda m, x: x[:], F(3, 4), name="full"),
    ],
    "slice_backward": [S(lambda m, x: x[:, 1:3], F(3, 4), name="via double backward")],
    "split": [
        S(lambda m, x: x.split(2), F(3, 4)),
        S(lambda m, x: m.chunk(x, 2, 1), F(3, 4), name="chunk"),
        S(lambda m, x: m.split(x, 2, dim=1), C(3, 4), name="complex"),
    ],
    "split_with_sizes": [S(lambda m, x: x.split([1, 3], 1), F(3, 4))],
    "unbind": [
        S(lambda m, x: x.unbind(1), F(3, 4)),
        S(lambda m, x: m.unbind(x), C(2, 3), name="complex"),
    ],
    "cat": [
        S(lambda m, x, y: m.cat([x, y]), F(3, 4), F(2, 4)),
        S(lambda m, x, y: m.cat((x, y), 1), F(3, 4), F(3, 2), name="dim 1"),
        S(lambda m, x, y: m.cat([x, y], -1), T("int64", 3, 2), F(3, 4), name="int, float"),
        S(lambda m, x, y: m.cat([x, y]), C(3, 4), C(1, 4), name="complex"),
    ],
    "stack": [
        S(lambda m, x, y: m.stack([x, y]), F(3, 4), F(3, 4)),
        S(lambda m, x, y: m.stack((x, y), 2), F(3, 4), F(3, 4), name="dim 2"),
        S(lambda m, x, y: m.stack([x, y], 1), C(3), C(3), name="complex"),
    ],
    # ---- copies, conversions, in-place fills -------------------------------------------
    "clone": [
        S(lambda m, x: x.clone(), F(3, 4)),
        S(lambda m, x: x.t().contiguous(), F(3, 4), name="contiguous"),
        S(lambda m, x: m.clone(x), C(3, 4), name="complex"),
    ],
    "_to_copy": [
        S(lambda m, x: x.double(), T("float32", 3, 4), name="float32 -> float64"),
        S(lambda m, x: x.to(m.float32), T("float64", 3, 4), fd=False,  # float32 rounding
          name="float64 -> float32"),
        S(lambda m, x: x.to(m.complex64), T("float32", 3, 4), name="float32 -> complex64"),
        S(lambda m, x: x.long(), F(3, 4), nondiff=True, name="to int"),
        S(lambda m, x: x.real.to(m.float64) if x.dtype == m.complex64 else x.to(m.float64),
          C(3, 4), name="complex -> float64 (C->R)"),
        S(lambda m, x: x.to(m.complex128), T("complex64", 3, 4), name="complex64 -> complex128"),
        S(lambda m, x, y: x.type_as(y), T("int64", 3, 4), F(4, rg=False), nondiff=True,
          name="int type_as float"),
    ],
    "copy": [
        S(lambda m, x, y: x.clone().copy_(y), F(3, 4), F(4)),
        S(lambda m, x, y: x.clone().copy_(y), F(3, 4), T("int64", 3, 4), name="from int"),
        S(lambda m, x, y: (x * 1).copy_(y), C(3, 4), C(3, 4), name="complex"),
    ],
    "zero": [S(lambda m, x: x.clone().zero_(), F(3, 4))],
    "fill": [S(lambda m, x: x.clone().fill_(2.5), F(3, 4))],
    "fill_tensor": [S(lambda m, x, v: (x * 2).fill_(v), F(3, 4), F())],
    # ---- indexing -------------------------------------------------------------------------
    "index": [
        S(lambda m, x, i: x[i], F(3, 4), I([2, 0, 2]), name="repeated rows"),
        S(lambda m, x: x[:, [1, 3]], F(3, 4), name="list on dim 1"),
        S(lambda m, x, i, j: x[i, j], F(3, 4), I([0, 2, 2]), I([[1], [3]]), name="two indices"),
        S(lambda m, x, i: x[i, 1:3], F(3, 4), I([1, 1]), name="index then slice"),
        S(lambda m, x, i: x[i], C(3, 4), I([1, 2]), name="complex"),
    ],
    "index_put_acc": [S(lambda m, x, i: x[i], F(3, 4), I([2, 0, 2]), name="via double backward")],
    "_unsafe_masked_index": [
        S(lambda m, x, c, i: m._unsafe_masked_index(x, c, [i], -0.5), F(5, 4),
          V([[True], [False], [True]], "bool"), I([0, 9, -2]),
          name="a masked-out index past the end"),
        S(lambda m, x, c, i, j: m._unsafe_masked_index(x, c, [i, j], 2.0), F(3, 4),
          V([[True, False, True]], "bool"), I([[0], [2]]), I([[1, 7, 3]]), name="two indices"),
    ],
    "_unsafe_masked_index_put_accumulate": [
        S(lambda m, x, c, i, v: m._unsafe_masked_index_put_accumulate(x, c, [i], v), F(5, 4),
          V([[True], [False], [True]], "bool"), I([1, 9, 1]), F(3, 4),
          name="repeated and masked-out indices"),
    ],
    # boolean masks (eagergrad/ops/masks.py NOTE [masks]): reads on bucket-padded indices,
    # writes as a where (or, one value per selected element, a rank gather)
    "mask_index": [
        S(lambda m, x, c: x[c], F(3, 4), V(MASK, "bool"), name="bool mask"),
        S(lambda m, x, c: x[:, c], C(2, 3, 4), V(MASK, "bool"), name="2-d mask on dims 1, 2"),
        S(lambda m, x, c, i: x[c, i], F(3, 4), V(MASK[0][:3], "bool"), I([3]),
          name="mask and an index"),
        S(lambda m, x, c, i: x[c, 1:, i], F(3, 2, 4), V([True, False, True], "bool"),
          I([[0, 3]]), name="mask, slice, index: count moved to the front"),
        S(lambda m, x, c: x[c], F(3, 4), V([False] * 3, "bool"), name="empty"),
    ],
    "mask_index_put": [S(lambda m, x, c: x[c], F(3, 4), V(MASK, "bool"),
                         name="via double backward")],
    "masked_select": [
        S(lambda m, x, c: x.masked_select(c), F(3, 4), V(MASK, "bool")),
        S(lambda m, x, c: m.masked_select(x, c), F(4), V(MASK, "bool"), name="input broadcast"),
        S(lambda m, x, c: m.masked_select(x, c), C(3, 4), V(MASK[1], "bool"),
          name="complex, mask broadcast"),
    ],
    "mask_put": [
        S(lambda m, x, c: _setitem(x * 1, c, 0.5), F(3, 4), V(MASK, "bool"), name="number"),
        S(lambda m, x, c, v: _setitem(x * 1, c, v), F(3, 4), V(MASK, "bool"), F(),
          name="0-dim value"),
        S(lambda m, x, c, v: _setitem(x * 1, c, v), F(3, 4), V(MASK[0][:3], "bool"), F(4),
          name="row broadcast over the selected rows"),
        S(lambda m, x, c, v: x.index_put((c,), v, accumulate=True), C(3, 4),
          V(MASK[0][:3], "bool"), C(1, 4), name="accumulate, complex"),
    ],
    "mask_put_seq": [
        S(lambda m, x, c, v: _setitem(x * 1, c, v), F(3, 4), V(MASK, "bool"), F(6),
          name="one value per element"),
        S(lambda m, x, c, v: x.index_put((c,), v, accumulate=True), F(3, 4),
          V([True, False, True], "bool"), F(2, 1), name="accumulate, rows"),
    ],
    "masked_scatter": [
        S(lambda m, x, c, s: x.masked_scatter(c, s), F(3, 4), V(MASK, "bool"), F(7)),
        S(lambda m, x, c, s: m.masked_scatter(x, c, s), F(4), V(MASK, "bool"), F(2, 4),
          name="self broadcast"),
        S(lambda m, x, c, s: x.masked_scatter(c, s), C(3, 4), V(MASK[2], "bool"), C(6),
          name="complex, mask broadcast"),
    ],
    "masked_scatter_backward": [S(lambda m, x, c, s: x.masked_scatter(c, s), F(3, 4),
                                  V(MASK, "bool"), F(7), name="via double backward")],
    "mask_take": [S(lambda m, x, c, v: _setitem(x * 1, c, v), F(3, 4), V(MASK, "bool"), F(6),
                    name="via double backward")],
    "gather": [
        S(lambda m, x, i: x.gather(1, i), F(3, 4), I([[0, 3], [2, 2], [1, 0]])),
        S(lambda m, x, i: m.gather(x, 0, i), C(3, 4), I([[0, 2, 1, 1]]), name="complex"),
    ],
    "scatter_add": [
        S(lambda m, x, i, s: x.scatter_add(1, i, s), F(3, 4), I([[0, 3], [2, 2], [1, 0]]),
          F(3, 2)),
    ],
    "scatter": [
        S(lambda m, x, i, s: x.scatter(1, i, s), F(3, 4), I([[0, 3], [2, 1], [1, 0]]), F(3, 2)),
        S(lambda m, x, i, s: m.scatter(x, 0, i, s), F(3, 4), I([[0, 2, 1, 1]]), F(1, 4),
          name="dim 0"),
    ],
    "index_put": [
        S(lambda m, x, i, v: x.index_put((i,), v), F(3, 4), I([2, 0]), F(2, 4)),
        S(lambda m, x, i, j, v: m.index_put(x, (i, j), v), F(3, 4), I([0, 2]), I([1, 3]), F(),
          name="two indices, 0-dim values"),
        S(lambda m, x, i, v: _setitem(x * 1, (slice(None), i), v), F(3, 4), I([3, 1]), F(3, 1),
          name="setitem"),
    ],
    "masked_fill": [
        S(lambda m, x, c: x.masked_fill(c, 1.5), F(3, 4), V(MASK, "bool")),
        S(lambda m, x, c: m.masked_fill(x, c, -2), C(3, 4), V(MASK[0], "bool"),
          name="complex, bcast mask"),
    ],
    "masked_fill_tensor": [
        S(lambda m, x, c, v: x.masked_fill(c, v), F(3, 4), V(MASK, "bool"), F()),
    ],
    "index_select": [
        S(lambda m, x, i: x.index_select(0, i), F(3, 4), I([2, 0, 2])),
        S(lambda m, x, i: m.index_select(x, 1, i), C(3, 4), I([3, 1]), name="complex"),
    ],
    "index_add": [
        S(lambda m, x, i, s: x.index_add(0, i, s), F(3, 4), I([2, 0, 2]), F(3, 4)),
        S(lambda m, x, i, s: m.index_add(x, 1, i, s, alpha=2.5), F(3, 4), I([1, 3]), F(3, 2),
          name="alpha"),
    ],
    "index_copy": [S(lambda m, x, i, s: x.index_copy(1, i, s), F(3, 4), I([3, 0]), F(3, 2))],
    "index_fill": [S(lambda m, x, i: x.index_fill(1, i, -1.0), F(3, 4), I([3, 0]))],
    # internal view ops: in-place ops on views (CopySlices on the base, AsStridedBackward0
    # for the view) reach them in backward and double backward
    "as_strided_view": [
        S(lambda m, x: _mul_view_(x * 1, 1), F(3, 4), name="the view after an in-place op"),
        S(lambda m, x: _mul_view_(x * 1, (slice(None), 1))[1:], F(3, 4),
          name="a view of the view"),
    ],
    # (under create_graph CopySlices records torch's own steps, as_strided and copy_,
    # except for a view of another dtype, the real or imaginary part of a complex base)
    "view_write": [
        S(lambda m, x: _mul_view_(x * 1, 1, base=True), F(3, 4), name="CopySlices base"),
        S(lambda m, z: _mul_real_(z * 1), C(3, 2), name="CopySlices base, real part"),
        S(lambda m, x, y: _setitem(x * 1, (0, slice(1, 3)), y), F(3, 4), F(2),
          name="setitem slice"),
    ],
    "view_gather": [
        S(lambda m, x, y: _add_view_(x * 1, y, base=True), F(3, 4), F(4),
          name="CopySlices base, other input"),
        S(lambda m, z, y: _add_imag_(z * 1, y), C(3, 2), F(3, 2),
          name="CopySlices base, imaginary part, other input"),
    ],
    "view_scatter": [
        S(lambda m, x, y: _add_view_(x * 1, y), F(3, 4), F(4), name="the view, other input"),
    ],
    "nan_to_num": [
        S(lambda m, x: x.nan_to_num(), F(3, 4)),
        S(lambda m, x: m.nan_to_num(x, nan=1.5, posinf=2.0, neginf=-3.0),
          V([[NAN, 1.0, INF], [-INF, -0.5, 2.0]]), fd=False, name="nan, posinf, neginf"),
        S(lambda m, x: (x * 1).nan_to_num_(), V([NAN, INF, -INF, 0.25]), fd=False,
          name="in-place, dtype bounds"),
        S(lambda m, x: x.nan_to_num(), T("int64", 3), nondiff=True, name="int"),
    ],
    "scatter_value": [
        S(lambda m, x, i: x.scatter(1, i, 1.5), F(3, 4), I([[0, 3], [2, 1], [1, 0]])),
    ],
})

# samples of op groups kept in their own files (they import the shorthands above)
from _samples_sorting import SAMPLES as _SORTING  # noqa: E402
from _samples_linalg import SAMPLES as _LINALG  # noqa: E402
from _samples_nn import SAMPLES as _NN  # noqa: E402
from _samples_conv import SAMPLES as _CONV  # noqa: E402
from _samples_norm import SAMPLES as _NORM  # noqa: E402
from _samples_activation import SAMPLES as _ACT  # noqa: E402
from _samples_batchnorm import SAMPLES as _BN  # noqa: E402
from _samples_rnn import SAMPLES as _RNN  # noqa: E402
from _samples_attention import SAMPLES as _ATT  # noqa: E402
from _samples_spatial import SAMPLES as _SPATIAL  # noqa: E402
from _samples_random import SAMPLES as _RANDOM  # noqa: E402
from _samples_fft import SAMPLES as _FFT  # noqa: E402
from _samples_tensor_ops import SAMPLES as _TENSOR_OPS  # noqa: E402
from _samples_special import SAMPLES as _SPECIAL_FNS  # noqa: E402
from _samples_scan import SAMPLES as _SCAN  # noqa: E402
from _samples_copies import SAMPLES as _COPIES  # noqa: E402
from _samples_inplace_views import SAMPLES as _INPLACE_VIEWS  # noqa: E402
SAMPLES.update(_SORTING)
for _group in (_LINALG, _NN, _NORM, _CONV, _ACT, _BN, _RNN, _ATT, _SPATIAL, _FFT,
               _RANDOM, _TENSOR_OPS, _SPECIAL_FNS, _SCAN, _COPIES, _INPLACE_VIEWS):
    for _k, _v in _group.items():
        SAMPLES.setdefault(_k, []).extend(_v)


def _as_complex(sample):
    """The sample with its parametrized float inputs made complex."""
    args = []
    for a in sample.args:
        a = copy.copy(a)
        if a.dtype == FLOAT:
            a.dtype = COMPLEX
        args.append(a)
    c = copy.copy(sample)
    c.args = tuple(args)
    c.name = (sample.name + ", " if sample.name else "") + "complex"
    c.fd = False  # finite differences are real-only here; gradcheck covers complex
    c.xfail = {}
    return c


# ops torch supports for complex whose samples above are real: their first sample with
# a float input, made complex (so every complex-capable op is tested in complex too)
for _op in ("_reshape_alias", "_to_copy", "alias", "all", "any", "as_strided",
            "as_strided_backward", "as_strided_view", "cumsum_backward", "diagonal_backward",
            "fill", "fill_tensor", "index_add", "index_copy", "index_fill", "index_put",
            "index_put_acc", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
            "isclose", "isfinite", "isinf", "isnan", "logical_and",
            "logical_not", "logsumexp", "mask_index_put", "mask_put_seq", "mask_take",
            "masked_fill_tensor", "masked_scatter_backward", "rsub", "scatter", "scatter_add",
            "scatter_value", "select_backward", "slice_backward", "split_with_sizes",
            "squeeze0", "squeeze1", "squeeze2", "std", "t", "unfold", "unfold_backward",
            "var", "view_gather", "view_scatter", "view_write", "zero"):
    SAMPLES[_op].append(_as_complex(next(s for s in SAMPLES[_op]
                                         if any(a.dtype == FLOAT for a in s.args))))

for _op, _samples in SAMPLES.items():
    for _i, _s in enumerate(_samples):
        _s.id = f"{_op}:{_i}"

ALL = [s for ss in SAMPLES.values() for s in ss]


def sweep_marks(sample, fdt=None):
    """The fast tier (`-m "not slow"`) checks each op on its first sample, in the sample's
    first dtype; the full suite checks every sample in every dtype."""
    index = sample.id.split("@")[0].rsplit(":", 1)[-1]  # ("add:3", "add:3@0.0": a sweep's)
    first = index == "0" and (fdt is None or fdt == sample.dtypes()[0])
    return [] if first else [pytest.mark.slow]


# ---- harness shared by the op test suites ------------------------------------------
def make_inputs(m, sample, fdt, arrays=None):
    """The sample's inputs as tensors of module m (torch or eagergrad)."""
    if arrays is None:
        arrays = sample.arrays(fdt)
    fdt = "float64" if fdt == "fixed" else fdt
    out = []
    for a, arr in zip(sample.args, arrays):
        t = m.tensor(arr, dtype=getattr(m, a.dtype_name(fdt)))
        if a.rg:
            t.requires_grad_(True)
        out.append(t)
    return out


def as_list(out):
    """An op's result as a list of tensors (split, max(dim), ... give tuples)."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def to_np(t):
    t = t.detach()
    if hasattr(t, "_is_zerotensor"):  # torch: materialize ZeroTensors and lazy neg views
        if t._is_zerotensor():
            return np.zeros(tuple(t.shape), dtype_name(t))
        t = t.resolve_neg()
    return np.asarray(t.resolve_conj().numpy())  # both: numpy() refuses a conj view


def random_like(rng, shape, dtype_name):
    """Standard-normal values (complex for complex dtypes) as a numpy array."""
    a = rng.standard_normal(shape)
    if "complex" in dtype_name:
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a).astype(dtype_name)


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def single_precision(sample, fdt):
    """Does the sample compute anything in 32-bit floats?"""
    return fdt == "float32" or any(a.dtype in ("float32", "complex64") for a in sample.args)


def tolerance(dtype_name_, sample=None, fdt="float64"):
    """(rtol, atol) for comparing values of this dtype computed by this sample."""
    if dtype_name_ in ("float64", "complex128") and not (
            sample is not None and single_precision(sample, fdt)):
        return 1e-10, 1e-10
    if sample is not None and sample.tol is not None:
        return sample.tol
    return 1e-5, 1e-5
