"""torch.svd_lowrank, torch.pca_lowrank and torch.lobpcg against real torch.

Both libraries draw their random matrices from their own generators, so results are
compared where the draw cancels out: singular triplets of matrices whose rank is at most
q (torch's OpInfo samples: U V^H and S, and their gradients), lobpcg given its start X
(the same iterations, eigenpairs and gradients as torch), and otherwise the properties
torch's own tests check (test_linalg.py's test_svd_lowrank, test_pca_lowrank,
_test_lobpcg_method; test_autograd.py's test_lobpcg), with their tolerances."""
from unittest import mock

import numpy as np
import pytest
import torch
from conftest import attempt, same, same_error

import eagergrad as eg


def _lowrank(rng, batch, m, n, k, dtype):
    """torch's sample_inputs_singular_matrix_factors: factors a (m, k), b (n, k)."""
    def draw(*s):
        x = rng.standard_normal(s)
        return x + 1j * rng.standard_normal(s) if "complex" in dtype else x
    return draw(*batch, m, k), draw(*batch, n, k)


def _factor_scenario(fn_name, batch, m, n, k, dtype, double=True, **kwargs):
    """OpInfo's svd_lowrank / pca_lowrank sample: fn(a @ b.mT, q=k), seen through
    (U @ V^H, S), which neither the random draw nor the signs change; values, graph
    names, gradients wrt a and b, and (double) the gradient's gradient."""
    rng = np.random.default_rng(m * 10 + n + len(batch))
    a_np, b_np = _lowrank(rng, batch, m, n, k, dtype)
    outs = rng.standard_normal((*batch, m, m)), rng.standard_normal((*batch, k))

    def f(L):
        dt = getattr(L, dtype)
        a = L.tensor(a_np, dtype=dt, requires_grad=True)
        b = L.tensor(b_np, dtype=dt, requires_grad=True)
        U, S, V = getattr(L, fn_name)(a @ b.mT, q=k, **kwargs)
        UV = U @ V.mH
        ga, gb = L.autograd.grad((UV, S), (a, b), (L.tensor(outs[0], dtype=dt),
                                                   L.tensor(outs[1], dtype=S.dtype)),
                                 create_graph=double)
        if not double:
            return UV, S, ga, gb
        gga, = L.autograd.grad((ga.abs() ** 2).sum() + (gb.abs() ** 2).sum(), a)
        return UV, S, ga, gb, gga
    return f


def test_lowrank_of_low_rank_matrices():
    # rank k = q: Q spans A's range whatever the draw, so the result is A's exact SVD
    same(_factor_scenario("svd_lowrank", (), 4, 3, 2, "float64", double=False), runs=1)
    same(_factor_scenario("pca_lowrank", (), 4, 3, 2, "float64", double=False, center=True),
         runs=1)


@pytest.mark.slow
def test_lowrank_of_low_rank_matrices_deeper():
    """Complex, batched, wide, double backward (torch's OpInfo samples: gradgradcheck)."""
    same(_factor_scenario("svd_lowrank", (2,), 3, 4, 2, "complex128"), runs=1)
    same(_factor_scenario("pca_lowrank", (), 4, 3, 2, "complex128", center=True), runs=1)


def _random_lowrank(rng, rank, rows, cols, *batches):
    """torch's random_lowrank_matrix: a product of (rows, rank) and (rank, cols) factors."""
    return rng.standard_normal((*batches, rows, rank)) @ rng.standard_normal(
        (*batches, rank, cols))


def _check_svd_lowrank(a_np, q, **options):
    """torch's test_svd_lowrank checks (float64, q = min(m, n)): U diag(S) V^T
    reconstructs A, S is torch.svd(A)'s, shapes are torch.svd's."""
    a = eg.tensor(a_np)
    u, s, v = eg.svd_lowrank(a, q=q, **options)
    A = u.matmul(s.diag_embed()).matmul(v.mT)
    torch.testing.assert_close(torch.tensor(A.numpy()), torch.tensor(a_np), rtol=1e-7,
                               atol=2e-7)
    U, S, V = torch.svd(torch.tensor(a_np))
    assert (s.shape, u.shape, v.shape) == (S.shape, U.shape, V.shape)
    torch.testing.assert_close(torch.tensor(s.numpy()), S)


