"""nn.utils.parametrizations.orthogonal against real torch (each map, tall/wide/square,
real/complex, with and without trivialization): state_dict names, the parametrized weight,
its orthogonality, SGD steps, right_inverse on assignment, repr and errors; and the
argument errors of the linalg ops behind it (qr, householder_product, geqrf, matrix_exp,
solve, solve_triangular). Their values and gradients are the op table's samples."""
import functools

import numpy as np
import pytest
import torch
from conftest import attempt, same

CASES = [  # (out, in), orthogonal_map, use_trivialization, dtype
    ((3, 3), None, True, "float64"),             # matrix_exp by default
    ((4, 3), None, True, "float32"),             # householder by default (tall)
    ((3, 4), "cayley", False, "float64"),        # wide: works on the transpose
]  # complex (unitary) weights: test_right_inverse_assignment


def _orth(L, shape, omap, triv, dtype):
    m = L.nn.Linear(shape[1], shape[0], dtype=getattr(L, dtype))
    return L.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                                   use_trivialization=triv)


@functools.cache
def _reference(shape, omap, triv, dtype):
    """torch's state_dict for the case, as numpy (shared by both libraries' runs)."""
    torch.manual_seed(0)
    return {k: v.detach().numpy().copy()
            for k, v in _orth(torch, shape, omap, triv, dtype).state_dict().items()}


def _load(L, m, ref):
    m.load_state_dict({k: L.tensor(v) for k, v in ref.items()})


def _eye_residual(L, W):
    """|W W^H - I| (wide) or |W^H W - I| (tall), the largest entry."""
    Wh = W.mT.conj()
    G = W @ Wh if W.shape[-2] < W.shape[-1] else Wh @ W
    return (G - L.eye(G.shape[-1], dtype=G.dtype)).abs().max().item()


