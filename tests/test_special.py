"""torch.special (eagergrad/special.py) and the pointwise math of ops/special.py against
torch: every public function of torch 2.13's torch.special on float32 and float64 grids that
include the special values (signed zeros, negative integers, large arguments, infinities,
NaN), the result dtypes, integer and bool inputs, complex inputs (computed or refused as
torch does), gradients where torch has them (first and second order, float64), torch's
backward errors where it has none, and the argument errors.

The op-table suites (test_ops_torch.py, test_ops_jax.py, test_special_points.py) check
every op's graph, gradients against jax.vjp and finite differences, on samples inside the
domains; here the functions are swept across their whole range.
"""
import math

import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import same, same_error

NAN, INF = math.nan, math.inf

# every public function of torch.special (Tensor, torch, common_args and multi_dim_common
# are re-exported names and docstring helpers)
TORCH_SPECIAL = sorted(torch.special.__all__)

_EDGES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 1e-8, -1e-8, 0.999, -0.999,
          5.0, 8.0, 30.0, -30.0, 60.0, -60.0, 1e3, -1e3, 1e10, -1e10, INF, -INF, NAN]
GRID = np.concatenate([np.linspace(-12.0, 12.0, 193), _EDGES])

# unary functions: name -> the grid (default GRID)
_AIRY = np.concatenate([np.linspace(-60.0, 110.0, 341), [0.0, -0.0, 2.09, -2.09, 8.3203353,
                                                         103.892, 1e10, INF, -INF, NAN]])
_UNIT = np.concatenate([np.linspace(-1.2, 1.2, 97), [0.0, -0.0, 1.0, -1.0, 1e-8, 0.999999,
                                                     -0.999999, INF, -INF, NAN]])
_PROB = np.concatenate([np.linspace(-0.2, 1.2, 113), [0.0, -0.0, 1.0, 1e-30, 1 - 1e-7, 0.5,
                                                      INF, -INF, NAN]])
UNARY = {
    "airy_ai": _AIRY, "bessel_j0": GRID, "bessel_j1": GRID, "bessel_y0": GRID,
    "bessel_y1": GRID, "digamma": GRID, "entr": GRID, "erf": GRID, "erfc": GRID,
    "erfcx": np.concatenate([GRID, [-26.0, -27.0, -6.0, -6.2, 26.6, 49.0, 51.0, 1e8]]),
    "erfinv": _UNIT, "exp2": GRID, "expit": GRID, "expm1": GRID, "gammaln": GRID, "i0": GRID,
    "i0e": GRID, "i1": GRID, "i1e": GRID, "log1p": GRID,
    "log_ndtr": np.concatenate([GRID, [-40.0, -1.0001, -0.9999]]), "modified_bessel_i0": GRID,
    "modified_bessel_i1": GRID, "modified_bessel_k0": GRID, "modified_bessel_k1": GRID,
    "ndtr": GRID, "ndtri": _PROB, "psi": GRID, "scaled_modified_bessel_k0": GRID,
    "scaled_modified_bessel_k1": GRID, "sinc": GRID, "spherical_bessel_j0": GRID,
}
POLYNOMIALS = [n for n in TORCH_SPECIAL if n.endswith(("_polynomial_t", "_polynomial_u",
                                                       "_polynomial_v", "_polynomial_w",
                                                       "_polynomial_h", "_polynomial_he",
                                                       "_polynomial_l", "_polynomial_p"))]
BINARY = ("gammainc", "gammaincc", "xlog1py", "xlogy", "zeta")
# the rest, each with a test of its own below
OTHERS = ("log_softmax", "logit", "logsumexp", "multigammaln", "polygamma", "round", "softmax")
# differentiable in torch (the others' results never require grad)
DIFFERENTIABLE = {"digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit",
                  "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "ndtr",
                  "ndtri", "psi", "sinc"}
