"""Triangles, solves, decompositions and matrix functions: tril/triu,
linalg.solve_triangular, the LU family (linalg.lu_factor(_ex), lu_solve, solve(_ex)),
linalg.matrix_exp, linalg.qr (and torch.qr), geqrf and householder_product, one node each
with torch's derivative formulas (FunctionsManual.cpp), their results in LAPACK's
column-major layout as torch's. Also LinAlgError and the check of LAPACK's info outputs
that raises it (on the host, never on jax tracers). The other decompositions are in
linalg_decomp.py and linalg_solvers.py."""

import jax
import jax.numpy as jnp
import numpy as np

from .._shapes import broadcast_shape as _broadcast_batch
from .._storage import contiguous_strides
from ..engine.grad_mode import STATE
from ..tensor import _make
from . import shape as S
from ._args import promote
from ._table import call_op, defop
from ._autocast import autocast_op
from .pointwise import mul
from .reduce import sum as _sum
from .linalg import _hi, matmul


try:  # LAPACK's geqrf (not re-exported by jax.lax.linalg)
    from jax._src.lax.linalg import geqrf as _jax_geqrf
except ImportError:  # pragma: no cover
    _jax_geqrf = None


# ---- tril / triu ---------------------------------------------------------------------------
TRIL = defop("tril", lambda self, diagonal: jnp.tril(self, diagonal), attrs=("diagonal",),
             self=lambda grad, diagonal: tril(grad, diagonal))
TRIU = defop("triu", lambda self, diagonal: jnp.triu(self, diagonal), attrs=("diagonal",),
             self=lambda grad, diagonal: triu(grad, diagonal))


