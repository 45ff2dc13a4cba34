"""The random sampling ops (eagergrad/ops/sampling.py): torch.normal, bernoulli,
multinomial, poisson, binomial, _standard_gamma, _sample_dirichlet and Tensor's in-place
samplers. eagergrad's streams are not torch's, so the contract tested here is: the
distribution of the values (moments and Kolmogorov-Smirnov distances against the exact
cdfs, at fixed seeds, with bounds at the 0.1% level), torch's shapes, dtypes, graphs,
gradients and errors (compared with torch itself), and reproducibility under manual_seed
and an explicit Generator. The op-table samples (tests/_samples_random.py) compare the
deterministic cases value for value."""
import math

import jax.numpy as jnp
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import same, same_error

N = 20000
KS_BOUND = 1.95 / math.sqrt(N)  # the Kolmogorov-Smirnov statistic's 0.1% critical value


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _ks(x, cdf):
    """The Kolmogorov-Smirnov distance between the sample x and a cdf."""
    x = np.sort(np.asarray(x, np.float64).ravel())
    n = len(x)
    c = np.asarray(cdf(jnp.asarray(x)), np.float64)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


def _moments_ok(x, mean, var, k=5.0):
    """Sample mean within k standard errors, and the sample variance within k of its
    standard errors (normal approximation, 4th moment from the sample)."""
    x = np.asarray(x, np.float64).ravel()
    n = len(x)
    assert abs(x.mean() - mean) <= k * math.sqrt(var / n), (x.mean(), mean)
    m4 = np.mean((x - x.mean()) ** 4)
    assert abs(x.var() - var) <= k * math.sqrt(max(m4 - var ** 2, 1e-300) / n), (x.var(), var)


def _freqs_ok(x, probs, k=5.0):
    """Each category's frequency within k binomial standard errors of its probability."""
    x = np.asarray(x).ravel()
    n = len(x)
    for v, p in probs.items():
        f = np.mean(x == v)
        assert abs(f - p) <= k * math.sqrt(p * (1 - p) / n) + 1e-12, (v, f, p)


def _seed(s=0):
    eg.manual_seed(s)


# ---- the distributions -------------------------------------------------------------------------
@pytest.mark.fast_first
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_overloads_are_gaussian(dtype):
    _seed(1)
    dt = getattr(eg, dtype)
    mean = eg.full((N,), 1.5, dtype=dt)
    std = eg.full((N,), 2.0, dtype=dt)
    for x in (eg.normal(mean, std), eg.normal(mean, 2.0), eg.normal(1.5, std),
              eg.normal(1.5, 2.0, (N,), dtype=dt), eg.empty(N, dtype=dt).normal_(1.5, 2.0)):
        assert x.dtype is dt and x.shape == (N,)
        _moments_ok(_np(x), 1.5, 4.0)
        assert _ks((_np(x) - 1.5) / 2.0, jst.norm.cdf) < KS_BOUND