# points inside each differentiable function's domain, for the gradient checks
_INSIDE = {"erfinv": [-0.7, 0.1, 0.6], "ndtri": [0.1, 0.5, 0.8], "entr": [0.3, 1.0, 2.5],
           "digamma": [0.5, 2.0, -1.5], "psi": [0.5, 2.0, -1.5], "gammaln": [0.5, 2.0, -1.5]}


def _close(e, t, dt, what, rtol=None, atol=None):
    e_np, t_np = e.detach().numpy(), t.detach().numpy()
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    assert e_np.shape == t_np.shape, what
    if rtol is None:
        rtol = atol = 1e-10 if dt == "float64" else 1e-5
    bad = ~np.isclose(e_np, t_np, rtol=rtol, atol=atol, equal_nan=True)
    # an infinity must have torch's sign (isclose compares them so too)
    assert not bad.any(), (f"{what}: {bad.sum()} values differ, at {np.argwhere(bad)[:5].ravel()}"
                           f": {e_np[bad][:5]} vs torch's {t_np[bad][:5]}")


def _pair(values, dt):
    a = np.asarray(values, dtype=dt)
    return torch.tensor(a), eg.tensor(a)


def test_namespace_is_torchs():
    """Every public function of torch.special exists in eagergrad.special, in __all__."""
    assert sorted(eg.special.__all__) == TORCH_SPECIAL
    assert [n for n in TORCH_SPECIAL if not callable(getattr(eg.special, n))] == []
    listed = set(UNARY) | set(POLYNOMIALS) | set(BINARY) | set(OTHERS)
    assert sorted(set(TORCH_SPECIAL) - listed) == [], "a function this file does not test"
    with pytest.raises(NotImplementedError, match="torch.special.not_a_function"):
        eg.special.not_a_function


# ---- unary: values on the grid, dtypes, integer and bool inputs -----------------------------
@pytest.mark.fast_first
@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grid(name, dt):
    t, e = _pair(UNARY[name], dt)
    with np.errstate(all="ignore"):
        want = getattr(torch.special, name)(t)
    _close(getattr(eg.special, name)(e), want, dt, f"special.{name} {dt}")


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_integer_and_bool_inputs(name):
    """Integer and bool inputs compute in the default dtype (float32), as torch's."""
    for values, dt in (([-3, -1, 0, 1, 2, 5, 40], "int64"), ([0, 1, 7, 200], "uint8"),
                       ([True, False], "bool"), ([-2, 0, 3], "int32")):
        t, e = _pair(values, dt)
        _close(getattr(eg.special, name)(e), getattr(torch.special, name)(t), "float32",
               f"special.{name} of {dt}")


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(set(UNARY) | set(POLYNOMIALS) | set(BINARY)))
def test_complex_inputs(name):
    """Complex inputs: computed where torch computes them (exp2, expit, expm1, log1p, sinc),
    torch's error otherwise."""
    def f(L):
        z = L.tensor([0.5 + 0.25j, -1.0 + 2.0j, 0j], dtype=L.complex128)
        fn = getattr(L.special, name)
        return fn(z) if name in UNARY else fn(z, z)
    same(f, runs=1)


# ---- binary -------------------------------------------------------------------------------
_X = [0.0, -0.0, 1e-8, 0.5, 1.0, 2.5, -1.0, -2.5, 1e3, INF, -INF, NAN]
_BINARY_GRIDS = {
    "xlogy": (_X, _X + [-1.0 + 1e-9]),
    "xlog1py": (_X, _X + [-1.0 + 1e-9, -2.0]),
    "zeta": ([0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 30.0, -1.0, INF, NAN],
             [-2.5, -2.0, -1.0, 0.0, -0.0, 0.5, 1.0, 2.0, 10.0, 1e3, INF, NAN]),
    "gammainc": ([0.0, 0.5, 1.0, 2.5, 10.0, 25.0, 150.0, 300.0, INF, NAN, -1.0],
                 [0.0, 0.3, 1.0, 2.5, 10.0, 30.0, 160.0, 290.0, INF, NAN, -1.0]),
}
_BINARY_GRIDS["gammaincc"] = _BINARY_GRIDS["gammainc"]


