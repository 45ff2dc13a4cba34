"""NOTE [when to fuse] (engine/fused.py): a backward segment is compiled once its node-by-
node runs have cost about its estimated compile time; runs that compiled kernels do not
count; a graph seen a couple of times is never compiled. Every run's gradients are
torch's, fused or not."""
import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad.engine import fused


@pytest.fixture
def ski_rental():
    old = fused.EAGER, fused.BACKGROUND, fused.COMPILE_COST.per_op
    fused.EAGER, fused.BACKGROUND = False, False
    yield
    fused.EAGER, fused.BACKGROUND, fused.COMPILE_COST.per_op = old


def _step(L, x0, w0):
    x = L.tensor(x0, requires_grad=True)
    w = L.tensor(w0, requires_grad=True)
    y = x
    for _ in range(6):
        y = (y * w).sin() + y.tanh()
    y.sum().backward()
    return x.grad.numpy(), w.grad.numpy()


def test_compiled_after_its_node_by_node_runs_paid_for_it(ski_rental):
    rs = np.random.RandomState(0)
    x0, w0 = rs.randn(2, 7).astype(np.float64)
    want = _step(torch, x0, w0)
    before = dict(fused.COUNTS)
    runs = 0
    while fused.COUNTS["segments_fused"] == before.get("segments_fused", 0):
        got = _step(eg, x0, w0)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        runs += 1
        assert runs < 5000, "never fused"
    # more than the eager policy's second sighting: the estimate had to be paid first
    assert runs > 2, runs
    assert fused.COUNTS["compiles"] - before.get("compiles", 0) == 1
    for _ in range(3):  # and fused from then on, still torch's numbers
        got = _step(eg, x0, w0)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # (the run that fused counted in `runs`)
    assert fused.COUNTS["segments_node_by_node"] - before.get("segments_node_by_node", 0) \
        == runs - 1


def test_a_graph_seen_twice_compiles_nothing(ski_rental):
    rs = np.random.RandomState(1)
    x0, w0 = rs.randn(2, 11).astype(np.float64)  # shapes of its own: a new graph key
    compiles = fused.COUNTS["compiles"]
    for _ in range(2):
        _step(eg, x0, w0)
    assert fused.COUNTS["compiles"] == compiles


def test_runs_that_compile_earn_no_credit(ski_rental):
    """The first run of a new graph compiles its nodes' kernels: not what fusing saves."""
    rs = np.random.RandomState(2)
    x0, w0 = rs.randn(2, 13).astype(np.float64)
    credit = {k: list(v) for k, v in fused._credit.items()}
    _step(eg, x0, w0)  # new shapes: node kernels compile
    assert {k: v[0] for k, v in fused._credit.items()} == {k: v[0] for k, v in credit.items()}
    _step(eg, x0, w0)  # compiled nothing: credited
    assert len(fused._credit) > len(credit) or any(
        fused._credit[k][0] > credit.get(k, [0])[0] for k in fused._credit)


def test_fused_by_max_sightings_when_every_run_compiles(ski_rental, monkeypatch):
    """Runs that compile earn no credit; a key is compiled at its MAX_SIGHTINGS-th
    sighting anyway (node kernels evicted every step must not keep it unfused)."""
    monkeypatch.setattr(fused, "observe", lambda seg, seconds: None)  # no credit ever
    rs = np.random.RandomState(3)
    x0, w0 = rs.randn(2, 17).astype(np.float64)
    want = _step(torch, x0, w0)
    fused_before = fused.COUNTS["segments_fused"]
    for _run in range(fused.MAX_SIGHTINGS + 1):
        got = _step(eg, x0, w0)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert fused.COUNTS["segments_fused"] > fused_before


def test_the_compile_cost_estimate_learns():
    cost = fused._CompileCost()
    cost.measured(cost.BASE + 0.01 * 100, 100)  # 10 ms an op, much above the prior
    assert cost.per_op > 0.002
    assert cost.estimate(50) > cost.BASE + 0.002 * 50
