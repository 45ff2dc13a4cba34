"""Python numbers that vary between calls compile nothing new (docs/design.md §10:
indices, offsets, scalars that vary between calls are traced arguments, never baked into
the kernel or its cache key): pow's exponent, clamp's bounds, add/sub's alpha,
leaky_relu's slope, hardtanh's bounds, elu/celu's alpha, softplus' beta and threshold,
threshold's threshold and value, fill_'s value (NOTE [traced scalars], ops/pointwise.py).

Every case runs N = 50 calls, each with its own number(s), once with torch and once with
eagergrad. Each call's result must have torch's dtype and values: exactly for integer,
bool and (where torch's kernel is what eagergrad computes: comparisons, products, sums)
float64 results, with the sign of zero; within a few ulps where the kernels compute a
transcendental (pow, expm1, log1p) their own way; allclose for float32 and wider for
half types (torch computes those in float32). For eagergrad, the XLA compiles
(`EXECUTABLES.compiles_here()`, counted around each call) of calls WARM + 1 .. N must be at most
BOUND = 0. pow keeps some exponents constants (2, 0.5, ...: XLA and torch compute them
specially; one executable each): those have their own test.

Known gap (another change): the backward of a node keys its vjp by the node's attrs,
so it compiles once per value (xfail below).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad._cache import EXECUTABLES

N = 50      # calls per case, each with its own number(s)
WARM = 2    # calls that may compile
BOUND = 0   # compiles allowed in calls WARM + 1 .. N

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("counting_compiles")]


DR16 = 1 + 2 ** -11 + 2 ** -40  # float16 rounds it twice (through float32), as torch does


def _np(t):
    t = t.detach()
    if t.is_complex():
        t = t.resolve_conj()
    if t.dtype in (torch.bfloat16, eg.bfloat16):
        t = t.float()
    return t.numpy().copy() if isinstance(t, torch.Tensor) else np.asarray(t._value).copy()


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _close(a, b, how, what, half=False):
    """b (eagergrad's) equals a (torch's): `how` "exact" (equal values, NaN where torch
    has NaN), "signed" (and zeros of torch's sign), "ulp" (a few ulps) or "tol" (float32
    allclose; half types looser)."""
    assert a.shape == b.shape, what
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(b, a, err_msg=what)
        return
    if a.dtype.kind == "c":
        _close(a.real, b.real, how, what + " (real)", half)
        _close(a.imag, b.imag, how, what + " (imag)", half)
        return
    if how in ("exact", "signed"):
        np.testing.assert_array_equal(b, a, err_msg=what)
        if how == "signed":
            same = np.isnan(a) | (np.signbit(a) == np.signbit(b))
            assert same.all(), f"{what}: sign of zero differs at {np.nonzero(~same)[0]}"
        return
    if half or a.dtype.itemsize < 4:  # (torch computes half types in float32)
        rtol, atol = 1e-2, 0.05
    else:
        rtol = {np.dtype("float64"): {"ulp": 1e-14, "tol": 1e-12, "loose": 1e-12},
                np.dtype("float32"): {"loose": 1e-4}}.get(a.dtype, {}).get(how, 1e-6)
        atol = rtol * 1e-3
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=what)


def _input(L, dtype, kind="float"):
    """A fixed input per dtype: zeros of both signs, ones, infinities, NaN, randoms (kind
    "finite": no zeros, infinities or NaN; complex inputs are finite)."""
    if kind == "int":
        vals = [0, 1, -1, 2, -2, 3, 5, -7, 11, 100, -100, 42, 7, -3, 64, -64]
        if dtype == "uint8":
            vals = [abs(v) for v in vals]
    elif kind == "bool":
        vals = [True, False, True, True]
    else:
        rng = np.random.default_rng(0)
        vals = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, math.inf, -math.inf, math.nan, 20.0,
                -20.0, 1e-3, 30.0] + list(np.round(rng.standard_normal(14) * 3, 6))
        if kind in ("complex", "finite"):  # (torch's 0 ** z, inf ** z: rules of its own)
            vals = [v for v in vals if v != 0 and math.isfinite(v)]
        if kind == "complex":
            vals = [complex(v, w) for v, w in zip(vals, vals[3:] + vals[:3])]
    return L.tensor(vals, dtype=getattr(L, dtype))


def _run(L, dtype, kind, op, values):
    """op(L, x, v) for each v in values on one input: (results, compiles after WARM)."""
    x = _input(L, dtype, kind)
    out, compiles = [], 0
    for i, v in enumerate(values):
        c0 = EXECUTABLES.compiles_here()
        r = op(L, x, v)
        if i >= WARM and L is eg:
            compiles += EXECUTABLES.compiles_here() - c0
        out.append(r)
    return out, compiles


def _check(dtype, kind, op, values, how="exact"):
    expected, _ = _run(torch, dtype, kind, op, values)
    got, compiles = _run(eg, dtype, kind, op, values)
    for v, a, b in zip(values, expected, got):
        assert _dtype_name(a) == _dtype_name(b), f"value {v!r}: dtype"
        _close(_np(a), _np(b), how, f"value {v!r}", dtype in ("float16", "bfloat16"))
    assert compiles <= BOUND, f"{compiles} compiles in calls {WARM + 1}..{len(values)}"


def _floats(lo=-3.0, hi=3.0, n=N, extra=()):
    """n floats: `extra` special ones first (after two ordinary ones: the warm-up), then
    evenly spaced ones in [lo, hi] (none an integer)."""
    k = n - len(extra)
    spaced = [lo + (hi - lo) * (j + 0.5) / k + 1e-7 for j in range(k)]
    return spaced[:2] + list(extra) + spaced[2:]


SPECIAL = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, math.nan, math.inf, -math.inf, 1e-3, DR16)
F = "float64"


# ---- pow --------------------------------------------------------------------------------
def _pow(L, x, v):
    return x ** v


def _torch_pow(L, x, v):
    return L.pow(x, v)


def _pow_(L, x, v):
    return x.clone().pow_(v)


POW_FLOATS = _floats(-3.3, 3.3, extra=(math.nan, math.inf, -math.inf, 1e-3, 2.5, 1.5, -1.5,
                                       4.0, 7.0, -3.0, DR16))
POW_INTS = list(range(5, 5 + N - 10)) + [-5, -6, -7, -9, -17, -31, 63, 64, 100, 1000]
POW_CASES = [
    # (id, dtype, kind, op, values, how)
    ("float64 ** float", F, "float", _pow, POW_FLOATS, "ulp"),
    ("float32 ** float", "float32", "float", _pow, POW_FLOATS, "tol"),
    ("float16 ** float", "float16", "float", _pow, POW_FLOATS, "tol"),
    ("bfloat16 ** float", "bfloat16", "float", _pow, POW_FLOATS, "tol"),
    ("torch.pow(float64, float)", F, "float", _torch_pow, POW_FLOATS, "ulp"),
    ("float64.pow_(float)", F, "float", _pow_, POW_FLOATS, "ulp"),
    # (binary exponentiation where torch calls pow: 1e-13 apart after ten squarings)
    ("float64 ** int", F, "float", _pow, POW_INTS, "loose"),
    ("float32 ** int", "float32", "float", _pow, POW_INTS, "loose"),
    ("int64 ** int", "int64", "int", _pow, list(range(5, 5 + N)), "exact"),
    ("int32 ** int", "int32", "int", _pow, list(range(5, 5 + N)), "exact"),
    ("int64 ** float", "int64", "int", _pow, POW_FLOATS, "ulp"),
    # (complex: torch's and XLA's complex pow, 1e-13 apart)
    ("complex128 ** float", "complex128", "complex", _pow,
     [v for v in POW_FLOATS if math.isfinite(v)] + [2.37, 3.3, 0.1], "tol"),
    ("complex128 ** complex", "complex128", "complex", _pow,
     [complex(v, 0.3 * v - 0.2) for v in _floats(-2.0, 2.0)], "tol"),
    ("float64 ** complex", F, "finite", _pow,
     [complex(v, 0.7 - v) for v in _floats(-2.0, 2.0)], "tol"),
]


@pytest.mark.parametrize("case", POW_CASES, ids=[c[0] for c in POW_CASES])
def test_pow_exponents_compile_nothing_new(case):
    _, dtype, kind, op, values, how = case
    _check(dtype, kind, op, values, how)


POW_SPECIAL = [0, 1, 2, 3, -1, -2, 4, -4, 0.0, -0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5,
               True, False, 2 + 0j, 0.5 + 0j]


@pytest.mark.parametrize("dtype,kind", [(F, "float"), ("float32", "float"),
                                        ("complex128", "complex"), ("int64", "int")])
def test_pow_special_exponents(dtype, kind):
    """The exponents XLA (and torch) compute specially stay constants: one executable
    each, and torch's values: exactly for x * x, x * x * x, 1 / x and the zeroth and
    first powers (a few ulps for XLA's pow(x, 0.5), pow(x, -0.5), pow(x, -2.0) and the
    binary exponentiation of x ** 4, where torch calls sqrt, rsqrt, 1 / (x * x), pow)."""
    values = [v for v in POW_SPECIAL
              if not (kind == "int" and (isinstance(v, (float, complex)) or
                                         type(v) is int and v < 0))
              and not (kind != "complex" and isinstance(v, complex))]
    x = _np(_input(torch, dtype, kind))
    expected, _ = _run(torch, dtype, kind, _pow, values)
    got, _ = _run(eg, dtype, kind, _pow, values)
    for v, a, b in zip(values, expected, got):
        assert _dtype_name(a) == _dtype_name(b), f"value {v!r}: dtype"
        a, b = _np(a), _np(b)
        inexact = v in (0.5, -0.5, -2.0) and type(v) is not int or v in (4, -4)
        how = "tol" if dtype == "float32" or kind == "complex" else (
            "ulp" if inexact else "exact")
        if kind == "float" and v in (0.5, -0.5) and type(v) is not bool:
            # (sqrt(-inf) is NaN, pow(-inf, 0.5) inf; rsqrt(-0.0) is -inf)
            keep = (x != -math.inf) & ~((x == 0) & np.signbit(x))
            a, b = a[keep], b[keep]
        _close(a, b, how, f"exponent {v!r}")
    # one executable each: none on a second round
    c0 = EXECUTABLES.compiles_here()
    _run(eg, dtype, kind, _pow, values)
    assert EXECUTABLES.compiles_here() == c0


def test_pow_int_exponent_is_integer_pow():
    """A traced int exponent computes what lax.integer_pow does, bit for bit (binary
    exponentiation: the products in the same order)."""
    rng = np.random.default_rng(1)
    for dt in ("float16", "bfloat16", "float32", "float64", "complex64"):
        a = rng.uniform(0.5, 1.5, 300) + (0.3j if dt == "complex64" else 0)
        x = jnp.asarray(a).astype(dt)
        for n in (5, 7, 13, 31, 64, 100, 12345, -5, -17):
            want = np.asarray(jax.jit(lambda x: jax.lax.integer_pow(x, n))(x))
            got = np.asarray((eg.from_jax(x) ** n)._value)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{dt} ** {n}")


def test_pow_int_exponent_under_jax_grad():
    """The traced int exponent's loop has a jvp rule: jax.grad of a jaxified function
    runs (first and second order)."""
    f = eg.jaxify(lambda x: (x ** 7).sum())
    x = jnp.asarray([0.5, -1.5, 2.0])
    np.testing.assert_allclose(jax.grad(f)(x), 7 * x ** 6, rtol=1e-14)
    np.testing.assert_allclose(jax.grad(lambda x: jax.grad(f)(x).sum())(x), 42 * x ** 5,
                               rtol=1e-14)
    g = jax.jit(jax.grad(eg.jaxify(lambda x: (x ** -9).sum())))
    np.testing.assert_allclose(g(x), -9 * x ** -10.0, rtol=1e-14)


# ---- clamp ------------------------------------------------------------------------------
CLAMP_BOUNDS = _floats(-2.0, 2.0, extra=(0.0, -0.0, math.nan, math.inf, -math.inf, DR16))
PAIRS = [(v, v + 0.75) for v in CLAMP_BOUNDS[:30]] + \
    [(v + 0.5, v) for v in CLAMP_BOUNDS[30:46]] + \
    [(math.nan, 1.0), (0.0, math.nan), (-0.0, 0.0), (0.0, -0.0)]  # min > max: max wins
INT_PAIRS = [(i - 25, 25 - i) for i in range(N)]  # (min > max from the middle on)
CLAMP_CASES = [
    ("clamp(min)", F, "float", lambda L, x, v: x.clamp(min=v), CLAMP_BOUNDS),
    ("clamp(max)", F, "float", lambda L, x, v: x.clamp(max=v), CLAMP_BOUNDS),
    ("clamp(min, max)", F, "float", lambda L, x, v: x.clamp(*v), PAIRS),
    ("clamp float32", "float32", "float", lambda L, x, v: x.clamp(*v), PAIRS),
    ("clamp float16", "float16", "float", lambda L, x, v: x.clamp(*v), PAIRS),
    ("clamp bfloat16", "bfloat16", "float", lambda L, x, v: x.clamp(*v), PAIRS),
    ("torch.clamp", F, "float", lambda L, x, v: L.clamp(x, v[0], v[1]), PAIRS),
    ("clip", F, "float", lambda L, x, v: x.clip(*v), PAIRS),
    ("clamp_", F, "float", lambda L, x, v: x.clone().clamp_(*v), PAIRS),
    ("clip_", F, "float", lambda L, x, v: x.clone().clip_(*v), PAIRS),
    ("clamp_min", F, "float", lambda L, x, v: L.clamp_min(x, v), CLAMP_BOUNDS),
    ("clamp_max", F, "float", lambda L, x, v: L.clamp_max(x, v), CLAMP_BOUNDS),
    ("clamp_min_", F, "float", lambda L, x, v: x.clone().clamp_min_(v), CLAMP_BOUNDS),
    ("clamp int64", "int64", "int", lambda L, x, v: x.clamp(*v), INT_PAIRS),
    ("clamp int32", "int32", "int", lambda L, x, v: x.clamp(*v), INT_PAIRS),
    ("clamp uint8", "uint8", "int", lambda L, x, v: x.clamp(min=v), list(range(N))),
    ("clamp int64 float bounds", "int64", "int", lambda L, x, v: x.clamp(*v), PAIRS),
]


@pytest.mark.parametrize("case", CLAMP_CASES, ids=[c[0] for c in CLAMP_CASES])
def test_clamp_bounds_compile_nothing_new(case):
    _, dtype, kind, op, values = case
    _check(dtype, kind, op, values, "tol" if dtype in ("float32", "float16", "bfloat16")
           else "exact")


# ---- add / sub alpha ----------------------------------------------------------------------
# (alpha == 1 is the kernel's structure, no product: a warm-up call)
ALPHAS = [1.0, 0.37] + [0.0, -0.0, -1.0, 2.0, 0.5, math.nan, math.inf, DR16] + \
    _floats(-4.0, 4.0, n=N - 10)
INT_ALPHAS = [1, 2] + [0, -1, 3, -5, 100] + list(range(-20, 23))
ADD_CASES = [
    ("add", F, "float", lambda L, x, v: x.add(x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("torch.add", F, "float", lambda L, x, v: L.add(x, x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("sub", F, "float", lambda L, x, v: x.sub(x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("add_", F, "float", lambda L, x, v: x.clone().add_(x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("sub_", F, "float", lambda L, x, v: x.clone().sub_(x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("rsub", F, "float", lambda L, x, v: L.rsub(x, x * 0.7 - 0.1, alpha=v), ALPHAS),
    ("add float32", "float32", "float", lambda L, x, v: x.add(x * 0.7, alpha=v), ALPHAS),
    ("add float16", "float16", "float", lambda L, x, v: x.add(x * 0.7, alpha=v), ALPHAS),
    ("add scalar other", F, "float", lambda L, x, v: x.add(2.5, alpha=v), ALPHAS),
    ("add int64", "int64", "int", lambda L, x, v: x.add(x * 3 - 1, alpha=v), INT_ALPHAS),
    ("sub int32", "int32", "int", lambda L, x, v: x.sub(x * 3 - 1, alpha=v), INT_ALPHAS),
    ("add float64 int alpha", F, "float", lambda L, x, v: x.add(x * 0.7, alpha=v), INT_ALPHAS),
    ("add complex128", "complex128", "complex",
     lambda L, x, v: x.add(x * (0.5 - 1j), alpha=v),
     [1, 0.5j] + [complex(v, 1 - v) for v in _floats(-2.0, 2.0, n=N - 2)]),
]


@pytest.mark.parametrize("case", ADD_CASES, ids=[c[0] for c in ADD_CASES])
def test_alpha_compiles_nothing_new(case):
    """(torch computes a + alpha * b with a fused multiply-add: a float alpha's result is
    an ulp apart at times)"""
    _, dtype, kind, op, values = case
    how = "exact" if kind == "int" or type(values[-1]) is int else (
        "ulp" if dtype == F or kind == "complex" else "tol")
    _check(dtype, kind, op, values, how)


# ---- activations ------------------------------------------------------------------------
def _f(L):
    return L.nn.functional


SLOPES = _floats(-1.0, 1.0, extra=(0.0, -0.0, 1.0, -1.0, 0.01, math.nan, DR16))
# (torch's elu at x = 0 is 0 whatever alpha, eagergrad's alpha * expm1(0): NaN for NaN;
# torch's hardtanh backward with NaN bounds differs between its vector and scalar loops)
NUMBERS = _floats(-1.0, 1.0, extra=(0.0, -0.0, 1.0, -1.0, 0.01, DR16))
POSITIVE = _floats(0.05, 4.0, extra=(1.0, 0.5, 2.0, DR16, 1e-3))
ACT_CASES = [
    # (id, dtype, op, values, how)
    ("leaky_relu", F, lambda L, x, v: _f(L).leaky_relu(x, v), SLOPES, "exact"),
    ("leaky_relu float32", "float32", lambda L, x, v: _f(L).leaky_relu(x, v), SLOPES, "tol"),
    ("leaky_relu bfloat16", "bfloat16", lambda L, x, v: _f(L).leaky_relu(x, v), SLOPES,
     "tol"),
    ("leaky_relu_", F, lambda L, x, v: _f(L).leaky_relu_(x.clone(), abs(v)), SLOPES, "exact"),
    ("hardtanh", F, lambda L, x, v: _f(L).hardtanh(x, -abs(v), abs(v) + 0.25), SLOPES,
     "exact"),
    ("hardtanh_", F, lambda L, x, v: _f(L).hardtanh_(x.clone(), -abs(v), abs(v)), SLOPES,
     "exact"),
    ("hardtanh float32", "float32", lambda L, x, v: _f(L).hardtanh(x, v - 1, v + 1), SLOPES,
     "tol"),
    ("elu", F, lambda L, x, v: _f(L).elu(x, v), NUMBERS, "ulp"),
    ("elu_", F, lambda L, x, v: _f(L).elu_(x.clone(), abs(v)), NUMBERS, "ulp"),
    ("elu float32", "float32", lambda L, x, v: _f(L).elu(x, v), NUMBERS, "tol"),
    ("celu", F, lambda L, x, v: _f(L).celu(x, v), POSITIVE, "ulp"),
    ("celu_", F, lambda L, x, v: _f(L).celu_(x.clone(), v), POSITIVE, "ulp"),
    ("softplus beta", F, lambda L, x, v: _f(L).softplus(x, v), POSITIVE, "ulp"),
    ("softplus threshold", F, lambda L, x, v: _f(L).softplus(x, 1.5, v * 5), POSITIVE, "ulp"),
    ("softplus float32", "float32", lambda L, x, v: _f(L).softplus(x, v, 20 - v), POSITIVE,
     "tol"),
    ("threshold", F, lambda L, x, v: _f(L).threshold(x, v, -v * 3), SLOPES, "exact"),
    ("threshold_", F, lambda L, x, v: _f(L).threshold_(x.clone(), v, 1 - v), SLOPES, "exact"),
    ("torch.threshold", F, lambda L, x, v: L.threshold(x, v, 2 * v), SLOPES, "exact"),
    ("threshold float16", "float16", lambda L, x, v: _f(L).threshold(x, v, v), SLOPES, "tol"),
]


@pytest.mark.parametrize("case", ACT_CASES, ids=[c[0] for c in ACT_CASES])
def test_activation_numbers_compile_nothing_new(case):
    _, dtype, op, values, how = case
    _check(dtype, "float", op, values, how)


THRESH_INT = [(t, 7 - t) for t in range(-25, 25)]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8"])
def test_threshold_on_integers(dtype):
    """An integer tensor compares with the threshold in its own dtype (torch converts it:
    -0.5 is 0) and takes the value truncated."""
    _check(dtype, "int", lambda L, x, v: _f(L).threshold(x, *v), THRESH_INT)
    _check(dtype, "int", lambda L, x, v: _f(L).threshold(x, v[0] - 0.5, v[1] + 0.9),
           THRESH_INT)


# ---- fill_, mul_, div_, masked_fill_ ------------------------------------------------------
FILL_CASES = [
    ("fill_ float64", F, "float", _floats(-5, 5, extra=SPECIAL + (1e-310,))),
    ("fill_ float32", "float32", "float", _floats(-5, 5, extra=SPECIAL)),
    ("fill_ float16", "float16", "float", _floats(-5, 5, extra=SPECIAL)),
    ("fill_ bfloat16", "bfloat16", "float", _floats(-5, 5, extra=SPECIAL)),
    ("fill_ float64 int values", F, "float", list(range(-25, 25))),
    ("fill_ float64 complex value", F, "float", [complex(v, 0) for v in _floats()]),
    ("fill_ int64", "int64", "int", list(range(-25, 25))),
    ("fill_ int64 float values", "int64", "int", _floats(-9, 9)),
    ("fill_ int8", "int8", "int", list(range(-25, 25))),
    ("fill_ uint8", "uint8", "int", list(range(-25, 25))),
    ("fill_ bool", "bool", "bool", [1, 2] + list(range(-24, 24))),
    ("fill_ bool float values", "bool", "bool", _floats(extra=(0.0, -0.0, math.nan))),
    ("fill_ complex128", "complex128", "complex", [complex(v, -v) for v in _floats()]),
    ("fill_ complex128 float values", "complex128", "complex", _floats(extra=SPECIAL)),
]


@pytest.mark.parametrize("case", FILL_CASES, ids=[c[0] for c in FILL_CASES])
def test_fill_value_compiles_nothing_new(case):
    _, dtype, kind, values = case
    _check(dtype, kind, lambda L, x, v: x.clone().fill_(v), values,
           "tol" if dtype in ("float32", "float16", "bfloat16") else "exact")


@pytest.mark.parametrize("name,op,how", [
    ("mul_", lambda L, x, v: x.clone().mul_(v), "exact"),
    ("div_", lambda L, x, v: x.clone().div_(v), "ulp"),  # (torch: x * (1 / v))
    ("masked_fill_", lambda L, x, v: x.clone().masked_fill_(x > 0.5, v), "exact"),
    ("masked_fill", lambda L, x, v: x.masked_fill(x < 0, v), "exact"),
])
def test_other_numbers_compile_nothing_new(name, op, how):
    _check(F, "float", op, _floats(extra=SPECIAL), how)


# ---- gradients ----------------------------------------------------------------------------
def _grad_input(L):
    vals = [0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 20.0, -20.0, 1e-3, 3.25, -2.75, 0.3]
    return L.tensor(vals, dtype=L.float64, requires_grad=True)


GRAD_CASES = [
    ("pow float", lambda L, x, v: x ** v, _floats(-2.3, 3.3), "ulp"),
    ("pow int", lambda L, x, v: x.abs() ** v + 1, list(range(5, 5 + N)), "ulp"),
    ("clamp", lambda L, x, v: x.clamp(*v), PAIRS[:2] + PAIRS[6:], "exact"),
    ("clamp_min", lambda L, x, v: x.clamp(min=v), CLAMP_BOUNDS, "exact"),
    ("add alpha", lambda L, x, v: x.add(x * x, alpha=v), ALPHAS, "exact"),
    ("sub alpha", lambda L, x, v: (x * 2).sub(x.exp(), alpha=v), ALPHAS, "ulp"),
    ("add_ alpha", lambda L, x, v: (x * 1).add_(x * x, alpha=v), ALPHAS, "exact"),
    ("leaky_relu", lambda L, x, v: _f(L).leaky_relu(x, v), SLOPES, "exact"),
    ("leaky_relu_", lambda L, x, v: _f(L).leaky_relu_(x * 1, abs(v)), NUMBERS, "exact"),
    ("hardtanh", lambda L, x, v: _f(L).hardtanh(x, -abs(v), abs(v) + 0.25), NUMBERS, "exact"),
    ("elu", lambda L, x, v: _f(L).elu(x, v), NUMBERS, "ulp"),
    ("elu_", lambda L, x, v: _f(L).elu_(x * 1, abs(v)), NUMBERS, "ulp"),
    ("celu", lambda L, x, v: _f(L).celu(x, v), POSITIVE, "ulp"),
    ("softplus", lambda L, x, v: _f(L).softplus(x, v, 10 - v), POSITIVE, "ulp"),
    ("threshold", lambda L, x, v: _f(L).threshold(x, v, -v), SLOPES, "exact"),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_with_varying_numbers(case):
    """Per call: the forward compiles nothing new after WARM calls, and the result, its
    grad_fn and the gradient (backward of a weighted sum) equal torch's."""
    _, op, values, how = case

    def run(L):
        out, compiles = [], 0
        for i, v in enumerate(values):
            x = _grad_input(L)
            c0 = EXECUTABLES.compiles_here()
            y = op(L, x, v)
            if i >= WARM and L is eg:
                compiles += EXECUTABLES.compiles_here() - c0
            name = type(y.grad_fn).__name__
            w = L.arange(1, y.numel() + 1, dtype=L.float64)
            (y * w).sum().backward()
            out.append((y, name, x.grad))
        return out, compiles

    expected, _ = run(torch)
    got, compiles = run(eg)
    for v, (ya, na, ga), (yb, nb, gb) in zip(values, expected, got):
        assert na == nb, f"value {v!r}: grad_fn"
        _close(_np(ya), _np(yb), how, f"value {v!r}: result")
        _close(_np(ga), _np(gb), how, f"value {v!r}: gradient")
    assert compiles <= BOUND, f"{compiles} forward compiles in calls {WARM + 1}..{N}"