@pytest.mark.slow
def test_svd_lowrank_reconstructs():
    """torch's test_svd_lowrank's checks on two of its (rank, shape, batches) cases (each
    shape compiles)."""
    rng = np.random.default_rng(1)
    for rank, size, batches in [(2, (17, 4), ()), (4, (4, 17), (2, 3))]:
        _check_svd_lowrank(_random_lowrank(rng, rank, *size, *batches), min(size))


# the fast tests share one shape (each new shape compiles new kernels)
A43 = np.random.default_rng(2).standard_normal((4, 3)) + 1.0


def test_svd_lowrank_mean():
    """M: the SVD of A - M (M broadcast to A), exact when q = min(m, n), as torch's test
    checks the SVD (reconstruction, torch.svd's singular values); U, V orthonormal."""
    m_np = np.random.default_rng(3).standard_normal((1, 3))
    U, S, V = torch.svd(torch.tensor(A43 - m_np))

    def f(L):
        U, S, V = L.svd_lowrank(L.tensor(A43), q=3, M=L.tensor(m_np))
        eye = L.eye(3, dtype=L.float64)
        return (S, U @ S.diag_embed() @ V.mT, (U.mT @ U - eye).abs().max() < 1e-12,
                (V.mT @ V - eye).abs().max() < 1e-12)
    S_, USV, *ortho = same(f)
    assert all(ortho)
    np.testing.assert_allclose(S_.values, S.numpy(), rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(USV.values, A43 - m_np, rtol=1e-7, atol=2e-7)


@pytest.mark.slow
def test_svd_lowrank_approximation_error_vs_torch():
    """q < rank: the error of the randomized approximation is torch's, within the spread of
    the draw: not below the optimum (Eckart-Young), close to it with niter = 2 on a
    decaying spectrum, as torch's is."""
    rng = np.random.default_rng(3)
    u = np.linalg.qr(rng.standard_normal((30, 12)))[0]
    v = np.linalg.qr(rng.standard_normal((12, 12)))[0]
    sv = 2.0 ** -np.arange(12)
    a_np = (u * sv) @ v.T
    errs = {}
    for L in (torch, eg):
        L.manual_seed(0)
        a = L.tensor(a_np)
        U, S, V = L.svd_lowrank(a, q=4)
        errs[L] = float(L.linalg.matrix_norm(a - U @ S.diag_embed() @ V.mT, ord=2))
    best = sv[4]
    for e in errs.values():
        assert best * (1 - 1e-9) <= e < 1.5 * best
    assert errs[eg] < 1.5 * errs[torch] and errs[torch] < 1.5 * errs[eg]


def test_pca_lowrank_centres():
    """pca_lowrank: S ** 2 / (m - 1) are the covariance's eigenvalues (center=True);
    center=False: A's own SVD; q defaults to min(6, m, n)."""
    centred = A43 - A43.mean(0)
    cov_e = np.linalg.eigvalsh(centred.T @ centred / 3)[::-1]

    def f(L):
        U, S, V = L.pca_lowrank(L.tensor(A43))
        U2, S2, V2 = L.pca_lowrank(L.tensor(A43), q=3, center=False, niter=3)
        return U.shape, V.shape, S ** 2 / 3, S2, U2.shape, V2.shape
    out = same(f)
    np.testing.assert_allclose(out[2].values, cov_e, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(out[3].values, np.linalg.svd(A43)[1], rtol=1e-7)


def test_lowrank_draws_from_the_default_generator():
    a = eg.tensor(A43)
    eg.manual_seed(7)
    u1, s1, v1 = eg.svd_lowrank(a, q=2, niter=0)
    after = eg.randn(1)
    eg.manual_seed(7)
    u2, s2, v2 = eg.svd_lowrank(a, q=2, niter=0)
    assert all(np.array_equal(x.numpy(), y.numpy()) for x, y in [(u1, u2), (s1, s2), (v1, v2)])
    eg.manual_seed(7)
    eg.randn(3, 2, dtype=eg.float64)  # (svd_lowrank's one draw: n x q)
    assert np.array_equal(eg.randn(1).numpy(), after.numpy())


def test_lowrank_errors():
    same_error(lambda L: L.pca_lowrank(L.tensor(A43), q=4), "must be non-negative integer",
               ValueError)
    same_error(lambda L: L.pca_lowrank(L.tensor(A43), q=-1), "not greater than", ValueError)
    same_error(lambda L: L.pca_lowrank(L.tensor(A43), niter=-1), "niter(=-1)", ValueError)
    same_error(lambda L: L.svd_lowrank(L.tensor(A43), q=2, M=L.tensor(A43[:2])),
               "The expanded size")
    same_error(lambda L: L.svd_lowrank(L.tensor(A43[0])), "not enough values", ValueError)
    same_error(lambda L: L.svd_lowrank(A43.tolist()), "has no attribute", AttributeError)
    same_error(lambda L: L.svd_lowrank(L.ones(4, 3, dtype=L.int64), q=2),
               "expected m1 and m2 to have the same dtype")


@pytest.mark.slow
def test_lowrank_errors_and_defaults_computing():
    same_error(lambda L: L.svd_lowrank(L.ones(6, 4, dtype=L.float16), q=2),
               "not implemented for 'Half'", NotImplementedError)

    def shapes(L):  # (defaults: q=6 (more than n), niter=2; q=None, niter=None too)
        return [tuple(t.shape) for t in L.svd_lowrank(L.tensor(A43).mT)] + \
               [tuple(t.shape) for t in L.svd_lowrank(L.ones(3, 6, 4), q=None, niter=None)]
    same(shapes)


def test_sparse_layouts_refused():
    """eagergrad has no sparse tensors: a tensor claiming a sparse layout is refused,
    naming sparse, never computed as if dense."""
    a = eg.ones(9, 9, dtype=eg.float64)
    with mock.patch.object(eg.Tensor, "layout", property(lambda self: eg.sparse_coo)):
        for call in (lambda: eg.svd_lowrank(a, q=2), lambda: eg.pca_lowrank(a, q=2),
                     lambda: eg.pca_lowrank(a, q=2, center=False),
                     lambda: eg.svd_lowrank(eg.ones(9, 9), M=a), lambda: eg.lobpcg(a)):
            with pytest.raises(NotImplementedError, match="sparse"):
                call()


# ---- lobpcg -------------------------------------------------------------------------------
# One problem size throughout (9 x 9, n = 3 start vectors, k = 2): each new shape compiles
# new kernels, and lobpcg meets many shapes.
def _spd(rng, m, *batches):
    """A symmetric positive definite matrix with eigenvalues drawn in [0.5, 3]."""
    q = np.linalg.qr(rng.standard_normal((*batches, m, m)))[0]
    e = rng.uniform(0.5, 3.0, (*batches, m))
    return (q * e[..., None, :]) @ np.swapaxes(q, -1, -2)


_rng = np.random.default_rng(7)
A9, B9, X93 = _spd(_rng, 9), _spd(_rng, 9), _rng.standard_normal((9, 3))


def _signed(L, U):
    """U's columns with their largest entry positive (torch's test_lobpcg)."""
    _, idx = U.abs().max(-2, keepdim=True)
    return U * U.gather(-2, idx).sign()


def _given_x_scenario(configs, k=2, n=3):
    """With X given nothing is random: the same iterations (the tracker sees each one),
    eigenpairs, and worker state as torch's."""
    def f(L, log):
        for method, largest, generalized in configs:
            steps = []

            def tracker(w):
                steps.append((w.ivars["istep"], w.ivars["converged_count"], w.E.clone(),
                              w.tvars["rerr"].clone()))
            E, X = L.lobpcg(L.tensor(A9), k=k, B=L.tensor(B9) if generalized else None,
                            X=L.tensor(X93[:, :n]), largest=largest, method=method,
                            tracker=tracker)
            log.append((method, largest, E, _signed(L, X), steps))
    return f


def test_lobpcg_given_x_is_torchs():
    # (the shapes of the docstrings' examples: their kernels, when they ran first)
    same(_given_x_scenario([("ortho", True, False)], k=1, n=1), runs=1)


@pytest.mark.slow
def test_lobpcg_given_x_is_torchs_every_method():
    same(_given_x_scenario([(method, largest, generalized) for method in ("ortho", "basic")
                            for largest in (True, False) for generalized in (False, True)]),
         runs=1)


def test_lobpcg_errors():
    s_np = np.diag(np.arange(1.0, 10.0))
    same_error(lambda L: L.lobpcg(L.ones(9, 8)), "A must be square", AssertionError)
    same_error(lambda L: L.lobpcg(L.tensor(s_np), B=L.ones(8, 8)), "must have same shape",
               AssertionError)
    same_error(lambda L: L.lobpcg(L.tensor(s_np), k=2, n=4), "not applicable", ValueError)
    same_error(lambda L: L.lobpcg(L.tensor(s_np), X=L.ones(8, 2)), "X shape mismatch",
               AssertionError)
    same_error(lambda L: L.lobpcg(L.tensor(s_np).half()), "float16", KeyError)

    class Ctx:  # (backward's checks, on what a complex forward would have saved)
        def __init__(self, L):
            z = L.zeros(9, 9, dtype=L.complex128)
            self.saved_tensors = (z, None, L.zeros(2, dtype=L.complex128), z[:, :2])
            self.largest, self.needs_input_grad = True, (True,) + (False,) * 13
    same_error(lambda L: (torch._lobpcg if L is torch else eg._lobpcg)
               .LOBPCGAutogradFunction.backward(Ctx(L), None, None),
               "does not support complex input", ValueError)


@pytest.mark.slow
def test_lobpcg_errors_computing():
    """The errors raised once lobpcg computes: backward with B (whichever requires grad),
    an integer A."""
    same_error(lambda L: L.lobpcg(L.tensor(A9).int()), "the same dtype")
    same_error(lambda L: L.lobpcg(L.tensor(A9), k=2, B=L.tensor(B9).requires_grad_(),
                                  X=L.tensor(X93))[0].sum().backward(), "B != I", ValueError)
    same_error(lambda L: L.lobpcg(L.tensor(A9).requires_grad_(), k=2, B=L.tensor(B9),
                                  X=L.tensor(X93))[0].sum().backward(), "B != I", ValueError)


def _lobpcg_grad_scenario(largest, double):
    """torch's test_autograd test_lobpcg, on a well-conditioned A (its own near-singular
    one has eigenpairs converged only to tol, which the two libraries round differently):
    the gradient for given output gradients, symmetric, and (double) its gradient."""
    rng = np.random.default_rng(11)
    d_np, u_np = rng.random(2) / 100, rng.random((9, 2)) / 100

    def f(L):
        A = L.tensor(A9, requires_grad=True)
        D, U = L.lobpcg(A=A, k=2, X=L.tensor(X93), largest=largest)
        U = _signed(L, U)
        g, = L.autograd.grad((D * L.tensor(d_np)).sum() + (U * L.tensor(u_np)).sum(), A,
                             create_graph=double)
        out = [D, U, g, (g - g.mT).abs().max() == 0]
        if double:
            out.append(L.autograd.grad((g * g).sum(), A)[0])
        return out
    return f


@pytest.mark.slow
def test_lobpcg_backward():
    same(_lobpcg_grad_scenario(False, double=False), runs=1)
    same(_lobpcg_grad_scenario(True, double=True), runs=1)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_lobpcg_method(method):
    """torch's _test_lobpcg_method on dense inputs (random start: eagergrad's draw): the
    eigen equations hold, E is eigvalsh's, and the tracker's checks at convergence."""
    rng = np.random.default_rng(8)
    prec = 5e-4

    def tracker(worker):
        k = worker.iparams["k"]
        if k <= worker.ivars["converged_count"]:
            assert float(worker.tvars["rerr"][:k].max()) <= worker.fparams["tol"]
            eye = np.eye(k)
            X = worker.X[:, :k]
            B = worker.B
            XBX = (X.mT @ (X if B is None else B @ X)).numpy()
            np.testing.assert_allclose(XBX, eye, atol=1e-7)
            XAX = (X.mT @ worker.A @ X).numpy() / worker.E[:k].numpy()
            np.testing.assert_allclose(XAX, eye, atol=0.2)

    def lobpcg(*args, **kwargs):
        return eg.lobpcg(*args, tracker=tracker, niter=1000, method=method, tol=1e-8, **kwargs)

    for batches in [(), (2,)]:
        for m, n, k in [(9, 3, 1), (9, 3, 2)]:  # (of torch's cases: those of size 9, n 3)
            A = eg.tensor(_spd(rng, m, *batches))
            B = eg.tensor(_spd(rng, m, *batches))
            e = np.linalg.eigvalsh(A.numpy())
            E, V = lobpcg(A, k=k, n=n, largest=False)
            assert E.shape == batches + (k,) and V.shape == batches + (m, k)
            np.testing.assert_allclose((A @ V).numpy(), (V @ E.diag_embed()).numpy(),
                                       atol=prec)
            np.testing.assert_allclose(E.numpy(), e[..., :k], rtol=1e-7, atol=1e-7)
            E, V = lobpcg(A, k=k, n=n, largest=True)
            np.testing.assert_allclose(E.numpy(), e[..., ::-1][..., :k], atol=prec)
            np.testing.assert_allclose((A @ V).numpy(), (V @ E.diag_embed()).numpy(),
                                       atol=prec)
            E, V = lobpcg(A, B=B, k=k, n=n, largest=False)
            np.testing.assert_allclose((A @ V).numpy(), (B @ V @ E.diag_embed()).numpy(),
                                       atol=prec)
            E, V = lobpcg(A, B=B, k=k, n=n, largest=True)
            top = E.max()
            np.testing.assert_allclose((A @ V / top).numpy(),
                                       (B @ V @ (E / top).diag_embed()).numpy(), atol=prec)


@pytest.mark.slow
def test_lobpcg_nondefault_parameters():
    """niter (a hard stop), tol, ortho_*params, a preconditioner iK: given X, the same as
    torch (the tracker's view included)."""
    ik_np = np.linalg.inv(A9 + np.eye(9))

    def f(L, log):
        def tracker(w):
            log.append((w.ivars["istep"], sorted(w.fvars), w.ivars.get("ortho_i")))
        for label, kw in [("niter", {"niter": 2}), ("tol", {"tol": 1e-4}),
                          ("ortho params", {"ortho_iparams": {"ortho_i_max": 1},
                                            "ortho_fparams": {"ortho_tol": 1e-5},
                                            "ortho_bparams": {"ortho_use_drop": True}}),
                          ("basic, iK", {"method": "basic", "iK": L.tensor(ik_np)})]:
            X = L.tensor(X93)
            attempt(log, label, lambda: [
                t if i == 0 else _signed(L, t) for i, t in enumerate(L.lobpcg(
                    L.tensor(A9), k=2, X=X, tracker=tracker, **kw))])
            # (method "basic" writes its first Ritz vectors into X, as torch; eigh's signs)
            log.append(_signed(L, X))
    same(f, runs=1)


def test_torch_function_dispatch():
    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, len(args), sorted((kwargs or {}).items(), key=str)
    same(lambda L: (L.svd_lowrank(Like(), q=3), L.pca_lowrank(Like()),
                    L.lobpcg(Like(), k=1)))