@pytest.mark.fast_first
@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_grid(name, dt):
    xs, ys = _BINARY_GRIDS[name]
    tx, ex = _pair(np.asarray(xs)[:, None], dt)
    ty, ey = _pair(np.asarray(ys)[None, :], dt)
    with np.errstate(all="ignore"):
        want = getattr(torch.special, name)(tx, ty)
    # torch's incomplete gammas are off by up to 4e-10 in their asymptotic regime (a ~ x,
    # 20 < a < 200: at a = 20.26, x = 19.75 torch gives 0.48428077539, mpmath and scipy
    # 0.48428077580); eagergrad computes with jax's, accurate there
    tol = 1e-9 if name.startswith("gammainc") and dt == "float64" else None
    _close(getattr(eg.special, name)(ex, ey), want, dt, f"special.{name} {dt}", tol, tol)


@pytest.mark.fast_first
@pytest.mark.parametrize("name", BINARY)
def test_binary_numbers_and_promotion(name):
    """A Python number on either side (not both: torch's TypeError), integer tensors, and
    mixed dtypes."""
    fn = (lambda L: getattr(L.special, name))

    def f(L):
        x = L.tensor([0.5, 2.0, 3.0], dtype=L.float64)
        n = L.tensor([1, 2, 3])
        return [fn(L)(x, 2.5), fn(L)(3, x), fn(L)(n, n), fn(L)(n, x), fn(L)(x.float(), x),
                fn(L)(L.tensor(2.0), n)]
    if name in ("gammainc", "gammaincc"):  # tensors only, floats only
        def f(L):
            x = L.tensor([0.5, 2.0, 3.0], dtype=L.float64)
            return [fn(L)(x.float(), x), fn(L)(x, L.tensor(2.0))]
        same_error(lambda L: fn(L)(L.tensor([1, 2]), L.tensor([1, 2])), "not implemented for",
                   NotImplementedError)
        same_error(lambda L: fn(L)(L.tensor([1.0]), 2.0), "must be Tensor, not float", TypeError)
    same(f, runs=1)
    with pytest.raises(TypeError) as t_err:
        fn(torch)(2.0, 3.0)
    with pytest.raises(TypeError) as e_err:
        fn(eg)(2.0, 3.0)
    assert str(e_err.value).split("(")[0] == str(t_err.value).split("(")[0]


# ---- the polynomials (x, n) ----------------------------------------------------------------
_PX = [-2.0, -1.5, -1.0, -0.7, -0.5, 0.0, -0.0, 0.3, 0.5, 0.9, 1.0, 1.25, 2.0, 10.0, INF, -INF,
       NAN]
_PN = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 30]


@pytest.mark.fast_first
@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_grid(name, dt):
    tx, ex = _pair(np.asarray(_PX)[:, None], dt)
    tn, en = _pair(np.asarray(_PN)[None, :], "int64")
    with np.errstate(all="ignore"):
        want = getattr(torch.special, name)(tx, tn)
    _close(getattr(eg.special, name)(ex, en), want, dt, f"special.{name} {dt}")
    # n as a float tensor (truncated), and as a number
    tnf, enf = _pair([2.7, 5.2, 9.9], dt)
    _close(getattr(eg.special, name)(ex, enf), getattr(torch.special, name)(tx, tnf), dt,
           f"special.{name} {dt}, float n")
    _close(getattr(eg.special, name)(ex, 5), getattr(torch.special, name)(tx, 5), dt,
           f"special.{name} {dt}, n = 5")


@pytest.mark.fast_first
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_dtypes_and_numbers(name):
    def f(L):
        fn = getattr(L.special, name)
        n = L.tensor([0, 2, 3])
        return [fn(L.tensor([0.5, 2.0]).double(), 2), fn(n, n), fn(0.5, n),
                fn(L.tensor([0.25, 0.5], requires_grad=True), 3)]
    same(f, runs=1)
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        getattr(eg.special, name)(0.5, 3)


