"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) and
autograd.grad(is_grads_batched=True), compared with real torch."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import attempt, same

import eagergrad as eg
from eagergrad.engine import engine as _engine

pytestmark = pytest.mark.slow  # (jacobians and hessians by every strategy, three runs each)


def _xs(L):
    x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64)
    y = L.tensor([[1.5, 0.25], [-0.5, 1.0]], dtype=L.float64)
    return x, y


def _f1(x):  # one input, one output
    return (x.sin() * x ** 2).cumsum(0)


def _f2(x, y):  # two inputs, two outputs (the second does not use y)
    return (x[:2] * y).tanh() @ y, (x.exp() * 2).sum()


def _s2(x, y):  # scalar of two inputs
    return (x[:2] @ y).pow(2).sum() + (x * x.cos()).sum() * y.sum()


def test_vjp_jvp_tuple_conventions_and_create_graph():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        v2 = (L.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=L.float64),
              L.tensor(1.5, dtype=L.float64))
        log.append(F.vjp(_f1, x, L.tensor([1.0, 2.0, -1.0], dtype=L.float64)))
        log.append(F.vjp(_f2, (x, y), v2))
        log.append(F.vjp(lambda a: (a ** 3).sum(), x))             # v=None, scalar output
        log.append(F.vjp(lambda a, b: a.sum() * 2, (x, y), L.tensor(1.0, dtype=L.float64)))
        log.append(F.jvp(_f1, x, L.tensor([1.0, 0.5, -1.0], dtype=L.float64)))
        log.append(F.jvp(_f2, (x, y), (L.ones(3, dtype=L.float64), y * 0.5)))
        log.append(F.jvp(lambda a: a.exp() * 3, L.tensor([0.3], dtype=L.float64)))  # v=None
        log.append(F.jvp(lambda a: (a, a * 2), [x], [L.ones(3, dtype=L.float64)]))  # lists
        # create_graph=True: results are differentiable (to the inputs and to v)
        xr = x.clone().requires_grad_()
        v = L.tensor([1.0, 2.0, -1.0], dtype=L.float64, requires_grad=True)
        out, vj = F.vjp(_f1, xr, v, create_graph=True)
        log.append((out, vj))
        (vj.pow(2).sum() + out.sum()).backward()
        log.append((xr.grad, v.grad))
        xr.grad = None
        out, jv = F.jvp(_f1, xr, v, create_graph=True)
        log.append((out, jv))
        jv.sin().sum().backward()
        log.append((xr.grad, v.grad))
    same(f)


def test_jacobian_reverse_mode_loop_and_vectorized():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        for vec in (False, True):
            log.append(F.jacobian(_f1, x, vectorize=vec))
            log.append(F.jacobian(_f2, (x, y), vectorize=vec))
            log.append(F.jacobian(lambda a: (a * 2,), x, vectorize=vec))
            log.append(F.jacobian(lambda a, b: a.sum() * b, (x[0], y), vectorize=vec))
            log.append(F.jacobian(lambda a: L.ones(2, dtype=L.float64), x, vectorize=vec))
            log.append(F.jacobian(lambda a, b: (a * 2, b.sum()), (x, y), vectorize=vec))
            xr = x.clone().requires_grad_()
            j = F.jacobian(_f2, (xr, y), create_graph=True, vectorize=vec)
            log.append(j)
            (j[0][0].pow(2).sum() + j[1][0].sum()).backward()
            log.append(xr.grad)
    same(f)


def test_jacobian_forward_mode():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        log.append(F.jacobian(_f1, x, vectorize=True, strategy="forward-mode"))
        log.append(F.jacobian(_f2, (x, y), vectorize=True, strategy="forward-mode"))
        log.append(F.jacobian(lambda a, b: (a @ b).sum(), (x[:2], y), vectorize=True,
                              strategy="forward-mode"))
        log.append(F.jacobian(lambda a: (a.sin(), (a > 0).long(), a.argmax()), x,
                              vectorize=True, strategy="forward-mode"))  # integer outputs
        z = L.tensor([1 + 2j, -0.5 + 1j], dtype=L.complex128)
        log.append(F.jacobian(lambda a: a * a + a.exp(), z, vectorize=True,
                              strategy="forward-mode"))
        log.append(F.jacobian(lambda a: (a.abs(), a * 1j, (a * a.real).sum()), z,
                              vectorize=True, strategy="forward-mode"))
    same(f)