def tril(input, diagonal=0):
    """torch.tril: the lower triangle (on and below `diagonal`) of the last two dims.

    >>> import eagergrad as torch
    >>> torch.tril(torch.ones(2, 2))
    tensor([[1., 0.],
            [1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return call_op(TRIL, (input,), (int(diagonal),))


def triu(input, diagonal=0):
    """torch.triu: the upper triangle (on and above `diagonal`) of the last two dims.

    >>> import eagergrad as torch
    >>> torch.triu(torch.ones(2, 2))
    tensor([[1., 1.],
            [0., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return call_op(TRIU, (input,), (int(diagonal),))


# ---- decompositions: helpers ---------------------------------------------------------------
def _mH(x):
    return S.conj(S.transpose(x, -2, -1))


def _square_check(A, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")


def _float_check(A, name):
    if not A.dtype.is_differentiable:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.scalar_name}")


def _lapack_check(A, kernel):
    """torch's dispatch error for the dtypes its LAPACK kernels lack (half, bfloat16); A a
    tensor or a dtype."""
    dt = getattr(A, "dtype", A)
    if dt.is_differentiable and dt.itemsize < (8 if dt.is_complex else 4):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _lapack_layout(t):
    """t with LAPACK's layout, as torch's results have it: each matrix column-major
    (strides only; the array stays as it is)."""
    if t.ndim >= 2:
        m, n = t._shape[-2:]
        batch = contiguous_strides(t._shape[:-2] + (m * n,))[:-1]
        t._stride = batch + (1, m)
    return t


def _half_diagonal(x):
    """x with its diagonal (last two dims) halved: torch's real(diag).mul_(0.5) on a
    hermitian x, imag(diag).mul_(0.5) on a skew-hermitian one."""
    n = x._shape[-1]
    return x * _make(1.0 - 0.5 * jnp.eye(n, dtype=x.dtype.to_real().np))


def _return_type(name, fields):
    class R(tuple):
        __slots__ = ()

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"eagergrad.return_types.{name}(\n{body})"
    for i, f in enumerate(fields):
        setattr(R, f, property(lambda self, i=i: self[i]))
    R.__name__ = R.__qualname__ = name
    R.__module__ = "eagergrad.return_types"
    return R


_LinalgSolveEx = _return_type("linalg_solve_ex", ("result", "info"))
_LinalgLuFactor = _return_type("linalg_lu_factor", ("LU", "pivots"))
_LinalgLuFactorEx = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))


# ---- linalg.solve_triangular ---------------------------------------------------------------
def _solve_tri_k(self, B, upper, left, unitriangular):
    batch = jnp.broadcast_shapes(self.shape[:-2], B.shape[:-2])
    a = jnp.broadcast_to(self, batch + self.shape[-2:])
    b = jnp.broadcast_to(B, batch + B.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper,
                                           unit_diagonal=unitriangular)


def _solve_tri_back(grad, A, upper, left, unitriangular):
    """torch's linalg_solve_triangular_backward, gB = A^{-H} gX."""
    return solve_triangular(_mH(A), grad, upper=not upper, left=left,
                            unitriangular=unitriangular)


def _solve_tri_A(grad, self, result, upper, left, unitriangular):
    gB = _solve_tri_back(grad, self, upper, left, unitriangular)
    xh = _mH(result)
    gA = -matmul(gB, xh) if left else -matmul(xh, gB)
    return triu(gA, int(unitriangular)) if upper else tril(gA, -int(unitriangular))


LINALG_SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular", _solve_tri_k, inputs=("self", "B"),
    attrs=("upper", "left", "unitriangular"), self=_solve_tri_A,
    B=lambda grad, self, upper, left, unitriangular:
    _solve_tri_back(grad, self, upper, left, unitriangular))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """torch.linalg.solve_triangular: X with AX = B (XA = B if not left), A triangular;
    batch dims broadcast. One LinalgSolveTriangularBackward0 node.

    >>> import eagergrad as torch
    >>> A = torch.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> torch.linalg.solve_triangular(A, torch.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.solve_triangular(out=...) yet")
    _square_check(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({A._shape[-2]}x{n} and {B._shape[-2]}x"
                           f"{B._shape[-1]})")
    _broadcast_batch(A._shape[:-2], B._shape[:-2])
    dt = promote(A, B)
    _lapack_check(dt, "triangular_solve_cpu")
    if A.dtype is not dt:
        A = S.to(A, dt)
    if B.dtype is not dt:
        B = S.to(B, dt)
    return _lapack_layout(call_op(LINALG_SOLVE_TRIANGULAR, (A, B), (
        bool(upper), bool(left), bool(unitriangular))))


# ---- errors that need values: LAPACK's info, checked on the host -------------------------
class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a decomposition or inversion of a
    singular or not positive-definite matrix. Raised by the checking variants after the
    kernel ran, from its `info` output; never when the values are jax tracers (under
    jax.jit, torch.func), where only the `_ex` variants' info tells."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"  # (torch's class name)
LinAlgError.__module__ = "eagergrad.linalg"


def _check_errors(info, api, is_matrix):
    """torch's _linalg_check_errors: raise for the first non-zero info (LinAlgError; a
    RuntimeError for lu_factor), with torch's message for `api`. Skipped on tracers."""
    v = info._value
    if isinstance(v, jax.core.Tracer) or v.size == 0:
        return
    flat = np.asarray(v).reshape(-1)
    bad = np.flatnonzero(flat)
    if not bad.size:
        return
    i = int(bad[0])
    code = int(flat[i])
    where = f"{api}{'' if is_matrix else f': (Batch element {i})'}: "
    if "inv" in api:
        raise LinAlgError(f"{where}The diagonal element {code} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")
    if "solve" in api:
        raise LinAlgError(f"{where}The solver failed because the input matrix is singular.")
    if "cholesky" in api:
        raise LinAlgError(f"{where}The factorization could not be completed because the input "
                          f"is not positive-definite (the leading minor of order {code} is "
                          "not positive-definite).")
    if "svd" in api:
        raise LinAlgError(f"{where}The algorithm failed to converge because the input matrix "
                          "is ill-conditioned or has too many repeated singular values (error "
                          f"code: {code}).")
    if "eig" in api:
        raise LinAlgError(f"{where}The algorithm failed to converge because the input matrix "
                          "is ill-conditioned or has too many repeated eigenvalues (error "
                          f"code: {code}).")
    raise RuntimeError(f"{where}U[{code},{code}] is zero and using it on lu_solve would "
                       "result in a division by zero. If you still want to perform the "
                       "factorization, consider calling linalg.lu(A, pivot) or "
                       "linalg.lu_factor_ex(A, pivot)")