@pytest.mark.xfail(reason="the backward keys its vjp by the node's attrs (another change "
                          "makes them traced too)", strict=False)
def test_backward_compiles_nothing_new():
    x = eg.tensor([0.5, -1.5, 2.0, 3.0], dtype=eg.float64, requires_grad=True)
    compiles = 0
    for i in range(N):
        c0 = EXECUTABLES.compiles_here()
        eg.nn.functional.leaky_relu(x, 0.01 + i / 128).sum().backward()
        if i >= WARM:
            compiles += EXECUTABLES.compiles_here() - c0
    assert compiles <= BOUND


# ---- numbers a dtype cannot hold: torch's errors ------------------------------------------
ERRORS = {
    "clamp int8": lambda L: L.tensor([1, 2], dtype=L.int8).clamp(min=300),
    "clamp int8 max": lambda L: L.tensor([1, 2], dtype=L.int8).clamp(max=-300),
    "clamp_min int8": lambda L: L.clamp_min(L.tensor([1], dtype=L.int8), 128),
    "clamp int64 past int64": lambda L: L.tensor([1, 2]).clamp(min=2 ** 70),
    "fill_ int8": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(300),
    "fill_ uint8": lambda L: L.tensor([1, 2], dtype=L.uint8).fill_(-256),
    "fill_ uint8 negative float": lambda L: L.tensor([1, 2], dtype=L.uint8).fill_(-0.5),
    "fill_ int64 nan": lambda L: L.tensor([1, 2]).fill_(math.nan),
    "fill_ int64 inf": lambda L: L.tensor([1, 2]).fill_(-math.inf),
    "fill_ int8 float": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(2.7e3),
    "fill_ float complex": lambda L: L.tensor([1.0]).fill_(1 + 1j),
    "fill_ int complex": lambda L: L.tensor([1]).fill_(1j),
    "add int8 alpha": lambda L: L.tensor([1, 2], dtype=L.int8).add(
        L.tensor([1, 2], dtype=L.int8), alpha=300),
    "add alpha past int64": lambda L: L.tensor([1.0]).add(L.tensor([1.0]), alpha=2 ** 70),
    "pow int8": lambda L: L.tensor([1, 2], dtype=L.int8) ** 200,
    "pow past int64": lambda L: L.tensor([1.0]) ** 2 ** 70,
    "threshold uint8": lambda L: L.nn.functional.threshold(
        L.tensor([1, 2], dtype=L.uint8), -0.5, 1),
    "threshold int8 value": lambda L: L.nn.functional.threshold(
        L.tensor([1, 2], dtype=L.int8), 1, 300),
    "threshold bool": lambda L: L.nn.functional.threshold(L.tensor([True]), 0.5, 1),
    "leaky_relu past int64": lambda L: L.nn.functional.leaky_relu(L.tensor([1.0]), 2 ** 70),
    "fill_ int8 127.9": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(127.9),
    "fill_ uint8 -0.9": lambda L: L.tensor([1, 2], dtype=L.uint8).fill_(-0.9),
    "leaky_relu_ NaN slope backward": lambda L: L.nn.functional.leaky_relu_(
        L.tensor([1.0, -1.0], requires_grad=True) * 1, math.nan).sum().backward(),
    "elu_ NaN alpha backward": lambda L: L.nn.functional.elu_(
        L.tensor([1.0, -1.0], requires_grad=True) * 1, math.nan).sum().backward(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_numbers_out_of_range_raise_torchs_error(name):
    def outcome(L):
        try:
            return ERRORS[name](L)
        except Exception as e:  # noqa: BLE001 (the error is the result)
            return e
    a, b = outcome(torch), outcome(eg)
    assert isinstance(a, Exception), f"torch returned {a}"
    assert type(a).__name__ == type(b).__name__ and str(a) == str(b), (a, b)


FITS = {
    "fill_ uint8 -1": lambda L: L.tensor([1, 2], dtype=L.uint8).fill_(-1),
    "fill_ uint8 -255": lambda L: L.tensor([1, 2], dtype=L.uint8).fill_(-255),
    "fill_ int8 -128": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(-128),
    "fill_ int8 126.9": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(126.9),
    "fill_ int8 -128.0": lambda L: L.tensor([1, 2], dtype=L.int8).fill_(-128.0),
    "fill_ float 1+0j": lambda L: L.tensor([1.0]).fill_(1 + 0j),
    "fill_ bool 1j": lambda L: L.tensor([False]).fill_(1j),
    "fill_ bool nan": lambda L: L.tensor([False]).fill_(math.nan),
    "clamp uint8 bounds": lambda L: L.tensor([1, 200], dtype=L.uint8).clamp(3, 255),
    "clamp int8 bounds": lambda L: L.tensor([1, -100], dtype=L.int8).clamp(-128, 127),
    "add int64 alpha": lambda L: L.tensor([1, 2]).add(L.tensor([1, 2]), alpha=2 ** 62),
    "pow int64 2 ** 62": lambda L: L.tensor([1, -1, 2]) ** 2 ** 62,
    "pow float -2 ** 63": lambda L: L.tensor([0.5, -1.0, 1.0]) ** -2 ** 63,
    "threshold uint8 -1": lambda L: L.nn.functional.threshold(
        L.tensor([1, 2], dtype=L.uint8), -1, 5),
}


@pytest.mark.parametrize("name", list(FITS))
def test_numbers_in_range_work_as_torchs(name):
    a, b = FITS[name](torch), FITS[name](eg)
    assert _dtype_name(a) == _dtype_name(b)
    _close(_np(a), _np(b), "exact", name)


# ---- -0.0 is a number of its own ------------------------------------------------------------
SIGNED = {
    "leaky_relu": lambda L, x, v: _f(L).leaky_relu(x, v),
    "add alpha": lambda L, x, v: x.add(x * 0.7 - 0.1, alpha=v),
    "sub alpha": lambda L, x, v: x.sub(x * 0.7 - 0.1, alpha=v),
    "rsub alpha": lambda L, x, v: L.rsub(x, x * 0.7 - 0.1, alpha=v),
    "fill_": lambda L, x, v: x.clone().fill_(v),
    "threshold value": lambda L, x, v: _f(L).threshold(x, 0.5, v),
    "pow": lambda L, x, v: x ** v,
}


@pytest.mark.parametrize("name", list(SIGNED))
def test_negative_zero_is_a_number_of_its_own(name):
    """0.0 and -0.0 take turns: none reuses the other's kernel or node with its value
    (as plain floats they are equal keys); zeros come out with torch's signs. (Not
    clamp, hardtanh, elu: XLA's max(0.0, -0.0) is 0.0 and min -0.0, where torch's keep
    the input's zero, and torch's elu keeps a zero input: eagergrad's did not before
    either.)"""
    _check(F, "float", SIGNED[name], [0.0, -0.0] * (N // 2), "signed")


@pytest.mark.parametrize("name,op", [
    ("clamp", lambda L, x, v: x.clamp(min=v)),
    ("clamp max", lambda L, x, v: x.clamp(max=v)),
    ("fill_", lambda L, x, v: x.clone().fill_(v)),
    ("threshold", lambda L, x, v: _f(L).threshold(x, v, v)),
    ("hardtanh", lambda L, x, v: _f(L).hardtanh(x, -v, v)),
])
def test_float16_numbers_round_as_torchs(name, op):
    """A number becomes a float16 as torch's c10::Half does, through float32 (rounded
    twice): 1 + 2**-11 + 2**-40 is 1.0, not the nearest float16 1.0009765625."""
    _check("float16", "float", op, [1.5, 0.25, DR16, 1 + 2 ** -11, DR16 + 2 ** -30] * 10,
           "exact")