def test_hessian_strategies_and_create_graph():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        def s3(a, b):  # (torch's forward-over-reverse fails on _s2's a[:2])
            return (a.sum() * b).pow(2).sum() + (a * a.cos()).sum() * b.sum()

        log.append(F.hessian(lambda a: (a.sin() * a ** 3).sum(), x))
        log.append(F.hessian(_s2, (x, y), vectorize=True))
        # forward-over-reverse: torch's results carry a grad_fn of its internal graph
        # (ReshapeAliasBackward0, of the requires_grad_ dual inputs); eagergrad's do not
        h = F.hessian(lambda a: (a.sin() * a ** 3).sum(), x, vectorize=True,
                      outer_jacobian_strategy="forward-mode")
        log.append(h.detach())
        h = F.hessian(s3, (x, y), vectorize=True, outer_jacobian_strategy="forward-mode")
        log.append([[t.detach() for t in row] for row in h])
        xr = x.clone().requires_grad_()
        h = F.hessian(lambda a: (a.sin() * a ** 3).sum(), xr, create_graph=True)
        h.diagonal().sum().backward()
        log.append((h.detach(), xr.grad))
    same(f)


def test_vhp_hvp_hessians_tutorial_patterns():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        v = L.tensor([1.0, -1.0, 0.5], dtype=L.float64)

        def pow_reducer(a):  # the autograd.functional docs' examples
            return a.pow(3).sum()

        def pow_adder_reducer(a, b):
            return (2 * a.pow(2) + 3 * b.pow(2)).sum()

        log.append(F.vhp(pow_reducer, x, v))
        log.append(F.hvp(pow_reducer, x, v))
        vs = (L.ones(3, dtype=L.float64), L.ones(2, 2, dtype=L.float64) * 2)
        log.append(F.vhp(pow_adder_reducer, (x, y), vs))
        log.append(F.hvp(pow_adder_reducer, (x, y), vs))
        log.append(F.hvp(_s2, (x, y), vs))
        log.append(F.vhp(_s2, (x, y), vs))
        log.append(F.hvp(lambda a: a.exp().sum(), L.tensor([0.3], dtype=L.float64)))  # v=None
        # the torch.func hessians tutorial's model, through autograd.functional
        wt = L.tensor([[0.5, -1.0, 0.25], [1.5, 0.5, -0.75]], dtype=L.float64)
        b = L.tensor([0.1, -0.2], dtype=L.float64)

        def predict(weight, bias, inp):
            return L.nn.functional.linear(inp, weight, bias).tanh()

        loss = lambda weight: predict(weight, b, x).pow(2).sum()
        log.append(F.hessian(loss, wt))
        log.append(F.hvp(loss, wt, L.ones(2, 3, dtype=L.float64)))
        log.append(F.vhp(lambda weight, bias: predict(weight, bias, x).sum(), (wt, b),
                         (L.ones(2, 3, dtype=L.float64), b)))
        log.append(F.jacobian(lambda inp: predict(wt, b, inp), x, vectorize=True,
                              strategy="forward-mode"))
        # hvp == H v from hessian; create_graph: differentiate H v further
        xr = x.clone().requires_grad_()
        out, hv = F.hvp(lambda a: (a.sin() * a ** 3).sum(), xr, v, create_graph=True)
        hv.sum().backward()
        log.append((out.detach(), hv.detach(), xr.grad))
        xr.grad = None
        out, vh = F.vhp(lambda a: (a.sin() * a ** 3).sum(), xr, v, create_graph=True)
        vh.pow(2).sum().backward()
        log.append((vh.detach(), xr.grad))
    same(f)