# ---- LU: linalg.lu_factor_ex, linalg.lu_solve, linalg.solve(_ex) -------------------------
# LAPACK's conventions, as torch returns them: pivots are 1-based int32 row swaps (row i
# was swapped with row pivots[i]), info is the 1-based index of the first exact zero on
# U's diagonal (0: none)
def _lu_info(lu):
    return first_zero(jnp.diagonal(lu, axis1=-2, axis2=-1))


def first_zero(d):
    """LAPACK's info from a factor's diagonal d (..., n): the 1-based index of its first
    exact zero, 0 if none (and for n = 0, an empty matrix)."""
    if d.shape[-1] == 0:
        return jnp.zeros(d.shape[:-1], jnp.int32)
    z = d == 0
    return jnp.where(jnp.any(z, -1), jnp.argmax(z, -1) + 1, 0).astype(jnp.int32)


def _lu_factor_k(A):
    lu, piv, _ = jax.lax.linalg.lu(A)
    return lu, (piv + 1).astype(jnp.int32), _lu_info(lu)


def _permutation(pivots, m):
    """The permutation of A's rows that LU factors (A[perm] = L U) from 1-based pivots."""
    return jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, m)


def _take_rows(b, perm):
    return jnp.take_along_axis(b, perm[..., :, None], axis=-2)


def _lu_solve_arrays(lu, perm, b, adjoint):
    """X with A X = b (adjoint: A^H X = b), A[perm] = L U packed in lu (same batch dims)."""
    tri = jax.lax.linalg.triangular_solve
    if not adjoint:
        x = tri(lu, _take_rows(b, perm), left_side=True, lower=True, unit_diagonal=True)
        return tri(lu, x, left_side=True, lower=False)
    conj = jnp.iscomplexobj(lu)
    x = tri(lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
    x = tri(lu, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conj,
            unit_diagonal=True)
    return _take_rows(x, jnp.argsort(perm, axis=-1))


def _lu_solve_k(LU, pivots, B, left, adjoint):
    batch = jnp.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    lu = jnp.broadcast_to(LU, batch + LU.shape[-2:])
    perm = _permutation(jnp.broadcast_to(pivots, batch + pivots.shape[-1:]), LU.shape[-1])
    b = jnp.broadcast_to(B, batch + B.shape[-2:])
    if left:
        return _lu_solve_arrays(lu, perm, b, adjoint)
    # X op(A) = B is op(A)^H X^H = B^H
    return jnp.conj(jnp.swapaxes(_lu_solve_arrays(lu, perm, jnp.conj(jnp.swapaxes(
        b, -1, -2)), not adjoint), -1, -2))


def _eye_like(t, m, n=None):
    return _make(jnp.eye(m, m if n is None else n, dtype=t.dtype.np))


def _pivots_matrix(pivots, m, dtype):
    """P (A = P L U) from 1-based pivots: a constant (pivots are integers)."""
    perm = _permutation(pivots._value, m)
    return _make(jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=dtype.np), -1, -2))


def _lu_unpack(LU, pivots, unpack_pivots=True):
    """torch's lu_unpack as tensor ops (P, L, U), for formulas: L and U are differentiable
    in LU (tril/triu), P is a constant."""
    m, n = LU._shape[-2:]
    k = min(m, n)
    L = tril(LU if n == k else S.narrow(LU, -1, 0, k), -1) + _eye_like(LU, m, k)
    U = triu(LU if m == k else S.narrow(LU, -2, 0, k))
    P = _pivots_matrix(pivots, m, LU.dtype) if unpack_pivots else None
    return P, L, U


def _lu_solve_LU(grad, LU, pivots, result, left, adjoint):
    """torch's linalg_lu_solve_LU."""
    P, L, U = _lu_unpack(LU, pivots, left == adjoint)
    X = result
    if left != adjoint:
        gR = solve_triangular(_mH(U), -matmul(grad if left else _mH(grad),
                                               _mH(X) if left else X), upper=False)
        gL = tril(solve_triangular(_mH(L), matmul(gR, _mH(U)), upper=True, left=True,
                                   unitriangular=True), -1)
        return gL + triu(gR)
    gR = -matmul(matmul(matmul(S.transpose(P, -2, -1), X if left else _mH(X)),
                        _mH(grad) if left else grad), P)
    gR = solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = triu(solve_triangular(_mH(U), matmul(_mH(L), gR), upper=False, left=False))
    return tril(gR, -1) + gU


