"""Samples for the linalg ops (merged into _samples.SAMPLES), same format as _samples.py.

einsum has no op-table entry (ATen decomposes it, and so do we): its samples sit under
the op its graph ends in or is built around (bmm for contractions, mul for products
without a sum, sum_dim / permute for one operand). torch.linalg's functions are likewise
compositions, filed under their nodes' ops. SPECIAL holds samples at non-differentiable
points (zero vectors, ties), compared with torch by the special-points test.
"""
import math

import numpy as np
from _samples import POS, UNIT, C, F, I, S, T, V  # noqa: F401

INF = math.inf

SAMPLES = {
    "bmm": [
        S(lambda m, a, b: m.einsum("ij,jk->ik", a, b), F(3, 4), F(4, 2), name="einsum matmul"),
        S(lambda m, a, b: m.einsum("bij,bjk->bik", a, b), F(2, 3, 4), F(2, 4, 2),
          name="einsum batch matmul"),
        S(lambda m, a, b: m.einsum("i,i->", a, b), F(4), F(4), name="einsum dot"),
        S(lambda m, a, b: m.einsum("ij,ij->i", a, b), F(3, 4), F(3, 4),
          name="einsum row dot"),
        S(lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), F(2, 1, 3, 4), F(5, 4, 2),
          name="einsum ellipsis broadcast"),
        S(lambda m, a, b: m.einsum("ij,jk", a, b), F(3, 4), F(4, 2), name="einsum implicit"),
        S(lambda m, a, b: m.einsum("ij,jk->ki", a, b), F(3, 4), F(4, 2),
          name="einsum swapped operands"),
        S(lambda m, a, b: m.einsum("bhqd,bhkd->bhqk", a, b), F(2, 2, 3, 4), F(2, 2, 2, 4),
          name="einsum attention scores"),
        S(lambda m, a, b: m.einsum("ij,jk->", a, b), F(3, 4), F(4, 2),
          name="einsum summed out"),
        S(lambda m, a, b: m.einsum("ii,ij->j", a, b), F(3, 3), F(3, 2),
          name="einsum diagonal operand"),
        S(lambda m, a, b: m.einsum("ij,j->i", a, b), F(3, 4), F(4, rg=False),
          name="einsum one input needs grad"),
        S(lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), F(2, 3), F(3, 4), F(4, 2),
          name="einsum 3 operands (opt_einsum path)"),
        S(lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), F(4, 3), F(3, 4), F(4, 2),
          name="einsum 3 operands, right pair first"),
        S(lambda m, a, b, c: m.einsum("ab,bc,ca->", a, b, c), F(2, 3), F(3, 4), F(4, 2),
          name="einsum 3 operands trace"),
        S(lambda m, a, b, c, d: m.einsum("ij,jk,kl,lm->im", a, b, c, d), F(2, 3), F(3, 4),
          F(4, 5), F(5, 2), name="einsum 4 operands"),
        S(lambda m, a, b, c: m.einsum("ij,j,jk->ki", a, b, c), F(2, 3), F(3), F(3, 4),
          name="einsum 3 operands, mul then bmm"),
        S(lambda m, a, b: m.einsum("ij,jk->ik", [a, b]), F(3, 4), F(4, 2),
          name="einsum list form"),
        S(lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2]), F(3, 4), F(4, 2),
          name="einsum sublist form"),
        S(lambda m, a, b: m.einsum("ij,jk->ik", a, b), C(3, 4), C(4, 2),
          name="einsum complex matmul"),
        S(lambda m, a, b: m.einsum("bij,bjk->bik", a, b), C(2, 3, 4), C(2, 4, 2),
          name="einsum complex batch"),
        S(lambda m, a, b: m.einsum("i,i->", a, b), C(4), C(4), name="einsum complex dot"),
        S(lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), C(2, 1, 3, 4), C(5, 4, 2),
          name="einsum complex ellipsis"),
        S(lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), C(2, 3), C(3, 4), C(4, 2),
          name="einsum complex 3 operands"),
    ],
    "mul": [
        S(lambda m, a, b: m.einsum("i,j->ij", a, b), F(3), F(4), name="einsum outer"),
        S(lambda m, a, b: m.einsum("ij,ij->ij", a, b), F(3, 4), F(3, 4),
          name="einsum elementwise"),
        S(lambda m, a, b: m.einsum("ij,ij->ij", a, b), F(3, 4), F(3, 1),
          name="einsum elementwise broadcast"),
        S(lambda m, a, b: m.einsum("i,j->ij", a, b), C(3), C(4), name="einsum complex outer"),
        S(lambda m, a, b: m.einsum("ij,ij->ij", a, b), C(3, 4), C(3, 4),
          name="einsum complex elementwise"),
    ],
    "sum_dim": [
        S(lambda m, x: m.einsum("ii->", x), F(3, 3), name="einsum trace"),
        S(lambda m, x: m.einsum("ij->", x), F(3, 4), name="einsum sum"),
        S(lambda m, x: m.einsum("ij->j", x), F(3, 4), name="einsum column sums"),
        S(lambda m, x: m.einsum("bii->b", x), F(2, 3, 3), name="einsum batch trace"),
        S(lambda m, x: m.einsum("ii->", x), C(3, 3), name="einsum complex trace"),
        S(lambda m, x: m.einsum("ij->j", x), C(3, 4), name="einsum complex column sums"),
        S(lambda m, x, y: m.linalg.vecdot(x, y), F(3, 4), F(3, 4), name="linalg.vecdot"),
        S(lambda m, x, y: m.linalg.vecdot(x, y, dim=0), F(3, 4), F(3, 1),
          name="linalg.vecdot dim 0 broadcast"),
        S(lambda m, x, y: m.linalg.vecdot(x, y), C(3, 4), C(4), name="linalg.vecdot complex"),
        S(lambda m, x, y: m.linalg.vecdot(x, y, dim=0), C(3, 4), C(3, 4),
          name="linalg.vecdot complex dim 0"),
    ],
    "permute": [
        S(lambda m, x: m.einsum("ij->ji", x), F(3, 4), name="einsum transpose"),
        S(lambda m, x: m.einsum("ii->i", x), F(3, 3), name="einsum diagonal"),
        S(lambda m, x: m.einsum("...ij->...ji", x), F(2, 3, 4), name="einsum ellipsis transpose"),
        S(lambda m, x: m.einsum("ii->i", x), C(3, 3), name="einsum complex diagonal"),
    ],
    "diagonal": [
        S(lambda m, x: m.linalg.diagonal(x), F(2, 3, 4), name="linalg.diagonal"),
        S(lambda m, x: m.linalg.diagonal(x, offset=1, dim1=0, dim2=2), F(2, 3, 4),
          name="linalg.diagonal offset dims"),
    ],
    "linalg_vector_norm": [
        S(lambda m, x: m.linalg.vector_norm(x), F(3, 4), name="linalg.vector_norm"),
        S(lambda m, x: m.linalg.vector_norm(x, 3, dim=(0, 1)), F(3, 4),
          name="linalg.vector_norm 3 tuple dim"),
        S(lambda m, x: m.linalg.vector_norm(x, 0.5, dim=-1, keepdim=True), F(3, 4),
          name="linalg.vector_norm 0.5"),
        S(lambda m, x: m.linalg.vector_norm(x, -INF, dim=0), F(3, 4),
          name="linalg.vector_norm -inf"),
        S(lambda m, x: m.linalg.vector_norm(x, 1, dim=1), C(3, 4),
          name="linalg.vector_norm complex 1"),
        S(lambda m, x: m.linalg.vector_norm(x, 3), C(3, 4), name="linalg.vector_norm complex 3"),
        S(lambda m, x: m.linalg.vector_norm(x, INF, dim=0), C(3, 4),
          name="linalg.vector_norm complex inf"),
        S(lambda m, x: m.linalg.norm(x), F(2, 3, 4), name="linalg.norm flattened"),
        S(lambda m, x: m.linalg.norm(x, 3, dim=1), F(3, 4), name="linalg.norm vector ord"),
        S(lambda m, x: m.linalg.norm(x, "fro"), F(3, 4), name="linalg.norm fro"),
        S(lambda m, x: m.linalg.norm(x, dim=(0, 1), keepdim=True), C(3, 4),
          name="linalg.norm complex 2-tuple dim"),
        S(lambda m, x: m.linalg.matrix_norm(x), F(2, 3, 4), name="linalg.matrix_norm fro"),
        S(lambda m, x: m.linalg.matrix_norm(x, "fro", dim=(2, 0)), C(2, 3, 4),
          name="linalg.matrix_norm complex fro dims"),
    ],
    "amax": [
        S(lambda m, x: m.linalg.matrix_norm(x, 1), F(3, 4), name="linalg.matrix_norm 1"),
        S(lambda m, x: m.linalg.matrix_norm(x, INF, keepdim=True), F(2, 3, 4),
          name="linalg.matrix_norm inf keepdim"),
        S(lambda m, x: m.linalg.norm(x, 1), F(3, 4), name="linalg.norm matrix 1"),
        S(lambda m, x: m.linalg.matrix_norm(x, 1), C(3, 4), name="linalg.matrix_norm complex 1"),
    ],
    "amin": [
        S(lambda m, x: m.linalg.matrix_norm(x, -1, dim=(1, 0)), F(3, 4),
          name="linalg.matrix_norm -1 swapped dims"),
        S(lambda m, x: m.linalg.norm(x, -INF, dim=(0, 1)), F(3, 4),
          name="linalg.norm matrix -inf"),
    ],
    "mm": [
        S(lambda m, a, b: m.linalg.matmul(a, b), F(3, 4), F(4, 2), name="linalg.matmul"),
        S(lambda m, a, b: m.linalg.multi_dot([a, b]), F(4), F(4, 2), name="linalg.multi_dot 2"),
        S(lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), F(2, 3), F(3, 4), F(4),
          name="linalg.multi_dot 3"),
        S(lambda m, a, b, c, d: m.linalg.multi_dot([a, b, c, d]), F(2, 3), F(3, 4), F(4, 5),
          F(5, 2), name="linalg.multi_dot 4 (chain order)"),
        S(lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), C(3), C(3, 4), C(4, 2),
          name="linalg.multi_dot complex"),
    ],
    "dist": [
        S(lambda m, x, y: m.dist(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: x.dist(y, 1), F(3, 4), F(4), name="p=1 broadcast"),
        S(lambda m, x, y: m.dist(x, y, 3), F(3, 4), F(3, 4), name="p=3"),
        S(lambda m, x, y: m.dist(x, y, 0.5), F(3, 4), F(3, 4), name="p=0.5"),
        S(lambda m, x, y: m.dist(x, y, 1.5), F(3, 4), F(3, 4), name="p=1.5"),
        S(lambda m, x, y: m.dist(x, y, INF), F(3, 4), F(3, 4), name="p=inf"),
        S(lambda m, x, y: m.dist(x, y, -INF), F(3, 4), F(3, 4), name="p=-inf"),
        S(lambda m, x, y: m.dist(x, y, -1), F(3, 4), F(3, 4), name="p=-1"),
        S(lambda m, x, y: m.dist(x, y), F(3, 4), F(3, 4, rg=False), name="other constant"),
        S(lambda m, x, y: m.dist(x, y, 3), F(3, 4, rg=False), F(3, 4), name="self constant"),
        S(lambda m, x, y: m.dist(x, y), F(3, 4), T("float64", 4), name="promotes to float64"),
        S(lambda m, x, y: m.dist(x, y, 0), F(3, 4), F(3, 4), name="p=0: torch's backward fails",
          backward_error="Expected a proper Tensor but got None"),
        S(lambda m, x, y: m.dist(x, y), C(3, 4), C(4), name="complex"),
        S(lambda m, x, y: m.dist(x, y, 1), C(3, 4), C(3, 4), name="complex p=1"),
        S(lambda m, x, y: m.dist(x, y, 3), C(3, 4), C(3, 4), name="complex p=3"),
        S(lambda m, x, y: m.dist(x, y, INF), C(3, 4), C(3, 4), name="complex p=inf"),
    ],
}

