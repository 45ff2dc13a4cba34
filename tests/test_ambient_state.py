"""Ambient state is part of every cache key (docs/design.md §9).

The table: every cache that can hold a result (op executables, type promotion, wrapped
scalars, creation constants, host masks, node vjps, fused segments, backward plans, view
write kernels, samplers, func programs) is reached by at least one scenario, and every
piece of ambient state that can change a result (the default dtype, grad mode, inference
mode, a forward-AD level, anomaly mode, saved-tensor hooks) is flipped between calls of
the same scenario: run, flip, run again, flip back, run again. Each run is compared with
torch doing the same, so a cache that kept a result across a flip shows as a difference.
"""
import contextlib

import pytest
import torch

import eagergrad as eg
from conftest import norm


# ---- scenarios: what each reaches --------------------------------------------------------
def promote_scalars(L):  # promotion and wrapped-scalar caches
    t, b = L.tensor([1, 2]), L.tensor([True, False])
    return [t * 1.5, t + 0.5, t * 1j, t.pow(.5), L.where(b, t, 1.5), t.clamp(0.5), b + 1.5,
            t / 2, L.atan2(t, t)]


def kernels(L):  # op executables, forward and backward (node vjps, plans, fused)
    x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    w = L.tensor([[1.0, 2.0], [-1.0, 0.5], [0.25, 3.0]], requires_grad=True)
    y = (x @ w).softmax(1).log() * 2.5
    out = [y]
    if y.requires_grad:
        y.sum().backward()
        out += [x.grad, w.grad]
    return out


def factories(L):  # creation constants and samplers
    L.manual_seed(3)
    return [L.zeros(2, 3), L.full((2,), 1.5), L.ones(3) * 2, L.arange(0., 3.),
            L.tensor([1.5, 2.5]), L.tensor(1j), L.linspace(0, 1, 3), L.rand(2).shape,
            L.randn(2, 2).dtype]


def views_and_masks(L):  # view write kernels, host masks, in-place through a view
    base = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    x = base * 1
    x[:, 1:].mul_(2.5)
    m = x > 3
    out = [x, x[m], x.masked_fill(m, 0.5)]
    if x.requires_grad:
        x.sum().backward()
        out.append(base.grad)
    return out


def func_programs(L):  # torch.func programs (grad, vmap)
    def f(x):
        return (x.sin() * 1.5).sum()
    x = L.tensor([[0.5, 1.0], [2.0, -1.0]])
    return [L.func.grad(f)(x[0]), L.func.vmap(L.func.grad(f))(x), L.func.vmap(L.sin)(x) * 2]


SCENARIOS = [promote_scalars, kernels, factories, views_and_masks, func_programs]


# ---- ambient state ------------------------------------------------------------------------
@contextlib.contextmanager
def default_float64(L):
    old = L.get_default_dtype()
    L.set_default_dtype(L.float64)
    try:
        yield
    finally:
        L.set_default_dtype(old)


@contextlib.contextmanager
def dual_level(L):
    with L.autograd.forward_ad.dual_level():
        yield


@contextlib.contextmanager
def saved_hooks(L):
    with L.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        yield


@contextlib.contextmanager
def anomaly(L):
    with L.autograd.detect_anomaly(check_nan=True):
        yield


SETTINGS = {
    "default_dtype": default_float64,
    "no_grad": lambda L: L.no_grad(),
    "inference_mode": lambda L: L.inference_mode(),
    "forward_ad_level": dual_level,
    "anomaly": anomaly,
    "saved_tensor_hooks": saved_hooks,
}


def _runs(L, scenario, setting):
    """The scenario three times: before, under and after the flipped setting; each run's
    outcome (result or exception)."""
    outs = []
    for flip in (False, True, False):
        ctx = SETTINGS[setting](L) if flip else contextlib.nullcontext()
        try:
            with ctx:
                outs.append(norm(scenario(L)))
        except Exception as e:  # noqa: BLE001 - the error is part of what is compared
            outs.append((type(e).__name__, str(e).replace("eagergrad", "torch")))
    return outs


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_flipping_ambient_state_between_identical_calls(scenario, setting):
    with warnings_off():
        want = _runs(torch, scenario, setting)
        for _ in range(2):  # (the second pass runs on warm caches: fused, programs)
            got = _runs(eg, scenario, setting)
            for i, (g, w) in enumerate(zip(got, want)):
                assert g == w, f"run {i} ({'flipped' if i == 1 else 'plain'})"


@contextlib.contextmanager
def warnings_off():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_the_table_reaches_every_cache():
    """Each executable-holding cache gets entries from the scenarios above (so a new
    cache, added without a scenario here, is noticed when it is registered)."""
    from eagergrad._cache import EXECUTABLES
    EXECUTABLES.clear()
    with warnings_off():
        for s in SCENARIOS:
            s(eg)
            s(eg)
    filled = sum(1 for c in EXECUTABLES.owners if any(type(e) is list for e in c.values()))
    assert filled >= 10, filled
