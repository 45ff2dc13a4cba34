"""Tracer safety: eagergrad programs run with jax tracers inside their tensors.

1. `jax.jit(jax.grad(eagergrad.jaxify(f)))`: jax differentiates eagergrad's forward
   kernels; compared with eagergrad's own eager backward and with torch.
2. eagergrad's own engine under `jax.jit`: leaves made with requires_grad_(), then
   .backward(), returning .grad, all traced.
3. `jax.vmap` over jaxify for per-example gradients, both ways.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg

RTOL, ATOL = 2e-5, 2e-6
N, D, H, C = 5, 4, 6, 3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return dict(
        W1=rng.standard_normal((D, H)).astype(np.float32) * 0.5,
        b1=rng.standard_normal((H,)).astype(np.float32) * 0.1,
        W2=rng.standard_normal((H, C)).astype(np.float32) * 0.5,
        x=rng.standard_normal((N, D)).astype(np.float32),
        target=rng.integers(0, C, size=(N,)).astype(np.int64),
        rows=np.array([4, 0, 2, 2], dtype=np.int64),
    )


PARAMS = ("W1", "b1", "W2")


def program(L, W1, b1, W2, x, target, rows):
    """matmul, broadcasting, tanh, softmax / log_softmax, sum, mean, integer indexing."""
    h = (x @ W1 + b1).tanh()                        # bias broadcast over the batch
    h = h - h.mean(dim=0, keepdim=True) * 0.5       # keepdim broadcast
    logits = h @ W2
    logp = logits.log_softmax(dim=1)
    picked = logp[L.arange(x.shape[0]), target]     # advanced indexing, two int tensors
    p = logits.softmax(dim=-1)
    extra = (h[rows] * h[rows]).sum() * 0.01        # rows with repeats: scatter-add
    return -picked.mean() + (p * p).sum() * 0.1 + extra + (W1 * W1).sum() * 1e-3


def _torch_grads(d):
    ts = {k: torch.tensor(v) for k, v in d.items()}
    for k in PARAMS:
        ts[k].requires_grad_()
    loss = program(torch, **ts)
    loss.backward()
    return float(loss.detach()), [ts[k].grad.numpy() for k in PARAMS]


def _eager_grads(d):
    ts = {k: eg.tensor(v) for k, v in d.items()}
    for k in PARAMS:
        ts[k].requires_grad_()
    loss = program(eg, **ts)
    loss.backward()
    return float(loss.detach()), [ts[k].grad.numpy() for k in PARAMS]


def _jax_args(d):
    return [jnp.asarray(d[k]) for k in ("W1", "b1", "W2", "x", "target", "rows")]


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=ATOL)


def test_eager_backward_matches_torch():
    d = _data(0)
    lt, gt = _torch_grads(d)
    le, ge = _eager_grads(d)
    assert np.isclose(le, lt, rtol=RTOL)
    for a, b in zip(ge, gt):
        _close(a, b)


def test_jit_grad_of_jaxify_matches_eager_and_torch():
    d = _data(1)
    f = eg.jaxify(lambda *a: program(eg, *a))
    seen = []

    def traced(*a):
        out = f(*a)
        seen.append(type(out))
        return out

    value_and_grad = jax.jit(jax.value_and_grad(traced, argnums=(0, 1, 2)))
    loss, grads = value_and_grad(*_jax_args(d))
    assert issubclass(seen[0], jax.core.Tracer)  # the program really ran on tracers
    lt, gt = _torch_grads(d)
    le, ge = _eager_grads(d)
    assert np.isclose(float(loss), lt, rtol=RTOL) and np.isclose(float(loss), le, rtol=RTOL)
    for g, a, b in zip(grads, ge, gt):
        assert g.dtype == jnp.float32
        _close(g, a)
        _close(g, b)
    # a second call with other values reuses the compiled function and stays right
    d2 = _data(2)
    _, grads2 = value_and_grad(*_jax_args(d2))
    _, gt2 = _torch_grads(d2)
    for g, b in zip(grads2, gt2):
        _close(g, b)
    assert len(seen) == 1


def _engine_step(W1, b1, W2, x, target, rows):
    """The PyTorch way, traced: leaves, forward, backward, read .grad."""
    W1, b1, W2 = (t.detach().requires_grad_() for t in (W1, b1, W2))
    loss = program(eg, W1, b1, W2, x, target, rows)
    loss.backward()
    return loss.detach(), (W1.grad, b1.grad, W2.grad)


def test_engine_backward_under_jit():
    d = _data(3)
    tracer_types = []

    def step(*a):
        loss, grads = _engine_step(*a)
        tracer_types.append(isinstance(grads[0].jax(), jax.core.Tracer))
        return loss, grads

    jitted = jax.jit(eg.jaxify(step))
    loss, grads = jitted(*_jax_args(d))
    assert tracer_types == [True]
    lt, gt = _torch_grads(d)
    assert np.isclose(float(loss), lt, rtol=RTOL)
    for g, b in zip(grads, gt):
        assert isinstance(g, jax.Array)
        _close(g, b)
    d2 = _data(4)
    loss2, grads2 = jitted(*_jax_args(d2))
    assert len(tracer_types) == 1  # no retrace
    lt2, gt2 = _torch_grads(d2)
    assert np.isclose(float(loss2), lt2, rtol=RTOL)
    for g, b in zip(grads2, gt2):
        _close(g, b)


def test_engine_under_jit_repeated_graph_and_accumulation():
    """The same graph twice in one trace (the engine may switch to its fused path the
    second time) and .grad accumulation across the two backward calls."""
    d = _data(5)

    def step(W1, b1, W2, x, target, rows):
        W1, b1, W2 = (t.detach().requires_grad_() for t in (W1, b1, W2))
        for _ in range(3):
            program(eg, W1, b1, W2, x, target, rows).backward()
        return W1.grad, b1.grad, W2.grad

    grads = jax.jit(eg.jaxify(step))(*_jax_args(d))
    _, gt = _torch_grads(d)
    for g, b in zip(grads, gt):
        _close(g, 3 * b)
    # eagerly, the same three passes
    eager = eg.jaxify(step)(*_jax_args(d))
    for g, e in zip(grads, eager):
        _close(g, e)


def test_autograd_grad_and_create_graph_under_jit():
    def f(x):
        x = x.detach().requires_grad_()
        y = (x.tanh() * x).sum()
        (g,) = eg.autograd.grad(y, x, create_graph=True)
        (gg,) = eg.autograd.grad(g.sum(), x)
        return g.detach(), gg

    x = jnp.array([0.3, -1.2, 2.0], dtype=jnp.float32)
    g, gg = jax.jit(eg.jaxify(f))(x)
    xt = torch.tensor(np.asarray(x), requires_grad=True)
    (gt,) = torch.autograd.grad((xt.tanh() * xt).sum(), xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    _close(g, gt.detach().numpy())
    _close(gg, ggt.numpy())
    # and jax's own second derivative of the same function agrees
    jg = jax.grad(lambda v: jnp.sum(jnp.tanh(v) * v))
    _close(gg, jax.vmap(jax.grad(lambda s: jg(s[None])[0]))(x))


def _one_example_loss(W1, b1, W2, x1, t1):
    h = (x1 @ W1 + b1).tanh()
    logp = (h @ W2).log_softmax(dim=-1)
    return -logp[t1.reshape(1)].sum()


def _torch_per_example(d):
    out = [[] for _ in PARAMS]
    for i in range(N):
        ps = [torch.tensor(d[k], requires_grad=True) for k in PARAMS]
        loss = _one_example_loss(*ps, torch.tensor(d["x"][i]), torch.tensor(d["target"][i]))
        loss.backward()
        for j, p in enumerate(ps):
            out[j].append(p.grad.numpy())
    return [np.stack(o) for o in out]


def test_vmap_of_jax_grad_per_example():
    d = _data(6)
    f = eg.jaxify(_one_example_loss)
    per_ex = jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1, 2)), in_axes=(None, None, None, 0, 0)))
    grads = per_ex(jnp.asarray(d["W1"]), jnp.asarray(d["b1"]), jnp.asarray(d["W2"]),
                   jnp.asarray(d["x"]), jnp.asarray(d["target"]))
    expected = _torch_per_example(d)
    for g, e in zip(grads, expected):
        assert g.shape == e.shape == (N,) + e.shape[1:]
        _close(g, e)


def test_vmap_of_engine_backward_per_example():
    d = _data(7)

    def one(W1, b1, W2, x1, t1):
        W1, b1, W2 = (t.detach().requires_grad_() for t in (W1, b1, W2))
        _one_example_loss(W1, b1, W2, x1, t1).backward()
        return W1.grad, b1.grad, W2.grad

    per_ex = jax.vmap(eg.jaxify(one), in_axes=(None, None, None, 0, 0))
    grads = per_ex(jnp.asarray(d["W1"]), jnp.asarray(d["b1"]), jnp.asarray(d["W2"]),
                   jnp.asarray(d["x"]), jnp.asarray(d["target"]))
    expected = _torch_per_example(d)
    for g, e in zip(grads, expected):
        _close(g, e)
    # summed over the batch they are the batch gradient
    jitted = jax.jit(per_ex)(jnp.asarray(d["W1"]), jnp.asarray(d["b1"]), jnp.asarray(d["W2"]),
                             jnp.asarray(d["x"]), jnp.asarray(d["target"]))
    for g, e in zip(jitted, expected):
        _close(g.sum(0), e.sum(0))


def test_jaxify_pytrees_and_non_array_arguments():
    names = []

    def f(params, x, scale, name="ignored"):
        names.append(name)
        assert isinstance(params["w"], eg.Tensor) and isinstance(x, eg.Tensor)
        out = {"y": (x @ params["w"]).relu() * scale}
        return out, [params["w"].sum()]

    w = jnp.arange(6.0, dtype=jnp.float32).reshape(3, 2) - 2
    x = jnp.ones((2, 3), dtype=jnp.float32)
    out, (s,) = jax.jit(eg.jaxify(f), static_argnums=(2, 3))({"w": w}, x, 2.0, "ok")
    assert names == ["ok"] and isinstance(out["y"], jax.Array)
    _close(out["y"], np.maximum(np.asarray(x) @ np.asarray(w), 0) * 2)
    _close(s, np.asarray(w).sum())


def test_tensor_repr_under_trace_does_not_crash():
    reprs = []

    def f(x):
        t = eg.from_jax(x)
        reprs.append(repr(t * 2))
        return (t * 2).jax()

    jax.jit(f)(jnp.ones(3, dtype=jnp.float32))
    assert reprs and "tensor(" in reprs[0]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_grad_modes_under_jit(mode):
    def f(x):
        x = x.detach().requires_grad_()
        with getattr(eg, mode)():
            y = x * 3
        z = (x * x).sum()
        z.backward()
        return x.grad, y.requires_grad

    g, rg = eg.jaxify(f)(jnp.array([1.0, 2.0], dtype=jnp.float32))
    gj = jax.jit(lambda v: eg.jaxify(f)(v)[0])(jnp.array([1.0, 2.0], dtype=jnp.float32))
    assert rg is False
    _close(g, [2.0, 4.0])
    _close(gj, [2.0, 4.0])