@pytest.mark.fast_first
@pytest.mark.parametrize("shape,omap,triv,dtype", CASES)
def test_orthogonal_training(shape, omap, triv, dtype):
    ref = _reference(shape, omap, triv, dtype)
    x = np.random.default_rng(1).standard_normal((2, shape[1]))

    def f(L):
        m = _orth(L, shape, omap, triv, dtype)
        keys = sorted(m.state_dict())
        _load(L, m, ref)
        W = m.weight
        out = {"keys": keys, "repr": repr(m), "weight": W,
               "map": m.parametrizations.weight[0].orthogonal_map.name,
               "orthogonal": _eye_residual(L, W.detach()) < 1e-4}
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        xs = L.tensor(x, dtype=getattr(L, dtype))
        losses = []
        for _ in range(2):
            loss = (m(xs).abs() ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
        out["losses"] = losses
        out["grad"] = m.parametrizations.weight.original.grad
        out["weight after"] = m.weight
        out["still orthogonal"] = _eye_residual(L, m.weight.detach()) < 1e-4
        return out

    got = same(f)
    assert got["orthogonal"] and got["still orthogonal"]


@pytest.mark.fast_first
@pytest.mark.parametrize("shape,omap,triv,cplx", [
    ((3, 3), "cayley", True, False), ((3, 4), "householder", False, False),
    ((2, 3, 3), "matrix_exp", True, True)])
def test_right_inverse_assignment(shape, omap, triv, cplx):
    """Registering and assigning a matrix: an orthogonal (unitary) one is kept as the
    base, another orthogonalized by its QR (geqrf + householder_product); householder
    without trivialization stores the reflectors with the signs of R's diagonal. The
    weight reads back as torch's, and so does the gradient of the original."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
    q = np.linalg.qr(a if shape[-2] >= shape[-1] else np.swapaxes(a, -1, -2))[0]
    q = q if shape[-2] >= shape[-1] else np.swapaxes(q, -1, -2)

    def f(L):
        m = L.nn.Module()
        m.register_parameter("weight", L.nn.Parameter(L.tensor(a)))
        L.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                               use_trivialization=triv)
        out = {"weight at registration": m.weight, "state": dict(m.state_dict())}
        (m.weight * L.tensor(a)).real.sum().backward()
        out["grad"] = m.parametrizations.weight.original.grad
        m.weight = L.tensor(q)  # orthogonal: kept (triv) or re-factored (householder)
        out.update({"weight": m.weight, "state after": dict(m.state_dict())})
        if len(shape) == 2:
            attempt(out.setdefault("log", []), "bad shape",
                    lambda: setattr(m, "weight", L.ones(shape[0] + 1, shape[1])))
        return out

    got = same(f)
    np.testing.assert_allclose(got["weight"].values, q, rtol=0, atol=1e-10)


def test_errors_and_defaults():
    def f(L, log):
        O = L.nn.utils.parametrizations.orthogonal
        attempt(log, "1-d", lambda: _with(L, L.ones(3)))
        attempt(log, "no weight", lambda: O(L.nn.Linear(2, 2), name="nope"))
        attempt(log, "bad map", lambda: O(L.nn.Linear(2, 2), orthogonal_map="qr"))
        attempt(log, "complex householder", lambda: O(
            L.nn.Linear(2, 3, dtype=L.complex64), orthogonal_map="householder"))
        m = O(L.nn.Linear(3, 3), orthogonal_map="matrix_exp", use_trivialization=False)
        attempt(log, "assign expm untrivialized",
                lambda: setattr(m, "weight", L.eye(3)))
    same(f)


def _with(L, w):
    m = L.nn.Module()
    m.register_parameter("weight", L.nn.Parameter(w))
    return L.nn.utils.parametrizations.orthogonal(m)


def test_linalg_argument_errors():
    """torch's exception types and messages for the ops behind orthogonal."""
    def f(L, log):
        x, v = L.ones(3, 3), L.ones(3)
        li = L.linalg
        cases = {
            "qr 1-d": lambda: li.qr(v),
            "qr mode": lambda: li.qr(x, mode="full"),
            "qr int": lambda: li.qr(L.ones(3, 3, dtype=L.int64)),
            "expm 1-d": lambda: li.matrix_exp(v),
            "expm not square": lambda: L.matrix_exp(L.ones(3, 4)),
            "expm int": lambda: li.matrix_exp(L.ones(2, 2, dtype=L.int64)),
            "hh 1-d": lambda: li.householder_product(v, v),
            "hh wide": lambda: li.householder_product(L.ones(3, 4), L.ones(2)),
            "hh many tau": lambda: li.householder_product(L.ones(4, 3), L.ones(4)),
            "hh tau ndim": lambda: li.householder_product(L.ones(4, 3), L.ones(2, 2)),
            "hh tau batch": lambda: li.householder_product(L.ones(2, 4, 3), L.ones(3, 2)),
            "hh dtype": lambda: li.householder_product(L.ones(4, 3), L.ones(2).double()),
            "geqrf 1-d": lambda: L.geqrf(v),
            "ormqr 1-d": lambda: L.ormqr(v, v, x),
            "ormqr other 1-d": lambda: L.ormqr(x, v, v),
            "ormqr other rows": lambda: L.ormqr(x, v, L.ones(4, 3)),
            "ormqr other cols": lambda: L.ormqr(x, v, L.ones(3, 4), left=False),
            "ormqr tau 0-d": lambda: L.ormqr(x, L.tensor(1.0), x),
            "ormqr tau size": lambda: L.ormqr(x, L.ones(2), x),
            "ormqr tau ndim": lambda: L.ormqr(x, L.ones(1, 3), x),
            "ormqr other ndim": lambda: L.ormqr(L.ones(1, 3, 3), L.ones(1, 3), x),
            "ormqr tau batch": lambda: L.ormqr(L.ones(2, 3, 3), L.ones(1, 3), L.ones(2, 3, 3)),
            "ormqr other batch": lambda: L.ormqr(L.ones(2, 3, 3), L.ones(2, 3),
                                                 L.ones(1, 3, 3)),
            "ormqr tau dtype": lambda: L.ormqr(x, v.double(), x),
            "ormqr other dtype": lambda: L.ormqr(x, v, x.double()),
            "ormqr int": lambda: L.ormqr(x.long(), v.long(), x.long()),
            "ormqr half": lambda: L.ormqr(x.half(), v.half(), x.half()),
            "tril 1-d": lambda: L.tril(v),
            "triu 1-d": lambda: v.triu(),
            "solve shapes": lambda: li.solve(x, L.ones(4, 2)),
            "solve vector": lambda: li.solve(x, L.ones(4)),
            "solve dtype": lambda: li.solve(x, v.double()),
            "solve 1-d": lambda: li.solve(v, v),
            "solve not square": lambda: li.solve(L.ones(3, 4), v),
            "tri shapes": lambda: li.solve_triangular(x, L.ones(4, 2), upper=True),
            "tri not square": lambda: li.solve_triangular(L.ones(3, 4), x, upper=True),
        }
        for k, fn in cases.items():
            attempt(log, k, fn)
        # values and layout that orthogonal relies on
        a = L.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 4.0], [1.0, 0.0, 1.0]])
        g = L.geqrf(a)
        log.append(("geqrf", g.a, g.tau, g.a.stride(), L.linalg.householder_product(g.a, g.tau)))
        o = L.ormqr(g.a, g.tau, L.eye(4, 2))
        log.append(("ormqr", o, o.stride(), L.ormqr(g.a, g.tau, o, transpose=True)))
        for mode, rows in (("r", 3), ("complete", 4)):  # backward errors
            x = L.ones(rows, 3, requires_grad=True)
            attempt(log, f"qr {mode} backward",
                    lambda x=x, rows=rows, mode=mode:
                    L.linalg.qr(x + L.eye(rows, 3), mode=mode).R.sum().backward())
        q = L.linalg.qr(a, mode="r")
        log.append(("qr r", q.Q, q.R, q.R.stride(), L.qr(a, some=False).Q.shape, a.qr().R,
                    repr(L.linalg.qr(a)).split("(")[0].replace("eagergrad", "torch")))
    same(f, quiet=True)


def test_complex_gradients():
    """Complex inputs (the conjugate convention) and the variants the op table's real
    samples leave out: solve with a matrix rhs, solve_triangular upper and left,
    matrix_exp."""
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-1, 1, s) + 1j * rng.uniform(-1, 1, s) for s in ((3, 3), (3, 2)))

    def f(L):
        A = L.tensor(a, requires_grad=True)
        B = L.tensor(b, requires_grad=True)
        well = A + 3 * L.eye(3, dtype=A.dtype)
        outs = [L.linalg.solve(well, B), L.linalg.solve_triangular(well, B, upper=True),
                L.linalg.matrix_exp(A * 0.5)]
        loss = sum((o * o.conj()).real.sum() + o.real.sum() for o in outs)
        return outs, L.autograd.grad(loss, (A, B))

    same(f)
