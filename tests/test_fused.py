"""The fused backward (NOTE [fused segments] in engine/fused.py) must give exactly what
the node-by-node engine gives: run each program three times (first sighting runs node
by node, then compiled) and compare with fusion disabled and with torch. Hook side
effects against torch, each scenario three times: test_fused_semantics.py."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import same
from eagergrad.engine import engine, fused


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
    assert fused.COUNTS["segments_fused"] >= 2, fused.COUNTS
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
    def f(L, log):
        def step(modify):
            x = L.tensor([1.0, 2.0], requires_grad=True)
            y = (x * 2).sin() * 3
            z = y.exp()
            if modify:
                with L.no_grad():
                    z.add_(1)
            z.sum().backward()
            log.append(("grad", x.grad))
        step(False)
        step(False)
        step(True)
    log = same(f, fused=True)
    assert log[-1][:2] == ("raised", "RuntimeError") and "inplace" in log[-1][2]


def test_fused_frees_saved_tensors_without_retain_graph():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sin().sum()
        y.backward(retain_graph=True)
        y.backward()
        log.append(("twice with retain_graph", x.grad))
        y = (x.exp() * x).sin().sum()
        y.backward()
        log.append(("once", x.grad))
        y.backward()
    log = same(f, fused=True)
    assert "backward through the graph a second time" in log[-1][2]


def _hooked_program(m, log, replace_at):
    """A chain with tensor hooks on non-leaves and leaves, retain_grad and a post-
    accumulate hook, three op nodes to fuse between hooks; the hook at position
    `replace_at` returns a new gradient."""
    x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = m.tensor([1.5, 0.25, -0.5], requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g)))
    w.register_post_accumulate_grad_hook(lambda t: log.append(("w acc", t.grad)))
    y = x
    for k in range(4):
        y = ((y * w).sin() + w).tanh()
        y.register_hook(lambda g, k=k: (log.append((k, g)),
                                        g * 2 if k == replace_at else None)[1])
        if k == 1:
            y.retain_grad()
            mid = y
    y.sum().backward()
    log.append(("grads", x.grad, w.grad, mid.grad))


@pytest.mark.parametrize("replace_at", [None, 0, 2])
def test_fused_tensor_hooks_run_in_order_and_can_replace(replace_at):
    same(lambda L, log: _hooked_program(L, log, replace_at), fused=True)


def test_fused_autograd_grad_with_hooked_inputs():
    def prog(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 3
        b = (a.exp() * 2).sin()
        a.register_hook(lambda g: log.append(("a", g)))
        x.register_hook(lambda g: log.append(("x", g)))
        ga, gx = L.autograd.grad(b.sum(), [a, x])
        log.append(("out", ga, gx))
    same(prog, fused=True)


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
    fused.clear()
    engine._plans.clear()
    for sin_first in (True, False, True, False, True, False):
        expected, log = [], []
        want = _two_branches(torch, expected, sin_first)
        got = _two_branches(eg, log, sin_first)
        assert log == expected, sin_first
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(engine._plans) == 2  # one structure key per creation order

    def no_schedule(*a, **k):
        raise AssertionError("a known structure must not be scheduled again")
    monkeypatch.setattr(engine, "_schedule", no_schedule)
    for sin_first in (True, False):
        expected, log = [], []
        want = _two_branches(torch, expected, sin_first)
        assert _two_branches(eg, log, sin_first) == pytest.approx(want) and log == expected


def test_exit_with_a_compile_in_flight_is_clean():
    """A program that ends while the background thread compiles a segment exits 0 (a
    daemon thread inside XLA's compiler at interpreter exit aborted the process)."""
    code = textwrap.dedent("""
        import eagergrad as torch
        x = torch.randn(64, 64, requires_grad=True)
        for _ in range(2):  # the second sighting queues the compile
            y = x
            for i in range(60):
                y = (y @ x).tanh()
            y.sum().backward()
        print("done")
        """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "done", (r.returncode, r.stderr[-2000:])


def test_long_stretches_are_split_into_bounded_segments():
    """A stretch of op nodes longer than MAX_NODES runs as several segments of at most
    MAX_NODES op nodes each (bounded compile cost), and gives torch's gradients."""
    n_ops = 2 * fused.MAX_NODES + 40

    def f(L):
        x = L.tensor([0.3, -0.2, 0.1], dtype=L.float64, requires_grad=True)
        y = x
        for _ in range(n_ops // 2):
            y = (y * 0.999).sin()
        y.sum().backward()
        return x.grad
    same(f, fused=True)
    before = fused.COUNTS["segments_fused"]
    f(eg)
    assert fused.COUNTS["segments_fused"] - before == -(-(n_ops + 1) // fused.MAX_NODES)


def test_unfused_op_runs_alone_between_fused_segments(monkeypatch):
    # convolution is declared fuse=False: its node runs as its own kernel, the nodes
    # before and after it still run fused, and the gradients are torch's
    def prog(m, x, w):
        h = m.nn.functional.conv2d((x * 2).tanh(), w, padding=1)
        return (h.sin() * h).sum()

    rs = np.random.RandomState(3)
    xv, wv = rs.randn(2, 3, 5, 5), rs.randn(4, 3, 3, 3) * 0.3

    def run(m):
        x, w = m.tensor(xv, requires_grad=True), m.tensor(wv, requires_grad=True)
        prog(m, x, w).backward()
        return x.grad.numpy(), w.grad.numpy()

    expected = run(torch)
    calls = []
    node = eg.ops.conv.CONV.Node
    monkeypatch.setattr(node, "apply", lambda self, g, f=node.apply: calls.append(1) or f(self, g))
    fused.clear()
    for i in range(3):  # run 1 node by node, then fused segments around the convolution
        before = fused.COUNTS["segments_fused"]
        got = run(eg)
        assert len(calls) == i + 1  # the convolution's node ran on its own each time
        if i:
            assert fused.COUNTS["segments_fused"] - before == 2, fused.COUNTS
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_clear_keeping_compiled_segments_reuses_them():
    """clear(keep_compiled=True) (the differential harness's, before each scenario): the
    next backward runs node by node again, the one after fuses with the segment compiled
    before it, compiling nothing, and with torch's gradients; a plain clear() compiles
    anew."""
    def step(L, v):
        x = L.tensor(v, dtype=L.float64, requires_grad=True)
        ((x.sin() * 2.0).exp() * x).tanh().sum().backward()
        return x.grad

    vs = ([0.5, -1.5, 2.0], [0.25, 1.0, -0.75])
    want = [step(torch, v).numpy() for v in vs]
    fused.clear()
    for v in vs:
        step(eg, v)
    assert fused.COUNTS["compiles"] == 1
    for keep, compiles in ((True, 0), (False, 1)):
        fused.clear(keep_compiled=keep)
        first = step(eg, vs[0])
        assert fused.COUNTS["segments_fused"] == 0  # node by node after the clear
        second = step(eg, vs[1])
        assert fused.COUNTS["segments_fused"] == 1 and fused.COUNTS["compiles"] == compiles
        np.testing.assert_allclose(first.numpy(), want[0], rtol=1e-12)
        np.testing.assert_allclose(second.numpy(), want[1], rtol=1e-12)
