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
    "linalg_solve": [
        S(lambda m, a, b: m.linalg.solve(a + _eye3(m, a), b), F(2, 3, 3), F(3),
          name="batched, vector rhs"),
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
})

_ANALYTIC_INV = "rational in A's entries, analytic wherever A is invertible (no kinks)"
SMOOTH = {
    "tril": "linear (a mask): the same formula at every point",
    "triu": "linear (a mask): the same formula at every point",
    "linalg_solve_triangular": _ANALYTIC_INV,
    "linalg_solve": _ANALYTIC_INV,
    "linalg_matrix_exp": "an entire function of the matrix: analytic everywhere",
    "linalg_qr": "analytic for full-rank input (torch's formula needs R invertible; rank-"
                 "deficient input has no derivative)",
    "geqrf": "torch has no derivative for it (backward raises): nothing to sweep",
    "linalg_householder_product": "a polynomial in input and tau: no special points",
}