def test_normal_broadcasts_and_takes_mean_dtype():
    _seed(2)
    x = eg.normal(eg.zeros(N // 100, 1, dtype=eg.float64), eg.full((100,), 3.0))
    assert x.shape == (N // 100, 100) and x.dtype is eg.float64
    _moments_ok(_np(x), 0.0, 9.0)


def test_complex_normal_fills_each_part():
    # torch: each part of view_as_real(self) from N(mean, std**2 / 2)
    _seed(3)
    x = eg.empty(N, dtype=eg.complex64).normal_(1.0, 2.0)
    for part in (x.real, x.imag):
        _moments_ok(_np(part), 1.0, 2.0)
    y = eg.normal(eg.zeros(N, dtype=eg.complex128), 2.0)  # noise of variance 1, times std
    assert y.dtype is eg.complex128
    _moments_ok(_np(y.real), 0.0, 2.0)


@pytest.mark.fast_first
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_uniform_(dtype):
    _seed(4)
    x = _np(eg.empty(N, dtype=getattr(eg, dtype)).uniform_(-1.0, 3.0))
    assert x.min() >= -1.0 and x.max() <= 3.0
    if dtype != "bfloat16":  # (bfloat16: 8 bits, a coarse grid)
        assert x.max() < 3.0
        assert _ks((x + 1) / 4, lambda v: jnp.clip(v, 0, 1)) < KS_BOUND
    _moments_ok(x, 1.0, 16 / 12)


@pytest.mark.parametrize("lambd", [0.5, 3.0])
def test_exponential_(lambd):
    _seed(5)
    x = _np(eg.empty(N).exponential_(lambd))
    assert x.min() >= 0
    _moments_ok(x, 1 / lambd, 1 / lambd ** 2)
    assert _ks(x, lambda v: 1 - jnp.exp(-lambd * v)) < KS_BOUND


def test_cauchy_():
    _seed(6)
    x = _np(eg.empty(N, dtype=eg.float64).cauchy_(1.0, 0.5))
    assert _ks(x, lambda v: jnp.arctan((v - 1.0) / 0.5) / math.pi + 0.5) < KS_BOUND


def test_log_normal_():
    _seed(7)
    x = _np(eg.empty(N).log_normal_(0.5, 0.75))
    assert x.min() > 0
    assert _ks(np.log(x), lambda v: jst.norm.cdf(v, 0.5, 0.75)) < KS_BOUND


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_geometric_(dtype):
    _seed(8)
    p = 0.3
    x = _np(eg.empty(N, dtype=getattr(eg, dtype)).geometric_(p))
    assert x.min() >= 1 and np.all(x == np.round(x))
    _freqs_ok(x, {k: (1 - p) ** (k - 1) * p for k in range(1, 8)})
    _moments_ok(x, 1 / p, (1 - p) / p ** 2)


def test_random_():
    _seed(9)
    _freqs_ok(_np(eg.empty(N).random_(3, 7)), {k: 0.25 for k in range(3, 7)})
    _freqs_ok(_np(eg.empty(N, dtype=eg.int64).random_(5)), {k: 0.2 for k in range(5)})
    _freqs_ok(_np(eg.empty(N, dtype=eg.bool).random_()), {0: 0.5, 1: 0.5})
    x = _np(eg.empty(N, dtype=eg.int8).random_())
    assert x.min() >= 0 and x.max() <= 127
    _moments_ok(x, 63.5, (128 ** 2 - 1) / 12)
    x = _np(eg.empty(N).random_())  # float32: integers in [0, 2**24]
    assert x.min() >= 0 and x.max() <= 2 ** 24 and np.all(x == np.round(x))
    _moments_ok(x, 2 ** 23, (2 ** 24 + 1) ** 2 / 12)
    x = _np(eg.empty(N, dtype=eg.int16).random_(-5, None))  # from -5 to int16's max
    assert x.min() >= -5 and x.max() <= 2 ** 15 - 1
    _moments_ok(x, (2 ** 15 - 6) / 2, (2 ** 15 + 5) ** 2 / 12)


def test_bernoulli_forms():
    _seed(10)
    p = eg.tensor([0.1, 0.5, 0.9]).repeat(N // 3)
    draws = [eg.bernoulli(p), eg.empty(p.shape).bernoulli_(p),
             eg.empty(N // 3, 3, dtype=eg.int64).bernoulli_(eg.tensor([0.1, 0.5, 0.9])).flatten()]
    for x in draws:
        a = _np(x).reshape(-1, 3)
        assert set(np.unique(a)) <= {0.0, 1.0}
        for j, pj in enumerate((0.1, 0.5, 0.9)):
            _freqs_ok(a[:, j], {1.0: pj})
    _freqs_ok(_np(eg.bernoulli(eg.zeros(N), 0.25)), {1.0: 0.25})
    _freqs_ok(_np(eg.empty(N, dtype=eg.bool).bernoulli_(0.75)), {1.0: 0.75})


def test_multinomial():
    _seed(11)
    probs = eg.tensor([[1.0, 2.0, 0.0, 5.0], [0.0, 0.0, 1.0, 1.0]])
    x = eg.multinomial(probs, N, True)
    assert x.shape == (2, N) and x.dtype is eg.int64
    _freqs_ok(_np(x[0]), {0: 1 / 8, 1: 2 / 8, 2: 0.0, 3: 5 / 8})
    _freqs_ok(_np(x[1]), {0: 0.0, 1: 0.0, 2: 0.5, 3: 0.5})
    # without replacement: distinct categories, the first draw proportional to the weights,
    # the zero-weight categories last
    rows = eg.multinomial(eg.tensor([1.0, 2.0, 0.0, 5.0]).expand(N // 4, 4).contiguous(), 4)
    a = _np(rows)
    assert all(len(set(r)) == 4 for r in a[:100]) and np.all(a[:, 3] == 2)
    _freqs_ok(a[:, 0], {0: 1 / 8, 1: 2 / 8, 3: 5 / 8})


@pytest.mark.fast_first
@pytest.mark.parametrize("rate", [0.5, 4.0, 60.0])
def test_poisson(rate):
    _seed(12)
    x = _np(eg.poisson(eg.full((N,), rate)))
    assert np.all(x == np.round(x)) and x.min() >= 0
    _moments_ok(x, rate, rate)
    pmf = {k: math.exp(k * math.log(rate) - rate - math.lgamma(k + 1))
           for k in range(int(rate) - 2, int(rate) + 3) if k >= 0}
    _freqs_ok(x, pmf)


@pytest.mark.fast_first
@pytest.mark.parametrize("alpha", [0.3, 1.0, 7.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma(alpha, dtype):
    _seed(13)
    x = _np(eg._standard_gamma(eg.full((N,), alpha, dtype=getattr(eg, dtype))))
    assert x.min() > 0
    _moments_ok(x, alpha, alpha)
    assert _ks(x, lambda v: jsp.gammainc(alpha, v)) < KS_BOUND


def test_sample_dirichlet():
    _seed(14)
    alpha = np.array([0.5, 2.0, 3.5])
    x = _np(eg._sample_dirichlet(eg.tensor(alpha).expand(N, 3).contiguous()))
    assert np.allclose(x.sum(-1), 1.0, atol=1e-6) and x.min() > 0
    a0 = alpha.sum()
    for j in range(3):
        _moments_ok(x[:, j], alpha[j] / a0, alpha[j] * (a0 - alpha[j]) / (a0 ** 2 * (a0 + 1)))
        # each coordinate is Beta(alpha_j, a0 - alpha_j)
        assert _ks(x[:, j], lambda v, j=j: jsp.betainc(alpha[j], a0 - alpha[j], v)) < KS_BOUND


@pytest.mark.fast_first
@pytest.mark.parametrize("n,p", [(10.0, 0.3), (50.0, 0.8), (3.0, 0.05)])
def test_binomial(n, p):
    _seed(15)
    x = _np(eg.binomial(eg.full((N,), n), eg.full((N,), p)))
    assert np.all(x == np.round(x)) and x.min() >= 0 and x.max() <= n
    _moments_ok(x, n * p, n * p * (1 - p))
    k = round(n * p)
    _freqs_ok(x, {k: math.comb(int(n), k) * p ** k * (1 - p) ** (n - k)})


def test_binomial_edges_as_torch():
    same(lambda L: L.binomial(L.tensor([0.0, 5.0, 5.0, 2.0]), L.tensor([0.5, 0.0, 1.0, 1.0])))


# ---- reproducibility ---------------------------------------------------------------------------
DRAWS = {
    "normal": lambda g: eg.normal(eg.zeros(5), eg.ones(5), generator=g),
    "normal(float, float)": lambda g: eg.normal(0.0, 1.0, (5,), generator=g),
    "bernoulli": lambda g: eg.bernoulli(eg.full((5,), 0.5), generator=g),
    "multinomial": lambda g: eg.multinomial(eg.ones(2, 6), 3, generator=g),
    "poisson": lambda g: eg.poisson(eg.full((5,), 3.0), g),
    "_standard_gamma": lambda g: eg._standard_gamma(eg.ones(5), g),
    "_sample_dirichlet": lambda g: eg._sample_dirichlet(eg.ones(2, 3), g),
    "binomial": lambda g: eg.binomial(eg.full((5,), 9.0), eg.full((5,), 0.5), g),
    "exponential_": lambda g: eg.zeros(5).exponential_(generator=g),
    "cauchy_": lambda g: eg.zeros(5).cauchy_(generator=g),
    "geometric_": lambda g: eg.zeros(5).geometric_(0.5, generator=g),
    "log_normal_": lambda g: eg.zeros(5).log_normal_(generator=g),
    "random_": lambda g: eg.zeros(5).random_(0, 100, generator=g),
    "bernoulli_": lambda g: eg.zeros(5).bernoulli_(eg.full((5,), 0.5), generator=g),
}


def _eq(a, b):
    return a.dtype is b.dtype and a.shape == b.shape and bool((a == b).all())


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_seeds_and_generators_fix_the_stream(name):
    draw = DRAWS[name]
    _seed(0)
    a = draw(None)
    _seed(0)
    assert _eq(draw(None), a)
    _seed(0)
    g1, g2 = draw(eg.Generator().manual_seed(3)), draw(eg.Generator().manual_seed(3))
    assert _eq(g1, g2)
    assert _eq(draw(None), a)  # an explicit generator leaves the global stream alone
    other = [draw(eg.Generator().manual_seed(s)) for s in (4, 5)]
    assert not all(_eq(g1, o) for o in other)


# ---- shapes, dtypes, graphs, gradients: as torch -----------------------------------------------
def _meta(t):
    """What must match torch: everything but the drawn values."""
    return (tuple(t.shape), str(t.dtype).replace("eagergrad.", "torch."), t.requires_grad,
            None if t.grad_fn is None else type(t.grad_fn).__name__)


_SHAPES = {
    "normal(T, T)": lambda L, x: L.normal(x, x.abs() + 1),
    "normal(T, T) broadcast": lambda L, x: L.normal(x[:, :1], x[0].abs()),
    "normal(T, f)": lambda L, x: L.normal(x, 2.0),
    "normal(f, T)": lambda L, x: L.normal(1.0, x.abs()),
    "normal(f, f, size)": lambda L, x: L.normal(1.0, 2.0, (2, 3)),
    "normal(f, f, size, f64)": lambda L, x: L.normal(1.0, 2.0, size=(4,), dtype=L.float64),
    "normal(f, f, rg)": lambda L, x: L.normal(1.0, 2.0, (4,), requires_grad=True),
    "normal(T f64, T f32)": lambda L, x: L.normal(x.double(), x.abs()),
    "normal(T f32, T f64)": lambda L, x: L.normal(x, x.double().abs()),
    "normal(T f16, f)": lambda L, x: L.normal(x.detach().half(), 1.0),
    "bernoulli": lambda L, x: L.bernoulli(x.sigmoid()),
    "bernoulli(p)": lambda L, x: L.bernoulli(x, 0.3),
    "bernoulli(int, p)": lambda L, x: L.bernoulli(L.zeros(3, dtype=L.int64), 0.5),
    "Tensor.bernoulli": lambda L, x: x.detach().sigmoid().bernoulli(),
    "multinomial": lambda L, x: L.multinomial(x.abs(), 2),
    "multinomial 1-d": lambda L, x: x[0].abs().multinomial(5, replacement=True),
    "multinomial empty batch": lambda L, x: L.multinomial(L.ones(0, 3), 2),
    "poisson": lambda L, x: L.poisson(x.abs()),
    "_standard_gamma": lambda L, x: L._standard_gamma(x.abs() + 0.5),
    "_sample_dirichlet": lambda L, x: L._sample_dirichlet(x.abs() + 0.5),
    "binomial": lambda L, x: L.binomial(x.abs().detach().round() + 1, x.sigmoid()),
    "normal_": lambda L, x: (x * 1).normal_(),
    "uniform_": lambda L, x: (x * 1).uniform_(0, 2),
    "exponential_": lambda L, x: (x * 1).exponential_(),
    "cauchy_": lambda L, x: (x * 1).cauchy_(),
    "geometric_": lambda L, x: (x * 1).geometric_(0.5),
    "log_normal_": lambda L, x: (x * 1).log_normal_(),
    "random_(from, to)": lambda L, x: (x * 1).random_(2, 5),
    "random_(to)": lambda L, x: (x * 1).random_(5),
    "random_()": lambda L, x: (x * 1).random_(),
    "bernoulli_(p)": lambda L, x: (x * 1).bernoulli_(0.5),
    "bernoulli_(T)": lambda L, x: L.zeros(2, 3).bernoulli_(x.sigmoid()),
    "bernoulli_ f64 p": lambda L, x: L.zeros(2, 3).bernoulli_(x.double().sigmoid()),
    "int64 geometric_": lambda L, x: L.zeros(3, dtype=L.int64).geometric_(0.5),
    "half exponential_": lambda L, x: L.zeros(3, dtype=L.float16).exponential_(),
    "bf16 cauchy_": lambda L, x: L.zeros(3, dtype=L.bfloat16).cauchy_(),
    "complex normal_": lambda L, x: L.zeros(3, dtype=L.complex64).normal_(),
    "complex uniform_": lambda L, x: L.zeros(3, dtype=L.complex128).uniform_(),
    "rand_like": lambda L, x: L.rand_like(x),
    "randn_like": lambda L, x: L.randn_like(x, dtype=L.float64),
    "randint_like(high)": lambda L, x: L.randint_like(x, 5),
    "randint_like(high=)": lambda L, x: L.randint_like(x, high=5),
    "randint_like(low, high)": lambda L, x: L.randint_like(x, 2, 5),
    "randperm": lambda L, x: L.randperm(4, dtype=L.float32),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_shapes_dtypes_and_graphs_as_torch(name):
    def f(L):
        x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        return _meta(_SHAPES[name](L, x))
    same(f)


@pytest.mark.slow  # (seconds in the fast tier)
def test_the_samplers_torch_does_not_differentiate_give_zeros():
    def f(L):
        x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
        s = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        outs = [L.normal(x, s), L.normal(x, 2.0), L.normal(1.0, s), L.bernoulli(x / 3),
                L.poisson(x), (x * 1).exponential_(), (x * 1).random_(3),
                L.zeros(3).bernoulli_(s / 4)]
        return [L.autograd.grad(o.sum(), [x, s], allow_unused=True) for o in outs]
    same(f)


def test_standard_gamma_gradient_is_torch_formula_at_the_sample():
    # d sample / d alpha: torch's _standard_gamma_grad at (alpha, our sample)
    _seed(16)
    alpha = np.array([0.2, 0.7, 1.0, 2.5, 9.0, 30.0])
    for dtype in ("float32", "float64"):
        a = eg.tensor(alpha, dtype=getattr(eg, dtype), requires_grad=True)
        x = eg._standard_gamma(a)
        (g,) = eg.autograd.grad(x.sum(), a)
        want = torch._standard_gamma_grad(torch.tensor(alpha, dtype=getattr(torch, dtype)),
                                          torch.tensor(x.tolist(), dtype=getattr(torch, dtype)))
        np.testing.assert_allclose(_np(g), want.numpy(), rtol=2e-5 if dtype == "float32"
                                   else 1e-12)


def test_standard_gamma_grad_and_dirichlet_grad_values_as_torch():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.05, 20.0, 300)
    x = rng.gamma(a)
    al, be = rng.uniform(0.05, 15.0, 300), rng.uniform(0.05, 15.0, 300)
    xs = np.clip(rng.beta(al, be), 1e-6, 1 - 1e-6)
    for dtype, rtol in (("float32", 2e-4), ("float64", 1e-10)):
        T, E = getattr(torch, dtype), getattr(eg, dtype)
        np.testing.assert_allclose(
            _np(eg._standard_gamma_grad(eg.tensor(a, dtype=E), eg.tensor(x, dtype=E))),
            torch._standard_gamma_grad(torch.tensor(a, dtype=T), torch.tensor(x, dtype=T)),
            rtol=rtol)
        np.testing.assert_allclose(
            _np(eg._dirichlet_grad(eg.tensor(xs, dtype=E), eg.tensor(al, dtype=E),
                                   eg.tensor(al + be, dtype=E))),
            torch._dirichlet_grad(torch.tensor(xs, dtype=T), torch.tensor(al, dtype=T),
                                  torch.tensor(al + be, dtype=T)), rtol=rtol)


def test_in_place_samplers_are_methods_of_the_class():
    # (they were marked absent: Tensor.cauchy_ was a property, "not callable")
    for name in ("normal_", "uniform_", "exponential_", "cauchy_", "geometric_",
                 "log_normal_", "random_", "bernoulli_"):
        assert callable(getattr(eg.Tensor, name)), name
    _seed(0)
    a = eg.Tensor.cauchy_(eg.zeros(3))
    _seed(0)
    assert _eq(eg.zeros(3).cauchy_(), a)


@pytest.mark.slow  # (seconds in the fast tier)
def test_samplers_under_a_jax_trace():
    import jax
    _seed(0)

    def f(x):
        return (eg.normal(x, 1.0) + eg._standard_gamma(x.abs() + 1) + eg.poisson(x.abs())
                + eg.zeros(3).exponential_() + eg.bernoulli(x.sigmoid()))
    out = jax.jit(eg.jaxify(f))(jnp.ones(3, jnp.float32))
    assert out.shape == (3,) and bool(jnp.isfinite(out).all())


# ---- errors: torch's -----------------------------------------------------------------------------
_ERRORS = {
    "normal std < 0 tensor": (lambda L: L.normal(L.zeros(2), -L.ones(2)), RuntimeError),
    "normal std < 0": (lambda L: L.normal(L.zeros(2), -1.0), RuntimeError),
    "normal(f, T) std < 0": (lambda L: L.normal(0.0, L.tensor([1.0, -0.5])), RuntimeError),
    "normal(f, f) std < 0": (lambda L: L.normal(0.0, -1.0, (2,)), RuntimeError),
    "normal std nan": (lambda L: L.normal(L.zeros(2), L.tensor([math.nan, 1.0])),
                       RuntimeError),
    "normal no size": (lambda L: L.normal(0.0, 1.0), TypeError),
    "normal bad broadcast": (lambda L: L.normal(L.zeros(2), L.ones(3)), RuntimeError),
    "normal int mean": (lambda L: L.normal(L.zeros(2, dtype=L.int64), 1.0),
                        NotImplementedError),
    "normal int dtype": (lambda L: L.normal(0.0, 1.0, (2,), dtype=L.int64),
                         NotImplementedError),
    "normal complex std": (lambda L: L.normal(0.0, L.ones(2, dtype=L.complex64)),
                           RuntimeError),
    "normal complex rg": (lambda L: L.normal(L.zeros(2, dtype=L.complex64,
                                                     requires_grad=True), 1.0), RuntimeError),
    "normal_ std < 0": (lambda L: L.zeros(2).normal_(0, -1), RuntimeError),
    "normal_ int": (lambda L: L.zeros(2, dtype=L.int32).normal_(), NotImplementedError),
    "normal_ on a leaf": (lambda L: L.zeros(2, requires_grad=True).normal_(), RuntimeError),
    "normal_ expanded": (lambda L: L.zeros(3).expand(2, 3).normal_(), RuntimeError),
    "uniform_ from > to": (lambda L: L.zeros(2).uniform_(2, 1), RuntimeError),
    "uniform_ int": (lambda L: L.zeros(2, dtype=L.int64).uniform_(), NotImplementedError),
    "exponential_ 0": (lambda L: L.zeros(2).exponential_(0), RuntimeError),
    "exponential_ int": (lambda L: L.zeros(2, dtype=L.int64).exponential_(), RuntimeError),
    "exponential_ complex": (lambda L: L.zeros(2, dtype=L.complex64).exponential_(),
                             RuntimeError),
    "cauchy_ sigma 0": (lambda L: L.zeros(2).cauchy_(0, 0), RuntimeError),
    "cauchy_ int": (lambda L: L.zeros(2, dtype=L.uint8).cauchy_(), RuntimeError),
    "geometric_ p 0": (lambda L: L.zeros(2).geometric_(0), RuntimeError),
    "geometric_ p 1": (lambda L: L.zeros(2).geometric_(1), RuntimeError),
    "geometric_ bool": (lambda L: L.zeros(2, dtype=L.bool).geometric_(0.5),
                        NotImplementedError),
    "log_normal_ std 0": (lambda L: L.zeros(2).log_normal_(0, 0), RuntimeError),
    "log_normal_ int": (lambda L: L.zeros(2, dtype=L.int64).log_normal_(),
                        NotImplementedError),
    "random_ from == to": (lambda L: L.zeros(2).random_(5, 5), RuntimeError),
    "random_ to 0": (lambda L: L.zeros(2).random_(0), RuntimeError),
    "random_ bool to 3": (lambda L: L.zeros(2, dtype=L.bool).random_(3), RuntimeError),
    "random_ uint8 from -1": (lambda L: L.zeros(2, dtype=L.uint8).random_(-1, 3),
                              RuntimeError),
    "random_ half big": (lambda L: L.zeros(2, dtype=L.float16).random_(0, 100000),
                         RuntimeError),
    "random_ complex": (lambda L: L.zeros(2, dtype=L.complex64).random_(),
                        NotImplementedError),
    "bernoulli p > 1": (lambda L: L.bernoulli(L.tensor([1.5])), RuntimeError),
    "bernoulli p nan": (lambda L: L.bernoulli(L.tensor([math.nan])), RuntimeError),
    "bernoulli int": (lambda L: L.bernoulli(L.tensor([1])), NotImplementedError),
    "bernoulli complex": (lambda L: L.bernoulli(L.zeros(2, dtype=L.complex64)),
                          NotImplementedError),
    "bernoulli(x, 2)": (lambda L: L.bernoulli(L.zeros(2), 2.0), RuntimeError),
    "bernoulli_ 2": (lambda L: L.zeros(2).bernoulli_(2.0), RuntimeError),
    "bernoulli_ bad p": (lambda L: L.zeros(2).bernoulli_(L.tensor([2.0, 0.0])), RuntimeError),
    "bernoulli_ p does not broadcast": (
        lambda L: L.zeros(2, 3).bernoulli_(L.tensor([0.5, 0.2])), RuntimeError),
    "bernoulli_ int p": (lambda L: L.zeros(3).bernoulli_(L.ones(3, dtype=L.int64)),
                         NotImplementedError),
    "multinomial too many": (lambda L: L.multinomial(L.tensor([0.0, 1.0, 1.0]), 4),
                             RuntimeError),
    "multinomial 0 samples": (lambda L: L.multinomial(L.ones(3), 0), RuntimeError),
    "multinomial negative": (lambda L: L.multinomial(L.tensor([-1.0, 1.0]), 1), RuntimeError),
    "multinomial inf": (lambda L: L.multinomial(L.tensor([math.inf, 1.0]), 1, True),
                        RuntimeError),
    "multinomial zero sum": (lambda L: L.multinomial(L.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
                             RuntimeError),
    "multinomial 0-d": (lambda L: L.multinomial(L.tensor(1.0), 1), RuntimeError),
    "multinomial 3-d": (lambda L: L.multinomial(L.ones(2, 2, 2), 1), RuntimeError),
    "multinomial int": (lambda L: L.multinomial(L.ones(3, dtype=L.int64), 1), RuntimeError),
    "poisson negative": (lambda L: L.poisson(L.tensor([-1.0])), RuntimeError),
    "poisson int": (lambda L: L.poisson(L.tensor([1])), NotImplementedError),
    "gamma half": (lambda L: L._standard_gamma(L.ones(2, dtype=L.float16)),
                   NotImplementedError),
    "dirichlet half": (lambda L: L._sample_dirichlet(L.ones(2, dtype=L.float16)),
                       NotImplementedError),
    "binomial int count": (lambda L: L.binomial(L.tensor([2]), L.tensor([0.5])), ValueError),
    "binomial dtype mix": (lambda L: L.binomial(L.tensor([2.0], dtype=L.float64),
                                                L.tensor([0.5])), RuntimeError),
    "_standard_gamma_grad int": (lambda L: L._standard_gamma_grad(L.ones(2, dtype=L.int64),
                                                                  L.ones(2, dtype=L.int64)),
                                 NotImplementedError),
    "rand int": (lambda L: L.rand(3, dtype=L.int64), NotImplementedError),
    "randn_like int": (lambda L: L.randn_like(L.zeros(3, dtype=L.int64)), NotImplementedError),
    "randint from == to": (lambda L: L.randint(5, 5, (3,)), RuntimeError),
    "randperm negative": (lambda L: L.randperm(-1), RuntimeError),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors_as_torch(name):
    fn, exc = _ERRORS[name]
    same_error(fn, "", exc)


@pytest.mark.slow  # (seconds in the fast tier)
def test_backward_through_samplers_torch_does_not_differentiate():
    def f(L, log):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        for make in (lambda: L.bernoulli(x, 0.5), lambda: L._sample_dirichlet(x + 1),
                     lambda: L.binomial(x + 1, x.sigmoid()),
                     lambda: L._standard_gamma_grad(x + 1, L.ones(2))):
            y = make()
            log.append(type(y.grad_fn).__name__)
            try:
                y.sum().backward()
            except Exception as e:  # noqa: BLE001 - compared with torch's
                log.append((type(e).__name__, str(e)))
    same(f)
