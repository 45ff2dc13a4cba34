"""Thread safety of the global caches and counters (docs/design.md §9): threads run ops,
fused backwards, in-place writes through views and torch.func transforms at once, with
the executable bound made small so that sweeps evict while other threads look entries
up. Every thread's every result equals the same computation run alone (and torch's)."""
import threading

import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad._cache import EXECUTABLES
from eagergrad.engine import fused
from eagergrad._mode import CAPTURING

pytestmark = pytest.mark.slow  # (threads, long runs)

ROUNDS = 12


def mlp_step(L, n):
    rs = np.random.RandomState(n)
    x = L.tensor(rs.randn(n, 6).astype(np.float32))
    w1 = L.tensor(rs.randn(6, 8).astype(np.float32), requires_grad=True)
    w2 = L.tensor(rs.randn(8, 3).astype(np.float32), requires_grad=True)
    loss = ((x @ w1).tanh() @ w2).softmax(1).log().mean() * (1.0 + n / 10)
    loss.backward()
    return [loss, w1.grad, w2.grad]


def view_writes(L, n):
    base = L.arange(float(4 * n)).reshape(4, n).requires_grad_()
    x = base * 1
    x[1:, : n // 2 + 1].mul_(2.5)
    x[:, -1] = x[:, 0] * 3
    (x * x).sum().backward()
    return [x, base.grad]


def func_calls(L, n):
    rs = np.random.RandomState(100 + n)
    x = L.tensor(rs.randn(n, 3).astype(np.float32))
    def f(v):
        return (v.sin() * v).sum()
    return [L.func.vmap(L.func.grad(f))(x), L.func.grad(f)(x[0]) * 2]


WORKLOADS = [mlp_step, view_writes, func_calls]


def _close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.detach().numpy()),
                                   w.detach().numpy(), rtol=2e-5, atol=2e-5)


@pytest.fixture
def small_bound():
    old = EXECUTABLES.size
    EXECUTABLES.size = 16
    try:
        yield
    finally:
        EXECUTABLES.size = old


def test_threads_share_the_caches(small_bound):
    sizes = [2 + i % 7 for i in range(ROUNDS)]
    want = {(w.__name__, n): w(torch, n) for w in WORKLOADS for n in set(sizes)}
    errors, done = [], []
    start = threading.Barrier(len(WORKLOADS) * 2)

    def worker(w, k):
        try:
            start.wait()
            for i in range(ROUNDS):
                n = sizes[(i + k) % ROUNDS]
                _close(w(eg, n), want[(w.__name__, n)])
            done.append(w.__name__)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append((w.__name__, repr(e)))

    evicted = EXECUTABLES.stats["evicted"]
    threads = [threading.Thread(target=worker, args=(w, k)) for w in WORKLOADS for k in (0, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert len(done) == len(threads)
    assert EXECUTABLES.stats["evicted"] > evicted  # sweeps ran while threads looked up
    assert CAPTURING.n == 0
    assert fused.COUNTS["segments_fused"] + fused.COUNTS["segments_node_by_node"] > 0


def test_capture_counter_never_under_counts():
    """Two threads entering and leaving func captures at once: the plain counter the hot
    paths read stays exact (a lost increment would let a capturing thread skip)."""
    def spin():
        for _ in range(20000):
            CAPTURING.enter()
            CAPTURING.leave()
    threads = [threading.Thread(target=spin) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert CAPTURING.n == 0