def test_complex_inputs():
    def f(L, log):
        F = L.autograd.functional
        z = L.tensor([1 + 2j, -0.5 + 1j, 0.25 - 1j], dtype=L.complex128)
        w = L.tensor([2 - 1j, 0.5j, 1.0 + 0j], dtype=L.complex128)

        def g(a):
            return a * a.conj() * 2 + a.exp() * a

        log.append(F.vjp(g, z, w))
        log.append(F.jvp(g, z, w))
        log.append(F.vjp(lambda a: (a.abs() ** 2).sum(), z))
        for vec in (False, True):
            log.append(F.jacobian(g, z, vectorize=vec))
            log.append(F.jacobian(lambda a: (a * a).real, z, vectorize=vec))
            log.append(F.jacobian(lambda a: (a.abs(), a * 1j, (a * a.real).sum()), z,
                                  vectorize=vec))
        log.append(F.hessian(lambda a: (a.abs() ** 2 * a.real).sum(), z))
    same(f)


def test_errors():
    def f(L, log):
        F = L.autograd.functional
        x, y = _xs(L)
        one = L.ones(3, dtype=L.float64)
        const = lambda a: L.ones(3, dtype=L.float64)
        lin = lambda a, b: a * 2 + b.sum()
        cases = {
            "inputs type": lambda: F.vjp(_f1, [x], one),
            "inputs tuple type": lambda: F.jacobian(_f2, (x, 3)),
            "output type": lambda: F.jacobian(lambda a: 3.0, x),
            "v none": lambda: F.vjp(_f1, x),
            "jvp v none": lambda: F.jvp(_f1, x),
            "v size": lambda: F.vjp(_f1, x, L.ones(2, dtype=L.float64)),
            "v len": lambda: F.vjp(_f2, (x, y), (one,)),
            "v single": lambda: F.jvp(_f1, x, (one, one)),
            "v entry size": lambda: F.jvp(_f2, (x, y), (one, one)),
            "v type": lambda: F.vjp(_f1, x, [one]),
            "strict out": lambda: F.vjp(const, x, one, strict=True),
            "strict indep": lambda: F.vjp(lambda a, b: a * 2, (x, y), one, strict=True),
            "strict cg": lambda: F.vjp(lin, (x, y), one, strict=True, create_graph=True),
            "strict jvp": lambda: F.jvp(lambda a, b: a * 2, (x, y), (one, y), strict=True),
            "strict jvp out": lambda: F.jvp(const, x, one, strict=True),
            "strict jac": lambda: F.jacobian(lambda a, b: a * 2, (x, y), strict=True),
            "strict jac cg": lambda: F.jacobian(lin, (x, y), strict=True, create_graph=True),
            "strict jac vec": lambda: F.jacobian(_f1, x, strict=True, vectorize=True),
            "strategy": lambda: F.jacobian(_f1, x, strategy="fwd"),
            "fwd cg": lambda: F.jacobian(_f1, x, create_graph=True, strategy="forward-mode"),
            "fwd strict": lambda: F.jacobian(_f1, x, strict=True, strategy="forward-mode"),
            "fwd loop": lambda: F.jacobian(_f1, x, strategy="forward-mode"),
            "hess strategy": lambda: F.hessian(_s2, (x, y), outer_jacobian_strategy="x"),
            "hess strict vec": lambda: F.hessian(_s2, (x, y), strict=True, vectorize=True),
            "hess tuple": lambda: F.hessian(lambda a: (a.sum(),), x),
            "hess numel": lambda: F.hessian(lambda a: a * 2, x),
            "hess strict lin": lambda: F.hessian(lambda a: (a * 2).sum(), x, strict=True),
            "hess strict quad": lambda: F.hessian(lambda a: (a * a).sum(), x, strict=True),
            "hvp tuple": lambda: F.hvp(lambda a: (a.sum(),), x, one),
            "vhp numel": lambda: F.vhp(lambda a: a * 2, x, one),
            "hvp strict lin": lambda: F.hvp(lambda a: (a * 2).sum(), x, one, strict=True),
            "hvp strict quad": lambda: F.hvp(lambda a: (a * a).sum(), x, one, strict=True),
            "vhp strict lin": lambda: F.vhp(lambda a: (a * 2).sum(), x, one, strict=True),
            "vhp strict quad cg": lambda: F.vhp(lambda a: (a * a).sum(), x, one, strict=True,
                                                create_graph=True),
            "vhp strict indep": lambda: F.vhp(lambda a, b: (a * a).sum() + b.sum(), (x, y),
                                              (one, y), strict=True),
        }
        for tag, fn in cases.items():
            attempt(log, tag, fn)
    same(f)


