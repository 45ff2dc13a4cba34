"""eagergrad.distributions against torch.distributions: for each distribution, on fixed
parameters and fixed values, every property torch computes (shapes, support, constraints,
log_prob, entropy, cdf, icdf, moments, mode, enumerate_support, expand, repr, errors) and
the gradients of log_prob / entropy / cdf / moments with respect to the parameters;
kl_divergence for every registered pair, with its gradients; rsample's gradient given the
same noise (torch's own rsample code run on eagergrad's draws); transforms, constraints
and the constraint registry; torch's validation errors. The samplers' distributions are
checked statistically at fixed seeds (samples' moments against the distribution's,
Kolmogorov-Smirnov distances against its cdf, frequencies against its pmf)."""
import contextlib
import math
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import attempt, same


@pytest.fixture(autouse=True)
def _default_validation():
    """Each test starts from the libraries' default (argument validation on), whatever an
    earlier test in this process left: the errors compared are the validating ones."""
    saved = [L.distributions.Distribution._validate_args for L in (torch, eg)]
    for L in (torch, eg):
        L.distributions.Distribution.set_default_validate_args(True)
    yield
    for L, v in zip((torch, eg), saved):
        L.distributions.Distribution.set_default_validate_args(v)

FLOAT = ("float32", "float64")


def _t(L, dt, v, rg=False):
    return L.tensor(v, dtype=getattr(L, dt), requires_grad=rg)


# ---- the cases: a distribution on fixed parameters, a value in its support -------------------
# params: name -> (values, differentiable); make(D, p) builds it from the parameter tensors.
def _case(make, params, value, params2=None, q=(0.3, 0.8), int_value=False):
    return dict(make=make, params=params, value=value, params2=params2 or params, q=q,
                int_value=int_value)