_ORDS = (0, 1, 2, 3, 0.5, INF, -INF)
_ZERO = [1.0, -2.0, 3.0, 0.5]


def _dist(p):
    return lambda m, x, y: m.dist(x, y, p)


def _vnorm(p, **kw):
    return lambda m, x: m.linalg.vector_norm(x, p, **kw)


SPECIAL = {
    "dist": [
        # self == other: the zero vector, for every p
        *[S(_dist(p), V(_ZERO), V(_ZERO), name=f"zero vector p={p}",
            backward_error="Expected a proper Tensor" if p == 0 else None) for p in _ORDS],
        S(_dist(0), V(_ZERO), V(_ZERO, rg=False), name="zero vector p=0, other constant"),
        *[S(_dist(p), V([0j, 1 - 2j, 0.5j], "c"), V([0j, 1 - 2j, 0.5j], "c"),
            name=f"complex zero vector p={p}",
            backward_error="Expected a proper Tensor" if p == 0 else None) for p in _ORDS],
        # some entries of self - other are 0
        *[S(_dist(p), V([1.0, 0.0, -2.0]), V([0.0, 0.0, 0.0]), name=f"partly zero p={p}")
          for p in (1, 2, 3, 0.5, 1.5, -1)],
        # ties of |self - other| for the inf norms
        S(_dist(INF), V([1.0, -3.0, 3.0]), V([0.0, 0.0, 0.0]), name="inf ties"),
        S(_dist(-INF), V([1.0, -1.0, 3.0]), V([0.0, 0.0, 0.0]), name="-inf ties"),
        S(_dist(INF), V([[2.0, 5.0], [-1.0, 1.0]]), V([1.0, 3.0]), name="inf ties broadcast"),
    ],
    "linalg_vector_norm": [
        *[S(_vnorm(p), V([0.0, 0.0, 0.0]), name=f"zero vector ord={p}") for p in _ORDS],
        *[S(_vnorm(p, dim=1), V([[0.0, 0.0], [3.0, -4.0]]), name=f"zero row ord={p}")
          for p in _ORDS],
        *[S(_vnorm(p), V([0j, 0j], "c"), name=f"complex zero vector ord={p}") for p in _ORDS],
        S(_vnorm(0.5), V([0.0, 1.0, -2.0]), name="partly zero ord=0.5"),
        S(_vnorm(1.5), V([0.0, 1.0, -2.0]), name="partly zero ord=1.5"),
        S(_vnorm(3), V([0.0, 1.0, -2.0]), name="partly zero ord=3"),
        S(_vnorm(INF), V([1.0, -3.0, 3.0]), name="inf ties"),
        S(_vnorm(-INF), V([1.0, -1.0, 3.0]), name="-inf ties"),
        S(_vnorm(INF, dim=0), V([[2.0, -1.0], [-2.0, 1.0]]), name="inf ties per column"),
        S(_vnorm(INF), V([1j, -1 + 0j, 0.5 + 0j], "c"), name="complex inf ties"),
    ],
}


