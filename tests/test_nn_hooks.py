"""Module backward hooks (register_full_backward_hook, register_full_backward_pre_hook,
the deprecated register_backward_hook), differentially against torch: each scenario logs
every hook call with its arguments; the logs, gradients and graphs must be equal."""
import warnings

import numpy as np
import pytest
from conftest import same, same_error

pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing",
                                        "ignore:Using a non-full backward hook",
                                        "ignore:Using non-full backward hooks")

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]])


def lin(L):
    m = L.nn.Linear(3, 2)
    m.load_state_dict({"weight": L.tensor(W, dtype=L.float32),
                       "bias": L.tensor([0.1, -0.2])})
    return m


def x_(L, rg=True):
    return L.tensor(X, dtype=L.float32, requires_grad=rg)


def full(log, tag, ret=None):
    def hook(m, gi, go):
        log.append((tag, type(m).__name__, gi, go))
        return None if ret is None else ret(gi, go)
    return hook


def pre(log, tag, ret=None):
    def hook(m, go):
        log.append((tag, type(m).__name__, go))
        return None if ret is None else ret(go)
    return hook


def names(t):
    """The graph from t: node names with their next node names, breadth first."""
    out, seen, todo = [], set(), [t.grad_fn]
    while todo:
        n = todo.pop(0)
        if n is None or n in seen:
            continue
        seen.add(n)
        out.append((n.name(), [None if f is None else f.name() for f, _ in n.next_functions]))
        todo.extend(f for f, _ in n.next_functions)
    return out


class Two:
    """A module with two inputs and a tuple of two outputs (built per library)."""

    @staticmethod
    def make(L):
        class TwoIO(L.nn.Module):
            def forward(self, a, b, scale=2.0):
                return a * b, (a + b) * scale
        return TwoIO()


def test_linear_order_with_tensor_and_forward_hooks():
    def f(L, log):
        m = lin(L)
        m.register_forward_pre_hook(lambda mod, a: log.append(("fwd_pre", a)))
        m.register_forward_hook(lambda mod, a, out: log.append(("fwd", out)))
        m.register_full_backward_pre_hook(pre(log, "bw_pre"))
        m.register_full_backward_hook(full(log, "bw"))
        m.register_full_backward_hook(full(log, "bw_first"), prepend=True)
        x = x_(L)
        x.register_hook(lambda g: log.append(("x", g)))
        y = m(x)
        y.register_hook(lambda g: log.append(("y", g)))
        log.append(names(y))
        log.append((y._base is not None, y.requires_grad, y.is_leaf))
        (y * L.tensor([1.0, 3.0])).sum().backward()
        log.append((x.grad, m.weight.grad, m.bias.grad))
    same(f)


def test_replace_grad_input_and_grad_output():
    def f(L, log):
        m = lin(L)
        m.register_full_backward_pre_hook(pre(log, "pre", lambda go: (go[0] * 10,)))
        m.register_full_backward_hook(full(log, "a", lambda gi, go: (gi[0] + 1,)))
        m.register_full_backward_hook(full(log, "b"))
        x = x_(L)
        m(x).sum().backward()
        log.append((x.grad, m.weight.grad))
    same(f)


def test_multiple_inputs_outputs_non_tensor_and_no_grad_inputs():
    def f(L, log):
        m = Two.make(L)
        m.register_full_backward_pre_hook(pre(log, "pre"))
        m.register_full_backward_hook(full(log, "bw"))
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, -1.0])
        p, q = m(a, b, 3.0)
        log.append((names(p), names(q)))
        (p.sum() + (q * q).sum()).backward()
        log.append(a.grad)
        # only one output used: the other's grad_output is None
        a.grad = None
        p, q = m(a, b)
        p.sum().backward()
        log.append(a.grad)
    same(f)


def test_no_input_requires_grad_calls_hook_at_outputs():
    def f(L, log):
        m = lin(L)
        m.register_full_backward_hook(full(log, "bw"))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(x_(L, rg=False)).sum().backward()
            log.append([str(x.message)[:60] for x in w])
        log.append(m.weight.grad)
    same(f)