_LS = {"loc": ([0.5, -1.0], True), "scale": ([1.0, 2.5], True)}
_LS2 = {"loc": ([-0.25, 0.5], True), "scale": ([0.5, 1.5], True)}
_TRIL = [[1.0, 0.0], [0.5, 2.0]]
_COV = [[2.0, 0.3], [0.3, 1.0]]
CASES = {
    "Normal": _case(lambda D, p: D.Normal(p["loc"], p["scale"]), _LS, [0.3, 1.0], _LS2),
    "Normal(float)": _case(lambda D, p: D.Normal(0.5, 2.0), {}, 0.25),
    "Laplace": _case(lambda D, p: D.Laplace(p["loc"], p["scale"]), _LS, [0.3, -2.0], _LS2),
    "Cauchy": _case(lambda D, p: D.Cauchy(p["loc"], p["scale"]), _LS, [0.3, 1.0], _LS2),
    "Gumbel": _case(lambda D, p: D.Gumbel(p["loc"], p["scale"]), _LS, [0.3, 1.0], _LS2),
    "LogNormal": _case(lambda D, p: D.LogNormal(p["loc"], p["scale"]), _LS, [0.3, 1.5], _LS2),
    "HalfNormal": _case(lambda D, p: D.HalfNormal(p["scale"]), {"scale": ([1.0, 2.5], True)},
                        [0.3, 1.5], {"scale": ([0.5, 1.5], True)}),
    "Uniform": _case(lambda D, p: D.Uniform(p["low"], p["high"]),
                     {"low": ([0.0, -1.0], True), "high": ([1.0, 2.0], True)}, [0.3, 1.5],
                     {"low": ([-0.5, -2.0], True), "high": ([2.0, 2.5], True)}),
    "Exponential": _case(lambda D, p: D.Exponential(p["rate"]), {"rate": ([0.5, 2.0], True)},
                         [0.3, 1.5], {"rate": ([1.5, 0.75], True)}),
    "Gamma": _case(lambda D, p: D.Gamma(p["concentration"], p["rate"]),
                   {"concentration": ([0.5, 3.0], True), "rate": ([1.0, 2.0], True)},
                   [0.3, 1.5], {"concentration": ([2.0, 1.5], True), "rate": ([0.5, 3.0], True)}),
    "Beta": _case(lambda D, p: D.Beta(p["c1"], p["c0"]),
                  {"c1": ([0.5, 3.0], True), "c0": ([2.0, 1.5], True)}, [0.3, 0.8],
                  {"c1": ([1.5, 2.0], True), "c0": ([0.7, 4.0], True)}),
    "Beta(float)": _case(lambda D, p: D.Beta(2.0, 3.0), {}, 0.25),
    "Dirichlet": _case(lambda D, p: D.Dirichlet(p["concentration"]),
                       {"concentration": ([[0.5, 2.0, 1.0], [3.0, 1.5, 0.7]], True)},
                       [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]],
                       {"concentration": ([[1.5, 1.0, 2.0], [0.5, 2.5, 1.2]], True)}),
    "Pareto": _case(lambda D, p: D.Pareto(p["scale"], p["alpha"]),
                    {"scale": ([1.0, 2.0], True), "alpha": ([3.0, 1.5], True)}, [1.5, 4.0],
                    {"scale": ([0.5, 1.0], True), "alpha": ([2.5, 2.0], True)}),
    "Poisson": _case(lambda D, p: D.Poisson(p["rate"]), {"rate": ([0.5, 4.0], True)},
                     [1.0, 3.0], {"rate": ([1.5, 2.0], True)}),
    "Bernoulli": _case(lambda D, p: D.Bernoulli(p["probs"]), {"probs": ([0.3, 0.9], True)},
                       [0.0, 1.0], {"probs": ([0.6, 0.2], True)}),
    "Bernoulli(logits)": _case(lambda D, p: D.Bernoulli(logits=p["logits"]),
                               {"logits": ([-0.5, 2.0], True)}, [1.0, 0.0],
                               {"logits": ([1.0, -1.5], True)}),
    "Bernoulli(0.5)": _case(lambda D, p: D.Bernoulli(p["probs"]),
                            {"probs": ([0.5, 0.0], True)}, [1.0, 0.0]),
    "Binomial": _case(lambda D, p: D.Binomial(p["n"], p["probs"]),
                      {"n": ([5.0, 5.0], False), "probs": ([0.3, 0.9], True)}, [2.0, 4.0],
                      {"n": ([5.0, 5.0], False), "probs": ([0.5, 0.4], True)}),
    "Binomial(logits)": _case(lambda D, p: D.Binomial(4, logits=p["logits"]),
                              {"logits": ([-0.5, 2.0], True)}, [1.0, 3.0],
                              {"logits": ([0.5, -1.0], True)}),
    "Geometric": _case(lambda D, p: D.Geometric(p["probs"]), {"probs": ([0.3, 0.9], True)},
                       [0.0, 3.0], {"probs": ([0.6, 0.2], True)}),
    "Geometric(logits)": _case(lambda D, p: D.Geometric(logits=p["logits"]),
                               {"logits": ([-0.5, 2.0], True)}, [1.0, 2.0]),
    "Categorical": _case(lambda D, p: D.Categorical(p["probs"]),
                         {"probs": ([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], True)}, [2, 0],
                         {"probs": ([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]], True)},
                         int_value=True),
    "Categorical(logits)": _case(lambda D, p: D.Categorical(logits=p["logits"]),
                                 {"logits": ([[0.2, -1.3, 0.5], [1.0, 0.0, 0.3]], True)}, [1, 2],
                                 {"logits": ([[0.5, 0.5, -0.2], [0.0, 0.3, 0.4]], True)},
                                 int_value=True),
    "OneHotCategorical": _case(lambda D, p: D.OneHotCategorical(p["probs"]),
                               {"probs": ([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], True)},
                               [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
                               {"probs": ([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]], True)}),
    "OneHotCategoricalStraightThrough": _case(
        lambda D, p: D.OneHotCategoricalStraightThrough(p["probs"]),
        {"probs": ([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], True)},
        [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    "MultivariateNormal(scale_tril)": _case(
        lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]),
        {"loc": ([[0.5, -1.0], [0.0, 1.0]], True), "scale_tril": (_TRIL, True)},
        [[0.3, 1.0], [-0.5, 0.2]],
        {"loc": ([[0.0, 0.5], [1.0, 1.0]], True), "scale_tril": ([[2.0, 0.0], [-0.5, 1.0]], True)}),
    "MultivariateNormal(covariance)": _case(
        lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
        {"loc": ([[0.5, -1.0], [0.0, 1.0]], True), "cov": (_COV, True)},
        [[0.3, 1.0], [-0.5, 0.2]],
        {"loc": ([[0.0, 0.5], [1.0, 1.0]], True), "cov": ([[1.0, -0.2], [-0.2, 3.0]], True)}),
    "MultivariateNormal(precision)": _case(
        lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
        {"loc": ([[0.5, -1.0], [0.0, 1.0]], True), "prec": (_COV, True)},
        [[0.3, 1.0], [-0.5, 0.2]]),
    "LowRankMultivariateNormal": _case(
        lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["D"]),
        {"loc": ([[0.5, -1.0], [0.0, 1.0]], True), "W": ([[1.0], [0.5]], True),
         "D": ([1.0, 2.0], True)},
        [[0.3, 1.0], [-0.5, 0.2]],
        {"loc": ([[0.0, 0.5], [1.0, 1.0]], True), "W": ([[0.5], [-1.0]], True),
         "D": ([0.5, 1.5], True)}),
    "RelaxedBernoulli": _case(lambda D, p: D.RelaxedBernoulli(p["temperature"], p["probs"]),
                              {"temperature": (2.0, True), "probs": ([0.3, 0.9], True)},
                              [0.3, 0.6]),
    "LogitRelaxedBernoulli": _case(
        lambda D, p: D.relaxed_bernoulli.LogitRelaxedBernoulli(p["temperature"],
                                                               logits=p["logits"]),
        {"temperature": (0.5, True), "logits": ([0.3, -0.9], True)}, [0.3, -1.6]),
    "RelaxedOneHotCategorical": _case(
        lambda D, p: D.RelaxedOneHotCategorical(p["temperature"], p["probs"]),
        {"temperature": (2.0, True), "probs": ([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], True)},
        [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "ExpRelaxedCategorical": _case(
        lambda D, p: D.relaxed_categorical.ExpRelaxedCategorical(p["temperature"],
                                                                 logits=p["logits"]),
        {"temperature": (0.7, True), "logits": ([[0.2, -0.3, 0.5], [0.1, 0.6, -0.3]], True)},
        [[-1.2, -0.3, -1.5], [-2.1, -0.1, -3.8]]),
    "Independent": _case(lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1), _LS,
                         [0.3, 1.0], _LS2),
    "TransformedDistribution": _case(
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            [D.transforms.AffineTransform(1.0, p["a"]), D.transforms.ExpTransform()]),
        {**_LS, "a": ([2.0, -0.5], True)}, [0.3, 1.5],
        {**_LS2, "a": ([2.0, -0.5], True)}),
    "TransformedDistribution(sigmoid)": _case(
        lambda D, p: D.TransformedDistribution(D.Normal(p["loc"], p["scale"]),
                                               D.transforms.SigmoidTransform()),
        _LS, [0.3, 0.9]),
}


def _params(L, dt, spec):
    return {k: _t(L, dt, v, rg) for k, (v, rg) in spec.items()}


def _value(L, dt, case):
    if case["int_value"]:
        return L.tensor(case["value"])
    return _t(L, dt, case["value"])


def _build(L, dt, name, which="params"):
    case = CASES[name]
    p = _params(L, dt, case[which])
    return case["make"](L.distributions, p), p


_PROPS = ("batch_shape", "event_shape", "has_rsample", "has_enumerate_support", "mean",
          "variance", "stddev", "mode")