def _eye3(m, a):
    return 3 * m.eye(a.shape[-1], dtype=a.dtype)  # keeps A well conditioned


def _generic(m, x):
    """x plus a fixed full-rank matrix: the sweep's constant inputs (0, 1) are then not
    rank deficient, where LAPACK builds differ in the reflectors they pick."""
    r, c = x.shape[-2:]
    d = (np.arange(r * c).reshape(r, c) ** 2 % 7 - 3.0) / 2
    return x + m.tensor(d, dtype=x.dtype)


# decompositions and matrix functions: tiny well-conditioned inputs (torch's gradcheck
# passes on each); householder's tau negative so that every reflector is invertible.
# Few samples, to keep the suite cheap: complex solve, solve_triangular (upper, left) and
# matrix_exp are compared with torch in test_orthogonal.py (test_complex_gradients), as
# are qr's backward errors (mode "r", complete mode of a tall matrix)
SAMPLES.update({
    "tril": [
        S(lambda m, x: x.tril(-1), F(2, 3, 3), name="batched, diagonal -1"),
    ],
    "triu": [
        S(lambda m, x: m.triu(x, 1), F(4, 3)),
    ],
    "linalg_solve_triangular": [
        S(lambda m, a, b: m.linalg.solve_triangular(a + _eye3(m, a), b, upper=False,
                                                    left=False, unitriangular=True),
          F(3, 3), F(2, 2, 3), name="right, unitriangular, broadcast"),
    ],
    "_linalg_solve_ex": [
        S(lambda m, a, b: m.linalg.solve(a + _eye3(m, a), b), F(2, 3, 3), F(3),
          name="batched, vector rhs"),
        S(lambda m, a, b: m.linalg.solve_ex(_generic(m, a), b, left=False), F(3, 3), F(2, 2, 3),
          name="solve_ex, right, broadcast"),
        S(lambda m, a, b: m.linalg.solve(_generic(m, a).mT, b), F(3, 3), F(3, 2),
          name="non-contiguous A (no transposed LU)"),
        S(lambda m, a, b: m.linalg.solve(_generic(m, a), b), C(2, 3, 3), C(3, 2),
          name="complex"),
        S(lambda m, a, b: m.linalg.tensorsolve(a + 3 * m.eye(3, dtype=a.dtype).reshape(3, 3, 1), b),
          F(3, 3, 1), F(3), name="linalg.tensorsolve"),
        S(lambda m, a, b: m.linalg.tensorsolve(_generic(m, a.reshape(6, 6)).reshape(6, 2, 3), b,
                                               dims=(0,)), F(6, 2, 3), F(2, 3),
          name="linalg.tensorsolve dims"),
    ],
    "linalg_matrix_exp": [
        S(lambda m, x: x.matrix_exp(), F(2, 2, 2, lo=-1.0, hi=1.0), name="batched"),
    ],
    "linalg_qr": [
        S(lambda m, x: m.linalg.qr(_generic(m, x)), F(4, 3)),
        S(lambda m, x: tuple(m.linalg.qr(_generic(m, x), mode="complete")), F(3, 4),
          name="wide complete"),
        S(lambda m, x: m.linalg.qr(_generic(m, x)), C(2, 3, 3), name="complex batched"),
    ],
    "geqrf": [
        S(lambda m, x: m.geqrf(x), F(4, 3), backward_error="the derivative for 'geqrf' is not "
          "implemented"),
    ],
    "linalg_householder_product": [
        S(lambda m, x, t: m.orgqr(x, t), F(2, 3, 3, lo=-1.0, hi=1.0),
          F(2, 2, lo=-0.5, hi=-0.1), name="orgqr, batched, fewer reflectors"),
        S(lambda m, x, t: m.linalg.householder_product(x, t), C(3, 2, lo=-1.0, hi=1.0),
          C(2, lo=-0.5, hi=-0.1), name="complex", double_backward=False),
    ],
    "ormqr": [
        S(lambda m, x, t, c: m.ormqr(x, t, c), F(4, 3, lo=-1.0, hi=1.0),
          F(3, lo=-0.5, hi=-0.1), F(4, 2)),
        S(lambda m, x, t, c: x.ormqr(t, c, left=False, transpose=True),
          F(2, 3, 2, lo=-1.0, hi=1.0), F(2, 2, lo=-0.5, hi=-0.1), F(2, 4, 3),
          name="right, transposed, batched"),
        S(lambda m, x, t, c: m.ormqr(x, t, c, True, True), F(2, 4, lo=-1.0, hi=1.0),
          F(2, lo=-0.5, hi=-0.1), F(2, 3), name="wide reflectors, transposed"),
        S(lambda m, x, t, c: m.ormqr(x, t, c, left=False), C(3, 2, lo=-1.0, hi=1.0),
          C(2, lo=-0.5, hi=-0.1), C(2, 3), name="complex, right"),
    ],
})