@pytest.mark.slow
def test_hermite_degree_limit():
    """torch's hermite polynomials are NaN past degree 128 (float32) and 512 (float64)."""
    for dt in ("float32", "float64"):
        tx, ex = _pair([0.5, 0.1], dt)
        tn, en = _pair([128, 129, 200, 512, 513], "int64")
        for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
            _close(getattr(eg.special, name)(ex[:, None], en),
                   getattr(torch.special, name)(tx[:, None], tn), dt, f"{name} {dt}")


# ---- the others ----------------------------------------------------------------------------
@pytest.mark.fast_first
@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_polygamma_and_multigammaln(dt):
    t, e = _pair(GRID, dt)
    for n in range(5):
        with np.errstate(all="ignore"):
            want = torch.special.polygamma(n, t)
        _close(eg.special.polygamma(n, e), want, dt, f"polygamma({n}) {dt}",
               # (near the poles n! / x^(n+1) reaches 1e40: relative only, and subnormal
               # results are flushed to 0 by XLA:CPU)
               rtol=1e-10 if dt == "float64" else 1e-5, atol=float(np.finfo(dt).tiny))
    for p in range(1, 5):
        _close(eg.special.multigammaln(e, p), torch.special.multigammaln(t, p), dt,
               f"multigammaln(p={p}) {dt}")


def test_logit():
    for dt in ("float64", "float32"):
        t, e = _pair(_PROB, dt)
        for eps in (None, 0.0, 0.1, 0.5, 0.75, -0.5):
            _close(eg.special.logit(e, eps), torch.special.logit(t, eps), dt,
                   f"logit(eps={eps}) {dt}")
    same(lambda L: [L.special.logit(L.tensor([0, 1, 2])), L.special.logit(L.tensor([True]))],
         runs=1)


def test_softmax_log_softmax_logsumexp_round():
    def f(L):
        x = L.tensor([[1.0, -2.0, 0.5], [-INF, 3.0, INF]], dtype=L.float64)
        y = L.tensor([[0.25, -1.5], [2.0, 0.0]])
        return [L.special.softmax(y, 0), L.special.softmax(y, -1, L.float64),
                L.special.log_softmax(y, 1), L.special.log_softmax(L.tensor([1, 2]), 0,
                                                                   dtype=L.float64),
                L.special.logsumexp(x, 1), L.special.logsumexp(y, (0, 1), keepdim=True),
                L.special.logsumexp(L.tensor([1, 2]), 0),
                L.special.round(L.tensor([0.5, 1.5, 2.55, -0.5])),
                L.special.round(L.tensor([2.55, -11.0]), decimals=1),
                L.special.round(L.tensor([1250.0, -11.0]), decimals=-2)]
    same(f, runs=1)
    same_error(lambda L: L.special.round(L.tensor([1, 2])), "round_vml_cpu",
               NotImplementedError)
    same_error(lambda L: L.special.round(L.tensor([1, 2]), decimals=2), "round_cpu",
               NotImplementedError)


# ---- gradients -----------------------------------------------------------------------------
@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients(name):
    """First and second-order gradients of torch.special's differentiable functions, in
    float64, and the grad_fn names: an alias records the aliased op's node."""
    points = _INSIDE.get(name, [-1.5, 0.3, 2.0])

    def f(L):
        x = L.tensor(points, dtype=L.float64, requires_grad=True)
        y = getattr(L.special, name)(x)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * L.tensor([1.0, -0.5, 2.0], dtype=L.float64)).sum(), x,
                                allow_unused=True)
        return [y, g.detach(), gg]  # (the backward graph's own node names are not compared)
    same(f)