@pytest.mark.fast_first
@pytest.mark.parametrize("dtype", FLOAT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_properties_as_torch(name, dtype):
    def f(L, log):
        d, p = _build(L, dtype, name)
        v = _value(L, dtype, CASES[name])
        log.append(("class", type(d).__name__, type(d).__module__.replace("eagergrad", "torch")))
        for k in _PROPS:
            attempt(log, k, lambda: getattr(d, k))
        log.append(("support", repr(d.support) if not name.startswith("Uniform") else None))
        log.append(("constraints", {k: repr(c) for k, c in d.arg_constraints.items()}
                    if not name.startswith(("Uniform", "Pareto")) else sorted(d.arg_constraints)))
        attempt(log, "log_prob", lambda: d.log_prob(v))
        attempt(log, "entropy", lambda: d.entropy())
        attempt(log, "perplexity", lambda: d.perplexity())
        attempt(log, "cdf", lambda: d.cdf(v))
        attempt(log, "icdf", lambda: d.icdf(_t(L, dtype, list(CASES[name]["q"]))))
        attempt(log, "enumerate_support", lambda: d.enumerate_support())
        attempt(log, "enumerate_support(False)", lambda: d.enumerate_support(expand=False))
        attempt(log, "repr", lambda: repr(d))
        for shape in ((), (3,), (2, 4)):
            attempt(log, ("sample", shape), lambda: _shape_of(d.sample(shape)))
            attempt(log, ("rsample", shape), lambda: _shape_of(d.rsample(shape)))
        e = d.expand((3,) + tuple(d.batch_shape))
        log.append(("expand", type(e).__name__, e.batch_shape, e.event_shape))
        attempt(log, "expanded log_prob", lambda: e.log_prob(v))
        attempt(log, "expanded mean", lambda: e.mean)
        attempt(log, "expanded sample", lambda: _shape_of(e.sample((2,))))
    same(f, quiet=True)


def _shape_of(t):
    return (tuple(t.shape), str(t.dtype).replace("eagergrad.", "torch."), t.requires_grad)


def _grads(L, out, params):
    ins = [t for t in params.values() if t.requires_grad]
    gs = L.autograd.grad(out.sum(), ins, allow_unused=True)
    return [None if g is None else g for g in gs]


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_as_torch(name):
    def f(L, log):
        d, p = _build(L, "float64", name)
        if not any(t.requires_grad for t in p.values()):
            return
        v = _value(L, "float64", CASES[name])
        for k, fn in (("log_prob", lambda: d.log_prob(v)), ("entropy", d.entropy),
                      ("cdf", lambda: d.cdf(v)), ("mean", lambda: d.mean),
                      ("variance", lambda: d.variance),
                      ("icdf", lambda: d.icdf(_t(L, "float64", list(CASES[name]["q"]))))):
            try:
                out = fn()
            except Exception as e:  # noqa: BLE001 - compared with torch's
                log.append((k, type(e).__name__))
                continue
            attempt(log, k, lambda: _grads(L, out, p) if out.requires_grad else None)
    same(f, quiet=True)


# ---- KL divergences --------------------------------------------------------------------------
def _kl_pairs():
    from eagergrad.distributions import kl
    return sorted((p.__name__, q.__name__) for p, q in kl._KL_REGISTRY)


_BY_TYPE = {
    "Normal": "Normal", "Laplace": "Laplace", "Cauchy": "Cauchy", "Gumbel": "Gumbel",
    "HalfNormal": "HalfNormal", "Uniform": "Uniform", "Exponential": "Exponential",
    "Gamma": "Gamma", "Beta": "Beta", "Dirichlet": "Dirichlet", "Pareto": "Pareto",
    "Poisson": "Poisson", "Bernoulli": "Bernoulli", "Binomial": "Binomial",
    "Geometric": "Geometric", "Categorical": "Categorical",
    "OneHotCategorical": "OneHotCategorical",
    "MultivariateNormal": "MultivariateNormal(scale_tril)",
    "LowRankMultivariateNormal": "LowRankMultivariateNormal", "Independent": "Independent",
    "TransformedDistribution": "LogNormal", "ExponentialFamily": None,
}


def test_kl_registry_is_torchs_for_the_distributions_eagergrad_has():
    from torch.distributions import kl as tkl
    ours = set(_kl_pairs())
    theirs = {(p.__name__, q.__name__) for p, q in tkl._KL_REGISTRY}
    missing = {pq for pq in theirs - ours if "ContinuousBernoulli" not in pq}
    assert ours <= theirs and not missing, (ours - theirs, missing)


def _kl_case(L, p_name, q_name):
    """p and q for a registered pair: each type's case (the second parameter set for q
    when both are the same type; LogNormal for the TransformedDistribution pair)."""
    D = L.distributions
    if p_name == "ExponentialFamily":
        return (D.Exponential(_t(L, "float64", [0.5, 2.0], True)),
                D.Exponential(_t(L, "float64", [1.5, 0.75], True)))
    pc, qc = _BY_TYPE[p_name], _BY_TYPE[q_name]
    p, pp = _build(L, "float64", pc)
    q, qp = _build(L, "float64", qc, "params2" if pc == qc else "params")
    return p, q, {**{f"p.{k}": t for k, t in pp.items()}, **{f"q.{k}": t for k, t in qp.items()}}


@pytest.mark.fast_first
@pytest.mark.parametrize("pair", _kl_pairs(), ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_divergence_as_torch(pair):
    def f(L, log):
        p, q, *params = _kl_case(L, *pair)
        kl = L.distributions.kl_divergence(p, q)
        log.append(("kl", kl))
        if params and kl.requires_grad:
            attempt(log, "grads", lambda: _grads(L, kl, params[0]))
    same(f, quiet=True)


@pytest.mark.slow  # (seconds in the fast tier)
def test_kl_divergence_errors_as_torch():
    def f(L, log):
        D = L.distributions
        n, c = D.Normal(0.0, 1.0), D.Categorical(L.tensor([0.5, 0.5]))
        attempt(log, "unregistered", lambda: D.kl_divergence(n, c))
        attempt(log, "cross family", lambda: D.kl.kl_divergence(
            D.Poisson(L.tensor([1.0])), D.Geometric(L.tensor([0.5]))))
        m1 = D.MultivariateNormal(L.zeros(2), L.eye(2))
        m2 = D.MultivariateNormal(L.zeros(3), L.eye(3))
        attempt(log, "event shapes", lambda: D.kl_divergence(m1, m2))
        b1, b2 = D.Binomial(2, L.tensor([0.5])), D.Binomial(3, L.tensor([0.5]))
        attempt(log, "binomial counts", lambda: D.kl_divergence(b1, b2))
        log.append(("inf", D.kl_divergence(b2, b1), D.kl_divergence(
            D.Uniform(0.0, 2.0), D.Uniform(0.5, 1.0))))
        attempt(log, "transforms differ", lambda: D.kl_divergence(
            D.LogNormal(0.0, 1.0), D.TransformedDistribution(D.Normal(0.0, 1.0), [])))
    same(f, quiet=True)


def test_register_kl_dispatch_and_ambiguity_as_torch():
    def f(L, log):
        D = L.distributions

        class A(D.Normal):
            pass

        class B(D.Normal):
            pass

        @D.register_kl(A, D.Normal)
        def _a(p, q):
            return L.tensor(1.0)

        @D.register_kl(D.Normal, B)
        def _b(p, q):
            return L.tensor(2.0)

        a, b = A(0.0, 1.0), B(0.0, 1.0)
        log.append(D.kl_divergence(a, D.Normal(0.0, 1.0)))
        log.append(D.kl_divergence(D.Normal(0.0, 1.0), b))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(D.kl_divergence(a, b))
            log.append([str(x.message) for x in w])
        D.kl._KL_REGISTRY.pop((A, D.Normal))
        D.kl._KL_REGISTRY.pop((D.Normal, B))
        D.kl._KL_MEMOIZE.clear()
    same(f)


# ---- rsample: torch's own rsample on eagergrad's noise ---------------------------------------
class _Replay:
    """Records the draws eagergrad's distributions make (their noise sources), then
    replays them, in order, to torch's: torch's rsample code run on the same noise."""

    def __init__(self):
        self.draws = []

    @contextlib.contextmanager
    def record(self, mp):
        import eagergrad.distributions as ED
        rec = self.draws

        def wrap(fn):
            def f(*a, **k):
                out = fn(*a, **k)
                rec.append(np.asarray(out.detach().tolist()))
                return out
            return f
        for mod in (ED.normal, ED.multivariate_normal, ED.lowrank_multivariate_normal):
            mp.setattr(mod, "_standard_normal", wrap(mod._standard_normal))
        for mod in (ED.uniform, ED.relaxed_bernoulli, ED.relaxed_categorical):
            mp.setattr(mod, "rand", wrap(mod.rand))
        for name in ("uniform_", "exponential_", "cauchy_"):
            mp.setattr(eg.Tensor, name, wrap(getattr(eg.Tensor, name)))
        mp.setattr(ED.gamma, "_standard_gamma", wrap(ED.gamma._standard_gamma))
        mp.setattr(ED.dirichlet, "_sample_dirichlet", wrap(ED.dirichlet._sample_dirichlet))
        yield

    @contextlib.contextmanager
    def replay(self, mp):
        import torch.distributions as TD
        draws = list(self.draws)

        def nxt(like_dtype):
            return torch.tensor(draws.pop(0), dtype=like_dtype)

        def std_normal(shape, dtype, device):
            return nxt(dtype)

        for mod in (TD.normal, TD.multivariate_normal, TD.lowrank_multivariate_normal):
            mp.setattr(mod, "_standard_normal", std_normal)
        mp.setattr(torch, "rand", lambda *a, dtype=None, device=None, **k: nxt(dtype))
        for name in ("uniform_", "exponential_", "cauchy_"):
            mp.setattr(torch.Tensor, name,
                       lambda self, *a, **k: self.copy_(nxt(self.dtype)))

        class _Gamma(torch.autograd.Function):  # torch's StandardGammaBackward0 formula
            @staticmethod
            def forward(ctx, alpha):
                x = nxt(alpha.dtype)
                ctx.save_for_backward(alpha, x)
                return x

            @staticmethod
            def backward(ctx, grad):
                alpha, x = ctx.saved_tensors
                return grad * torch._standard_gamma_grad(alpha, x)
        mp.setattr(TD.gamma, "_standard_gamma", _Gamma.apply)
        mp.setattr(torch, "_sample_dirichlet", lambda c: nxt(c.dtype))
        yield
        assert not draws, "torch made fewer draws than eagergrad"


_RSAMPLE = sorted(n for n in CASES if n not in (
    "Poisson", "Bernoulli", "Bernoulli(logits)", "Bernoulli(0.5)", "Binomial",
    "Binomial(logits)", "Geometric", "Geometric(logits)", "Categorical",
    "Categorical(logits)", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
    "Gumbel", "Normal(float)",
    "Beta(float)"))


@pytest.mark.fast_first
@pytest.mark.parametrize("name", _RSAMPLE)
def test_rsample_gradient_given_the_same_noise(name, monkeypatch):
    r = _Replay()
    eg.manual_seed(0)
    with monkeypatch.context() as mp, r.record(mp):
        d, p = _build(eg, "float64", name)
        x = d.rsample((3,))
        eg_out = [x] + [g for g in _grads(eg, x * _weights(eg, x), p)]
    with monkeypatch.context() as mp, r.replay(mp):
        d, p = _build(torch, "float64", name)
        x = d.rsample((3,))
        t_out = [x] + [g for g in _grads(torch, x * _weights(torch, x), p)]
    assert len(eg_out) == len(t_out)
    for e, t in zip(eg_out, t_out):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(np.asarray(e.tolist()), t.detach().numpy(), rtol=1e-7,
                                       atol=1e-9)


def test_straight_through_rsample_gradient_is_the_probabilities_as_torch():
    def f(L):
        p = L.tensor([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], requires_grad=True)
        x = L.distributions.OneHotCategoricalStraightThrough(p).rsample((4,))
        w = L.arange(24.0).reshape(4, 2, 3)
        return x.grad_fn.name(), L.autograd.grad((x * w).sum(), p)
    same(f)


def _weights(L, x):
    # (fixed weights: a plain sum would hide the gradient of a sample on a simplex)
    return L.tensor(np.linspace(0.5, 1.5, x.numel()).reshape(tuple(x.shape)), dtype=x.dtype)


@pytest.mark.slow  # (seconds in the fast tier)
def test_rsample_of_gamma_beta_dirichlet_is_differentiable_as_torch():
    def f(L):
        D = L.distributions
        a = L.tensor([0.5, 2.0], requires_grad=True)
        xs = [D.Gamma(a, 1.0).rsample(), D.Beta(a, a * 2).rsample(),
              D.Dirichlet(a.expand(3, 2)).rsample()]
        return [(type(x.grad_fn).__name__, x.shape) for x in xs]
    same(f)


# ---- sampling: the distributions of sample() and rsample() -----------------------------------
N = 20000
KS_BOUND = 1.95 / math.sqrt(N)


def _ks(x, cdf):
    x = np.sort(np.asarray(x, np.float64).ravel())
    n = len(x)
    c = np.asarray(cdf(x), np.float64)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


_CONTINUOUS = ["Normal", "Laplace", "Cauchy", "Gumbel", "LogNormal", "HalfNormal", "Uniform",
               "Exponential", "Gamma", "Pareto", "TransformedDistribution",
               "TransformedDistribution(sigmoid)"]


@pytest.mark.fast_first
@pytest.mark.parametrize("method", ["sample", "rsample"])
@pytest.mark.parametrize("name", _CONTINUOUS)
def test_continuous_samples_follow_the_cdf(name, method):
    eg.manual_seed(1)
    d, _ = _build(eg, "float64", name)
    if method == "rsample" and not d.has_rsample:
        pytest.skip("no rsample")
    x = getattr(d, method)((N,))
    assert tuple(x.shape) == (N,) + tuple(d.batch_shape)
    xs = np.asarray(x.detach().tolist())
    for j in range(xs.shape[1]):
        def cdf(v, j=j):
            full = xs.copy()  # (the other columns: values in their own supports)
            full[:, j] = v
            return np.asarray(d.cdf(eg.tensor(full, dtype=eg.float64)).tolist())[:, j]
        assert _ks(xs[:, j], cdf) < KS_BOUND, (name, j)


_DISCRETE = ["Poisson", "Bernoulli", "Binomial", "Geometric", "Categorical",
             "OneHotCategorical"]


@pytest.mark.fast_first
@pytest.mark.parametrize("name", _DISCRETE)
def test_discrete_samples_follow_the_pmf(name):
    eg.manual_seed(2)
    d, _ = _build(eg, "float64", name)
    x = d.sample((N,))
    xs = np.asarray(x.tolist())
    if name == "OneHotCategorical":
        assert np.all(xs.sum(-1) == 1)
        xs = xs.argmax(-1)
        d = d._categorical
    for v in range(0, 8):
        vt = eg.full((len(d.batch_shape) and d.batch_shape[0],), float(v), dtype=eg.float64)
        if name in ("Categorical", "OneHotCategorical"):
            if v > 2:
                break
            vt = eg.full((2,), v, dtype=eg.int64)
        ok = np.asarray(d.support.check(vt).tolist())
        p = np.where(ok, np.asarray(d.log_prob(vt.clamp(max=1) if name == "Bernoulli" else
                                               vt.clamp(max=5) if name == "Binomial" else
                                               vt).exp().tolist()), 0.0)
        f = np.mean(xs == v, axis=0)
        assert np.all(np.abs(f - p) <= 5 * np.sqrt(p * (1 - p) / N) + 1e-12), (name, v, f, p)


_MOMENTS = ["Beta", "Dirichlet", "MultivariateNormal(scale_tril)",
            "MultivariateNormal(covariance)", "MultivariateNormal(precision)",
            "LowRankMultivariateNormal", "Independent", "RelaxedBernoulli",
            "RelaxedOneHotCategorical", "OneHotCategoricalStraightThrough"]


@pytest.mark.fast_first
@pytest.mark.parametrize("name", _MOMENTS)
def test_samples_have_the_distributions_moments(name):
    eg.manual_seed(3)
    d, _ = _build(eg, "float64", name)
    x = np.asarray(d.rsample((N,)).detach().tolist())
    mean = np.asarray(d.mean.tolist()) if "Relaxed" not in name else None
    if mean is not None:
        var = np.asarray(d.variance.tolist())
        se = np.sqrt(var / N)
        assert np.all(np.abs(x.mean(0) - mean) <= 5 * se + 1e-12), (x.mean(0), mean)
        assert np.allclose(x.var(0), var, rtol=0.08), (x.var(0), var)
    if name.startswith("MultivariateNormal") or name.startswith("LowRank"):
        cov = np.asarray(d.covariance_matrix.tolist())
        emp = np.einsum("nbi,nbj->bij", x - x.mean(0), x - x.mean(0)) / N
        assert np.allclose(emp, cov, atol=0.08 * np.abs(cov).max()), (emp, cov)
    if "Relaxed" in name or name in ("Dirichlet",):
        assert np.all(x >= 0) and np.all(x <= 1)
        if "Categorical" in name or name == "Dirichlet":
            assert np.allclose(x.sum(-1), 1.0)
    if "Relaxed" in name:  # the log density integrates to the sample: compare with torch's
        lp = d.log_prob(eg.tensor(x[:5]))
        td, _ = _build(torch, "float64", name)
        np.testing.assert_allclose(np.asarray(lp.tolist()),
                                   td.log_prob(torch.tensor(x[:5])).detach().numpy(),
                                   rtol=1e-8)


@pytest.mark.slow
def test_seeded_sampling_is_reproducible():
    for name in ("Normal", "Gamma", "Dirichlet", "Categorical", "Poisson", "Binomial",
                 "MultivariateNormal(scale_tril)", "RelaxedOneHotCategorical"):
        d, _ = _build(eg, "float64", name)
        eg.manual_seed(5)
        a = d.sample((4,))
        eg.manual_seed(5)
        b = d.sample((4,))
        assert bool((a == b).all()), name


# ---- validation ------------------------------------------------------------------------------
_INVALID = {
    "Normal scale": lambda L: L.distributions.Normal(L.tensor([0.0]), L.tensor([-1.0])),
    "Normal loc nan": lambda L: L.distributions.Normal(L.tensor([math.nan]), 1.0),
    "Uniform low > high": lambda L: L.distributions.Uniform(L.tensor([2.0]), L.tensor([1.0])),
    "Gamma": lambda L: L.distributions.Gamma(L.tensor([0.0, 1.0]), L.tensor([1.0, 1.0])),
    "Beta": lambda L: L.distributions.Beta(L.tensor([-1.0]), L.tensor([1.0])),
    "Dirichlet": lambda L: L.distributions.Dirichlet(L.tensor([1.0, 0.0])),
    "Dirichlet 0-d": lambda L: L.distributions.Dirichlet(L.tensor(1.0)),
    "Bernoulli probs": lambda L: L.distributions.Bernoulli(L.tensor([1.5])),
    "Bernoulli both": lambda L: L.distributions.Bernoulli(0.5, 0.0),
    "Bernoulli neither": lambda L: L.distributions.Bernoulli(),
    "Categorical simplex": lambda L: L.distributions.Categorical(L.tensor([0.5, -0.5])),
    "Categorical 0-d": lambda L: L.distributions.Categorical(L.tensor(1.0)),
    "Binomial count": lambda L: L.distributions.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    "Poisson": lambda L: L.distributions.Poisson(L.tensor([-1.0])),
    "Geometric zero": lambda L: L.distributions.Geometric(L.tensor([0.0, 0.5])),
    "Exponential": lambda L: L.distributions.Exponential(L.tensor([0.0])),
    "Laplace": lambda L: L.distributions.Laplace(0.0, L.tensor([-2.0])),
    "MVN no matrix": lambda L: L.distributions.MultivariateNormal(L.zeros(2)),
    "MVN 0-d loc": lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(1)),
    "MVN not pd": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "MVN scale_tril": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), scale_tril=L.tensor([[1.0, 1.0], [0.0, 1.0]])),
    "MVN batch mismatch": lambda L: L.distributions.MultivariateNormal(
        L.zeros(3, 2), scale_tril=L.eye(2).expand(2, 2, 2)),
    "LowRank cov_factor": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.zeros(3, 1), L.ones(2)),
    "LowRank cov_diag": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.zeros(2, 1), L.ones(3)),
    "Independent ndims": lambda L: L.distributions.Independent(
        L.distributions.Normal(L.zeros(2), 1.0), 2),
    "Transformed bad": lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), "exp"),
}


