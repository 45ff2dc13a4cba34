"""Backward hooks, differentially against torch: every scenario runs once with torch and
once with eagergrad, records each hook call (kind, arguments) into a list, and the two
lists must be equal: same hooks, same order, same gradients.

Order on one node (torch 2.13, engine.cpp call_function / call_tensor_pre_hooks):
tensor hooks (registration order), retain_grad, node pre-hooks, the node (for a leaf:
AccumulateGrad, then its post-accumulate-grad hooks), node post-hooks.
"""
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)

pytestmark = pytest.mark.filterwarnings(
    "ignore:The .grad attribute of a Tensor that is not a leaf",
    "ignore:Using backward\\(\\) with create_graph=True")


from conftest import same  # noqa: E402


def tlog(log, tag, ret=None):
    """A tensor hook logging (tag, grad) and returning `ret(grad)` if given."""
    def hook(g):
        log.append((tag, g))
        return None if ret is None else ret(g)
    return hook


def prelog(log, tag, ret=None):
    def hook(grad_outputs):
        log.append((tag, grad_outputs))
        return None if ret is None else ret(grad_outputs)
    return hook


def postlog(log, tag, ret=None):
    def hook(grad_inputs, grad_outputs):
        log.append((tag, grad_inputs, grad_outputs))
        return None if ret is None else ret(grad_inputs, grad_outputs)
    return hook


def acclog(log, tag):
    def hook(t):
        log.append((tag, t.grad))
    return hook


# ---------------------------------------------------------------------------------------
# The order of the six steps, on non-leaves and on leaves (AccumulateGrad)
# ---------------------------------------------------------------------------------------

def test_every_hook_kind_nonleaf_and_leaf_order():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(tlog(log, "y_hook", lambda g: g * 10))
        y.grad_fn.register_prehook(prelog(log, "y_pre", lambda go: (go[0] + 1,)))
        y.grad_fn.register_hook(postlog(log, "y_post"))
        acc = y.grad_fn.next_functions[0][0]
        log.append(("acc name", acc.name(), type(acc).__name__))
        acc.register_prehook(prelog(log, "acc_pre"))
        acc.register_hook(postlog(log, "acc_post"))
        x.register_hook(tlog(log, "x_hook"))
        x.register_post_accumulate_grad_hook(acclog(log, "x_post_acc"))
        (y * y).sum().backward()
        log.append(("y.grad", y.grad, "x.grad", x.grad))
    log = same(f)
    kinds = [e[0] for e in log]
    assert kinds == ["acc name", "y_hook", "y_pre", "y_post", "x_hook", "acc_pre",
                     "x_post_acc", "acc_post", "y.grad"]


def test_retain_grad_runs_after_tensor_hooks_before_prehooks():
    # registration order does not matter: retain_grad always sees the hooked gradient,
    # node pre-hooks come after it (torch 2.13; the mechanics note has them swapped)
    def f(L, log):
        x = L.tensor([1.0, -1.0], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go, y.grad)))
        y.retain_grad()
        y.register_hook(tlog(log, "h1", lambda g: g * 2))
        y.register_hook(tlog(log, "h2", lambda g: g + 1))
        y.sum().backward()
        log.append(("y.grad", y.grad, y.retains_grad, y.is_leaf))
    same(f)


def test_hooks_of_one_kind_run_in_registration_order_and_see_changes():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.sin()
        for i in range(4):
            y.register_hook(tlog(log, f"t{i}", lambda g, i=i: g * (i + 2)))
            y.grad_fn.register_prehook(prelog(log, f"pre{i}", lambda go, i=i: (go[0] - i,)))
            y.grad_fn.register_hook(postlog(log, f"post{i}", lambda gi, go, i=i: (gi[0] + i,)))
            x.register_hook(tlog(log, f"x{i}", lambda g, i=i: g * 0.5 if i % 2 else None))
            x.register_post_accumulate_grad_hook(acclog(log, f"acc{i}"))
        y.sum().backward()
        log.append(("x.grad", x.grad))
    same(f)


