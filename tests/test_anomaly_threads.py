"""Anomaly mode, errors inside backward, re-entrant backward and threads, differentially
against torch: each scenario runs with torch and with eagergrad and logs what happens
(gradients, errors, warnings); the logs must be equal. Thread scenarios also check
every single result against the value computed up front."""
import threading
import warnings

import numpy as np
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled",
    "ignore:Error detected in",
    "ignore:Using backward\\(\\) with create_graph=True")


from conftest import attempt, same  # noqa: E402


class Boom(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Anomaly mode
# ---------------------------------------------------------------------------------------

def test_anomaly_nan_check_builtin_node():
    def f(L, log):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        with L.autograd.detect_anomaly():
            log.append(("enabled", L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                attempt(log, "sqrt", lambda: (x.sqrt() * 0).sum().backward())
            log.append(("warnings", _anomaly_warnings(ws)))
        log.append(("after", L.is_anomaly_enabled(), x.grad))
        with L.autograd.detect_anomaly(check_nan=False):
            log.append(("check_nan", L.is_anomaly_check_nan_enabled()))
            (x.sqrt() * 0).sum().backward()
        log.append(("nan passes without the check", x.grad))
        (x.sqrt() * 0).sum().backward()
        log.append(("and outside anomaly mode", x.grad))
    log = same(f)
    assert log[1] == ("sqrt", "RuntimeError",
                      "Function 'SqrtBackward0' returned nan values in its 0th output.")


def test_anomaly_nan_check_custom_function_output_index():
    def f(L, log):
        class NanSecond(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g, g * float("nan")

        x = L.tensor([1.0], requires_grad=True)
        y = L.tensor([1.0], requires_grad=True)
        L.autograd.set_detect_anomaly(True)
        try:
            log.append(("on", L.is_anomaly_enabled()))
            attempt(log, "nan", lambda: NanSecond.apply(x, y).sum().backward())
        finally:
            L.autograd.set_detect_anomaly(False)
        log.append(("off", L.is_anomaly_enabled()))
        with L.autograd.set_detect_anomaly(True):
            log.append(("ctx", L.is_anomaly_enabled()))
            attempt(log, "nan again", lambda: NanSecond.apply(x, y).sum().backward())
        log.append(("restored", L.is_anomaly_enabled()))
        NanSecond.apply(x, y).sum().backward()
        log.append(("grads", x.grad, y.grad))
    log = same(f)
    assert log[1] == ("nan", "RuntimeError",
                      "Function 'NanSecondBackward' returned nan values in its 1th output.")


def _anomaly_warnings(ws):
    return [str(w.message).split("\n")[0] for w in ws if "Error detected in" in str(w.message)]


@pytest.mark.parametrize("where", ["nan", "tensor_hook", "prehook", "posthook", "leaf_hook"])
def test_anomaly_names_the_node_whose_evaluation_failed(where):
    def f(L, log):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        with L.autograd.detect_anomaly():
            y = x.sqrt() if where == "nan" else x.exp()
            z = y * 2

            def bad(*args):
                raise Boom(where)
            if where == "tensor_hook":
                y.register_hook(bad)
            elif where == "prehook":
                z.grad_fn.register_prehook(bad)
            elif where == "posthook":
                y.grad_fn.register_hook(bad)
            elif where == "leaf_hook":
                x.register_hook(bad)
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                try:
                    z.sum().backward()
                except (Boom, RuntimeError) as e:
                    log.append((type(e).__name__, str(e)))
            log.append(("warnings", _anomaly_warnings(ws)))
    same(f)


def test_anomaly_records_forward_traceback_on_each_node():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)
        y = x.exp()
        log.append(("outside", "traceback_" in y.grad_fn.metadata))
        with L.autograd.detect_anomaly():
            z = (x * 2).sin()  # FORWARD-MARKER
        for node in (z.grad_fn, z.grad_fn.next_functions[0][0]):
            tb = node.metadata.get("traceback_")
            log.append((node.name(), type(tb).__name__,
                        all(isinstance(s, str) for s in tb),
                        any("FORWARD-MARKER" in s for s in tb)))
    same(f)


def test_anomaly_prints_forward_traceback_of_the_failing_node():
    def f(L, log):
        err = Boom("from backward")

        class Fail(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise err

        x = L.tensor([1.0], requires_grad=True)
        with L.autograd.detect_anomaly():
            y = Fail.apply(x)  # FAILING-FORWARD
            z = y.exp()
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                try:
                    z.backward()
                except Boom as e:
                    log.append(("same exception", e is err))
        msgs = [str(w.message) for w in ws if "Error detected in" in str(w.message)]
        log.append(("warnings", len(msgs), [w.category.__name__ for w in ws
                                             if "Error detected in" in str(w.message)]))
        m = msgs[0]
        log.append(("message", m.split("\n")[0], "FAILING-FORWARD" in m, "y = Fail.apply(x)" in m))
        # outside anomaly mode: the same error, no warning
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                Fail.apply(x).exp().backward()
            except Boom:
                log.append(("plain", [str(w.message) for w in ws]))
    log = same(f)
    assert log[2] == ("message", "Error detected in FailBackward. Traceback of forward call "
                      "that caused the error:", True, True)


# ---------------------------------------------------------------------------------------
# Errors inside backward leave the graph usable with retain_graph=True
# ---------------------------------------------------------------------------------------

def _failing_graph(L, log, state):
    class Flaky(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            log.append(("flaky backward", state["fail"]))
            if state["fail"]:
                raise Boom("flaky")
            x, = ctx.saved_tensors
            return 2 * x * g

    x = L.tensor([1.0, 2.0], requires_grad=True)
    w = L.tensor([3.0, 4.0], requires_grad=True)
    # w's AccumulateGrad runs before Flaky fails: its gradient is already accumulated
    loss = (Flaky.apply(x.sin()) * w).sum() + (w * w).sum()
    return x, w, loss


def test_error_in_node_keeps_graph_usable_with_retain_graph():
    def f(L, log):
        state = {"fail": True}
        x, w, loss = _failing_graph(L, log, state)
        attempt(log, "first", lambda: loss.backward(retain_graph=True))
        log.append(("after error", x.grad, w.grad))
        state["fail"] = False
        loss.backward(retain_graph=True)
        log.append(("retry", x.grad, w.grad))
        log.append(("grad", L.autograd.grad(loss, [x, w])))
    same(f)


def test_error_in_node_without_retain_graph():
    def f(L, log):
        state = {"fail": True}
        x, w, loss = _failing_graph(L, log, state)
        attempt(log, "first", lambda: loss.backward())
        state["fail"] = False
        attempt(log, "second", lambda: loss.backward())
        log.append(("grads", x.grad, w.grad))
    same(f)


def test_version_error_inside_backward_then_graph_reusable():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        b = a.exp()  # saves its result
        c = (b * 2).sum() + (a * 3).sum()
        b.add_(0)  # bumps the version: ExpBackward0 fails
        attempt(log, "version", lambda: c.backward(retain_graph=True))
        log.append(("x.grad", x.grad))
        attempt(log, "again", lambda: c.backward())
    log = same(f)
    assert "modified by an inplace operation" in log[0][2]


# ---------------------------------------------------------------------------------------
# Re-entrant backward
# ---------------------------------------------------------------------------------------

def _reentrant(L, log, use_grad):
    class Re(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, depth):
            ctx.depth = depth
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            if ctx.depth == 0:
                return g * 2, None
            with L.enable_grad():
                xx = x.detach().requires_grad_()
                out = (Re.apply(xx, ctx.depth - 1) ** 2).sum()
                if use_grad:
                    inner, = L.autograd.grad(out, xx)
                else:
                    out.backward()
                    inner = xx.grad
            if ctx.depth % 25 == 0:
                log.append(("depth", ctx.depth, L.is_grad_enabled(), inner))
            return g * 2 + inner * 0.01, None
    return Re


@pytest.mark.parametrize("use_grad", [False, True])
def test_reentrant_backward_depth_100(use_grad):
    def f(L, log):
        Re = _reentrant(L, log, use_grad)
        x = L.tensor([0.5, -0.25], requires_grad=True)
        Re.apply(x, 100).sum().backward()
        log.append(("x.grad", x.grad))
    same(f)


def test_reentrant_backward_error_propagates_through_nesting():
    def f(L, log):
        err = Boom("deep")

        class Re(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, depth):
                ctx.depth = depth
                return x * 1

            @staticmethod
            def backward(ctx, g):
                if ctx.depth == 0:
                    raise err
                with L.enable_grad():
                    xx = g.detach().requires_grad_()
                    Re.apply(xx, ctx.depth - 1).sum().backward()
                return g

        x = L.tensor([1.0], requires_grad=True)
        y = Re.apply(x, 70)
        try:
            y.sum().backward(retain_graph=True)
        except Boom as e:
            log.append(("same object through 70 levels", e is err))
        log.append(("grad mode", L.is_grad_enabled()))
    log = same(f)
    assert log[0] == ("same object through 70 levels", True)


def test_reentrant_checkpoint_style_recompute():
    def f(L, log):
        class Checkpoint(L.autograd.Function):
            """Forward without a graph; backward recomputes it under enable_grad and
            differentiates it with a nested backward (torch.utils.checkpoint's way)."""

            @staticmethod
            def forward(ctx, fn, x):
                ctx.fn = fn
                ctx.save_for_backward(x)
                return fn(x)

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                with L.enable_grad():
                    xx = x.detach().requires_grad_()
                    out = ctx.fn(xx)
                log.append(("recomputed", out.grad_fn.name()))
                L.autograd.backward(out, g)
                return None, xx.grad

        def block(t):
            return (t.sin() * t).exp()

        x = L.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = Checkpoint.apply(block, Checkpoint.apply(block, x))
        y.sum().backward()
        log.append(("checkpointed", x.grad))
        x2 = x.detach().requires_grad_()
        block(block(x2)).sum().backward()
        log.append(("plain", x2.grad))
    log = same(f)
    assert log[-1][1] == log[-2][1]


# ---------------------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------------------

N_THREADS, N_ITERS = 8, 50


def _run_threads(target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=wrapped, args=(i,)) for i in range(N_THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def _expected_separate(i, k):
    """Gradient of ((x * w).sin() * x).sum() w.r.t. x and w, x = [i, k] / 10, w = [2, -1]."""
    x = np.array([i, k], np.float64) / 10
    w = np.array([2.0, -1.0])
    gx = np.cos(x * w) * w * x + np.sin(x * w)
    gw = np.cos(x * w) * x * x
    return gx, gw


def test_threads_backward_on_separate_graphs():
    def f(L, log):
        bad = []

        def work(i):
            for k in range(N_ITERS):
                x = L.tensor([i / 10, k / 10], dtype=L.float64, requires_grad=True)
                w = L.tensor([2.0, -1.0], dtype=L.float64, requires_grad=True)
                h = x.register_hook(lambda g: g * 1)  # hooks run in the calling thread
                ((x * w).sin() * x).sum().backward()
                h.remove()
                gx, gw = _expected_separate(i, k)
                if not (np.allclose(x.grad.numpy(), gx, rtol=1e-12, atol=1e-14)
                        and np.allclose(w.grad.numpy(), gw, rtol=1e-12, atol=1e-14)):
                    bad.append((i, k, x.grad.tolist(), w.grad.tolist()))
        _run_threads(work)
        log.append(("wrong results", bad))
    same(f)


def test_threads_autograd_grad_on_separate_graphs_with_create_graph():
    def f(L, log):
        bad = []

        def work(i):
            for k in range(N_ITERS // 5):
                x = L.tensor([i + 1.0, k + 1.0], requires_grad=True)
                g, = L.autograd.grad((x ** 3).sum(), x, create_graph=True)
                g2, = L.autograd.grad(g.sum(), x)
                if g.tolist() != [3 * (i + 1.0) ** 2, 3 * (k + 1.0) ** 2] or \
                        g2.tolist() != [6 * (i + 1.0), 6 * (k + 1.0)]:
                    bad.append((i, k))
        _run_threads(work)
        log.append(("wrong results", bad))
    same(f)


def test_threads_hogwild_shared_graph_retain_graph():
    def f(L, log):
        x = L.tensor([1.0, 2.0, -3.0], requires_grad=True)
        c = L.tensor([0.5, 0.25, 2.0])
        y = x * c
        loss = (y * y * 2).sum()  # d/dx = 4 c^2 x: small exact binary fractions
        expected = [4 * cc * cc * xx for cc, xx in zip(c.tolist(), x.tolist())]
        calls = []
        y.register_hook(lambda g: calls.append(1))
        bad = []

        def work(i):
            for k in range(N_ITERS):
                if (i + k) % 2:
                    g, = L.autograd.grad(loss, x, retain_graph=True)
                    if g.tolist() != expected:
                        bad.append((i, k, g.tolist()))
                else:
                    loss.backward(retain_graph=True)
        _run_threads(work)
        n_backward = sum(1 for i in range(N_THREADS) for k in range(N_ITERS) if not (i + k) % 2)
        log.append(("wrong results", bad, "hook calls", len(calls)))
        log.append(("accumulated", x.grad.tolist() == [e * n_backward for e in expected]))
    same(f)


def test_grad_mode_is_thread_local():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)
        seen = {}

        def worker():
            seen["worker sees"] = L.is_grad_enabled()
            seen["worker records"] = (x * 2).requires_grad
            L.set_grad_enabled(False)  # only in this thread
            seen["worker after disabling"] = (x * 2).requires_grad
        with L.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen["main inside no_grad"] = (x * 2).requires_grad
        seen["main after"] = (x * 2).requires_grad
        log.append(seen)
    log = same(f)
    assert log[0] == {"worker sees": True, "worker records": True,
                      "worker after disabling": False, "main inside no_grad": False,
                      "main after": True}


def test_saved_tensor_hooks_in_threads_and_backward_in_another_thread():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        counts = {"pack": 0, "unpack": 0}
        lock = threading.Lock()

        def pack(t):
            with lock:
                counts["pack"] += 1
            return t.detach().clone()

        def unpack(p):
            with lock:
                counts["unpack"] += 1
            return p
        outs = [None] * N_THREADS

        def forward(i):
            with L.autograd.graph.saved_tensors_hooks(pack, unpack):
                outs[i] = (x * (i + 1)).exp().sum()
        _run_threads(forward)
        log.append(("after forwards", dict(counts)))

        def backward(i):
            outs[N_THREADS - 1 - i].backward()  # another thread's graph
        _run_threads(backward)
        log.append(("after backwards", dict(counts), x.grad))
    same(f)