LINALG_LU_SOLVE = defop(
    "linalg_lu_solve", _lu_solve_k, inputs=("LU", "pivots", "B"), attrs=("left", "adjoint"),
    LU=_lu_solve_LU,
    B=lambda grad, LU, pivots, left, adjoint: linalg_lu_solve(LU, pivots, grad, left=left,
                                                              adjoint=not adjoint))


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """torch.linalg.lu_solve: X with AX = B (XA = B if not left; A^H if adjoint), A given
    by lu_factor's LU and pivots; batch dims broadcast. One LinalgLuSolveBackward0 node.

    >>> import eagergrad as torch
    >>> LU, piv = torch.linalg.lu_factor(torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> torch.linalg.lu_solve(LU, piv, torch.tensor([[2.0], [2.0]]))
    tensor([[1.0000],
            [0.5000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.lu_solve(out=...) yet")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    _square_check(LU, "torch.linalg.lu_solve")
    n = LU._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B._shape[-2]}x"
                           f"{B._shape[-1]})")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    if pivots.dtype.name != "int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if pivots._shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if pivots._shape != LU._shape[:-1]:
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {list(pivots._shape)} instead")
    _broadcast_batch(B._shape[:-2], LU._shape[:-2])
    _lapack_check(LU, "linalg.lu_solve_cpu")
    out = call_op(LINALG_LU_SOLVE, (LU, pivots, B), (bool(left), bool(adjoint)))
    return _lapack_layout(out) if left else out


def _lu_factor_back(grad, LU, pivots, pivot):
    """torch's lu_factor_ex_backward."""
    P, L, U = _lu_unpack(LU, pivots, pivot)
    m, n = LU._shape[-2:]
    k = min(m, n)
    return _lu_backward(S.narrow(grad, -1, 0, k), S.narrow(grad, -2, 0, k), P, L, U, pivot)


def _lu_backward(gL, gU, P, L, U, pivot):
    """torch's linalg_lu_backward (gL, gU never undefined here: zeros instead)."""
    m, n = L._shape[-2], U._shape[-1]
    k = min(m, n)
    if m == n:
        gA = tril(matmul(_mH(L), gL), -1) + triu(matmul(gU, _mH(U)))
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        U1 = S.narrow(U, -1, 0, k)
        gA = matmul(_mH(L), gL) - matmul(triu(gU), _mH(U))
        gA = solve_triangular(_mH(U1), tril(gA, -1), upper=False, left=False)
        gA = S.cat([gA + triu(S.narrow(gU, -1, 0, k)), S.narrow(gU, -1, k, n - k)], -1)
        gA = solve_triangular(_mH(L), gA, upper=True, left=True, unitriangular=True)
    else:
        L1 = S.narrow(L, -2, 0, k)
        gA = matmul(gU, _mH(U)) - matmul(_mH(L), tril(gL, -1))
        gA = solve_triangular(_mH(L1), triu(gA), upper=True, left=True, unitriangular=True)
        gA = S.cat([gA + tril(S.narrow(gL, -2, 0, k), -1), S.narrow(gL, -2, k, m - k)], -2)
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
    return matmul(P, gA) if pivot else gA


LINALG_LU_FACTOR_EX = defop(
    "linalg_lu_factor_ex", lambda A, pivot, check_errors: _lu_factor_k(A), inputs=("A",),
    attrs=("pivot", "check_errors"), outputs=("LU", "pivots", "info"), nondiff=(1, 2),
    A=lambda grad, LU, pivots, pivot: _lu_factor_back(grad, LU, pivots, pivot))


def _lu_factor_checks(A, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._shape)} instead")
    if not A.dtype.is_differentiable:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype.scalar_name}'")
    _lapack_check(A, "lu_cpu")


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """torch.linalg.lu_factor_ex: LAPACK's getrf, (LU, pivots, info); info > 0 marks an
    exact zero on U's diagonal. One LinalgLuFactorExBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.lu_factor_ex(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=torch.int32)
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.lu_factor_ex(out=...) yet")
    _lu_factor_checks(A, "torch.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, pivots, info = call_op(LINALG_LU_FACTOR_EX, (A,), (True, bool(check_errors)))
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", A.ndim == 2)
    return _LinalgLuFactorEx((_lapack_layout(LU), pivots, info))


def linalg_lu_factor(A, *, pivot=True, out=None):
    """torch.linalg.lu_factor: (LU, pivots) of lu_factor_ex; an exact zero on U's diagonal
    raises torch's RuntimeError.

    >>> import eagergrad as torch
    >>> torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.lu_factor(out=...) yet")
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    _check_errors(info, "torch.linalg.lu_factor", A.ndim == 2)
    return _LinalgLuFactor((LU, pivots))