# ---- autograd.grad(is_grads_batched=True) -----------------------------------------------------
def test_grad_is_grads_batched_values_hooks_and_errors():
    def f(L, log):
        x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        w = L.tensor([[1.0, 2.0, 0.5], [-1.0, 0.25, 3.0]], dtype=L.float64, requires_grad=True)
        h = x.sin() * x                      # a non-leaf input
        out = (w @ h).tanh()
        eye = L.eye(2, dtype=L.float64)
        g3 = L.tensor([[1.0, 0.0], [0.5, -2.0], [0.0, 3.0]], dtype=L.float64)
        log.append(L.autograd.grad(out, (w, x), eye, retain_graph=True, is_grads_batched=True))
        log.append(L.autograd.grad(out, h, g3, retain_graph=True, is_grads_batched=True))
        log.append(L.autograd.grad([out, h.sum()], [x, w],
                                   [g3, L.tensor([1.0, 2.0, 3.0], dtype=L.float64)],
                                   retain_graph=True, is_grads_batched=True))
        seen = []
        handle = h.register_hook(lambda g: seen.append(tuple(g.shape)) or g * 2)
        log.append(L.autograd.grad(out, x, eye, retain_graph=True, is_grads_batched=True))
        log.append(seen)
        handle.remove()
        log.append(L.autograd.grad(out, [x, L.ones(2, requires_grad=True)], eye,
                                   retain_graph=True, is_grads_batched=True,
                                   materialize_grads=True))
        z = L.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
        zo = z * z.conj() * 2 + z.exp()
        log.append(L.autograd.grad(zo, z, L.tensor([[1 + 1j, 2], [0.5j, 1]]),
                                   retain_graph=True, is_grads_batched=True))
        # in-place on a view (CopySlices), indexing, sort and a custom Function under vmap
        class Sq(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g

        c = x.clone()
        c[1] = x[1] * x[0]
        c[1:] *= x[:2].exp()
        c = L.cat([c.max().reshape(1), c[[0, 2]], c.sort().values[:1]])
        c = Sq.apply(c) + L.nn.functional.softmax(c, 0)
        log.append(L.autograd.grad(c, x, L.eye(4, dtype=L.float64)[:3], retain_graph=True,
                                   is_grads_batched=True))
        # create_graph=True: differentiable results (eagergrad: a stack of per-row runs)
        r, = L.autograd.grad(out, x, eye, create_graph=True, is_grads_batched=True)
        log.append(r.detach())
        r.pow(2).sum().backward()
        log.append((x.grad, w.grad))
        # without retain_graph, the graph is freed by the one batched run
        y = (x * x).exp()
        log.append(L.autograd.grad(y, x, L.eye(3, dtype=L.float64), is_grads_batched=True))
        attempt(log, "second", lambda: L.autograd.grad(y, x, L.eye(3, dtype=L.float64),
                                                       is_grads_batched=True))
        y = (x * x).exp()
        cases = {
            "shape": lambda: L.autograd.grad(y, x, L.ones(2, 2, dtype=L.float64),
                                             retain_graph=True, is_grads_batched=True),
            "0-d": lambda: L.autograd.grad(y.sum(), x, L.tensor(1.0, dtype=L.float64),
                                           retain_graph=True, is_grads_batched=True),
            "implicit": lambda: L.autograd.grad(y.sum(), x, retain_graph=True,
                                                is_grads_batched=True),
            "sizes": lambda: L.autograd.grad([y, y * 2], x, [L.ones(2, 3), L.ones(4, 3)],
                                             retain_graph=True, is_grads_batched=True),
            "none": lambda: L.autograd.grad([y, L.ones(3)], x, [L.ones(2, 3), None],
                                            retain_graph=True, is_grads_batched=True),
            "unused": lambda: L.autograd.grad(y, [x, L.ones(2, requires_grad=True)],
                                              L.eye(3), retain_graph=True,
                                              is_grads_batched=True),
            "dtype": lambda: L.autograd.grad(y, x, L.eye(3, dtype=L.complex128),
                                             retain_graph=True, is_grads_batched=True),
        }
        for tag, fn in cases.items():
            attempt(log, tag, fn)
        with L.autograd.detect_anomaly():  # (its NaN check cannot batch, in torch neither)
            attempt(log, "anomaly", lambda: L.autograd.grad(y, x, L.eye(3, dtype=L.float64),
                                                            is_grads_batched=True))
    same(f, quiet=True)  # (node by node, then fused under jax.vmap)


def test_batched_grad_and_vectorized_jacobian_are_one_engine_run(monkeypatch):
    runs = []
    real = _engine._execute
    monkeypatch.setattr(_engine, "_execute", lambda *a, **k: runs.append(1) or real(*a, **k))
    x = eg.tensor([0.5, -1.0, 2.0, 1.5], requires_grad=True)
    y = (x.sin() * x).cumsum(0)
    g, = eg.autograd.grad(y, x, eg.eye(4), is_grads_batched=True)
    assert len(runs) == 1  # 4 rows, one engine run (under jax.vmap)
    tx = torch.tensor([0.5, -1.0, 2.0, 1.5], requires_grad=True)
    want, = torch.autograd.grad((tx.sin() * tx).cumsum(0), tx, torch.eye(4),
                                is_grads_batched=True)
    np.testing.assert_allclose(np.asarray(g.tolist()), want.numpy(), rtol=1e-5)
    runs.clear()
    j = eg.autograd.functional.jacobian(lambda a: (a.sin() * a).cumsum(0), x.detach(),
                                        vectorize=True)
    assert len(runs) == 1
    runs.clear()
    eg.autograd.functional.jacobian(lambda a: (a.sin() * a).cumsum(0), x.detach())
    assert len(runs) == 4  # the loop: one run per output element, as torch
    np.testing.assert_allclose(np.asarray(j.tolist()), want.numpy(), rtol=1e-5)


def test_under_jax_jit():
    """jacobian(vectorize=True), hessian(forward-over-reverse) and a batched grad inside
    one jitted function of arrays (nested vmap inside jit)."""
    def jac_and_hess(L, a):
        F = L.autograd.functional
        j = F.jacobian(lambda t: (t.sin() * t ** 2).cumsum(0), a, vectorize=True)
        h = F.hessian(lambda t: (t.exp() * t).sum(), a, vectorize=True,
                      outer_jacobian_strategy="forward-mode")
        ar = a.detach().requires_grad_()
        g, = L.autograd.grad(ar.tanh() * ar, ar, L.eye(3, dtype=a.dtype) * 2,
                             is_grads_batched=True)
        return j, h, g

    xs = [0.5, -1.0, 2.0]
    want = jac_and_hess(torch, torch.tensor(xs, dtype=torch.float64))
    fn = jax.jit(eg.jaxify(lambda a: jac_and_hess(eg, a)))
    got = fn(jnp.asarray(xs, dtype=jnp.float64))
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g), w.detach().numpy(), rtol=1e-10)