def test_node_hooks_on_a_multi_input_multi_output_node():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        c = L.tensor([5.0, 6.0])
        a, b = x.split(2)
        fn = a.grad_fn
        log.append(("same node", fn is b.grad_fn, a.output_nr, b.output_nr, fn.name()))
        a.register_hook(tlog(log, "a"))
        b.register_hook(tlog(log, "b", lambda g: g * 3))
        fn.register_prehook(prelog(log, "split_pre"))
        fn.register_hook(postlog(log, "split_post"))
        m = a * c  # MulBackward0: other does not require grad, its grad_input is None
        m.grad_fn.register_hook(postlog(log, "mul_post"))
        m.grad_fn.register_prehook(prelog(log, "mul_pre"))
        (m.sum() + (b * b).sum()).backward()
        log.append(("x.grad", x.grad))
    same(f)


def test_unused_output_gets_no_tensor_hook_call_but_node_sees_none():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        a, b = x.split(2)
        b.register_hook(tlog(log, "b (unused)"))
        b.retain_grad()
        a.register_hook(tlog(log, "a"))
        a.grad_fn.register_prehook(prelog(log, "pre"))
        a.grad_fn.register_hook(postlog(log, "post"))
        a.sum().backward()
        log.append(("grads", x.grad, b.grad))
    same(f)


def test_tensor_hooks_run_per_tensor_in_order_of_first_registration():
    # torch keeps one hook dict per tensor, registered on the node with the first hook
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        a, b = x.split(2)
        h = a.register_hook(tlog(log, "a1"))
        b.register_hook(tlog(log, "b1"))
        a.register_hook(tlog(log, "a2", lambda g: g * 2))
        b.register_hook(tlog(log, "b2"))
        (a.sum() + b.sum() * 3).backward(retain_graph=True)
        log.append("--- a1 removed")
        h.remove()
        a.register_hook(tlog(log, "a3"))
        (a.sum() + b.sum() * 3).backward()
        log.append(("x.grad", x.grad))
    log = same(f)
    assert [e[0] for e in log[:4]] == ["a1", "a2", "b1", "b2"]


def test_leaf_receiving_none_gradient_runs_its_hooks_with_none():
    # a custom backward returning None for a leaf: AccumulateGrad still runs, and every
    # hook on the way sees None
    def f(L, log):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                return x * w

            @staticmethod
            def backward(ctx, g):
                return None, g
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        y = F.apply(x, w)
        x.register_hook(tlog(log, "x"))
        x.register_post_accumulate_grad_hook(acclog(log, "x_pah"))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(prelog(log, "acc_pre"))
        acc.register_hook(postlog(log, "acc_post"))
        y.grad_fn.register_hook(postlog(log, "F_post"))
        y.sum().backward()
        log.append(("grads", x.grad, w.grad))
    same(f)


def test_hook_replacing_a_none_gradient():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        a, b = x.split(2)
        b.register_hook(lambda g: L.ones(2))
        a.sum().backward()
    log = same(f)
    assert log == [("raised", "RuntimeError",
                    "can't replace a None gradient with a non-None value")]


def test_hook_replacing_gradient_of_leaf_and_nonleaf():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        h.register_hook(tlog(log, "h", lambda g: g * 100))
        x.register_hook(tlog(log, "x", lambda g: -g))
        w.register_hook(tlog(log, "w", lambda g: L.zeros_like(g)))
        h.sum().backward()
        log.append(("grads", x.grad, w.grad))
        h2 = (x * w).sum()
        h2.backward()  # accumulates: the hooks see only the new gradient
        log.append(("grads2", x.grad, w.grad))
    same(f)


def test_prehook_and_posthook_replacing_gradients():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.grad_fn.register_hook(postlog(log, "post1", lambda gi, go: (gi[0] + 1, None)))
        y.grad_fn.register_hook(postlog(log, "post2"))
        y.sum().backward()
        log.append(("grads", x.grad, w.grad))
    same(f)