# ---- linalg.solve ----------------------------------------------------------------------------
def _solve_k(A, B, left, vector, use_A_T):
    # as ATen: the LU of A^T when A is real and contiguous (then solved with adjoint)
    lu, pivots, info = _lu_factor_k(jnp.swapaxes(A, -1, -2) if use_A_T else A)
    x = _lu_solve_k(lu, pivots, B[..., None] if vector else B, left, use_A_T)
    return x[..., 0] if vector else x, lu, pivots, info


def _solve_gB(grad, A, LU, pivots, left, vector, use_A_T):
    """gB = A^{-H} gX (torch's linalg_solve_backward): a fresh solve when the gradient is
    itself differentiated (create_graph), else the saved LU factors."""
    g = S.unsqueeze(grad, -1) if vector else grad
    if STATE.grad:
        return linalg_solve(_mH(A), g, left=left)
    return linalg_lu_solve(LU, pivots, g, left=left, adjoint=not use_A_T)


def _solve_A(grad, A, result, LU, pivots, left, vector, use_A_T):
    gB = _solve_gB(grad, A, LU, pivots, left, vector, use_A_T)
    X = S.unsqueeze(result, -1) if vector else result
    return -matmul(gB, _mH(X)) if left else -matmul(_mH(X), gB)


def _solve_B(grad, A, LU, pivots, left, vector, use_A_T):
    gB = _solve_gB(grad, A, LU, pivots, left, vector, use_A_T)
    return S.squeeze(gB, -1) if vector else gB


LINALG_SOLVE_EX = defop(
    "_linalg_solve_ex", _solve_k, inputs=("A", "B"), attrs=("left", "vector", "use_A_T"),
    outputs=("result", "LU", "pivots", "info"), nondiff=(1, 2, 3), node="LinalgSolveExBackward0",
    A=_solve_A, B=_solve_B)


def _solve_ex(A, B, left):
    _float_check(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    _square_check(A, "linalg.solve")
    Bs = B._shape + (1,) if vector else B._shape
    if len(Bs) < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    n = A._shape[-1]
    if (Bs[-2] if left else Bs[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {Bs[-2]}x{Bs[-1]})")
    _broadcast_batch(Bs[:-2], A._shape[:-2])
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                           "supported for left=False. In this case linalg.solve is equivalent "
                           "to B / A.squeeze(-1)")
    _lapack_check(A, "lu_cpu")
    use_A_T = A.is_contiguous() and not A.dtype.is_complex
    result, _, _, info = call_op(LINALG_SOLVE_EX, (A, B), (bool(left), vector, use_A_T))
    return (_lapack_layout(result) if left else result), info


def linalg_solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """torch.linalg.solve_ex: (result, info) of linalg.solve, info > 0 where A is singular
    (then result holds inf/nan), no error unless check_errors.

    >>> import eagergrad as torch
    >>> torch.linalg.solve_ex(torch.ones(2, 2), torch.ones(2)).info
    tensor(2, dtype=torch.int32)
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.solve_ex(out=...) yet")
    result, info = _solve_ex(A, B, left)
    if check_errors:
        _check_errors(info, "torch.linalg.solve_ex", A.ndim == 2)
    return _LinalgSolveEx((result, info))


@autocast_op("linalg_solve")
def linalg_solve(A, B, *, left=True, out=None):
    """torch.linalg.solve: X with AX = B (XA = B if not left; B a batch of vectors or of
    matrices, batch dims broadcast), through A's LU factors; a singular A raises
    LinAlgError (checked on the host: not under jax tracing, see solve_ex).

    >>> import eagergrad as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.linalg.solve(out=...) "
                                  "yet")
    result, info = _solve_ex(A, B, left)
    _check_errors(info, "torch.linalg.solve", A.ndim == 2)
    return result


