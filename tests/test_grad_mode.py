"""Grad modes vs real torch: no_grad, enable_grad, set_grad_enabled, inference_mode,
is_grad_enabled / is_inference_mode_enabled, as context managers and decorators, and
thread-locality. Every scenario is one function of the library (`L` is torch or
eagergrad), run with both; results and errors are compared."""
import functools
import threading

import pytest
import torch

import conftest
import eagergrad as eg
from conftest import same_error

LIBS = (torch, eg)


same = functools.partial(conftest.same, exact=True)


@pytest.fixture(autouse=True)
def _clean_modes():
    # a failing test must not leak a grad mode into the next one
    yield
    for L in LIBS:
        L.set_grad_enabled(True)
        assert not L.is_inference_mode_enabled()


# ---------------------------------------------------------------------------------------
# no_grad / enable_grad / set_grad_enabled
# ---------------------------------------------------------------------------------------

def test_default_state():
    assert same(lambda L: (L.is_grad_enabled(), L.is_inference_mode_enabled())) == \
        (True, False)


def test_no_grad_context():
    def f(L):
        x = L.ones(2, requires_grad=True)
        with L.no_grad():
            inside = L.is_grad_enabled()
            y = x * 2
            z = L.zeros(2, requires_grad=True)  # a leaf that requires grad, even here
            w = z + 1
        return inside, L.is_grad_enabled(), y, z, w, (x * 2)
    r = same(f)
    assert r[0] is False and r[1] is True
    assert r[2].requires_grad is False and r[2].is_leaf is True  # y: no grad, a leaf
    assert r[3].requires_grad is True and r[4].requires_grad is False
    assert r[5].grad_fn == "MulBackward0"


def test_nested_modes():
    def f(L):
        x = L.ones(2, requires_grad=True)
        log = []
        with L.no_grad():
            log.append((L.is_grad_enabled(), (x * 2).requires_grad))
            with L.enable_grad():
                log.append((L.is_grad_enabled(), (x * 2).requires_grad))
                with L.no_grad():
                    log.append((L.is_grad_enabled(), (x * 2).requires_grad))
                log.append((L.is_grad_enabled(), (x * 2).requires_grad))
                with L.set_grad_enabled(False):
                    log.append((L.is_grad_enabled(), (x * 2).requires_grad))
                log.append(L.is_grad_enabled())
            log.append((L.is_grad_enabled(), (x * 2).requires_grad))
        log.append(L.is_grad_enabled())
        return log
    r = same(f)
    assert r == [(False, False), (True, True), (False, False), (True, True), (False, False),
                 True, (False, False), True]


def test_modes_restore_on_exception():
    def f(L):
        out = []
        for mode in (L.no_grad, L.enable_grad, lambda: L.set_grad_enabled(False),
                     L.inference_mode):
            try:
                with mode():
                    raise KeyError("boom")
            except KeyError:
                pass
            out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
        return out
    assert same(f) == [(True, False)] * 4


def test_set_grad_enabled_function_form():
    def f(L):
        x = L.ones(2, requires_grad=True)
        out = [L.is_grad_enabled()]
        L.set_grad_enabled(False)
        out.append((L.is_grad_enabled(), (x * 2).requires_grad))
        L.set_grad_enabled(True)
        out.append((L.is_grad_enabled(), (x * 2).requires_grad))
        # the context form restores whatever was on before the call
        L.set_grad_enabled(False)
        with L.set_grad_enabled(True):
            out.append(L.is_grad_enabled())
        out.append(L.is_grad_enabled())
        L.set_grad_enabled(True)
        with L.set_grad_enabled(False):
            out.append(L.is_grad_enabled())
        out.append(L.is_grad_enabled())
        return out
    assert same(f) == [True, (False, False), (True, True), True, False, False, True]


def test_decorators():
    def f(L):
        x = L.ones(2, requires_grad=True)

        @L.no_grad()
        def ng():
            return L.is_grad_enabled(), (x * 2).requires_grad

        @L.no_grad
        def ng_bare():
            return L.is_grad_enabled()

        @L.enable_grad()
        def eg_():
            return L.is_grad_enabled(), (x * 2).requires_grad

        @L.enable_grad
        def eg_bare():
            return L.is_grad_enabled()

        @L.set_grad_enabled(False)
        def sge():
            return L.is_grad_enabled(), (x * 2).requires_grad

        after_decorating = L.is_grad_enabled()  # set_grad_enabled(False) as decorator
        out = [after_decorating, ng(), ng_bare(), sge(), L.is_grad_enabled()]
        with L.no_grad():
            out += [eg_(), eg_bare(), L.is_grad_enabled()]
        return out
    r = same(f)
    assert r == [True, (False, False), False, (False, False), True, (True, True), True, False]


def test_decorator_keeps_function_metadata():
    def f(L):
        @L.no_grad()
        def my_function(a, b=2):
            """doc"""
            return a + b
        return my_function.__name__, my_function.__doc__, my_function(1), my_function(1, b=5)
    assert same(f) == ("my_function", "doc", 3, 6)