@pytest.mark.parametrize("name", sorted(_INVALID))
def test_invalid_parameters_raise_torchs_errors(name):
    same(_INVALID[name])


def test_sample_validation_as_torch():
    def f(L, log):
        D = L.distributions
        n = D.Normal(L.zeros(2), L.ones(2))
        attempt(log, "not a tensor", lambda: n.log_prob(0.5))
        attempt(log, "event shape", lambda: D.Dirichlet(L.ones(3)).log_prob(L.ones(2) / 2))
        attempt(log, "broadcast", lambda: n.log_prob(L.zeros(3)))
        attempt(log, "support", lambda: D.Exponential(L.ones(2)).log_prob(L.tensor([-1.0, 1.0])))
        attempt(log, "support int", lambda: D.Poisson(L.ones(2)).log_prob(L.tensor([0.5, 1.0])))
        attempt(log, "simplex", lambda: D.Dirichlet(L.ones(3)).log_prob(L.ones(3)))
        attempt(log, "no check", lambda: D.Exponential(L.ones(2), validate_args=False).log_prob(
            L.tensor([-1.0, 1.0])))
        attempt(log, "no check at init", lambda: D.Normal(0.0, -1.0, validate_args=False).scale)
    same(f)


def test_set_default_validate_args_as_torch():
    def f(L, log):
        D = L.distributions.Distribution
        try:
            D.set_default_validate_args(False)
            attempt(log, "off", lambda: L.distributions.Normal(0.0, -1.0).scale)
            attempt(log, "on for one", lambda: L.distributions.Normal(0.0, -1.0,
                                                                      validate_args=True))
        finally:
            D.set_default_validate_args(True)
        attempt(log, "on", lambda: L.distributions.Normal(0.0, -1.0))
        attempt(log, "not a bool", lambda: D.set_default_validate_args(3))
        log.append(L.distributions.Distribution._validate_args)
    same(f)


