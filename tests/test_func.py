"""torch.func transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, vmap, functionalize) compared with real torch.func."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from conftest import attempt, same

import eagergrad as eg

D = "float64"


def _x(L, data, dtype=D):
    return L.tensor(data, dtype=getattr(L, dtype))


def test_grad_vjp_jvp_linearize_real_and_complex():
    def f(L, log):
        fn = L.func
        x = _x(L, [0.5, -1.0, 2.0])
        y = _x(L, [[1.5, 0.25, 1.0], [-0.5, 1.0, 2.0]])
        z = _x(L, [1 + 2j, -0.5 + 0.25j, 2 - 1j], "complex128")
        w = _x(L, [0.5 - 1j, 2 + 0.5j, -1 + 1j], "complex128")

        def loss(x, y, scale=1.0):
            return (y @ x.sin()).pow(2).sum() * scale

        log.append(fn.grad(loss)(x, y))
        log.append(fn.grad(loss, argnums=(0, 1))(x, y, scale=2.0))
        log.append(fn.grad_and_value(loss, argnums=(1,))(x, y))
        aux_f = lambda x, y: (loss(x, y), {"a": x * 2, "b": (y.sum(),)})
        log.append(fn.grad(aux_f, has_aux=True)(x, y))
        log.append(fn.grad_and_value(aux_f, has_aux=True)(x, y))
        # complex: a real loss of complex input; vjp/jvp of holomorphic and not
        log.append(fn.grad(lambda z: (z * z.conj() + z.real ** 3).real.sum())(z))
        out, vjp_fn = fn.vjp(lambda z, w: (z * w, (z.abs() * w).sum()), z, w)
        log.append((out, vjp_fn((w.conj(), _x(L, 1.5 - 2j, "complex128")))))
        out, vjp_fn, aux = fn.vjp(lambda x: ((x.exp() * y).sum(0), x.cos()), x, has_aux=True)
        log.append((out, aux, vjp_fn(x), vjp_fn(x * 2 - 1)))
        log.append(fn.jvp(lambda z, w: z * w, (z, w), (w, z)))
        log.append(fn.jvp(lambda x: (y @ x, {"s": x.sum()}), (x,), (x.cos(),), has_aux=True))
        out, jvp_fn = fn.linearize(lambda x, y: (y @ x.tanh()).exp(), x, y)
        log.append((out, jvp_fn(x, y), jvp_fn(x * 0 + 1, y * 2)))
        log.append(fn.functionalize(lambda x: x.clone().mul_(2).add_(x))(x))
    same(f)


def predict(weight, bias, x):
    return (x @ weight.T + bias).tanh()


def test_jacobians_hessians_tutorial():
    def f(L, log):
        fn = L.func
        g = np.random.default_rng(0)
        weight = _x(L, g.standard_normal((3, 4)).tolist())
        bias = _x(L, g.standard_normal(3).tolist())
        x = _x(L, g.standard_normal(4).tolist())
        xs = _x(L, g.standard_normal((2, 4)).tolist())
        log.append(fn.jacrev(predict, argnums=2)(weight, bias, x))
        log.append(fn.jacrev(predict, argnums=(0, 1))(weight, bias, x))
        log.append(fn.jacrev(predict, argnums=2, chunk_size=1)(weight, bias, x))
        log.append(fn.vmap(fn.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, xs))
        log.append(fn.hessian(predict, argnums=2)(weight, bias, x))
        # pytree outputs and has_aux
        two = lambda x: ({"p": x.sin(), "q": x.sum()}, x * 2)
        log.append(fn.jacrev(two, has_aux=True)(x))
        # complex inputs/outputs are refused (torch's messages)
        z = _x(L, [1 + 2j, -0.5 + 0.25j], "complex128")
        attempt(log, "c1", lambda: fn.jacrev(lambda x, z: x * z, argnums=(0, 1))(x[:2], z))
        attempt(log, "c2", lambda: fn.jacfwd(lambda z: z.abs())(z))
        attempt(log, "c3", lambda: fn.jacrev(lambda x: x * (1 + 2j))(x))
        attempt(log, "c4", lambda: fn.jacfwd(lambda x: x * (1 + 2j))(x))
        attempt(log, "c5", lambda: fn.hessian(lambda z: (z * z.conj()).real.sum())(z))
        attempt(log, "c6", lambda: fn.grad(lambda z: (z * z).sum())(z))
    same(f)


def test_compositions():
    def f(L, log):
        fn = L.func
        x = _x(L, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        s = lambda v: (v.sin() * v).sum()
        log.append(fn.vmap(fn.grad(s))(x))
        log.append(fn.grad(fn.grad(lambda t: t.sin() * t ** 3))(_x(L, 0.7)))
        log.append(fn.grad(lambda v: fn.vmap(s)(v).pow(2).sum())(x))
        log.append(fn.vmap(fn.vmap(lambda a, b: a * b + a.exp()), in_dims=(0, 1))(x, x.T))
        log.append(fn.jacfwd(fn.jacrev(s))(x[0]))
        log.append(fn.vmap(fn.hessian(s))(x))
        log.append(fn.grad(lambda v: fn.jacrev(lambda u: u * v)(v).sum())(x[1]))
        out, vjp_fn = fn.vjp(fn.vmap(lambda v: v.cumsum(0)), x)
        log.append(out)
        log.append(fn.vmap(vjp_fn)((x * x.sum(1, keepdim=True)).unsqueeze(0).expand(2, 2, 3)))
    same(f)


def test_vmap_in_dims_out_dims_chunks():
    def f(L, log):
        fn = L.func
        a = _x(L, np.arange(12.0).reshape(3, 4).tolist())
        b = _x(L, np.linspace(-1, 1, 8).reshape(4, 2).tolist())
        mv = lambda m, v: m @ v
        log.append(fn.vmap(mv, in_dims=(None, 1))(a, b))
        log.append(fn.vmap(mv, in_dims=(None, -1), out_dims=1)(a, b))
        log.append(fn.vmap(lambda d, k: d["m"] * d["v"][0] + k,
                           in_dims=({"m": 0, "v": [1]}, None))(
            {"m": a[:, :2].T, "v": [a[:2]]}, _x(L, 1.5)))
        log.append(fn.vmap(lambda v: (v.sum(), v * 2, [v.exp()]), out_dims=(0, -1, [1]))(b))
        log.append(fn.vmap(lambda v: (v * 2, a.sum()), out_dims=(0, None))(b))
        log.append(fn.vmap(lambda v, s: v * s)(b, s=_x(L, [2.0, 3.0])))
        log.append(fn.vmap(lambda v: L.ones(2, dtype=L.float64))(b))
        log.append(fn.vmap(lambda v: v.outer(v), chunk_size=3)(b))
        log.append(fn.vmap(lambda v: v.outer(v), in_dims=1, chunk_size=1, out_dims=2)(b))
        log.append(fn.vmap(fn.vmap(lambda v: v.sum(), chunk_size=2), in_dims=1)(a))
        log.append(fn.vmap(L.dot)(a, a))
        log.append(fn.vmap(lambda v: v[v.argmax()])(a))  # indexing with a batched index
        # in-place on inputs: written back to the caller's tensors, as torch
        c, d = a.clone(), b.clone()
        log.append((fn.vmap(lambda v: v[0].add_(1))(c), c))
        log.append((fn.vmap(lambda u, v: (u.mul_(2), v * u)[1], in_dims=(None, 1))(d[0], d), d))
        attempt(log, "inplace", lambda: fn.vmap(lambda u, v: u.mul_(v), in_dims=(None, 0))(
            d[0].clone(), d))
    same(f)


def test_vmap_randomness_modes():
    def draws(L, mode):
        x = L.zeros(3, 4)
        f = lambda v: (v + L.rand(4), L.nn.functional.dropout(v + 1, 0.5))
        return L.func.vmap(f, randomness=mode)(x)

    def structure(L):
        out = []
        for mode in ("same", "different"):
            r = draws(L, mode)
            rows_equal = [bool((t[0] == t[1]).all()) and bool((t[1] == t[2]).all()) for t in r]
            out.append((mode, [tuple(t.shape) for t in r], rows_equal[:1]))
        return out
    assert structure(torch) == structure(eg) == [
        ("same", [(3, 4)] * 2, [True]), ("different", [(3, 4)] * 2, [False])]
    # one dropout mask for the batch: equal rows (64 wide: a mask with no zero is 2**-64)
    same_drop = eg.func.vmap(lambda v: eg.nn.functional.dropout(v + 1, 0.5),
                             randomness="same")(eg.zeros(3, 64))
    assert bool((same_drop[0] == same_drop[1]).all()) and bool((same_drop == 0).any())

    def columns(L):  # jacfwd's columns: one draw, or a draw each
        out = []
        for mode in ("same", "different"):
            j = L.func.jacfwd(lambda v: v * L.rand(()), randomness=mode)(L.ones(3))
            d = j.diagonal()
            # (zero off the diagonal: each column's sum is exactly its diagonal element;
            # the whole sum against the diagonal's is 1 ulp off for some draws, in torch too)
            out.append((mode, bool((d == d[0]).all()),
                        float((j.abs().sum(0) - d.abs()).abs().max())))
        return out
    assert columns(torch) == columns(eg) == [("same", True, 0.0), ("different", False, 0.0)]

    def f(L, log):
        fn = L.func
        x = L.zeros(2, 3)
        attempt(log, "rand", lambda: fn.vmap(lambda v: v + L.rand(3))(x))
        attempt(log, "dropout", lambda: fn.vmap(L.nn.functional.dropout)(x))
        attempt(log, "jacfwd", lambda: fn.jacfwd(lambda v: v * L.rand(3))(x[0]))
        attempt(log, "bad", lambda: fn.vmap(lambda v: v, randomness="x")(x))
        attempt(log, "grad ok", lambda: fn.grad(lambda v: (v * L.rand(3).mul(0)).sum())(x[0]))
    same(f)


def test_item_bool_backward_inside_transforms():
    def f(L, log):
        fn = L.func
        x = _x(L, [0.5, -1.0, 2.0])
        xs = _x(L, [[0.5, -1.0], [2.0, 1.0]])
        attempt(log, "grad item", lambda: fn.grad(lambda v: v.sum() * v.sum().item())(x))
        attempt(log, "grad bool", lambda: fn.grad(lambda v: (v * 2).sum() if v.sum() > 0
                                                  else v.sum())(x))
        attempt(log, "grad float", lambda: fn.grad(lambda v: v.sum() * float(v[0]))(x))
        attempt(log, "jacfwd item", lambda: fn.jacfwd(lambda v: v * v.sum().item())(x))
        attempt(log, "hessian bool", lambda: fn.hessian(
            lambda v: (v ** 3).sum() if v.sum() > 0 else v.sum())(x))
        attempt(log, "vmap item", lambda: fn.vmap(lambda v: v * v.sum().item())(xs))
        attempt(log, "vmap bool", lambda: fn.vmap(lambda v: v if v.sum() > 0 else -v)(xs))
        attempt(log, "vmap grad item", lambda: fn.vmap(fn.grad(
            lambda v: v.sum() * v[0].item()))(xs))
        attempt(log, "backward", lambda: fn.grad(lambda v: (v.sum().backward(), v.sum())[1])(x))
        attempt(log, "vmap backward", lambda: fn.vmap(lambda v: (v.sum().backward(), v)[1])(
            L.ones(2, 3, requires_grad=True)))
        attempt(log, "grad mode", lambda: fn.grad(
            lambda v: v.sum() * float(L.is_grad_enabled()))(x))
        seen = []
        probe = lambda tag: lambda v: (
            seen.append((tag, v.requires_grad, v.is_leaf, (v * 2).requires_grad)), v)[1]
        fn.grad(lambda v: probe("grad")(v).sum())(x)
        fn.vjp(probe("vjp"), x)
        fn.jvp(probe("jvp"), (x,), (x,))
        fn.vmap(probe("vmap"))(xs.requires_grad_())
        log.append(seen)
        attempt(log, "leaf in-place", lambda: fn.grad(lambda v: v.add_(1).sum())(x))
        attempt(log, "autograd.grad inside", lambda: fn.grad(lambda v: L.autograd.grad(
            (v ** 3).sum(), v, create_graph=True)[0].sum())(x))
    same(f)


def test_bad_input_errors():
    def f(L, log):
        fn = L.func
        x = L.ones(3)
        xs = L.ones(2, 3)
        s = lambda v: v.sum()
        cases = {
            "nonscalar": lambda: fn.grad(lambda v: v)(x),
            "nontensor": lambda: fn.grad(lambda v: 1.0)(x),
            "aux not tuple": lambda: fn.grad(s, has_aux=True)(x),
            "aux nontensor": lambda: fn.grad(lambda v: (v.sum(), 1.0), has_aux=True)(x),
            "argnum oob": lambda: fn.grad(s, argnums=1)(x),
            "argnums oob": lambda: fn.jacrev(lambda a: a, argnums=(0, 2))(x),
            "argnums float": lambda: fn.grad(s, argnums=1.0)(x),
            "argnums empty": lambda: fn.grad(s, argnums=())(x),
            "no args": lambda: fn.grad(lambda: x.sum())(),
            "float arg": lambda: fn.grad(s)(1.0),
            "int arg": lambda: fn.grad(s)(L.arange(3)),
            "vjp nontensor": lambda: fn.vjp(lambda v: 1.0, x),
            "vjp aux": lambda: fn.vjp(lambda v: v, x, has_aux=True),
            "vjp_fn struct": lambda: fn.vjp(lambda v: (v, v), x)[1](x),
            "vjp_fn shape": lambda: fn.vjp(lambda v: v * 2, x)[1](L.ones(2)),
            "vjp_fn type": lambda: fn.vjp(lambda v: (v, v), x)[1]((x, 1.0)),
            "vjp_fn None": lambda: fn.vjp(lambda v: (v, v * 2), x)[1]((None, x)),
            "vjp_fn None scalar": lambda: fn.vjp(lambda v: (v.sum(), v * 2), x)[1]((None, x)),
            "vjp None": lambda: fn.vjp(lambda v: None, x),
            "jvp None": lambda: fn.jvp(lambda v: (v, None), (x,), (x,)),
            "argnums bool": lambda: fn.grad(s, argnums=True)(x),
            "vmap empty": lambda: fn.vmap(lambda v: v * 2)(L.ones(0, 3)),
            "jvp tuple": lambda: fn.jvp(lambda v: v, x, x),
            "jvp struct": lambda: fn.jvp(lambda v: v, (x,), (x, x)),
            "jvp size": lambda: fn.jvp(lambda v: v, (x,), (L.ones(2),)),
            "jvp empty": lambda: fn.jvp(lambda: x, (), ()),
            "jvp int": lambda: fn.jvp(lambda v: v, (L.arange(3),), (L.arange(3),)),
            "jvp nontensor": lambda: fn.jvp(lambda v: 1.0, (x,), (x,)),
            "jvp aux": lambda: fn.jvp(lambda v: v, (x,), (x,), has_aux=True),
            "jacrev chunk": lambda: fn.jacrev(lambda v: v, chunk_size=0)(x),
            "jacrev nontensor": lambda: fn.jacrev(lambda v: 1.0)(x),
            "jacfwd randomness": lambda: fn.jacfwd(lambda v: v, randomness="q")(x),
            "vmap sizes": lambda: fn.vmap(lambda a, b: a + b)(xs, L.ones(3, 3)),
            "vmap in_dim oob": lambda: fn.vmap(lambda v: v, in_dims=2)(xs),
            "vmap 0-dim": lambda: fn.vmap(lambda v: v)(L.tensor(1.0)),
            "vmap in_dims struct": lambda: fn.vmap(lambda a, b: a, in_dims=(0,))(x, x),
            "vmap in_dims nested": lambda: fn.vmap(lambda a, b: a, in_dims=((0, 0), 0))(
                [x, x], x),
            "vmap in_dims dict": lambda: fn.vmap(lambda d: d["a"], in_dims=({"a": 0},))(
                {"a": xs, "b": xs}),
            "vmap in_dims str": lambda: fn.vmap(lambda v: v, in_dims="a")(x),
            "vmap in_dims None": lambda: fn.vmap(lambda v: v, in_dims=None)(x),
            "vmap in_dims list": lambda: fn.vmap(lambda a, b: a, in_dims=[0, 0])(x, x),
            "vmap in_dim float": lambda: fn.vmap(lambda v: v, in_dims=(1.0,))(xs),
            "vmap all None": lambda: fn.vmap(lambda v: v, in_dims=(None,))(x),
            "vmap no inputs": lambda: fn.vmap(lambda: x)(),
            "vmap nontensor in": lambda: fn.vmap(lambda v: v)(1.0),
            "vmap nontensor out": lambda: fn.vmap(lambda v: 1.0)(xs),
            "vmap None out": lambda: fn.vmap(lambda v: None)(xs),
            "vmap out_dim oob": lambda: fn.vmap(lambda v: v, out_dims=3)(xs),
            "vmap out_dims struct": lambda: fn.vmap(lambda v: (v, v), out_dims=(0, 0, 0))(xs),
            "vmap out_dims str": lambda: fn.vmap(lambda v: v, out_dims="a")(xs),
            "vmap out_dim None batched": lambda: fn.vmap(lambda v: v, out_dims=None)(xs),
            "vmap chunk": lambda: fn.vmap(lambda v: v, chunk_size=0)(xs),
            "functionalize": lambda: fn.functionalize(lambda v: v, remove="x")(x),
        }
        for tag, case in cases.items():
            attempt(log, tag, case)
    same(f)


def test_under_jax_jit():
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    w = np.array([0.5, -1.5, 2.0])

    def loss(w, v):
        return ((v * w).sum().tanh() - 0.5) ** 2

    want = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(
        torch.tensor(w), torch.tensor(x)).numpy()
    jac_want = torch.func.jacfwd(torch.func.jacrev(loss))(torch.tensor(w), torch.tensor(x[0]))

    @jax.jit
    def step(w, x):
        w, x = eg.from_jax(w), eg.from_jax(x)
        g = eg.func.vmap(eg.func.grad(loss), in_dims=(None, 0))(w, x)
        h = eg.func.jacfwd(eg.func.jacrev(loss))(w, x[0])
        return g.jax(), h.jax()

    for _ in range(2):
        g, h = step(jnp.asarray(w), jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(h), jac_want.numpy(), rtol=1e-10)


def test_autograd_over_transforms():
    """Inputs that require grad: the transforms' outputs are differentiable (one node in
    eagergrad, torch's op nodes in torch: grad_fn names are not compared). Only tensors
    passed as arguments are seen, not those a closure captures."""
    def f(L, log):
        fn = L.func
        x = _x(L, [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]).requires_grad_()
        w = _x(L, [0.5, 2.0, -1.0]).requires_grad_()
        s = lambda v, w: (v.sin() * w).sum()
        outs = [fn.grad(s)(x[0], w), fn.vmap(s, in_dims=(0, None))(x, w),
                fn.jacrev(s, argnums=1)(x[1], w),
                fn.jvp(lambda v, u: v.sin() * u, (x[0], w), (w, x[1]))[1]]
        log.append([(o.requires_grad, o.is_leaf, o.detach()) for o in outs])
        L.autograd.backward([o.pow(2).sum() for o in outs])
        log.append((x.grad, w.grad))
        # double backward through the transform's node; complex inputs (conj convention)
        g = fn.grad(lambda v: (v.sin() * v ** 2).sum())(w)
        h, = L.autograd.grad(g.pow(2).sum(), w, create_graph=True)
        log.append((h.detach(), L.autograd.grad(h.sum(), w)))
        z = _x(L, [1 + 2j, -0.5 + 0.25j], "complex128").requires_grad_()
        fn.vmap(lambda r: r * r.sin())(z).abs().sum().backward()
        log.append(z.grad)
    same(f)


def test_detach_and_data_block_the_transforms_derivative():
    """detach()/.data share the storage, so under a transform they are the same traced
    array: the derivative through them must still be zero (NOTE [detach under jax
    transforms]), in every transform; a write through a detached alias gives the base its
    values and keeps the base's own derivative, as torch's."""
    def f(L, log):
        fn, F = L.func, L.nn.functional
        x = _x(L, [[0.5, 1.0, -0.3], [0.2, 0.1, 0.9]])
        v = _x(L, [[1.0, 2.0, 0.5], [-1.0, 0.25, 3.0]])

        def g(t):
            m = t.mean()  # the formula trick of torch's norms: values of 1, m's derivative
            return (F.gelu(t) * (m - m.detach() + 1)).sum() + (t.data * t).sum()

        def h(t):
            return t.detach().sin() * t + t.detach()[0].exp() * 2

        def write_through_detached(t):
            w = t * 1.0
            w.detach().add_(1)
            u = t.detach()
            u.mul_(2)
            return (w * t).sum()
        log.append(fn.grad(g)(x))
        log.append(fn.jvp(h, (x,), (v,)))
        log.append(fn.jacrev(h)(x[0]))
        log.append(fn.jacfwd(h)(x[0]))
        log.append(fn.vmap(fn.grad(lambda r: h(r).sum()))(x))
        log.append(fn.grad(write_through_detached)(x.clone()))
        log.append(fn.vjp(h, x)[1](v))
    same(f)


def test_detach_under_the_users_jax_grad():
    def f(a):
        t = eg.from_jax(a)
        return (t.detach() * t + t.data.exp()).sum().jax()
    a = jnp.array([0.5, 2.0])
    np.testing.assert_allclose(jax.grad(f)(a), np.asarray(a))  # d/dt of c*t: c = t