def test_decorated_generator_only_affects_its_own_frames():
    def f(L):
        @L.no_grad()
        def gen():
            got = yield L.is_grad_enabled()
            yield (got, L.is_grad_enabled())

        g = gen()
        a = next(g)
        between = L.is_grad_enabled()
        b = g.send("x")
        return a, between, b
    assert same(f) == (False, True, ("x", False))


def test_grad_mode_inside_custom_function_and_backward():
    def f(L):
        seen = {}

        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen["forward"] = L.is_grad_enabled()
                return x * 2

            @staticmethod
            def backward(ctx, g):
                seen.setdefault("backward", []).append(L.is_grad_enabled())
                return g * 2

        x = L.ones(2, requires_grad=True)
        F.apply(x).sum().backward(retain_graph=True)
        L.autograd.grad(F.apply(x).sum(), x, create_graph=True)
        seen["after"] = L.is_grad_enabled()
        return seen
    assert same(f) == {"forward": False, "backward": [False, True], "after": True}


def test_backward_under_no_grad_still_accumulates():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with L.no_grad():
            y.backward()
        return x.grad, L.is_grad_enabled()
    same(f)


def test_no_grad_inplace_on_leaf_allowed_and_versions():
    def f(L):
        x = L.ones(3, requires_grad=True)
        v0 = x._version
        with L.no_grad():
            x.mul_(3)
            x.add_(1)
        return v0, x._version, x, x.is_leaf, x.grad_fn
    r = same(f)
    assert r[1] == r[0] + 2


def test_inplace_on_leaf_requiring_grad_outside_no_grad_errors():
    same_error(lambda L: L.ones(3, requires_grad=True).add_(1),
               "a leaf Variable that requires grad is being used in an in-place operation")


# ---------------------------------------------------------------------------------------
# inference_mode
# ---------------------------------------------------------------------------------------

def test_inference_mode_basics():
    def f(L):
        x = L.ones(3, requires_grad=True)
        with L.inference_mode():
            flags = (L.is_grad_enabled(), L.is_inference_mode_enabled())
            y = x * 2
            z = L.zeros(2)
            w = L.ones(2, requires_grad=True)
        return (flags, y, y.is_inference(), z.is_inference(), x.is_inference(),
                w.requires_grad, w.is_inference(), L.is_grad_enabled(),
                L.is_inference_mode_enabled())
    r = same(f)
    assert r[0] == (False, True)
    assert r[1].requires_grad is False and r[2] is True and r[3] is True and r[4] is False
    assert r[5] is True and r[6] is True


def test_inference_mode_false_and_nesting():
    def f(L):
        out = []
        with L.inference_mode():
            with L.inference_mode(False):
                out.append((L.is_grad_enabled(), L.is_inference_mode_enabled(),
                            L.ones(1).is_inference()))
                x = L.ones(2, requires_grad=True)
                out.append((x * 2).grad_fn.name())
            out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
        # inference_mode(False) turns grad mode on even inside no_grad (c10::InferenceMode)
        with L.no_grad():
            with L.inference_mode(False):
                out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
            out.append(L.is_grad_enabled())
        with L.inference_mode(True):
            with L.inference_mode(True):
                out.append(L.is_inference_mode_enabled())
            out.append(L.is_inference_mode_enabled())
        out.append(L.is_inference_mode_enabled())
        return out
    assert same(f) == [(True, False, False), "MulBackward0", (False, True), (True, False),
                       False, True, True, False]


def test_enable_grad_inside_inference_mode_records_nothing():
    def f(L):
        x = L.ones(2, requires_grad=True)
        with L.inference_mode():
            with L.enable_grad():
                y = x * 2
                flags = (L.is_grad_enabled(), L.is_inference_mode_enabled())
            with L.set_grad_enabled(True):
                z = x + 1
        return flags, y.requires_grad, y.grad_fn is None, z.grad_fn is None, y.is_inference()
    assert same(f) == ((True, True), False, True, True, True)


def test_inference_mode_decorators():
    def f(L):
        @L.inference_mode()
        def a(x):
            return x * 2, L.is_inference_mode_enabled(), L.is_grad_enabled()

        @L.inference_mode
        def b(x):
            return x * 2, L.is_inference_mode_enabled()

        @L.inference_mode(False)
        def c():
            return L.is_inference_mode_enabled(), L.is_grad_enabled()

        x = L.ones(2, requires_grad=True)
        ra, rb = a(x), b(x)
        with L.inference_mode():
            rc = c()
        return (ra[0].is_inference(), ra[1:], rb[0].is_inference(), rb[1], rc,
                L.is_inference_mode_enabled())
    assert same(f) == (True, (True, False), True, True, (False, True), False)