solve = linalg_solve  # (nn.utils.parametrizations' name; torch.solve is ops/linalg_decomp's)


# ---- linalg.matrix_exp -----------------------------------------------------------------------
def _expm_k(self):
    return jax.scipy.linalg.expm(self)


def _matrix_exp_differential(self, grad):
    """torch's differential_analytic_matrix_function, adjoint: the top-right block of
    exp([[A^H, G], [0, A^H]])."""
    a = _mH(self)
    n = a._shape[-1]
    z = mul(a, 0)
    meta = S.cat([S.cat([a, grad], -1), S.cat([z, a], -1)], -2)
    return S.narrow(S.narrow(matrix_exp(meta), -2, 0, n), -1, n, n)


LINALG_MATRIX_EXP = defop("linalg_matrix_exp", _expm_k, self=_matrix_exp_differential)


def matrix_exp(A):
    """torch.linalg.matrix_exp (also torch.matrix_exp, Tensor.matrix_exp): the matrix
    exponential of each square matrix of A; one LinalgMatrixExpBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _square_check(A, "linalg.matrix_exp")
    _float_check(A, "linalg.matrix_exp")
    return call_op(LINALG_MATRIX_EXP, (A,))


# ---- linalg.qr -------------------------------------------------------------------------------
def _qr_k(A, mode):
    if mode == "r":
        return jnp.zeros((0,), A.dtype), jnp.linalg.qr(A, mode="r")
    return jnp.linalg.qr(A, mode=mode)


def _qr_back(grads, Q, R, mode):
    """torch's linalg_qr_backward."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = Q._shape[-2], R._shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    gQ, gR = grads
    gA = matmul(gR, _mH(R)) - matmul(_mH(Q), gQ)
    if m >= n:
        x = triu(gA)
        gA = matmul(Q, _half_diagonal(x + _mH(x))) + gQ  # Q syminvadj(triu(gA)) + gQ
        return solve_triangular(_mH(R), gA, upper=False, left=False)
    x = -gA
    gA = matmul(Q, _half_diagonal(tril(x - _mH(x))))  # Q trilImInvAdjSkew(-gA)
    gA = solve_triangular(_mH(S.narrow(R, -1, 0, m)), gA, upper=False, left=False)
    zeros = mul(S.narrow(R, -1, m, n - m), 0)
    return S.cat([gA, zeros], -1) + matmul(Q, gR)


LINALG_QR = defop("linalg_qr", _qr_k, inputs=("A",), attrs=("mode",), outputs=("Q", "R"),
                  A=_qr_back)


_LinalgQr = _return_type("linalg_qr", ("Q", "R"))
_Qr = _return_type("qr", ("Q", "R"))
_Geqrf = _return_type("geqrf", ("a", "tau"))