_ANALYTIC_INV = "rational in A's entries, analytic wherever A is invertible (no kinks)"
SMOOTH = {
    "tril": "linear (a mask): the same formula at every point",
    "triu": "linear (a mask): the same formula at every point",
    "linalg_solve_triangular": _ANALYTIC_INV,
    "_linalg_solve_ex": _ANALYTIC_INV,
    "linalg_matrix_exp": "an entire function of the matrix: analytic everywhere",
    "linalg_qr": "analytic for full-rank input (torch's formula needs R invertible; rank-"
                 "deficient input has no derivative)",
    "geqrf": "torch has no derivative for it (backward raises): nothing to sweep",
    "linalg_householder_product": "a polynomial in input and tau: no special points",
    "ormqr": "a polynomial in input, tau and other: no special points",
}


# ---- decompositions of ops/linalg_decomp.py and ops/linalg_solvers.py, and their
# compositions (linalg_compose.py). The inputs are functions of the sampled x that stay
# well-posed at the sweep's x = 0 and x = 1: _generic(x) (full rank, distinct singular
# values), _herm(x) (Hermitian, distinct eigenvalues), _spd(x) (positive-definite), _tri(x)
# (a triangle with a dominant diagonal). Outputs that depend on the arbitrary signs
# (phases) of singular vectors and eigenvectors enter through gauge-invariant functions, as
# in torch's OpInfo (|U|, U f(S) Vh): LAPACK builds pick different signs. Functions of the
# triangle a kernel reads (cholesky's, eigh's) get inputs it is the whole of (symmetric,
# triangular), so that finite differences see the formula's gradient.
def _herm(m, x):
    n = x.shape[-1]
    return x + x.mH + m.tensor(np.diag(np.arange(n) * 3.0), dtype=x.dtype)