@pytest.mark.slow  # (a sweep over 15 functions)
def test_gradients_of_the_others():
    def f(L):
        x = L.tensor([0.3, 1.5, 2.5], dtype=L.float64, requires_grad=True)
        q = L.tensor([1.5, 2.0, 4.0], dtype=L.float64, requires_grad=True)
        outs = [L.special.polygamma(2, x), L.special.multigammaln(x + 1, 3),
                L.special.logit(x / 3), L.special.logit(x / 3, eps=0.2),
                L.special.xlogy(x, q), L.special.xlog1py(x - 1, q), L.special.xlogy(2.0, q),
                L.special.zeta(3.0, q), L.special.zeta(x.detach() + 1, q),
                L.special.gammainc(x.detach(), q), L.special.gammaincc(x.detach(), q),
                L.special.softmax(x, 0), L.special.log_softmax(x, 0),
                L.special.logsumexp(x, 0), L.special.round(x, decimals=1)]
        res = []
        for y in outs:
            g = L.autograd.grad(y.sum(), (x, q), create_graph=True, allow_unused=True)
            res.append([y] + [None if v is None else v.detach() for v in g])
        return res
    same(f)


@pytest.mark.fast_first
@pytest.mark.parametrize("call", [
    lambda L, x: L.special.zeta(x, L.tensor([2.0, 3.0, 4.0], dtype=L.float64)),
    lambda L, x: L.special.zeta(x, 2.0),
    lambda L, x: L.special.gammainc(x, x.detach()),
    lambda L, x: L.special.gammaincc(x, L.tensor([1.0, 2.0, 3.0], dtype=L.float64)),
], ids=["zeta", "zeta(x, number)", "gammainc", "gammaincc"])
def test_derivatives_torch_does_not_implement(call):
    """zeta w.r.t. x and the incomplete gammas w.r.t. their first argument: torch records
    the node and raises NotImplementedError in backward."""
    def f(L):
        x = L.tensor([1.5, 2.0, 3.5], dtype=L.float64, requires_grad=True)
        y = call(L, x)
        return y, L.autograd.grad(y.sum(), x)
    same_error(f, "is not implemented", NotImplementedError)


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(set(UNARY) - DIFFERENTIABLE) + POLYNOMIALS)
def test_not_differentiable(name):
    """Bessel, Airy and the polynomials: the result never requires grad (as torch's)."""
    def f(L):
        x = L.tensor([0.5, 1.5], dtype=L.float64, requires_grad=True)
        fn = getattr(L.special, name)
        y = fn(x, L.tensor([2, 3])) if name in POLYNOMIALS else fn(x)
        return y, y.requires_grad, y.grad_fn is None
    same(f, runs=1)