def test_sample_n_is_deprecated_as_torch():
    def f(L, log):
        d = L.distributions.Normal(L.zeros(2), 1.0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(tuple(d.sample_n(3).shape))
            log.append([(x.category.__name__, str(x.message)) for x in w])
    same(f)


def test_mode_and_special_values_as_torch():
    def f(L, log):
        D = L.distributions
        log.append(D.Dirichlet(L.tensor([[0.5, 0.7, 0.2], [2.0, 3.0, 1.5]])).mode)
        log.append(D.Bernoulli(L.tensor([0.5, 0.2, 0.7])).mode)
        log.append(D.Gamma(L.tensor([0.5, 3.0]), 1.0).mode)
        log.append(D.Binomial(10, L.tensor([0.25, 0.999])).mode)
        log.append(D.Categorical(L.tensor([0.0, 1.0])).entropy())
        log.append(D.Bernoulli(L.tensor([0.0, 1.0])).entropy())
        log.append(D.Uniform(0.0, 1.0).log_prob(L.tensor([-1.0, 0.5, 1.0])))
        log.append(D.HalfNormal(1.0, validate_args=False).log_prob(L.tensor([-1.0, 0.5])))
        log.append(D.Geometric(L.tensor([1.0]), validate_args=False).log_prob(L.tensor([0.0])))
        log.append(D.Binomial(L.tensor([3.0, 4.0]), L.tensor([0.5, 0.5])).entropy.__name__)
        attempt(log, "inhomogeneous", lambda: D.Binomial(L.tensor([3.0, 4.0]),
                                                         L.tensor([0.5, 0.5])).entropy())
        log.append(D.Binomial(L.tensor([3.0, 3.0]), L.tensor([0.2, 0.5])).entropy())
        attempt(log, "Independent enumerate", lambda: D.Independent(
            D.Bernoulli(L.tensor([0.5, 0.5])), 1).enumerate_support())
    same(f)


def test_class_names_and_modules_as_torch():
    import torch.distributions as TD
    for name in eg.distributions.__all__:
        ours, theirs = getattr(eg.distributions, name), getattr(TD, name)
        if isinstance(ours, type):
            assert ours.__name__ == theirs.__name__
            assert ours.__module__.replace("eagergrad", "torch") == theirs.__module__, name
            assert ([b.__name__ for b in ours.__mro__ if b.__name__ != "Generic"]
                    == [b.__name__ for b in theirs.__mro__ if b.__name__ != "Generic"]), name
            for attr in ("has_rsample", "has_enumerate_support"):
                if isinstance(theirs.__dict__.get(attr), bool):
                    assert ours.__dict__.get(attr) == theirs.__dict__[attr], (name, attr)
    missing = [n for n in TD.__all__ if n not in eg.distributions.__all__]
    for n in missing:
        assert not hasattr(eg.distributions, n)
        with pytest.raises(NotImplementedError, match=f"torch.distributions.{n}"):
            getattr(eg.distributions, n)


# ---- transforms, constraints, the registry ---------------------------------------------------
def _transforms(L):
    T = L.distributions.transforms
    a = L.tensor([2.0, -0.5], dtype=L.float64, requires_grad=True)
    return {
        "Exp": (T.ExpTransform(), [0.5, -1.0]),
        "Power": (T.PowerTransform(L.tensor([2.0, 0.5], dtype=L.float64)), [0.5, 2.0]),
        "Sigmoid": (T.SigmoidTransform(), [0.5, -40.0]),
        "Softplus": (T.SoftplusTransform(), [0.5, -3.0]),
        "Tanh": (T.TanhTransform(), [0.5, -1.5]),
        "Abs": (T.AbsTransform(), [0.5, -1.5]),
        "Affine": (T.AffineTransform(1.0, a), [0.5, -1.5]),
        "Affine(float)": (T.AffineTransform(1.0, -3.0), [0.5, -1.5]),
        "Affine(event_dim)": (T.AffineTransform(0.5, a, event_dim=1), [0.5, -1.5]),
        "Softmax": (T.SoftmaxTransform(), [[0.5, -1.0, 2.0]]),
        "StickBreaking": (T.StickBreakingTransform(), [[0.5, -1.0, 2.0]]),
        "LowerCholesky": (T.LowerCholeskyTransform(), [[0.5, 0.3], [-1.0, 0.2]]),
        "PositiveDefinite": (T.PositiveDefiniteTransform(), [[0.5, 0.3], [-1.0, 0.2]]),
        "CorrCholesky": (T.CorrCholeskyTransform(), [0.5, -1.0, 0.3]),
        "Compose": (T.ComposeTransform([T.ExpTransform(), T.AffineTransform(2.0, a)]),
                    [0.5, -1.5]),
        "Compose(empty)": (T.ComposeTransform([]), [0.5, -1.5]),
        "Compose(cached)": (T.ComposeTransform([T.ExpTransform(), T.SigmoidTransform()],
                                               cache_size=1), [0.5, -1.5]),
        "Independent": (T.IndependentTransform(T.ExpTransform(), 1), [0.5, -1.5]),
        "Reshape": (T.ReshapeTransform((2,), (2, 1)), [0.5, -1.5]),
        "Cat": (T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], 0, [1, 1]),
                [0.5, -1.5]),
        "Stack": (T.StackTransform([T.ExpTransform(), T.TanhTransform()], 0), [0.5, -1.5]),
        "Exp.inv": (T.ExpTransform().inv, [0.5, 2.0]),
        "CDF": (T.CumulativeDistributionTransform(
            L.distributions.Normal(L.zeros(2, dtype=L.float64), 1.0)), [0.5, -1.5]),
        "identity": (T.identity_transform, [0.5, -1.5]),
    }


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(_transforms(torch)))
def test_transforms_as_torch(name):
    def f(L, log):
        t, x = _transforms(L)[name]
        x = L.tensor(x, dtype=L.float64, requires_grad=True)
        log.append(("repr", repr(t), repr(t.inv)))
        for k in ("bijective", "event_dim", "sign"):
            attempt(log, k, lambda: getattr(t, k))
        attempt(log, "domain", lambda: (repr(t.domain), t.domain.event_dim))
        attempt(log, "codomain", lambda: (repr(t.codomain), t.codomain.event_dim))
        y = t(x)
        log.append(("y", y))
        attempt(log, "inv", lambda: t.inv(y))
        attempt(log, "inv is cached", lambda: t.inv(y) is x)
        attempt(log, "ladj", lambda: t.log_abs_det_jacobian(x, y))
        attempt(log, "inv ladj", lambda: t.inv.log_abs_det_jacobian(y, x))
        attempt(log, "grads", lambda: L.autograd.grad(
            (t.log_abs_det_jacobian(x, y).sum() + y.sum()), x))
        attempt(log, "forward_shape", lambda: t.forward_shape(x.shape))
        attempt(log, "inverse_shape", lambda: t.inverse_shape(y.shape))
        attempt(log, "eq", lambda: (t == t, t == t.inv, t.inv.inv is t, t != t))
        attempt(log, "with_cache", lambda: repr(t.with_cache(1)))
    same(f, quiet=True)