def _spd(m, x):
    return x @ x.mH + x.shape[-1] * m.eye(x.shape[-1], dtype=x.dtype)


def _tri(m, x, upper=False):
    t = x.triu() if upper else x.tril()
    return t + _eye3(m, x)


def _abs_sum(t, dim=-1):
    return t.abs().sum(dim)  # (a reduction: torch's abs keeps the LAPACK layout, ours not)


def _svd_parts(usv):
    U, S_, Vh = usv
    return _abs_sum(U), S_, _abs_sum(Vh, -2)


def _svd_product(usv):
    U, S_, Vh = usv
    return (U * (S_ * S_).unsqueeze(-2).to(U.dtype)) @ Vh  # A A^H A: phase-free


def _eig_parts(lv):
    return lv[0], _abs_sum(lv[1])


def _eigh_product(lv):
    L_, V_ = lv
    return (V_ * (L_ * L_).unsqueeze(-2).to(V_.dtype)) @ V_.mH


_BACKWARD_INPLACE = "modified by an inplace operation"  # torch's own cond(ord 1/fro) backward

SAMPLES.update({
    "_linalg_svd": [
        # (full_matrices of a tall matrix: U's last columns are any basis of the complement,
        # to which torch's formula gives no gradient; jax has no derivative for them)
        S(lambda m, x: _svd_parts(m.linalg.svd(_generic(m, x))), F(4, 3), name="linalg.svd",
          jax=False, fd=False),
        S(lambda m, x: _svd_product(m.linalg.svd(_generic(m, x), full_matrices=False)),
          F(2, 3, 5), name="wide, reduced, batched: U S^2 Vh"),
        S(lambda m, x: m.linalg.svdvals(_generic(m, x)), F(3, 4), name="linalg.svdvals"),
        S(lambda m, x: _svd_parts(m.svd(_generic(m, x))), F(4, 3), name="torch.svd (V)"),
        S(lambda m, x: _svd_parts(m.svd(_generic(m, x), some=False))[:2], F(3, 4),
          name="torch.svd some=False: U, S", jax=False),
        S(lambda m, x: tuple(m.svd(_generic(m, x), compute_uv=False)), F(2, 4, 3),
          name="torch.svd compute_uv=False"),
        S(lambda m, x: _svd_parts(m.linalg.svd(_generic(m, x))), C(3, 3), name="complex"),
        S(lambda m, x: _svd_product(m.linalg.svd(_generic(m, x), full_matrices=False)), C(4, 3),
          name="complex, U S^2 Vh"),
        S(lambda m, x: m.linalg.svdvals(_generic(m, x)), C(2, 3, 4), name="complex svdvals"),
        S(lambda m, x: m.linalg.matrix_norm(_generic(m, x), 2), F(3, 4),
          name="linalg.matrix_norm 2"),
        S(lambda m, x: m.linalg.matrix_norm(_generic(m, x.permute(1, 0, 2)).permute(1, 0, 2),
                                            -2, dim=(0, 2), keepdim=True), F(3, 2, 4),
          name="linalg.matrix_norm -2, dims, keepdim"),
        S(lambda m, x: m.linalg.matrix_norm(_generic(m, x), "nuc"), C(2, 3, 4),
          name="linalg.matrix_norm nuc complex"),
        S(lambda m, x: m.linalg.norm(_generic(m, x.float()), "nuc", dtype=m.float64), F(3, 3),
          name="linalg.norm nuc, dtype", fd=False),
        S(lambda m, x: m.nuclear_norm(_generic(m, x.mT).mT, dim=(0, 1), keepdim=True),
          F(4, 3), name="torch.nuclear_norm"),
        S(lambda m, x: m.norm(_generic(m, x), "nuc", dim=(2, 1), keepdim=True), F(3, 2, 4),
          name="torch.norm nuc"),
        S(lambda m, x: m.linalg.cond(_generic(m, x)), F(3, 3), name="linalg.cond"),
        S(lambda m, x: m.linalg.cond(_generic(m, x), -2), F(2, 3, 4), name="linalg.cond -2"),
        S(lambda m, x: m.linalg.cond(_generic(m, x), "nuc"), C(3, 3),
          name="linalg.cond nuc complex"),
        S(lambda m, x: m.linalg.matrix_rank(_generic(m, x)), F(2, 4, 3), nondiff=True,
          name="linalg.matrix_rank"),
    ],
    "_linalg_eigh": [
        S(lambda m, x: _eig_parts(m.linalg.eigh(_herm(m, x))), F(3, 3), name="linalg.eigh"),
        S(lambda m, x: m.linalg.eigvalsh(_herm(m, x), UPLO="U"), F(2, 3, 3),
          name="linalg.eigvalsh upper, batched"),
        S(lambda m, x: _eig_parts(m.linalg.eigh(_herm(m, x), UPLO="U")), C(3, 3),
          name="complex, upper"),
        S(lambda m, x: _eigh_product(m.linalg.eigh(_herm(m, x))), C(2, 3, 3),
          name="complex V L^2 V^H"),
        S(lambda m, x: m.linalg.matrix_rank(_herm(m, x), hermitian=True), F(3, 3), nondiff=True,
          name="linalg.matrix_rank hermitian"),
    ],
    "linalg_eig": [
        S(lambda m, x: _eig_parts(m.linalg.eig(_generic(m, x))), F(3, 3), name="linalg.eig"),
        S(lambda m, x: m.linalg.eigvals(_generic(m, x)), F(2, 3, 3),
          name="linalg.eigvals batched"),
        S(lambda m, x: _eig_parts(m.linalg.eig(_generic(m, x))), C(3, 3), name="complex"),
    ],
    "linalg_cholesky_ex": [
        S(lambda m, x: m.linalg.cholesky(_spd(m, x)), F(3, 3), name="linalg.cholesky"),
        S(lambda m, x: tuple(m.linalg.cholesky_ex(_spd(m, x), upper=True)), F(2, 3, 3),
          name="cholesky_ex upper, batched"),
        S(lambda m, x: m.linalg.cholesky(_spd(m, x)), C(3, 3), name="complex"),
    ],
    "cholesky": [
        S(lambda m, x: m.cholesky(_spd(m, x)), F(3, 3), name="torch.cholesky"),
        S(lambda m, x: _spd(m, x).cholesky(upper=True), C(3, 3),
          name="Tensor.cholesky upper, complex"),
    ],
    "linalg_inv_ex": [
        S(lambda m, x: m.linalg.inv(x + _eye3(m, x)), F(3, 3), name="linalg.inv"),
        S(lambda m, x: tuple(m.linalg.inv_ex(_generic(m, x))), F(2, 3, 3),
          name="inv_ex batched"),
        S(lambda m, x: m.inverse(_generic(m, x).mT), F(3, 3), name="torch.inverse non-contiguous"),
        S(lambda m, x: _generic(m, x).inverse(), C(3, 3), name="complex (Tensor.inverse)"),
        S(lambda m, x: m.linalg.matrix_power(_generic(m, x), -2), F(3, 3),
          name="linalg.matrix_power -2"),
        S(lambda m, x: m.linalg.tensorinv(_generic(m, x.reshape(4, 4)).reshape(4, 2, 2), ind=1),
          F(4, 2, 2), name="linalg.tensorinv"),
        S(lambda m, x: m.linalg.cond(_generic(m, x), 1), F(3, 3), name="linalg.cond 1",
          backward_error=_BACKWARD_INPLACE),
        S(lambda m, x: m.linalg.cond(_generic(m, x), "fro"), F(2, 3, 3),
          name="linalg.cond fro", backward_error=_BACKWARD_INPLACE),
    ],
    "_linalg_det": [
        S(lambda m, x: m.linalg.det(_generic(m, x)), F(3, 3), name="linalg.det"),
        S(lambda m, x: x.det(), F(2, 3, 3), name="Tensor.det batched (singular at 0 and 1)"),
        S(lambda m, x: m.det(_generic(m, x).mT), F(3, 3), name="torch.det non-contiguous"),
        S(lambda m, x: m.linalg.det(_generic(m, x)), C(2, 3, 3), name="complex"),
    ],
    "_linalg_slogdet": [
        S(lambda m, x: tuple(m.linalg.slogdet(_generic(m, x))), F(3, 3), name="linalg.slogdet"),
        S(lambda m, x: tuple(x.slogdet()), C(2, 3, 3), name="complex Tensor.slogdet"),
        S(lambda m, x: m.logdet(_spd(m, x)), F(3, 3), name="torch.logdet"),
        S(lambda m, x: m.logdet(_generic(m, x)), C(3, 3), name="torch.logdet complex"),
    ],
    "linalg_lstsq": [
        S(lambda m, a, b: tuple(m.linalg.lstsq(_generic(m, a), b)), F(4, 3), F(4, 2),
          name="linalg.lstsq (gelsy)"),
        S(lambda m, a, b: tuple(m.linalg.lstsq(_generic(m, a), b, driver="gelsd")), F(2, 4, 3),
          F(1, 4, 2), name="gelsd, residuals, broadcast"),
        S(lambda m, a, b: tuple(m.linalg.lstsq(_generic(m, a), b, driver="gels")), F(4, 3),
          F(4), name="gels, vector"),
        S(lambda m, a, b: m.linalg.lstsq(_generic(m, a), b).solution, F(3, 4), F(3, 2),
          name="wide (minimum norm)"),
        S(lambda m, a, b: tuple(m.linalg.lstsq(_generic(m, a), b, driver="gelss")), C(4, 3),
          C(4, 2), name="complex gelss"),
    ],
    "linalg_pinv": [
        S(lambda m, x: m.linalg.pinv(_generic(m, x)), F(4, 3), name="linalg.pinv"),
        S(lambda m, x: m.linalg.pinv(_generic(m, x)), C(2, 3, 4), name="complex wide batched"),
        S(lambda m, x: m.linalg.pinv(_herm(m, x), hermitian=True), F(3, 3), name="hermitian"),
        S(lambda m, x: m.linalg.pinv(_generic(m, x), atol=0.05, rtol=0.01), F(4, 3),
          name="atol, rtol"),
        S(lambda m, x: m.pinverse(_generic(m, x), rcond=0.01), F(3, 4), name="torch.pinverse"),
    ],
    "linalg_lu": [
        S(lambda m, x: tuple(m.linalg.lu(_generic(m, x))), F(4, 3), name="linalg.lu tall"),
        S(lambda m, x: tuple(m.linalg.lu(_generic(m, x))), F(2, 3, 4), name="wide, batched"),
        S(lambda m, x: tuple(m.linalg.lu(_generic(m, x))), C(3, 3), name="complex"),
    ],
    "linalg_lu_factor_ex": [
        S(lambda m, x: tuple(m.linalg.lu_factor(_generic(m, x))), F(3, 3),
          name="linalg.lu_factor"),
        S(lambda m, x: tuple(m.linalg.lu_factor_ex(_generic(m, x))), F(4, 3),
          name="lu_factor_ex tall"),
        S(lambda m, x: tuple(m.linalg.lu_factor_ex(_generic(m, x))), F(2, 3, 4),
          name="lu_factor_ex wide, batched"),
        S(lambda m, x: tuple(m.lu(_generic(m, x), get_infos=True)), C(3, 3),
          name="torch.lu complex"),
    ],
    "linalg_lu_solve": [
        S(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_generic(m, a)), b), F(3, 3),
          F(3, 2), name="linalg.lu_solve"),
        S(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_generic(m, a)), b,
                                            adjoint=True), F(2, 3, 3), F(3, 2),
          name="adjoint, batched"),
        S(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_generic(m, a)), b, left=False),
          F(3, 3), F(2, 2, 3), name="right, broadcast"),
        S(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_generic(m, a)), b, left=False,
                                            adjoint=True), C(3, 3), C(2, 3),
          name="complex right adjoint"),
        S(lambda m, a, b: m.lu_solve(b, *m.linalg.lu_factor(_generic(m, a))), F(3, 3), F(3, 1),
          name="torch.lu_solve"),
    ],
    "lu_unpack": [
        S(lambda m, x: tuple(m.lu_unpack(*m.linalg.lu_factor(_generic(m, x)))), F(3, 3),
          name="torch.lu_unpack"),
        S(lambda m, x: tuple(m.lu_unpack(*m.linalg.lu_factor(_generic(m, x)))), F(4, 3),
          name="tall"),
        S(lambda m, x: tuple(m.lu_unpack(*m.linalg.lu_factor(_generic(m, x)))), F(2, 3, 5),
          name="wide, batched"),
        S(lambda m, x: m.lu_unpack(*m.linalg.lu_factor(_generic(m, x)), unpack_pivots=False)[1],
          C(3, 3), name="complex, no pivots"),
    ],
    "triangular_solve": [
        S(lambda m, b, a: tuple(m.triangular_solve(b, a + _eye3(m, a))), F(3, 2), F(3, 3),
          name="torch.triangular_solve"),
        S(lambda m, b, a: tuple(b.triangular_solve(a + _eye3(m, a), upper=False,
                                                   transpose=True, unitriangular=True)),
          F(2, 3, 2), F(3, 3), name="lower, transpose, unitriangular, broadcast"),
        S(lambda m, b, a: tuple(m.triangular_solve(b, a + _eye3(m, a), transpose=True)),
          C(3, 2), C(2, 1, 3, 3), name="complex transpose, broadcast"),
    ],
    "cholesky_solve": [
        S(lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, a))), F(3, 2), F(3, 3),
          name="torch.cholesky_solve"),
        S(lambda m, b, a: b.cholesky_solve(_tri(m, a, True), upper=True), F(2, 3, 2), F(3, 3),
          name="upper, broadcast"),
        S(lambda m, b, a: m.cholesky_solve(b, _tri(m, a)), C(3, 2), C(2, 3, 3),
          name="complex"),
    ],
    "cholesky_inverse": [
        S(lambda m, x: m.cholesky_inverse(_tri(m, x)), F(3, 3), name="torch.cholesky_inverse"),
        S(lambda m, x: _tri(m, x, True).cholesky_inverse(upper=True), F(2, 3, 3),
          name="upper, batched"),
        S(lambda m, x: m.cholesky_inverse(m.linalg.cholesky(_spd(m, x))), C(3, 3),
          name="complex"),
    ],
})
SAMPLES["mm"] += [
    S(lambda m, x: m.linalg.matrix_power(x, 3), F(3, 3), name="linalg.matrix_power 3"),
    S(lambda m, x: m.matrix_power(x, 6), F(3, 3, lo=-1.0, hi=1.0), name="torch.matrix_power 6"),
]
SAMPLES["bmm"] += [
    S(lambda m, x: x.matrix_power(5), F(2, 3, 3, lo=-1.0, hi=1.0),
      name="Tensor.matrix_power 5, batched"),
]
SAMPLES.setdefault("copy", []).append(
    S(lambda m, x: m.linalg.matrix_power(x, 0), F(2, 3, 3), name="linalg.matrix_power 0"))
