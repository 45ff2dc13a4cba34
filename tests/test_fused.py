"""The fused backward (NOTE [fused backward] in engine/fused.py) must give exactly what
the node-by-node engine gives: run each program three times (first sighting runs node
by node, then compiled) and compare with fusion disabled and with torch."""
import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad.engine import fused


def _prog_chain(m, x, w):
    y = x
    for _ in range(5):
        y = (y * w).sin() + w
    return y.sum()


def _prog_mlp(m, x, w):
    h = (x.reshape(2, 3) @ w.reshape(3, 2)).tanh()
    return h.log_softmax(1)[m.tensor([0, 1]), m.tensor([1, 0])].mean() + (w ** 2).sum()


def _prog_fanout(m, x, w):
    a = x * w
    b = a.exp() + a.sin() * a
    return (b.max() + b.amax(0).sum() + b.prod()).sum()


PROGRAMS = [_prog_chain, _prog_mlp, _prog_fanout]


def _data(seed):
    rs = np.random.RandomState(seed)
    return rs.randn(6) * 0.5, rs.randn(9)[:6] * 0.5 + 1


def _run(m, prog, xv, wv, mode):
    x = m.tensor(xv, requires_grad=True)
    w = m.tensor(wv, requires_grad=True)
    out = prog(m, x, w)
    if mode == "backward":
        out.backward()
        return x.grad.numpy(), w.grad.numpy()
    if mode == "inputs":
        out.backward(inputs=[w])
        assert x.grad is None
        return w.grad.numpy(),
    gx, = m.autograd.grad(out, [x])
    return gx.numpy(),


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("mode", ["backward", "inputs", "grad"])
def test_fused_matches_node_by_node_and_torch(prog, mode):
    xv, wv = _data(0)
    expected = _run(torch, prog, xv, wv, mode)
    fused.clear()
    got = [_run(eg, prog, *_data(0), mode) for _ in range(3)]  # 1st per node, then fused
    assert any(callable(v) for v in fused._cache.values()), "the fused path never compiled"
    fused.ENABLED = False
    try:
        plain = _run(eg, prog, xv, wv, mode)
    finally:
        fused.ENABLED = True
    for g in got + [plain]:
        for a, b in zip(g, expected):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_fused_accumulates_into_existing_grad_in_place():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (x * x).sum().backward()
    g = x.grad
    (x * x).sum().backward()
    assert g is x.grad
    np.testing.assert_allclose(x.grad.numpy(), 8 * np.array([1.0, 2.0]))


def test_fused_respects_version_counter_errors():
    def step(modify):
        x = eg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y.exp()
        if modify:
            with eg.no_grad():
                z.add_(1)
        return z.sum()
    for _ in range(3):
        step(False).backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        step(True).backward()


def test_fused_frees_saved_tensors_without_retain_graph():
    for _ in range(3):
        x = eg.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp([1.0, 2.0]) * np.array([2.0, 3.0])))


def _hooked_program(m, log, replace_at):
    """A chain with tensor hooks on non-leaves and leaves, retain_grad and a post-
    accumulate hook; the hook at position `replace_at` returns a new gradient."""
    x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = m.tensor([1.5, 0.25, -0.5], requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    w.register_post_accumulate_grad_hook(lambda t: log.append(("w acc", t.grad.tolist())))
    y = x
    for k in range(4):
        y = (y * w).sin()
        y.register_hook(lambda g, k=k: (log.append((k, g.tolist())),
                                        g * 2 if k == replace_at else None)[1])
        if k == 1:
            y.retain_grad()
            mid = y
    y.sum().backward()
    log.append(("grads", x.grad.tolist(), w.grad.tolist(), mid.grad.tolist()))


@pytest.mark.parametrize("replace_at", [None, 0, 2])
def test_fused_tensor_hooks_run_in_order_and_can_replace(replace_at):
    expected = []
    _hooked_program(torch, expected, replace_at)
    fused.clear()
    for _ in range(3):  # first sighting node by node, then fused (+ resume when replaced)
        log = []
        _hooked_program(eg, log, replace_at)
        assert [e[0] for e in log] == [e[0] for e in expected]
        for a, b in zip(log, expected):
            np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in a[1:]]),
                                       np.concatenate([np.ravel(v) for v in b[1:]]), rtol=1e-6)
    assert any(callable(v) for v in fused._cache.values())


def test_fused_autograd_grad_with_hooked_inputs():
    def prog(m, log):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a = x * 3
        b = a.exp() * 2
        a.register_hook(lambda g: log.append(("a", g.tolist())))
        x.register_hook(lambda g: log.append(("x", g.tolist())))
        ga, gx = m.autograd.grad(b.sum(), [a, x])
        log.append(("out", ga.tolist(), gx.tolist()))
    expected = []
    prog(torch, expected)
    fused.clear()
    for _ in range(3):
        log = []
        prog(eg, log)
        assert [e[0] for e in log] == [e[0] for e in expected]
        for a, b in zip(log, expected):
            np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in a[1:]]),
                                       np.concatenate([np.ravel(v) for v in b[1:]]), rtol=1e-6)


def _two_branches(m, log, sin_first):
    """The same graph structure, but which branch was recorded first (and so runs first
    in backward, by sequence number) depends on sin_first."""
    x = m.tensor([0.5, -1.0], requires_grad=True)
    if sin_first:
        p = x.sin()
        q = x.cos()
    else:
        q = x.cos()
        p = x.sin()
    p.register_hook(lambda g: log.append("sin"))
    q.register_hook(lambda g: log.append("cos"))
    (p * q).sum().backward()
    return x.grad.tolist()


def test_structure_cache_keeps_sequence_order_apart(monkeypatch):
    from eagergrad.engine import engine
    fused.clear()
    for sin_first in (True, False, True, False, True, False):
        expected, log = [], []
        want = _two_branches(torch, expected, sin_first)
        got = _two_branches(eg, log, sin_first)
        assert log == expected, sin_first
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(fused._known) == 2  # one structure key per creation order

    def no_schedule(*a, **k):
        raise AssertionError("a known structure must not be scheduled again")
    monkeypatch.setattr(engine, "_schedule", no_schedule)
    for sin_first in (True, False):
        expected, log = [], []
        want = _two_branches(torch, expected, sin_first)
        assert _two_branches(eg, log, sin_first) == pytest.approx(want) and log == expected
