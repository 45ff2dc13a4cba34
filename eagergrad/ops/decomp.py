"""Triangles, solves, decompositions and matrix functions: tril/triu,
linalg.solve(_triangular), linalg.matrix_exp, linalg.qr (and torch.qr), geqrf and
householder_product, one node each with torch's derivative formulas (FunctionsManual.cpp),
their results in LAPACK's column-major layout as torch's."""

import jax
import jax.numpy as jnp

from .._shapes import broadcast_shape as _broadcast_batch
from .._storage import contiguous_strides
from ..tensor import _make
from . import shape as S
from ._args import promote
from ._table import call_op, defop
from .pointwise import mul
from .reduce import sum as _sum
from .linalg import _HI, matmul


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
    if A.dtype is not dt:
        A = S.to(A, dt)
    if B.dtype is not dt:
        B = S.to(B, dt)
    return _lapack_layout(call_op(LINALG_SOLVE_TRIANGULAR, (A, B), (
        bool(upper), bool(left), bool(unitriangular))))


# ---- linalg.solve ----------------------------------------------------------------------------
def _solve_k(A, B, vector):
    if vector:
        B = B[..., None]
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    x = jnp.linalg.solve(jnp.broadcast_to(A, batch + A.shape[-2:]),
                         jnp.broadcast_to(B, batch + B.shape[-2:]))
    return x[..., 0] if vector else x


def _solve_B(grad, A, vector):
    return solve(_mH(A), grad)


def _solve_A(grad, A, result, vector):
    gB = solve(_mH(A), grad)
    if vector:
        return -matmul(S.unsqueeze(gB, -1), S.unsqueeze(S.conj(result), -2))
    return -matmul(gB, _mH(result))


# torch records linalg_solve_ex (its LU factors are saved; here A is: the values match)
LINALG_SOLVE = defop("linalg_solve", _solve_k, inputs=("A", "B"), attrs=("vector",),
                     node="LinalgSolveExBackward0", A=_solve_A, B=_solve_B)


def solve(A, B, *, left=True, out=None):
    """torch.linalg.solve: X with AX = B (B a batch of vectors or of matrices, batch
    dims broadcast). Singular A gives inf/nan here (torch raises LinAlgError: that
    check needs the values, which tracer-safe code cannot read).

    >>> import eagergrad as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.linalg.solve(out=...) "
                                  "yet")
    if not left:
        return _mH(solve(_mH(A), _mH(B)))
    _square_check(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    _float_check(A, "linalg.solve")
    n = A._shape[-1]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    rows = B._shape[-1] if vector else B._shape[-2]
    if rows != n:
        cols = 1 if vector else B._shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({n}x{n} and {rows}x{cols})")
    _broadcast_batch(A._shape[:-2], B._shape[:-1 if vector else -2])
    return _lapack_layout(call_op(LINALG_SOLVE, (A, B), (vector,)))


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


_LinalgQr = _return_type("linalg_qr", ("Q", "R"))
_Qr = _return_type("qr", ("Q", "R"))
_Geqrf = _return_type("geqrf", ("a", "tau"))


def _linalg_qr(A, mode="reduced"):
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _float_check(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = call_op(LINALG_QR, (A,), (mode,))
    return _lapack_layout(Q), _lapack_layout(R)


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
    a, tau = call_op(GEQRF, (input,))
    return _Geqrf((_lapack_layout(a), tau))


def _hh_transform(u, v, t, K, left):
    """(I - t u v^H) K if left else K (I - t u v^H); u, v: (..., m, 1), t: (..., 1)."""
    t = S.unsqueeze(t, -1)
    if left:
        return K - mul(t * u, matmul(_mH(v), K))
    return K - mul(matmul(K, t * u), _mH(v))


def _householder_back(grad, result, input, tau):
    """torch's householder_product_backward (its out-of-place form): (input_grad,
    tau_grad)."""
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
    K = _hh_transform(col[0], col[0], S.narrow(sigma, -1, 0, 1), K, True)
    v_grads, tau_grads = [], []
    for i in range(k):
        vi, ti = col[i], t[i]
        vHK = matmul(_mH(vi), K)
        Kv = matmul(K, vi)
        tu = S.unsqueeze(ti, -1)
        v_grads.append(S.unsqueeze(S.squeeze(S.conj(-tu * vHK), -2) -
                                   S.squeeze(tu * Kv, -1), -1))
        tau_grads.append(S.squeeze(S.conj(-matmul(vHK, vi)), -1))
        if i != k - 1:
            K = _hh_transform(col[i + 1], col[i + 1], S.narrow(sigma, -1, i + 1, 1), K, True)
            K = _hh_transform(vi, vi, ti, K, False)
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
        w = jnp.einsum("...m,...mn->...n", jnp.conj(vi), q, precision=_HI)
        return q - (ti[..., None] * vi)[..., :, None] * w[..., None, :], None
    xs = (jnp.moveaxis(v[..., :k], -1, 0)[::-1], jnp.moveaxis(tau, -1, 0)[::-1])
    return jax.lax.scan(step, q, xs)[0]


LINALG_HOUSEHOLDER_PRODUCT = defop(
    "linalg_householder_product", _householder_k, inputs=("input", "tau"),
    input=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[0],
    tau=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[1])


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