# ---- argument errors -----------------------------------------------------------------------
_ERRORS = {
    "polygamma negative n": (lambda L: L.special.polygamma(-1, L.tensor([1.0])),
                             "does not support negative n", RuntimeError),
    "multigammaln p < 1": (lambda L: L.special.multigammaln(L.tensor([3.0]), 0),
                           "p has to be greater than or equal to 1", RuntimeError),
    "lerp end dtype": (lambda L: L.lerp(L.tensor([1.0]), L.tensor([2.0], dtype=L.float64), 0.5),
                       "expected dtype float for `end` but got dtype double", RuntimeError),
    "lerp weight dtype": (lambda L: L.lerp(L.tensor([1.0]), L.tensor([2.0]),
                                           L.tensor([0.5], dtype=L.float64)),
                          "expected dtype float for `weight`", RuntimeError),
    "lerp ints": (lambda L: L.lerp(L.tensor([1]), L.tensor([2]), 0.5), "lerp_kernel_scalar",
                  NotImplementedError),
    "addcdiv ints": (lambda L: L.addcdiv(L.tensor([1.0]), L.tensor([1]), L.tensor([2])),
                     "Integer division with addcdiv is no longer supported", RuntimeError),
    "addcmul complex value": (lambda L: L.addcmul(L.ones(2), L.ones(2), L.ones(2), value=1j),
                              "value cannot be converted to type float", RuntimeError),
    "float_power_ dtype": (lambda L: L.ones(2).float_power_(2),
                           "the base given to float_power_ has dtype Float", RuntimeError),
    "frexp int": (lambda L: L.frexp(L.tensor([1])), "only supports floating-point dtypes",
                  RuntimeError),
    "fmod int by 0": (lambda L: L.fmod(L.tensor([3]), 0), "ZeroDivisionError", RuntimeError),
    "heaviside dtypes": (lambda L: L.heaviside(L.ones(2), L.ones(1, dtype=L.float64)),
                         "different dtypes", RuntimeError),
    "heaviside number": (lambda L: L.heaviside(L.ones(2), 0.5), "must be Tensor, not float",
                         TypeError),
    "hypot ints": (lambda L: L.hypot(L.tensor([3]), L.tensor([4])), "hypot_cpu",
                   NotImplementedError),
    "logaddexp number": (lambda L: L.logaddexp(L.ones(2), 1), "must be Tensor, not int",
                         TypeError),
    "gcd floats": (lambda L: L.gcd(L.ones(2), L.ones(2)), "gcd_cpu", NotImplementedError),
    "shift floats": (lambda L: L.bitwise_left_shift(L.tensor([1]), 1.5), "lshift_cpu",
                     NotImplementedError),
    "positive bool": (lambda L: L.positive(L.tensor([True])), "on a bool tensor",
                      RuntimeError),
    "lgamma_ of ints": (lambda L: L.tensor([2]).lgamma_(), "can't be cast to the desired output",
                        RuntimeError),
    "fmax complex": (lambda L: L.fmax(L.ones(2, dtype=L.complex64), L.ones(2)),
                     "fmax not implemented for complex tensors", RuntimeError),
    "signbit complex": (lambda L: L.signbit(L.ones(2, dtype=L.complex64)),
                        "signbit is not implemented for complex tensors", NotImplementedError),
    "deg2rad complex": (lambda L: L.deg2rad(L.ones(2, dtype=L.complex64)),
                        "deg2rad is not supported for complex tensors", RuntimeError),
    "polygamma complex": (lambda L: L.polygamma(1, L.ones(2, dtype=L.complex64)),
                          "\"trigamma\" not implemented for 'ComplexFloat'", NotImplementedError),
    "mvlgamma complex": (lambda L: L.mvlgamma(L.ones(2, dtype=L.complex64), 2), "arange_cpu",
                         NotImplementedError),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_errors(case):
    fn, phrase, exc = _ERRORS[case]
    same_error(fn, phrase, exc)


# ---- the top-level pointwise ops the namespace shares ------------------------------------------
@pytest.mark.slow  # (a sweep over the in-place forms)
def test_in_place_and_top_level_forms():
    """torch.<name>_ functions and Tensor.<name>_ methods; the inverse hyperbolics' in-place
    forms record AcoshBackward1-style nodes whose backward raises; polygamma_ records
    PolygammaBackward1 and heaviside_ torch's NotImplemented node."""
    def f(L, log):
        x = L.tensor([1.5, 2.5], dtype=L.float64, requires_grad=True)
        for name in ("acosh_", "arccosh_", "asinh_", "atanh_"):
            y = x * (0.3 if name == "atanh_" else 1)
            getattr(y, name)()
            log.append((name, y, y.grad_fn.name()))
            try:
                y.sum().backward()
            except NotImplementedError as e:
                log.append(str(e))
        y = (x * 1).polygamma_(1)
        log.append(("polygamma_", y, L.autograd.grad(y.sum(), x)))
        y = (x - 2).heaviside_(L.tensor([0.5], dtype=L.float64))
        log.append(("heaviside_", y.detach(), type(y.grad_fn).__name__))
        for name in ("lgamma_", "digamma_", "erfinv_", "i0_", "sinc_", "deg2rad_", "square_",
                     "fix_", "negative_", "logit_", "erfc_", "rad2deg_"):
            z = L.tensor([0.25, 0.5], dtype=L.float64)
            if hasattr(L, name):
                log.append((name, getattr(L, name)(z.clone())))
            log.append((name, getattr(z, name)(), z))
        z = L.tensor([3, 4])
        log.append((z.gcd_(L.tensor([6, 6])), z.lcm_(L.tensor([4, 4])), L.gcd_(z, z)))
        for name in ("logical_and_", "logical_or_", "logical_xor_", "bitwise_and_",
                     "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
                     "bitwise_right_shift_"):
            z = L.tensor([3, 0, -5])
            log.append((name, getattr(z, name)(L.tensor([1, 2, 0])), z))
        b = L.tensor([True, False, True])
        log.append(b.logical_xor_(L.tensor([True, True, False])))
        for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_",
                     "less_", "less_equal_", "not_equal_"):
            z = L.tensor([0.5, 2.0, -1.0])
            log.append((name, getattr(z, name)(L.tensor([0.5, 1.0, 3.0])), z._version,
                        getattr(L.tensor([1, 2, 3]), name)(2)))
    same(f, runs=1)