def test_transform_errors_as_torch():
    def f(L, log):
        T = L.distributions.transforms
        attempt(log, "cache_size", lambda: T.ExpTransform(cache_size=2))
        attempt(log, "reshape", lambda: T.ReshapeTransform((2,), (3,)))
        attempt(log, "reshape shape", lambda: T.ReshapeTransform((2,), (2, 1)).forward_shape(
            (3,)))
        attempt(log, "event_dim", lambda: T.StickBreakingTransform().event_dim)
        attempt(log, "corr shape", lambda: T.CorrCholeskyTransform().forward_shape((4,)))
        attempt(log, "with_cache", lambda: T.PowerTransform(L.tensor(2.0)).with_cache(1) and
                T.CumulativeDistributionTransform(L.distributions.Normal(0.0, 1.0))
                .with_cache(1).__class__.__name__)
        attempt(log, "sign", lambda: T.AbsTransform().sign)
        attempt(log, "few dims", lambda: T.SoftmaxTransform().forward_shape(()))
        attempt(log, "affine shapes", lambda: T.AffineTransform(L.zeros(2), L.ones(3))
                .forward_shape((2,)))
    same(f)


_CONSTRAINTS = {
    "real": lambda C: C.real, "positive": lambda C: C.positive,
    "nonnegative": lambda C: C.nonnegative, "boolean": lambda C: C.boolean,
    "unit_interval": lambda C: C.unit_interval, "simplex": lambda C: C.simplex,
    "real_vector": lambda C: C.real_vector, "one_hot": lambda C: C.one_hot,
    "nonnegative_integer": lambda C: C.nonnegative_integer,
    "positive_integer": lambda C: C.positive_integer,
    "integer_interval": lambda C: C.integer_interval(0, 2),
    "interval": lambda C: C.interval(-1.0, 0.5),
    "half_open_interval": lambda C: C.half_open_interval(-1.0, 0.5),
    "greater_than": lambda C: C.greater_than(0.25),
    "greater_than_eq": lambda C: C.greater_than_eq(0.25),
    "less_than": lambda C: C.less_than(0.25),
    "lower_triangular": lambda C: C.lower_triangular,
    "lower_cholesky": lambda C: C.lower_cholesky, "corr_cholesky": lambda C: C.corr_cholesky,
    "square": lambda C: C.square, "symmetric": lambda C: C.symmetric,
    "positive_definite": lambda C: C.positive_definite,
    "positive_semidefinite": lambda C: C.positive_semidefinite,
    "multinomial": lambda C: C.multinomial(3),
    "independent": lambda C: C.independent(C.positive, 1),
    "cat": lambda C: C.cat([C.positive, C.real], dim=-1, lengths=[2, 1]),
    "stack": lambda C: C.stack([C.positive, C.real, C.unit_interval], dim=-1),
    "mixture": lambda C: C.MixtureSameFamilyConstraint(C.positive),
    "dependent": lambda C: C.dependent(is_discrete=True, event_dim=1),
}
_VALUES = {
    "vec": [[0.5, -1.0, 0.0], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [2.0, 1.0, 0.0],
            [math.nan, 0.25, 1.0]],
    "mat": [[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.5], [0.5, 2.0]], [[1.0, 0.0], [0.6, 0.8]],
            [[-1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]],
}