def test_accumulate_grad_node_hooks_and_post_accumulate_grad_sees_final_grad():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 3).sum() + (x * 4).sum()
        acc = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        log.append(("acc", acc.name(), acc.variable is x))
        acc.register_prehook(prelog(log, "acc_pre", lambda go: (go[0] + 1,)))
        acc.register_hook(postlog(log, "acc_post"))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("pah", t is x, t.grad)))
        x.register_hook(tlog(log, "x"))
        y.backward(retain_graph=True)
        y.backward()
        log.append(("x.grad", x.grad))
    same(f)


def test_post_accumulate_grad_hook_can_modify_grad_in_place():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)

        def hook(t):
            log.append(("pah", t.grad))
            t.grad.mul_(0.5)
        x.register_post_accumulate_grad_hook(hook)
        (x * x).sum().backward()
        log.append(("x.grad", x.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# Handles, errors on registration
# ---------------------------------------------------------------------------------------

def test_removable_handles():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        hs = [y.register_hook(tlog(log, "t1", lambda g: g * 3)),
              y.register_hook(tlog(log, "t2")),
              y.grad_fn.register_prehook(prelog(log, "pre")),
              y.grad_fn.register_hook(postlog(log, "post")),
              x.register_hook(tlog(log, "x")),
              x.register_post_accumulate_grad_hook(acclog(log, "pah"))]
        z = y.sum()
        z.backward(retain_graph=True)
        log.append(("--- remove t1, pre, pah",))
        for i in (0, 2, 5):
            hs[i].remove()
        hs[0].remove()  # removing twice is fine
        z.backward(retain_graph=True)
        log.append(("--- remove the rest",))
        for i in (1, 3, 4):
            hs[i].remove()
        z.backward()
        log.append(("x.grad", x.grad))
        with y.register_hook(tlog(log, "ctx")) as h:
            log.append(("handle is context manager", h is not None))
    same(f)


def test_hooks_added_or_removed_while_running():
    # the hooks to run are fixed when the node starts running them (torch iterates a
    # snapshot): one removed meanwhile still runs, one added meanwhile runs next time
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        handles = {}

        def first(g):
            log.append(("first", g))
            handles["second"].remove()
            if "third" not in handles:
                handles["third"] = y.register_hook(tlog(log, "third"))
                handles["pre"] = y.grad_fn.register_prehook(prelog(log, "late pre"))
        handles["first"] = y.register_hook(first)
        handles["second"] = y.register_hook(tlog(log, "second"))
        y.sum().backward(retain_graph=True)
        log.append("--- again")
        y.sum().backward()
    same(f)


def test_hook_registration_errors():
    def f(L, log):
        a = L.tensor([1.0, 2.0])
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        for call in (lambda: a.register_hook(lambda g: g),
                     lambda: a.register_post_accumulate_grad_hook(lambda t: None),
                     lambda: y.register_post_accumulate_grad_hook(lambda t: None),
                     lambda: a.retain_grad()):
            try:
                call()
                log.append("no error")
            except RuntimeError as e:
                log.append(("RuntimeError", str(e)))
        x.retain_grad()  # no-op on a leaf
        log.append(("leaf retains_grad", x.retains_grad))
    log = same(f)
    assert all(e != "no error" for e in log[:4])


def test_retain_grad_accumulates_and_is_idempotent():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        y.retain_grad()
        z = (y * 3).sum()
        z.backward(retain_graph=True)
        g1 = y.grad
        log.append(("first", y.grad))
        z.backward()
        log.append(("second", y.grad, g1, g1 is y.grad))
    same(f)


def test_hook_on_tensor_with_create_graph_sees_differentiable_grad():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        y.register_hook(tlog(log, "y"))
        x.register_hook(tlog(log, "x"))
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        log.append(("g", g))
        g2, = L.autograd.grad(g.sum(), x)
        log.append(("g2", g2))
    same(f)


# ---------------------------------------------------------------------------------------
# In-place ops: hooks stay with the old grad_fn; retain_grad moves to the new one
# ---------------------------------------------------------------------------------------

def test_hooks_registered_before_inplace_stay_on_old_grad_fn():
    def f(L, log):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        t = x.sin()
        old = t.grad_fn
        t.register_hook(tlog(log, "old", lambda g: g * 2))
        t.retain_grad()
        t.mul_(3)
        log.append(("grad_fn changed", t.grad_fn is not old, t.grad_fn.name(), t._version))
        t.register_hook(tlog(log, "new", lambda g: g + 1))
        t.cos_()
        t.register_hook(tlog(log, "newest"))
        t.sum().backward()
        log.append(("grads", x.grad, t.grad))
    same(f)


def test_retain_grad_before_inplace_reports_grad_of_new_version():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = x * 1
        z.retain_grad()
        z.mul_(3)
        z.sum().backward()
        log.append(("z.grad", z.grad, z.retains_grad, x.grad))
    same(f)


def test_hooks_on_leaf_then_inplace_on_view_of_nonleaf():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 2
        b.register_hook(tlog(log, "b_old"))
        v = b[1:]
        v.mul_(10)
        b.register_hook(tlog(log, "b_new"))
        b.sum().backward()
        log.append(("x.grad", x.grad, b.grad_fn.name()))
    same(f)


# ---------------------------------------------------------------------------------------
# Which hooks fire under autograd.grad(inputs) and backward(inputs=...)
# ---------------------------------------------------------------------------------------

def _graph(L, log):
    """x -> a -> b -> loss, and w -> b; every tensor and node logs."""
    x = L.tensor([1.0, 2.0], requires_grad=True)
    w = L.tensor([3.0, 4.0], requires_grad=True)
    a = x * 3
    b = a * w
    loss = (b * b).sum()
    for name, t in (("x", x), ("w", w), ("a", a), ("b", b)):
        t.register_hook(tlog(log, name, lambda g: g * 2))
    for name, t in (("x", x), ("w", w)):
        t.register_post_accumulate_grad_hook(acclog(log, name + "_pah"))
    for name, t in (("a", a), ("b", b)):
        t.grad_fn.register_prehook(prelog(log, name + "_pre"))
        t.grad_fn.register_hook(postlog(log, name + "_post"))
    for name, t in (("x", x), ("w", w)):
        acc = L.autograd.graph.get_gradient_edge(t).node
        acc.register_prehook(prelog(log, name + "_acc_pre"))
        acc.register_hook(postlog(log, name + "_acc_post"))
    return x, w, a, b, loss


@pytest.mark.parametrize("which", ["x", "w", "a", "b", "xa", "ax", "xw", "ab"])
def test_autograd_grad_inputs_hooks(which):
    def f(L, log):
        x, w, a, b, loss = _graph(L, log)
        a.retain_grad()
        ts = {"x": x, "w": w, "a": a, "b": b}
        gs = L.autograd.grad(loss, [ts[c] for c in which], retain_graph=True)
        log.append(("grads", gs, "leaf grads", x.grad, w.grad, "a.grad", a.grad))
        gs = L.autograd.grad(loss, [ts[c] for c in which])
        log.append(("again", gs))
    same(f)


@pytest.mark.parametrize("which", ["x", "w", "a", "b", "xa", "xw", "ab"])
def test_backward_inputs_hooks(which):
    def f(L, log):
        x, w, a, b, loss = _graph(L, log)
        ts = {"x": x, "w": w, "a": a, "b": b}
        loss.backward(inputs=[ts[c] for c in which])
        log.append(("grads", x.grad, w.grad, a.grad, b.grad, a.retains_grad, b.retains_grad))
    same(f)


def test_full_backward_of_the_same_graph():
    def f(L, log):
        x, w, a, b, loss = _graph(L, log)
        b.retain_grad()
        loss.backward()
        log.append(("grads", x.grad, w.grad, b.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# register_multi_grad_hook
# ---------------------------------------------------------------------------------------

def _multi(L, log, mode):
    a = L.tensor([1.0, 2.0], requires_grad=True)
    b = L.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    d = a * b
    e = L.tensor([5.0], requires_grad=True)  # never used in the graphs below
    for n, t in (("a", a), ("b", b), ("c", c), ("d", d)):
        t.register_hook(tlog(log, n))

    if mode == "all":
        def fn(grads):
            log.append(("multi", grads))
    else:
        def fn(grad):
            log.append(("multi", grad))
    h = L.autograd.graph.register_multi_grad_hook((a, b, c, d, e), fn, mode=mode)
    return a, b, c, d, e, h


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook(mode):
    def f(L, log):
        a, b, c, d, e, h = _multi(L, log, mode)
        log.append("--- c.sum().backward()")
        c.sum().backward(retain_graph=True)
        log.append("--- inputs=(a,)")
        c.sum().backward(inputs=(a,), retain_graph=True)
        log.append("--- both roots")
        (c.sum() * 2 + d.sum()).backward(retain_graph=True)
        log.append("--- autograd.grad wrt (b, d)")
        gs = L.autograd.grad((c + d).sum(), (b, d), retain_graph=True)
        log.append(("grad", gs))
        log.append("--- autograd.grad wrt d")
        L.autograd.grad(d.sum(), d, retain_graph=True)
        log.append("--- removed")
        h.remove()
        (c + d).sum().backward()
        log.append(("grads", a.grad, b.grad))
    same(f)


def test_multi_grad_hook_errors():
    def f(L, log):
        a = L.tensor([1.0], requires_grad=True)
        n = L.tensor([1.0])
        for kw in ({"mode": "some"}, {"mode": "all"}):
            try:
                L.autograd.graph.register_multi_grad_hook((a, n), lambda g: None, **kw)
                log.append(("ok", kw))
            except (ValueError, AssertionError) as err:
                log.append((type(err).__name__, str(err)))
        # "any" ignores tensors that do not require grad
        L.autograd.graph.register_multi_grad_hook((n, a), tlog(log, "any"), mode="any")
        (a * 2).sum().backward()
    log = same(f)
    assert [e[0] for e in log] == ["ValueError", "AssertionError", "any"]


def test_multi_grad_hook_all_with_nonleaf_captured_by_autograd_grad():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = y * 2
        L.autograd.graph.register_multi_grad_hook((x, y, z), lambda gs: log.append(("m", gs)))
        log.append(L.autograd.grad(z.sum(), y, retain_graph=True))
        log.append(L.autograd.grad(z.sum(), [x, z], retain_graph=True))
        z.sum().backward()
        log.append(x.grad)
    same(f)


# ---------------------------------------------------------------------------------------
# Bad hook results: torch's exception types and phrases
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("bad", ["shape", "dtype", "type"])
def test_tensor_hook_returning_bad_gradient(bad, leaf):
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        t = x if leaf else y

        def named_hook(g):
            if bad == "shape":
                return L.ones(3)
            if bad == "dtype":
                return g.double()
            return 3
        t.register_hook(named_hook)
        y.sum().backward()
        log.append(("no error", x.grad))
    log = same(f)
    assert log[0][0] == "raised"
    phrase = {"shape": "has changed the size of value",
              "dtype": "has changed the type of value",
              "type": "expected Variable, but hook returned 'int'"}[bad]
    assert phrase in log[0][2]


@pytest.mark.parametrize("bad", ["shape", "count", "dtype"])
def test_node_hooks_returning_bad_gradients(bad):
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        if bad == "shape":
            y.grad_fn.register_hook(lambda gi, go: (L.ones(3), gi[1]))
        elif bad == "count":
            y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        else:
            y.grad_fn.register_hook(lambda gi, go: (gi[0].double(), gi[1]))
        y.sum().backward()
        log.append(("result", x.grad, w.grad))
    same(f)


@pytest.mark.parametrize("bad", ["list", "count", "shape", "dtype", "none_to_value"])
def test_prehook_returning_bad_gradients(bad):
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        a, b = x.split(2)
        ret = {"list": lambda go: [go[0], go[1]],
               "count": lambda go: (go[0],),
               "shape": lambda go: (L.ones(3), go[1]),
               "dtype": lambda go: (go[0].double(), go[1]),
               "none_to_value": lambda go: (go[0], L.ones(2))}[bad]
        a.grad_fn.register_prehook(ret)
        a.sum().backward()
        log.append(("result", x.grad))
    log = same(f)
    assert log[0][0] == "raised"


def test_posthook_replacing_none_grad_input():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * L.tensor([3.0, 4.0])
        y.grad_fn.register_hook(lambda gi, go: (gi[0], L.ones(2)))
        y.sum().backward()
    log = same(f)
    assert log[0][0] == "raised"


def test_hook_returning_its_argument_or_none_changes_nothing():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g)
        y.grad_fn.register_prehook(lambda go: go)
        y.grad_fn.register_hook(lambda gi, go: gi)
        y.grad_fn.register_hook(lambda gi, go: None)
        y.sum().backward()
        log.append(("x.grad", x.grad))
    same(f)


def test_prehooks_on_consecutive_nodes_compose():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y.sum()
        z.grad_fn.register_prehook(lambda go: (L.ones(()) * 5,))
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        z.backward()
        log.append(("x.grad", x.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# Module-independent Node, GradientEdge, get_gradient_edge, increment_version
# ---------------------------------------------------------------------------------------

def test_node_interface_is_module_independent():
    def f(L, log):
        Node = L.autograd.graph.Node
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).exp()
        acc = L.autograd.graph.get_gradient_edge(x).node
        log.append(("isinstance", isinstance(y.grad_fn, Node), isinstance(acc, Node),
                    isinstance(x, Node), isinstance(None, Node)))
        log.append(("names", y.grad_fn.name(), acc.name(),
                    [n.name() if n is not None else None for n, _ in y.grad_fn.next_functions]))
        y.grad_fn.metadata["k"] = 1
        log.append(("metadata", y.grad_fn.metadata))
        log.append(("seq", y.grad_fn._sequence_nr() > y.grad_fn.next_functions[0][0]
                    ._sequence_nr()))
    same(f)


def test_get_gradient_edge_and_grad_wrt_edges():
    def f(L, log):
        G = L.autograd.graph
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = (x * 3).split(1)
        ea, eb, ex = G.get_gradient_edge(a), G.get_gradient_edge(b), G.get_gradient_edge(x)
        log.append(("edges", ea.node is a.grad_fn, ea.output_nr, eb.output_nr,
                    ex.node.name(), ex.output_nr, ex.node is G.get_gradient_edge(x).node,
                    isinstance(ea, tuple), type(ea).__name__, len(ea), ea[:2] == (ea.node, 0)))
        loss = (a * a + b).sum()
        log.append(("grad wrt edges", L.autograd.grad(loss, (eb, ex), retain_graph=True)))
        log.append(("grad wrt edge of output", L.autograd.grad(loss, (ea,))))
        try:
            G.get_gradient_edge(L.ones(2))
        except RuntimeError as e:
            log.append(("err", str(e)))
    same(f)


def test_increment_version():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y.exp() * y
        v = y._version
        L.autograd.graph.increment_version(y)
        log.append(("version", y._version - v))
        L.autograd.graph.increment_version([y, x])
        log.append(("versions", y._version - v, x._version))
        z.sum().backward()
    log = same(f)
    assert log[-1][0] == "raised" and "modified by an inplace operation" in log[-1][2]


# ---------------------------------------------------------------------------------------
# Errors in hooks: propagate unchanged; the graph stays usable with retain_graph=True
# ---------------------------------------------------------------------------------------

class HookError(Exception):
    pass


@pytest.mark.parametrize("where", ["tensor", "prehook", "posthook", "leaf", "post_acc"])
def test_error_in_hook_propagates_and_graph_is_reusable(where):
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = (y * 3).sum()
        err = HookError("boom")
        state = {"fail": True}

        def bad(*args):
            log.append(("hook", where))
            if state["fail"]:
                raise err
        h = {"tensor": lambda: y.register_hook(bad),
             "prehook": lambda: y.grad_fn.register_prehook(bad),
             "posthook": lambda: y.grad_fn.register_hook(bad),
             "leaf": lambda: x.register_hook(bad),
             "post_acc": lambda: x.register_post_accumulate_grad_hook(bad)}[where]()
        try:
            z.backward(retain_graph=True)
        except HookError as e:
            log.append(("caught same object", e is err, str(e)))
        log.append(("x.grad after error", x.grad))
        state["fail"] = False
        z.backward(retain_graph=True)
        h.remove()
        z.backward()
        log.append(("x.grad", x.grad))
    same(f)