_COMPLEX_CALLS = {
    "acosh": lambda L, z: L.acosh(z), "asinh": lambda L, z: z.asinh(),
    "atanh": lambda L, z: L.arctanh(z), "sinc": lambda L, z: L.sinc(z),
    "square": lambda L, z: L.square(z), "logaddexp": lambda L, z: L.logaddexp(z, z * 2),
    "ldexp": lambda L, z: L.ldexp(z, L.tensor([1, 2, 3])), "lerp": lambda L, z: L.lerp(z, z, 0.5j),
    "addcmul": lambda L, z: L.addcmul(z, z, z, value=1j), "addcdiv": lambda L, z: z.addcdiv(z, z),
    "float_power": lambda L, z: L.float_power(z, 2), "isreal": lambda L, z: L.isreal(z),
    "erfc": lambda L, z: L.erfc(z), "erfinv": lambda L, z: z.erfinv(),
    "lgamma": lambda L, z: L.lgamma(z), "digamma": lambda L, z: L.digamma(z),
    "polygamma": lambda L, z: L.polygamma(3, z), "mvlgamma": lambda L, z: L.mvlgamma(z, 1),
    "i0": lambda L, z: L.i0(z), "logit": lambda L, z: L.logit(z),
    "xlogy": lambda L, z: L.xlogy(z, 2), "logaddexp2": lambda L, z: L.logaddexp2(z, z),
    "hypot": lambda L, z: L.hypot(z, z), "fmod": lambda L, z: L.fmod(z, 2),
    "copysign": lambda L, z: L.copysign(z, z), "nextafter": lambda L, z: L.nextafter(z, z),
    "frexp": lambda L, z: L.frexp(z), "fmin": lambda L, z: L.fmin(z, z),
    "heaviside": lambda L, z: L.heaviside(z, z), "gcd": lambda L, z: L.gcd(z, z),
    "signbit": lambda L, z: L.signbit(z), "isposinf": lambda L, z: L.isposinf(z),
    "isneginf": lambda L, z: L.isneginf(z), "deg2rad": lambda L, z: L.deg2rad(z),
    "rad2deg": lambda L, z: z.rad2deg(), "igamma": lambda L, z: L.igamma(z, z),
    "shift": lambda L, z: L.bitwise_right_shift(z, 1),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(_COMPLEX_CALLS))
def test_top_level_complex(name):
    """Complex tensors: computed (with gradients) where torch supports them, torch's error
    where it refuses them."""
    def f(L):
        z = L.tensor([0.5 + 0.25j, 1.5 - 2.0j, -0.75 + 1.0j], dtype=L.complex128,
                     requires_grad=True)
        out = _COMPLEX_CALLS[name](L, z)
        outs = list(out) if isinstance(out, tuple) else [out]
        if not outs[0].requires_grad:
            return outs
        (g,) = L.autograd.grad(outs[0].abs().sum(), z)
        return outs + [g]
    same(f, runs=1)
