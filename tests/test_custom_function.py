"""Custom autograd.Function, differentially against torch: every scenario defines the
same Function with torch and with eagergrad, logs what forward/backward see (ctx
state, gradients, grad mode) and what comes out, and the two logs must be equal.
Last, Functions whose forward/backward are jax kernels, checked against jax.grad."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True",
    "ignore:The .grad attribute of a Tensor that is not a leaf")


import conftest  # noqa: E402
from conftest import attempt  # noqa: E402

same = functools.partial(conftest.same, quiet=True)


def once(L):
    import importlib
    return importlib.import_module(L.__name__ + ".autograd.function").once_differentiable


# ---------------------------------------------------------------------------------------
# forward/backward, setup_context, apply, node names, grad mode inside
# ---------------------------------------------------------------------------------------

def test_forward_backward_save_for_backward_and_node():
    def f(L, log):
        class MulAdd(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, b):
                log.append(("fwd grad mode", L.is_grad_enabled(), ctx.needs_input_grad))
                ctx.save_for_backward(x, w)
                y = x * w + b
                log.append(("inside forward", y.requires_grad, y.grad_fn is None))
                return y

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                log.append(("bwd", L.is_grad_enabled(), g, x, w, ctx.needs_input_grad))
                return g * w, g * x, g

        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        b = L.tensor([0.5, 0.5])
        y = MulAdd.apply(x, w, b)
        fn = y.grad_fn
        log.append(("node", fn.name(), type(fn).__name__, y.requires_grad, y.is_leaf,
                    isinstance(fn, L.autograd.graph.Node),
                    [None if n is None else n.name() for n, _ in fn.next_functions]))
        (y * y).sum().backward()
        log.append(("grads", x.grad, w.grad, b.grad))
    same(f)


def test_setup_context_style():
    def f(L, log):
        class Mul(L.autograd.Function):
            @staticmethod
            def forward(x, y, scale):
                log.append(("forward", L.is_grad_enabled()))
                return x * y * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, scale = inputs
                log.append(("setup_context", output, scale, ctx.needs_input_grad))
                ctx.save_for_backward(x, y, output)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                x, y, out = ctx.saved_tensors
                log.append(("backward", out, out.grad_fn is None))
                return g * y * ctx.scale, g * x * ctx.scale, None

        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        r = Mul.apply(x, y, 2.0)
        log.append(("out", r, r.grad_fn.name()))
        r.sum().backward()
        log.append(("grads", x.grad, y.grad))
    same(f)


def test_non_tensor_inputs_and_outputs():
    def f(L, log):
        class Mixed(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, name, items, flag, none):
                ctx.k = k
                log.append(("fwd", k, name, len(items), flag, none, ctx.needs_input_grad))
                return x * k, name + "!", None, 3, items[0] * 2

            @staticmethod
            def backward(ctx, g, g_s, g_none, g_int, g_item):
                log.append(("bwd", g, g_s, g_none, g_int, g_item))
                return g * ctx.k, None, None, None, None, None

        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([5.0], requires_grad=True)  # inside a list: not an input
        a, s, n, i, t = Mixed.apply(x, 3.0, "s", [z], True, None)
        log.append(("outs", a, s, n, i, t, t.requires_grad))
        a.sum().backward()
        log.append(("grads", x.grad, z.grad))
    same(f)


def test_needs_input_grad_and_none_gradients():
    def f(L, log):
        class Three(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c, k):
                log.append(("needs", ctx.needs_input_grad))
                return a + b * 2 + c * 3

            @staticmethod
            def backward(ctx, g):
                log.append(("needs in bwd", ctx.needs_input_grad))
                return (g if ctx.needs_input_grad[0] else None, None,
                        g * 3 if ctx.needs_input_grad[2] else None, None)

        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([1.0], requires_grad=True)
        c = L.tensor([1.0])
        Three.apply(a, b, c, 1).sum().backward()
        log.append(("grads", a.grad, b.grad, c.grad))
        c.requires_grad_()
        Three.apply(a.detach(), b, c, 1).sum().backward()
        log.append(("grads", a.grad, b.grad, c.grad))
        r = Three.apply(a.detach(), b.detach(), c.detach(), 1)
        log.append(("no input requires grad", r.requires_grad, r.grad_fn))
        with L.no_grad():
            r = Three.apply(a, b, c, 1)
        log.append(("no_grad", r.requires_grad, r.grad_fn))
    same(f)


def test_returning_extra_none_gradients_and_wrong_count():
    def f(L, log):
        class Extra(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None

        class TooMany(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, g

        class TooFew(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g

        x = L.tensor([1.0, 2.0], requires_grad=True)
        Extra.apply(x).sum().backward()
        log.append(("extra Nones are fine", x.grad))
        attempt(log, "too many", lambda: TooMany.apply(x).sum().backward())
        attempt(log, "too few", lambda: TooFew.apply(x, x).sum().backward())
    log = same(f)
    assert [e[1] for e in log[1:]] == ["RuntimeError", "RuntimeError"]
    assert "returned an incorrect number of gradients (expected 1, got 2)" in log[1][2]


@pytest.mark.parametrize("bad", ["shape", "broadcast", "dtype", "non_tensor", "complex"])
def test_backward_returning_bad_gradients(bad):
    def f(L, log):
        class Bad(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return {"shape": lambda: L.ones(5),
                        "broadcast": lambda: L.ones(3, 2),   # summed to [2]
                        "dtype": lambda: g.double() * 2,     # cast back to float32
                        "non_tensor": lambda: 3,
                        "complex": lambda: L.ones(2, dtype=L.complex64)}[bad]()

        x = L.tensor([1.0, 2.0], requires_grad=True)
        Bad.apply(x).sum().backward()
        log.append(("x.grad", x.grad))
    log = same(f)
    if bad in ("shape", "non_tensor"):
        assert log[0][0] == "raised"


def test_backward_error_propagates_unchanged():
    class Boom(Exception):
        pass

    def f(L, log):
        err = Boom("from backward")

        class Failing(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise err

        x = L.tensor([1.0], requires_grad=True)
        y = Failing.apply(x).exp()
        try:
            y.backward(retain_graph=True)
        except Boom as e:
            log.append(("same object", e is err))
    same(f)


# ---------------------------------------------------------------------------------------
# save_for_backward / saved_tensors
# ---------------------------------------------------------------------------------------

def test_saved_tensors_kinds_and_identity():
    def f(L, log):
        class Saver(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, c):
                mid = x * 3
                out = mid.sin()
                ctx.save_for_backward(x, c, None, mid, out)
                return out

            @staticmethod
            def backward(ctx, g):
                x, c, n, mid, out = ctx.saved_tensors
                log.append(("saved", x is inp, c is const, n, mid.requires_grad,
                            out.requires_grad, out.grad_fn is not None, out))
                return g * mid.cos() * 3, None

        inp = L.tensor([0.5, 1.0], requires_grad=True)
        const = L.tensor([2.0])
        Saver.apply(inp, const).sum().backward()
        log.append(("grad", inp.grad))
    same(f)


def test_save_for_backward_non_tensor_is_a_type_error():
    def f(L, log):
        class SaveInt(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        SaveInt.apply(L.tensor([1.0], requires_grad=True))
    log = same(f)
    assert log[0][:2] == ("raised", "TypeError")


@pytest.mark.parametrize("which", ["input", "output"])
def test_saved_tensors_are_version_checked(which):
    def f(L, log):
        class Square(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * x
                ctx.save_for_backward(x if which == "input" else y)
                return y

            @staticmethod
            def backward(ctx, g):
                s, = ctx.saved_tensors
                return 2 * g * (s if which == "input" else s.sqrt())

        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = Square.apply(a)
        z = y * 1
        (a if which == "input" else y).add_(1)
        log.append(("versions", a._version, y._version))
        z.sum().backward()
    log = same(f)
    assert log[-1][:2] == ("raised", "RuntimeError")
    assert "modified by an inplace operation" in log[-1][2]


def test_saved_tensors_after_free_and_retain_graph():
    def f(L, log):
        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x ** 2 * g

        x = L.tensor([2.0], requires_grad=True)
        y = Cube.apply(x)
        y.backward(retain_graph=True)
        log.append(("saved after retained backward", y.grad_fn.saved_tensors))
        y.backward()
        log.append(("grad", x.grad))
        attempt(log, "saved_tensors after free", lambda: y.grad_fn.saved_tensors)
        attempt(log, "backward again", lambda: y.backward())
    log = same(f)
    assert log[-2][1] == log[-1][1] == "RuntimeError"


# ---------------------------------------------------------------------------------------
# mark_dirty, mark_non_differentiable, set_materialize_grads, inputs returned as is
# ---------------------------------------------------------------------------------------

def test_mark_dirty():
    def f(L, log):
        class Double_(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x.clone()
        old = a.grad_fn
        o = Double_.apply(a)
        log.append(("dirty", o is a, a.grad_fn.name(), a._version, a.grad_fn is not old,
                    [n.name() for n, _ in o.grad_fn.next_functions], a))
        (o * o).sum().backward()
        log.append(("grad", x.grad))
    same(f)


def test_mark_dirty_problems():
    def f(L, log):
        class DirtyNotModified(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class DirtyNotReturned(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g

        class Dirty(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = L.tensor([1.0, 2.0], requires_grad=True)
        for F in (DirtyNotModified, DirtyNotReturned):
            a = x.clone()
            attempt(log, F.__name__, lambda: (F.apply(a), a._version, a.grad_fn.name())[1:])
            log.append(("version", a._version))
        attempt(log, "leaf requiring grad", lambda: Dirty.apply(x))
        log.append(("version", x._version, x))
        leaf = L.tensor([1.0, 2.0])
        attempt(log, "leaf not requiring grad",
                lambda: (Dirty.apply(leaf), leaf, leaf.requires_grad, leaf._version)[1:])
        with L.no_grad():
            attempt(log, "leaf under no_grad", lambda: (Dirty.apply(x), x._version)[1:])
    same(f)


def test_mark_non_differentiable_and_materialized_grads():
    def f(L, log):
        class SortLike(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = L.tensor([1, 0])
                mask = x > 1.5
                vals = x * 2
                half = x * 0.5
                ctx.mark_non_differentiable(idx, mask, half)
                return vals, idx, mask, half

            @staticmethod
            def backward(ctx, g_vals, g_idx, g_mask, g_half):
                log.append(("bwd", g_vals, g_idx, g_mask, g_half))
                return g_vals * 2

        x = L.tensor([1.0, 2.0], requires_grad=True)
        vals, idx, mask, half = SortLike.apply(x)
        log.append(("rg", vals.requires_grad, idx.requires_grad, mask.requires_grad,
                    half.requires_grad, half.grad_fn))
        (vals * L.tensor([1.0, 10.0])).sum().backward()
        log.append(("grad", x.grad))
    same(f)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    def f(L, log):
        class Two(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                log.append(("bwd", g1, g2))
                out = None
                for g, k in ((g1, 2), (g2, 3)):
                    if g is not None:
                        out = g * k if out is None else out + g * k
                return out

        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = Two.apply(x)
        b.sum().backward()
        log.append(("grad", x.grad))
        a, b = Two.apply(x)
        (a.sum() + b.sum()).backward()
        log.append(("grad", x.grad))
    same(f)


def test_input_returned_as_is_becomes_a_view():
    def f(L, log):
        class Ident(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y * 2

            @staticmethod
            def backward(ctx, g1, g2):
                log.append(("bwd", g1, g2))
                return g1 * 5, g2 * 2

        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        o, p = Ident.apply(a, x)
        log.append(("ident", o is a, o._is_view(), o._base is a, o.grad_fn.name(),
                    a._version))
        (o * p).sum().backward()
        log.append(("grad", x.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# Double backward, once_differentiable, hooks on custom nodes
# ---------------------------------------------------------------------------------------

def test_double_and_triple_backward():
    def f(L, log):
        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                log.append(("cube bwd", L.is_grad_enabled(), x.requires_grad, g.requires_grad))
                return 3 * x ** 2 * g

        class Exp(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                log.append(("exp bwd", y.requires_grad, y.grad_fn is not None))
                return g * y

        z = L.tensor([2.0, -1.0], requires_grad=True)
        y = Exp.apply(Cube.apply(z))
        g1, = L.autograd.grad(y.sum(), z, create_graph=True)
        log.append(("g1", g1, g1.grad_fn is not None))
        g2, = L.autograd.grad(g1.sum(), z, create_graph=True)
        log.append(("g2", g2))
        g3, = L.autograd.grad(g2.sum(), z)
        log.append(("g3", g3))
        w = L.tensor([2.0], requires_grad=True)
        Cube.apply(w).backward(create_graph=True)
        log.append(("w.grad", w.grad, w.grad.requires_grad))
        w.grad.backward()
        log.append(("w.grad after", w.grad))
    same(f)


def test_double_backward_through_saved_second_output():
    def f(L, log):
        class SinCos(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                s, c = x.sin(), x.cos()
                ctx.save_for_backward(s, c)
                return s, c

            @staticmethod
            def backward(ctx, gs, gc):
                s, c = ctx.saved_tensors
                return gs * c - gc * s

        x = L.tensor([0.3, 1.2], requires_grad=True)
        s, c = SinCos.apply(x)
        g, = L.autograd.grad((s * 2 + c).sum(), x, create_graph=True)
        log.append(("g", g))
        g2, = L.autograd.grad(g.sum(), x)
        log.append(("g2", g2))
    same(f)


def test_once_differentiable():
    def f(L, log):
        class Once(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @once(L)
            def backward(ctx, g):
                x, = ctx.saved_tensors
                log.append(("bwd", L.is_grad_enabled(), g.requires_grad))
                return 2 * x * g

        x = L.tensor([1.0, 2.0], requires_grad=True)
        Once.apply(x).sum().backward()
        log.append(("grad", x.grad))
        g, = L.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
        log.append(("seed not requiring grad", g, g.grad_fn))
        v = L.ones(2, requires_grad=True)
        g, = L.autograd.grad(Once.apply(x), x, grad_outputs=v, create_graph=True)
        log.append(("create_graph", g, g.is_leaf, g.grad_fn.name(),
                    [n.name() for n, _ in g.grad_fn.next_functions]))
        attempt(log, "double backward", lambda: g.sum().backward())
        log.append(("v.grad", v.grad))
    log = same(f)
    assert log[-2] == ("double backward", "RuntimeError", "trying to differentiate twice a "
                       "function that was marked with @once_differentiable")


def test_hooks_on_custom_function_nodes_and_outputs():
    def f(L, log):
        class Lin(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w, x + w

            @staticmethod
            def backward(ctx, g1, g2):
                x, w = ctx.saved_tensors
                log.append(("bwd", g1, g2))
                return g1 * w + g2, g1 * x + g2

        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        p, s = Lin.apply(x, w)
        fn = p.grad_fn
        s.register_hook(lambda g: (log.append(("s hook", g)), g * 10)[1])
        p.register_hook(lambda g: log.append(("p hook", g)))
        s.retain_grad()
        fn.register_prehook(lambda go: (log.append(("pre", go)), (go[0], go[1] + 1))[1])
        fn.register_hook(lambda gi, go: (log.append(("post", gi, go)), (gi[0], None))[1])
        (p.sum() + s.sum()).backward()
        log.append(("grads", x.grad, w.grad, s.grad))
        # under autograd.grad a custom node computes all its outputs (no pruning)
        p, s = Lin.apply(x, w)
        p.grad_fn.register_hook(lambda gi, go: log.append(("post2", gi)))
        log.append(("grad x", L.autograd.grad(p.sum(), x)))
    same(f)


def test_custom_function_in_chain_with_builtin_ops_and_inplace_after():
    def f(L, log):
        class Scale(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                log.append(("scale bwd", g))
                return g * ctx.k, None

        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = Scale.apply(x.exp(), 2.0)
        y[1:].mul_(3)  # in place on a view of the custom output
        log.append(("y", y, y.grad_fn.name()))
        (y * y).sum().backward()
        log.append(("grad", x.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# jax kernels inside a Function (eagergrad only), against jax.grad and torch
# ---------------------------------------------------------------------------------------

class JaxSlogdet(eg.autograd.Function):
    """log|det A| by jax.numpy.linalg.slogdet; backward by the kernel's vjp, in torch's
    convention: grad = conj(vjp(conj(grad_output)))."""

    @staticmethod
    def forward(ctx, a):
        (sign, logabs), vjp = jax.vjp(lambda m: tuple(jnp.linalg.slogdet(m)), a.data.jax())
        ctx.vjp, ctx.sign = vjp, sign
        return eg.from_jax(logabs)

    @staticmethod
    def backward(ctx, g):
        ga, = ctx.vjp((jnp.zeros_like(ctx.sign), jnp.conj(g.jax())))
        return eg.from_jax(jnp.conj(ga))


class JaxCumprod(eg.autograd.Function):
    """A cumulative product by jax.lax.scan (setup_context style)."""

    @staticmethod
    def forward(x):
        def step(c, v):
            c = c * v
            return c, c
        return eg.from_jax(jax.lax.scan(step, jnp.ones((), x.jax().dtype), x.jax())[1])

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors

        def f(v):
            return jax.lax.scan(lambda c, e: (c * e, c * e), jnp.ones((), v.dtype), v)[1]
        _, vjp = jax.vjp(f, x.jax())
        gx, = vjp(jnp.conj(g.jax()))
        return eg.from_jax(jnp.conj(gx))


def test_jax_slogdet_kernel_in_a_function_complex():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    x = eg.tensor(a, requires_grad=True)
    y = JaxSlogdet.apply(x)
    assert y.grad_fn.name() == "JaxSlogdetBackward" and y.dtype == eg.float64
    (y * 2).backward()
    jax_grad = jax.grad(lambda m: 2 * jnp.linalg.slogdet(m)[1])(jnp.asarray(a))
    np.testing.assert_allclose(x.grad.numpy(), np.conj(np.asarray(jax_grad)), rtol=1e-10)
    t = torch.tensor(a, requires_grad=True)
    (torch.linalg.slogdet(t)[1] * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    # and it composes with eagergrad ops around it
    x.grad = None
    (JaxSlogdet.apply(x * (1 + 1j)).exp()).backward()
    t.grad = None
    torch.linalg.slogdet(t * (1 + 1j))[1].exp().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_jax_scan_kernel_in_a_function_complex():
    rng = np.random.default_rng(1)
    z = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    x = eg.tensor(z, requires_grad=True)
    y = JaxCumprod.apply(x)
    loss = (y.abs() ** 2).sum()
    loss.backward()

    def jloss(v):
        c = jax.lax.scan(lambda c, e: (c * e, c * e), jnp.ones((), v.dtype), v)[1]
        return (jnp.abs(c) ** 2).sum()
    jax_grad = jax.grad(jloss)(jnp.asarray(z))
    np.testing.assert_allclose(x.grad.numpy(), np.conj(np.asarray(jax_grad)), rtol=1e-10)
    t = torch.tensor(z, requires_grad=True)
    (torch.cumprod(t, 0).abs() ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(float(loss), float(jloss(jnp.asarray(z))), rtol=1e-12)
