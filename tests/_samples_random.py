"""Samples for the random ops of eagergrad/ops/sampling.py (merged into _samples.SAMPLES),
same format as _samples.py; SPECIAL: samples at their special points (merged into
test_special_points.SPECIAL); SMOOTH: op name -> why it needs none.

eagergrad's random streams are not torch's, so a sample is deterministic by construction:
a zero spread (std 0, from == to, p in {0, 1}, a zero rate), or the draw multiplied by 0
(`x.exponential_() * 0 + x`), which keeps the node, its graph and the gradient flowing
through it (zero, or torch's NotImplemented error; finite differences, which see the
value, not torch's zero gradient, are off). tests/test_random_ops.py checks the
distributions themselves."""
from _samples import S, F, C, V

_POS = dict(lo=0.5, hi=3.0)


def _bern(m, x, p):
    return (x * 2).bernoulli_(p)


SAMPLES = {
    "normal": [
        S(lambda m, x, y: m.normal(x, y * 0), F(3, 4), F(3, 4), name="std 0", fd=False),
        S(lambda m, x, y: m.normal(x, y * 0), F(3, 1), F(4), name="broadcast", fd=False),
        S(lambda m, x, y: m.normal(x, y * 0), C(3, 4, rg=False), F(3, 4, rg=False),
          nondiff=True, name="complex mean"),
    ],
    "normal_tensor_float": [S(lambda m, x: m.normal(x, 0.0), F(3, 4), name="std 0", fd=False)],
    "normal_float_tensor": [S(lambda m, y: m.normal(1.5, y * 0), F(3, 4), name="std 0")],
    "normal_fill": [
        S(lambda m, x: (x * 2).normal_(1.5, 0.0), F(3, 4), name="std 0"),
        S(lambda m, x: (x * 2).normal_(-1.0, 0.0), C(3, 4), name="complex"),
    ],
    "uniform_fill": [
        S(lambda m, x: (x * 2).uniform_(0.5, 0.5), F(3, 4), name="from == to"),
        S(lambda m, x: (x * 2).uniform_(-2.0, -2.0), C(3, 4), name="complex"),
    ],
    "exponential_fill": [S(lambda m, x: (x * 2).exponential_(2.0) * 0 + x, F(3, 4))],
    "cauchy_fill": [S(lambda m, x: (x * 2).cauchy_(1.0, 0.5) * 0 + x, F(3, 4))],
    "geometric_fill": [S(lambda m, x: (x * 2).geometric_(0.3) * 0 + x, F(3, 4))],
    "log_normal_fill": [S(lambda m, x: (x * 2).log_normal_(0.0, 0.5) * 0 + x, F(3, 4))],
    "random_from_fill": [S(lambda m, x: (x * 2).random_(3, 4), F(3, 4), name="one value")],
    "random_to_fill": [S(lambda m, x: (x * 2).random_(1), F(3, 4), name="one value")],
    "random_fill": [S(lambda m, x: (x * 2).random_() * 0 + x, F(3, 4))],
    "bernoulli_float_fill": [S(lambda m, x: (x * 2).bernoulli_(1.0), F(3, 4), name="p 1")],
    "bernoulli_tensor_fill": [
        S(_bern, F(2, 3), V([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), name="p in {0, 1}", fd=False),
        S(_bern, F(2, 3), V([1.0, 0.0, 1.0]), name="p broadcast", fd=False),
    ],
    "bernoulli": [S(lambda m, p: m.bernoulli(p), V([[0.0, 1.0], [1.0, 1.0]]), name="p in {0, 1}",
                    fd=False)],
    "bernoulli_p": [S(lambda m, x: m.bernoulli(x, 1.0), F(3, 4), name="p 1",
                      backward_error="derivative for aten::bernoulli is not implemented")],
    "poisson": [S(lambda m, r: m.poisson(r * 0), F(3, 4, **_POS), name="rate 0")],
    # (double backward: torch's _standard_gamma_grad has no derivative)
    "_standard_gamma": [S(lambda m, a: m._standard_gamma(a) * 0 + a, F(3, 4, **_POS),
                          double_backward=False)],
    "_standard_gamma_grad": [
        S(lambda m, a, x: m._standard_gamma_grad(a, x), F(3, 4, lo=0.2, hi=12.0),
          F(3, 4, lo=0.05, hi=20.0, rg=False),
          backward_error="the derivative for '_standard_gamma_grad' is not implemented"),
    ],
    "_sample_dirichlet": [
        S(lambda m, a: m._sample_dirichlet(a) * 0 + a, F(3, 4, **_POS),
          backward_error="derivative for aten::_sample_dirichlet is not implemented"),
        S(lambda m, a: m._sample_dirichlet(a).sum(-1), F(3, 4, lo=0.5, hi=3.0, rg=False),
          nondiff=True, name="on the simplex"),
    ],
    "binomial": [S(lambda m, n, p: m.binomial(n, p * 0), F(3, 4, lo=1.0, hi=9.0),
                   F(3, 4, lo=0.1, hi=0.9), name="prob 0",
                   backward_error="derivative for aten::binomial is not implemented")],
    "_dirichlet_grad": [
        # (every input requires grad: eagergrad's NotImplemented nodes keep an edge for an
        # input that does not, torch's do not)
        S(lambda m, x, a, t: m._dirichlet_grad(x, a, a + t), F(3, 4, lo=0.05, hi=0.95),
          F(3, 4, lo=0.2, hi=10.0), F(3, 4, lo=0.2, hi=10.0),
          backward_error="derivative for aten::_dirichlet_grad is not implemented"),
    ],
}


def _sgg(m, a, x):
    return m._standard_gamma_grad(a, x)


def _dg(m, x, a, t):
    return m._dirichlet_grad(x, a, t)


SPECIAL = {
    # the regimes of torch's approximation: x < 0.8 (Taylor), alpha > 8 (saddle point,
    # within 10% of alpha or not), else the rational approximation; and their edges
    "_standard_gamma_grad": [
        S(_sgg, V([0.5, 2.0, 8.0, 8.5, 9.0, 9.0, 20.0, 20.0, 3.0, 1.0], rg=False),
          V([0.79, 0.8, 0.81, 7.65, 9.9, 9.91, 17.9, 30.0, 3.0, 1.0], rg=False),
          nondiff=True, name="regimes"),
    ],
    # x near 0 (boundary total x (1 - x) < 2.5), near 1 (< 0.75), both parameters > 6,
    # and the rational approximation
    "_dirichlet_grad": [
        S(_dg, V([0.01, 0.5, 0.99, 0.4, 0.3, 0.6], rg=False),
          V([0.5, 1.0, 2.0, 7.0, 2.0, 3.0], rg=False),
          V([1.5, 2.0, 2.5, 15.0, 9.0, 7.0], rg=False), nondiff=True, name="regimes"),
    ],
}

_ZERO = "a sampler: zero gradient (torch's zeros_like formula) at every point"
_NOT_DIFF = "a sampler torch does not differentiate (NotImplemented node)"
SMOOTH = dict.fromkeys((
    "normal", "normal_tensor_float", "normal_float_tensor", "normal_fill", "uniform_fill",
    "exponential_fill", "cauchy_fill", "geometric_fill", "log_normal_fill", "random_from_fill",
    "random_to_fill", "random_fill", "bernoulli_float_fill", "bernoulli_tensor_fill",
    "bernoulli", "poisson"), _ZERO)
SMOOTH.update(dict.fromkeys(("bernoulli_p", "_sample_dirichlet", "binomial"), _NOT_DIFF))
SMOOTH["_standard_gamma"] = ("its gradient is _standard_gamma_grad's value (that op's "
                             "SPECIAL has its regimes)")