@pytest.mark.fast_first
@pytest.mark.parametrize("name", sorted(_CONSTRAINTS))
def test_constraints_as_torch(name):
    def f(L, log):
        c = _CONSTRAINTS[name](L.distributions.constraints)
        log.append((repr(c), L.distributions.constraints.is_dependent(c)))
        attempt(log, "is_discrete", lambda: c.is_discrete)
        attempt(log, "event_dim", lambda: c.event_dim)
        for k, v in _VALUES.items():
            attempt(log, k, lambda: c.check(L.tensor(v)))
        attempt(log, "biject_to", lambda: repr(L.distributions.biject_to(c)))
        attempt(log, "transform_to", lambda: repr(L.distributions.transform_to(c)))
    same(f, quiet=True)


_REGISTRY_VALUES = {
    "positive": [0.5, -2.0], "greater_than": [0.5, -2.0], "less_than": [0.5, -2.0],
    "unit_interval": [0.5, -2.0], "interval": [0.5, -2.0], "simplex": [[0.5, -2.0, 1.0]],
    "real_vector": [[0.5, -2.0]], "independent": [[0.5, -2.0]],
    "lower_cholesky": [[0.5, 0.3], [-1.0, 0.2]],
    "positive_definite": [[0.5, 0.3], [-1.0, 0.2]], "corr_cholesky": [0.5, -1.0, 0.3],
    "cat": [[0.5, -2.0, 1.0]], "stack": [[0.5, -2.0, 1.0]],
}