def test_inference_tensor_views_and_copies():
    def f(L):
        with L.inference_mode():
            y = L.arange(6.0).reshape(2, 3)
            v_in = y[0]
        v_out = y[1]
        return (y.is_inference(), v_in.is_inference(), v_out.is_inference(),
                y.detach().is_inference(), y.clone().is_inference(),
                (y * 2).is_inference(), (y * 2).requires_grad)
    assert same(f) == (True, True, True, True, False, False, False)


def test_inference_tensor_in_recorded_op_that_saves_it_errors():
    def f(L):
        with L.inference_mode():
            y = L.ones(3)
        x = L.ones(3, requires_grad=True)
        return x * y
    same_error(f, "Inference tensors cannot be saved for backward")
    for L in LIBS:  # the full hint is torch's
        with pytest.raises(RuntimeError) as info:
            f(L)
        assert "make a clone to get a normal tensor" in str(info.value)


def test_inference_tensor_in_recorded_op_that_does_not_save_it_is_fine():
    def f(L):
        with L.inference_mode():
            y = L.full((3,), 2.0)
        x = L.ones(3, requires_grad=True)
        s = (x + y).sum()
        s.backward()
        return s, x.grad, s.is_inference()
    r = same(f)
    assert r[0].values == 9.0


def test_inference_tensor_saved_by_custom_function_errors():
    def f(L):
        with L.inference_mode():
            y = L.ones(3)

        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g, None

        return F.apply(L.ones(3, requires_grad=True), y)
    same_error(f, "Inference tensors cannot be saved for backward")


def test_inference_tensor_inplace_outside_inference_mode_errors():
    def make(L):
        with L.inference_mode():
            return L.ones(3)

    same_error(lambda L: make(L).add_(1),
               "Inplace update to inference tensor outside InferenceMode is not allowed")
    # no_grad does not help: only inference mode may update inference tensors
    def under_no_grad(L):
        y = make(L)
        with L.no_grad():
            y.mul_(2)
    same_error(under_no_grad,
               "Inplace update to inference tensor outside InferenceMode is not allowed")


def test_inference_tensor_inplace_inside_inference_mode_ok():
    def f(L):
        with L.inference_mode():
            y = L.ones(3)
            y.add_(2)
            y.mul_(3)
            y.requires_grad_()
            return y.detach(), y.requires_grad
    assert same(f)[1] is True


def test_inference_tensor_requires_grad_outside_errors():
    def f(L):
        with L.inference_mode():
            y = L.ones(3)
        y.requires_grad_()
    same_error(f, "Setting requires_grad=True on inference tensor outside InferenceMode is "
                  "not allowed")


def test_normal_tensor_inplace_inside_inference_mode():
    def f(L):
        x = L.ones(3)
        with L.inference_mode():
            x.add_(1)
        return x, x._version, x.is_inference()
    r = same(f)
    assert r[1] == 1 and r[2] is False


# ---------------------------------------------------------------------------------------
# thread-locality
# ---------------------------------------------------------------------------------------

def _two_threads(L, mode_factory):
    """Thread A sits inside `mode_factory()` while thread B computes; returns what each
    saw. Events force the interleaving, so the check is deterministic."""
    entered, checked = threading.Event(), threading.Event()
    seen = {}
    errors = []

    def a():
        try:
            x = L.ones(2, requires_grad=True)
            with mode_factory(L):
                entered.set()
                checked.wait(10)
                seen["a"] = (L.is_grad_enabled(), L.is_inference_mode_enabled(),
                             (x * 2).requires_grad)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
            entered.set()

    def b():
        try:
            entered.wait(10)
            x = L.ones(2, requires_grad=True)
            y = x * 2
            seen["b"] = (L.is_grad_enabled(), L.is_inference_mode_enabled(), y.requires_grad,
                         y.is_inference())
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            checked.set()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    ta.join(20)
    tb.join(20)
    assert not errors, errors
    return seen


@pytest.mark.parametrize("mode", ["no_grad", "set_grad_enabled", "inference_mode"])
def test_thread_local_modes(mode):
    factories = {
        "no_grad": lambda L: L.no_grad(),
        "set_grad_enabled": lambda L: L.set_grad_enabled(False),
        "inference_mode": lambda L: L.inference_mode(),
    }
    r = {L.__name__: _two_threads(L, factories[mode]) for L in LIBS}
    assert r["eagergrad"] == r["torch"]
    assert r["torch"]["b"] == (True, False, True, False)
    assert r["torch"]["a"][0] is False


def test_new_thread_starts_with_grad_enabled():
    def f(L):
        res = {}

        def worker():
            res["w"] = (L.is_grad_enabled(), L.is_inference_mode_enabled())
        with L.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            main = L.is_grad_enabled()
        with L.inference_mode():
            t = threading.Thread(target=lambda: res.setdefault(
                "i", L.is_inference_mode_enabled()))
            t.start()
            t.join()
        return res, main
    assert same(f) == ({"w": (True, False), "i": False}, False)


def test_set_grad_enabled_in_thread_does_not_leak():
    def f(L):
        def worker():
            L.set_grad_enabled(False)
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        return L.is_grad_enabled()
    assert same(f) is True