SAMPLES.setdefault("clone", []).append(
    S(lambda m, x: m.linalg.matrix_power(x, 1), F(3, 3), name="linalg.matrix_power 1"))
SAMPLES.setdefault("cat", []).extend([  # (ones, then a cumprod)
    S(lambda m, x: m.linalg.vander(x), F(3), name="linalg.vander"),
    S(lambda m, x: m.linalg.vander(x, N=4), C(2, 3), name="linalg.vander N, complex"),
])


def _det(m, x):
    return m.linalg.det(x)


SPECIAL.update({
    # det's gradient at singular matrices (the SVD formula of create_graph included)
    "_linalg_det": [
        S(_det, V([[1.0, 2.0], [2.0, 4.0]]), name="rank 1"),
        S(_det, V(np.zeros((3, 3))), name="zero matrix"),
        S(_det, V(np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])), name="rank 1, 3x3"),
        S(_det, V(np.stack([np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]), 2 * np.eye(3)])),
          name="a singular and a regular matrix"),
        # (complex singular matrices: the second derivative goes through the SVD, whose vectors
        # for the singular value 0 have phases of their own, which LAPACK builds pick apart)
        S(_det, V(np.array([[1.0, 2.0], [2.0, 4.0]]) * (1 + 1j), "c"), name="complex rank 1",
          double_backward=False),
    ],
    # repeated singular values / eigenvalues: torch's svdvals / eigvalsh formulas (no
    # division by their differences) when the vectors get no gradient
    "_linalg_svd": [
        S(lambda m, x: m.linalg.svdvals(x), V(np.diag([2.0, 2.0, 1.0])),
          name="svdvals, repeated"),
        S(lambda m, x: m.linalg.svdvals(x), V([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 3.0]]),
          name="svdvals, a zero singular value"),
    ],
    "_linalg_eigh": [
        S(lambda m, x: m.linalg.eigvalsh(x), V(np.diag([1.0, 1.0, 2.0])),
          name="eigvalsh, repeated"),
    ],
    # not positive-definite: info and LAPACK's partial factor
    "linalg_cholesky_ex": [
        S(lambda m, x: tuple(m.linalg.cholesky_ex(x)), V([[4.0, 2.0, 1.0], [2.0, 1.0, 2.0],
                                                           [1.0, 2.0, 3.0]]),
          name="not positive-definite (order 2)"),
    ],
})

SMOOTH.update({
    "linalg_eig": "analytic where the eigenvalues are distinct (torch's formula divides by "
                  "their differences there too)",
    "cholesky": "analytic on positive-definite matrices (cholesky_ex's special points cover "
                "the rest)",
    "linalg_inv_ex": _ANALYTIC_INV,
    "_linalg_slogdet": "log|det| and sign are analytic wherever A is invertible",
    "linalg_lstsq": "analytic for full-rank A (its pseudoinverse is)",
    "linalg_pinv": "analytic where the rank does not change",
    "linalg_lu": "analytic where the pivots do not change and U is invertible",
    "linalg_lu_factor_ex": "analytic where the pivots do not change and U is invertible",
    "linalg_lu_solve": _ANALYTIC_INV,
    "lu_unpack": "linear in LU (tril / triu): the same formula at every point",
    "triangular_solve": _ANALYTIC_INV,
    "cholesky_solve": _ANALYTIC_INV,
    "cholesky_inverse": _ANALYTIC_INV,
})