def test_module_called_twice_and_retain_graph():
    def f(L, log):
        m = lin(L)
        m.register_full_backward_hook(full(log, "bw"))
        x = x_(L)
        y = m(x)
        z = m(L.tanh(x))
        loss = (y * z).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        log.append(x.grad)
    same(f)


def test_grad_through_autograd_grad_and_removed_hook():
    def f(L, log):
        m = Two.make(L)
        h = m.register_full_backward_hook(full(log, "removed"))
        m.register_full_backward_hook(full(log, "kept"))
        h.remove()
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([0.5, 1.5], requires_grad=True)
        p, q = m(a, b)
        log.append(L.autograd.grad((p + q).sum(), [a, b]))
    same(f)


def test_dict_output_and_sequential():
    def f(L, log):
        class D(L.nn.Module):
            def forward(self, x):
                return {"y": x * 2}
        d = D()
        d.register_full_backward_hook(full(log, "dict"))
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = d(x)
            log.append([str(x.message) for x in w])
        out["y"].sum().backward()  # a dict output is not wrapped: the hook never runs
        seq = L.nn.Sequential(L.nn.Tanh(), L.nn.Sigmoid())
        for i, mod in enumerate(seq):
            mod.register_full_backward_hook(full(log, f"seq{i}"))
        seq.register_full_backward_hook(full(log, "seq"))
        seq(x).sum().backward()
        log.append(x.grad)
    same(f)


def test_inplace_on_hooked_input_and_output_raises():
    def inplace_module(L):
        m = L.nn.ReLU(inplace=True)
        m.register_full_backward_hook(lambda *a: None)
        return m(L.tensor([1.0, -2.0], requires_grad=True) * 1)
    same_error(inplace_module, "Output 0 of BackwardHookFunction is a view and is being "
               "modified inplace. This view was created inside a custom Function")

    def inplace_output(L):
        m = lin(L)
        m.register_full_backward_pre_hook(lambda *a: None)
        m(x_(L)).add_(1)
    same_error(inplace_output, "Output 0 of BackwardHookFunction is a view")


def test_hook_errors():
    def wrong_len(L):
        m = Two.make(L)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        a = L.tensor([1.0], requires_grad=True)
        sum(m(a, a * 2))[0].backward()
    same_error(wrong_len, "Backward hook returned an invalid number of grad_input, got 1, "
               "but expected 2")

    def wrong_pre_len(L):
        m = lin(L)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        m(x_(L)).sum().backward()
    same_error(wrong_pre_len, "Backward pre hook returned an invalid number of grad_output, "
               "got 2, but expected 1")

    def mixed(L):
        m = lin(L)
        m.register_backward_hook(lambda *a: None)
        m.register_full_backward_hook(lambda *a: None)
    same_error(mixed, "Cannot use both regular backward hooks and full backward hooks on a "
               "single Module. Please use only one of them.")

    def no_input_grad_returns(L):
        m = lin(L)
        m.register_full_backward_hook(lambda mod, gi, go: (L.ones(2, 3),))
        m(x_(L, rg=False)).sum().backward()
    same_error(no_input_grad_returns, "Backward hook for Modules where no input requires "
               "gradient should always return None or None for all gradients.")


def test_deprecated_backward_hook():
    def f(L, log):
        m = lin(L)
        m.register_backward_hook(full(log, "old"))
        x = x_(L)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = m(x)
            log.append([(x.category.__name__, str(x.message)) for x in w])
        log.append(names(y))
        y.sum().backward()
        log.append(x.grad)
    same(f)


def test_global_full_backward_hooks():
    def f(L, log):
        import importlib
        mm = importlib.import_module("torch.nn.modules.module" if L.__name__ == "torch"
                                     else "eagergrad.nn.modules.module")
        h1 = mm.register_module_full_backward_pre_hook(pre(log, "global_pre"))
        h2 = mm.register_module_full_backward_hook(full(log, "global"))
        try:
            m = lin(L)
            m.register_full_backward_hook(full(log, "own"))
            x = x_(L)
            m(x).sum().backward()
            log.append(x.grad)
        finally:
            h1.remove()
            h2.remove()
            mm._global_is_full_backward_hook = None
    same(f)