@pytest.mark.fast_first
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(_REGISTRY_VALUES))
def test_constraint_registry_transforms_land_in_the_constraint(name, registry):
    def f(L, log):
        c = _CONSTRAINTS[name](L.distributions.constraints)
        x = L.tensor(_REGISTRY_VALUES[name], dtype=L.float64, requires_grad=True)
        try:
            t = getattr(L.distributions, registry)(c)
        except NotImplementedError as e:
            log.append(("none", str(e)))
            return
        y = t(x)
        log.append((repr(t), y, c.check(y), t.log_abs_det_jacobian(x, y)))
        log.append(L.autograd.grad(y.sum() + t.log_abs_det_jacobian(x, y).sum(), x))
    same(f, quiet=True)


def test_registry_accepts_new_constraints_as_torch():
    def f(L, log):
        D = L.distributions
        C = D.constraints

        class _Mine(C.Constraint):
            def check(self, value):
                return value > 1

        reg = D.constraint_registry.ConstraintRegistry()
        reg.register(_Mine, lambda c: D.transforms.ExpTransform())
        log.append(repr(reg(_Mine())))
        attempt(log, "unknown", lambda: reg(C.positive))
        attempt(log, "bad", lambda: reg.register(3, lambda c: None))
    same(f)


# ---- utils -----------------------------------------------------------------------------------
def test_utils_as_torch():
    def f(L, log):
        U = L.distributions.utils
        log.append(U.broadcast_all(L.zeros(2, 1), L.ones(3), 2.0))
        log.append(U.broadcast_all(1.0, 2))
        log.append(U.broadcast_all(L.zeros(2, dtype=L.float64), 3))
        attempt(log, "bad", lambda: U.broadcast_all(L.zeros(2), "x"))
        attempt(log, "mismatch", lambda: U.broadcast_all(L.zeros(2), L.zeros(3)))
        p = L.tensor([[0.0, 0.3, 1.0]], dtype=L.float64)
        log.append((U.clamp_probs(p), U.clamp_probs(p.float())))
        log.append((U.probs_to_logits(p), U.probs_to_logits(p, is_binary=True)))
        lg = L.tensor([[0.5, -1.0, 2.0]])
        log.append((U.logits_to_probs(lg), U.logits_to_probs(lg, is_binary=True)))
        m = L.arange(9.0).reshape(3, 3)
        for diag in (0, -1, 1):
            v = U.tril_matrix_to_vec(m, diag)
            log.append((v, U.vec_to_tril_matrix(v, diag)))
        attempt(log, "diag", lambda: U.tril_matrix_to_vec(m, 3))
        attempt(log, "vec", lambda: U.vec_to_tril_matrix(L.zeros(4)))
        log.append(U.euler_constant)
    same(f)


def test_lazy_properties_as_torch():
    def f(L, log):
        D = L.distributions
        p = L.tensor([0.25, 0.75], requires_grad=True)
        b = D.Bernoulli(p)
        log.append(sorted(k for k in b.__dict__ if not k.startswith("_")))
        log.append(b.logits)
        log.append(sorted(k for k in b.__dict__ if not k.startswith("_")))
        with L.no_grad():  # lazy properties are computed with grad on
            log.append(D.Categorical(p).logits.requires_grad)
        log.append(isinstance(D.Bernoulli.__dict__["logits"], D.utils.lazy_property))
    same(f)


def test_entropy_of_exponential_families_by_autograd_as_torch():
    # ExponentialFamily.entropy (Bregman divergence of the log normalizer)
    def f(L, log):
        D = L.distributions
        for d in (D.Normal(L.tensor([0.5, 1.0]), L.tensor([1.0, 2.0])),
                  D.Exponential(L.tensor([0.5, 2.0])), D.Poisson(L.tensor([0.5, 4.0])),
                  D.Gamma(L.tensor([0.5, 3.0]), L.tensor([1.0, 2.0])),
                  D.Bernoulli(L.tensor([0.3, 0.9])), D.Beta(L.tensor([0.5, 3.0]), 2.0),
                  D.Dirichlet(L.tensor([[0.5, 2.0, 1.0]]))):
            log.append(D.ExponentialFamily.entropy(d))
    same(f)


def test_jax_transforms_reach_no_distribution_specific_code():
    # sampling and log_prob run on traced tensors (jaxify: jax.jit over the eager code)
    import jax

    def fn(loc):
        d = eg.distributions.Normal(loc, 1.0, validate_args=False)
        return d.log_prob(d.rsample())
    eg.manual_seed(0)
    out = jax.jit(eg.jaxify(fn))(jnp.zeros(3, jnp.float32))
    assert out.shape == (3,) and bool(jnp.isfinite(out).all())