def _linalg_qr(A, mode="reduced"):
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _float_check(A, "linalg.qr")
    _lapack_check(A, "geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = call_op(LINALG_QR, (A,), (mode,))
    return _lapack_layout(Q), _lapack_layout(R)


@autocast_op("qr")
def qr(input, some=True, *, out=None):
    """torch.qr (deprecated in torch for torch.linalg.qr) and Tensor.qr: the reduced
    (some=True) or complete QR decomposition, torch.return_types.qr(Q, R).

    >>> import eagergrad as torch
    >>> torch.qr(torch.tensor([[3.0], [4.0]])).R
    tensor([[-5.]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.qr(out=...) yet")
    return _Qr(_linalg_qr(input, "reduced" if some else "complete"))


# ---- geqrf / householder_product -------------------------------------------------------------
def _geqrf_no_derivative(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


GEQRF = defop("geqrf", lambda self: _jax_geqrf(self), outputs=("a", "tau"),
              self=_geqrf_no_derivative)


@autocast_op("geqrf")
def geqrf(input, *, out=None):
    """torch.geqrf: LAPACK's geqrf, the QR decomposition as Householder reflectors below
    the diagonal of `a` (R on and above it) and their scalars `tau`. Not differentiable
    (as in torch, backward raises NotImplementedError).

    >>> import eagergrad as torch
    >>> torch.geqrf(torch.tensor([[3.0], [4.0]])).a
    tensor([[-5.0000],
            [ 0.5000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.geqrf(out=...) yet")
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _float_check(input, "torch.geqrf")
    _lapack_check(input, "geqrf_cpu")
    a, tau = call_op(GEQRF, (input,))
    return _Geqrf((_lapack_layout(a), tau))


def _hh_transform(u, v, t, K, left):
    """(I - t u v^H) K if left else K (I - t u v^H); u, v: (..., m, 1), t: (..., 1)."""
    t = S.unsqueeze(t, -1)
    if left:
        return K - mul(t * u, matmul(_mH(v), K))
    return K - mul(matmul(K, t * u), _mH(v))


def _householder_back(grad, result, input, tau, flip_order=False):
    """torch's householder_product_backward (its out-of-place form): (input_grad,
    tau_grad); flip_order (for ormqr) runs over the reflectors last to first, the
    reflectors' sides swapped."""
    n = input._shape[-1]
    k = tau._shape[-1]
    if k == 0 or input.numel() == 0:  # torch: undefined gradients
        return None, None
    ones = _make(jnp.eye(input._shape[-2], n, dtype=input.dtype.to_real().np))
    v = tril(input, -1) + ones  # the reflectors, with their implicit 1 on the diagonal
    vk = S.narrow(v, -1, 0, k)
    sigma = tau / (tau * _sum(vk * S.conj(vk), -2) - 1.0)
    K = matmul(result, _mH(grad))
    col = [S.narrow(v, -1, i, 1) for i in range(k)]
    t = [S.narrow(tau, -1, i, 1) for i in range(k)]
    s = [S.narrow(sigma, -1, i, 1) for i in range(k)]
    order = list(range(k))[::-1] if flip_order else list(range(k))
    left = not flip_order
    K = _hh_transform(col[order[0]], col[order[0]], s[order[0]], K, left)
    v_grads, tau_grads = [None] * k, [None] * k
    for pos, i in enumerate(order):
        vi, ti = col[i], t[i]
        vHK = matmul(_mH(vi), K)
        Kv = matmul(K, vi)
        tu = S.unsqueeze(ti, -1)
        v_grads[i] = S.unsqueeze(S.squeeze(S.conj(-tu * vHK), -2) - S.squeeze(tu * Kv, -1), -1)
        tau_grads[i] = S.squeeze(S.conj(-matmul(vHK, vi)), -1)
        if pos != k - 1:
            j = order[pos + 1]
            K = _hh_transform(col[j], col[j], s[j], K, left)
            K = _hh_transform(vi, vi, ti, K, not left)
    if k < n:
        v_grads.append(mul(S.narrow(input, -1, k, n - k), 0))
    return tril(S.cat(v_grads, -1), -1), S.cat(tau_grads, -1)


def _householder_k(input, tau):
    """H_1 ... H_k applied to the first n columns of the identity, H_i = I - tau_i v_i
    v_i^H, as a scan (LAPACK's orgqr, jax.lax.linalg.householder_product, has no jax
    derivative; this composition has, for the function transforms)."""
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    v = jnp.tril(input, -1) + jnp.eye(m, n, dtype=input.dtype)
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=input.dtype), input.shape)

    def step(q, vt):
        vi, ti = vt
        w = jnp.einsum("...m,...mn->...n", jnp.conj(vi), q, precision=_hi())
        return q - (ti[..., None] * vi)[..., :, None] * w[..., None, :], None
    xs = (jnp.moveaxis(v[..., :k], -1, 0)[::-1], jnp.moveaxis(tau, -1, 0)[::-1])
    return jax.lax.scan(step, q, xs)[0]


LINALG_HOUSEHOLDER_PRODUCT = defop(
    "linalg_householder_product", _householder_k, inputs=("input", "tau"),
    input=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[0],
    tau=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[1])


@autocast_op("linalg_householder_product")
def householder_product(input, tau, *, out=None):
    """torch.linalg.householder_product (torch.orgqr): the first n columns of the product
    of the Householder reflectors I - tau_i v_i v_i^H stored below the diagonal of input.

    >>> import eagergrad as torch
    >>> a = torch.geqrf(torch.tensor([[3.0], [4.0]]))
    >>> torch.linalg.householder_product(a.a, a.tau)
    tensor([[-0.6000],
            [-0.8000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.householder_product(out=...) yet")
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input._shape[-2] < input._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim and input._shape[-1] < tau._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if tau._shape[:-1] != input._shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._shape[:-1])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {input.dtype.scalar_name}")
    _float_check(input, name)
    return _lapack_layout(call_op(LINALG_HOUSEHOLDER_PRODUCT, (input, tau)))


orgqr = householder_product


def _ormqr_k(self, input2, input3, left, transpose):
    """op(Q) input3 (left) or input3 op(Q), Q = H_1 ... H_k from the reflectors below the
    diagonal of self and their scalars input2 (op: the conjugate transpose if
    transpose), one reflector at a time (LAPACK's ormqr): a scan, which jax
    differentiates, for the function transforms."""
    mn, k = self.shape[-2], input2.shape[-1]
    v = jnp.tril(self[..., :k], -1) + jnp.eye(mn, k, dtype=self.dtype)
    tau = jnp.conj(input2) if transpose else input2
    vs, ts = jnp.moveaxis(v, -1, 0), jnp.moveaxis(tau, -1, 0)
    if left != transpose:  # H_k (or H_k^H) acts first
        vs, ts = vs[::-1], ts[::-1]

    def step(c, vt):
        vi, ti = vt
        if left:  # (I - t v v^H) c
            w = jnp.einsum("...m,...mn->...n", jnp.conj(vi), c, precision=_hi())
            return c - (ti[..., None] * vi)[..., :, None] * w[..., None, :], None
        w = jnp.einsum("...nm,...m->...n", c, vi, precision=_hi())  # c (I - t v v^H)
        return c - (ti[..., None] * w)[..., :, None] * jnp.conj(vi)[..., None, :], None
    return jax.lax.scan(step, input3, (vs, ts))[0]


def _ormqr_back(grad, result, self, input2, left, transpose):
    """torch's ormqr_backward for self and input2 (householder_product_backward on the
    result and grad, in the order the reflectors act)."""
    if left != transpose:
        g, r = (grad, result) if not transpose else (_mH(grad), _mH(result))
        return _householder_back(g, r, self, input2)
    g, r = (_mH(result), _mH(grad)) if not transpose else (result, grad)
    return _householder_back(g, r, self, input2, flip_order=True)


ORMQR = defop(
    "ormqr", _ormqr_k, inputs=("self", "input2", "input3"), attrs=("left", "transpose"),
    self=lambda grad, result, self, input2, input3, left, transpose:
    _ormqr_back(grad, result, self, input2, left, transpose)[0],
    input2=lambda grad, result, self, input2, input3, left, transpose:
    _ormqr_back(grad, result, self, input2, left, transpose)[1],
    input3=lambda grad, result, self, input2, input3, left, transpose:
    ormqr(self, input2, grad, left, not transpose))


@autocast_op("ormqr")
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """torch.ormqr: input3 multiplied by Q (on the left, or the right with left=False),
    or by its conjugate transpose (transpose=True), Q the product of the Householder
    reflectors (input, input2) that geqrf gives.

    >>> import eagergrad as torch
    >>> a = torch.geqrf(torch.tensor([[3.0], [4.0]]))
    >>> torch.ormqr(a.a, a.tau, torch.eye(2))
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.ormqr(out=...) yet")
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input3.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    c = -2 if left else -1
    if input3._shape[c] != input._shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{c}] must be equal to input.shape[-2]")
    if input2.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input2._shape[-1] != min(input3._shape[c], input._shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{c}], "
                           "input.shape[-1])")
    if input.ndim - input2.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {input2.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if input.ndim != input3.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {input3.ndim} and input.ndim "
                           f"is equal to {input.ndim}")
    for t, what in ((input2, "tau"), (input3, "other")):
        batch = t._shape[:input.ndim - 2]
        if batch != input._shape[:-2]:
            raise RuntimeError(f"{name}: Expected batch dimensions of {what} to be equal to "
                               f"input.shape[:-2], but got {list(batch)}")
    for t, what in ((input2, "tau"), (input3, "other")):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{input.dtype.scalar_name} and {what} has dtype "
                               f"{t.dtype.scalar_name}")
    if not input.dtype.is_differentiable:
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    _lapack_check(input, "ormqr_cpu")
    return _lapack_layout(call_op(ORMQR, (input, input2, input3), (left, transpose)))
