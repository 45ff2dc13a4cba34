"""torch.linalg's solvers built on decompositions, one node each with torch's formulas:
lstsq, pinv (and pinverse, matrix_rank), lu, lu_unpack (and torch.lu, torch.lu_solve),
triangular_solve, cholesky_solve, cholesky_inverse. See linalg_decomp.py."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._shapes import broadcast_shape as _broadcast_batch
from ..tensor import Tensor, _make
from . import shape as SH
from ._autocast import autocast_op
from ._table import call_op, defop
from .decomp import (_check_errors, _float_check, _lapack_check, _lapack_layout, _lu_backward, _mH,
                     _permutation, _return_type, _square_check, first_zero, linalg_lu_solve,
                     tril, triu)
from .linalg import matmul
from .linalg_decomp import (_eps, _no_out, _warn_once, linalg_eigvalsh, linalg_svdvals)
from .pointwise import where
from .reduce import amax, sum as _sum

# ---- linalg.lstsq ------------------------------------------------------------------------------
def _lstsq_k(self, b, rcond, driver, vector, residuals):
    B = b[..., None] if vector else b
    batch = jnp.broadcast_shapes(self.shape[:-2], B.shape[:-2])
    A = jnp.broadcast_to(self, batch + self.shape[-2:])
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    U, Sv, Vh = jnp.linalg.svd(A, full_matrices=False)
    # the minimum-norm solution of the rank rcond * max(S) gives (gels: of full rank)
    keep = Sv > rcond * Sv[..., :1] if driver != "gels" else jnp.ones_like(Sv, bool)
    Sinv = jnp.where(keep, 1 / jnp.where(keep, Sv, 1), 0).astype(A.dtype)
    X = jnp.matmul(jnp.conj(jnp.swapaxes(Vh, -1, -2)),
                   Sinv[..., :, None] * jnp.matmul(jnp.conj(jnp.swapaxes(U, -1, -2)), B))
    real = Sv.dtype
    if residuals:
        r = jnp.matmul(A, X) - B
        res = jnp.sum(jnp.real(r * jnp.conj(r)), -2).astype(real)
    else:
        res = jnp.zeros((0,), real)
    rank = jnp.sum(keep, -1).astype(jnp.int64) if driver != "gels" else \
        jnp.zeros((0,), jnp.int64)
    sv = Sv if driver in ("gelsd", "gelss") else jnp.zeros((0,), real)
    return (X[..., 0] if vector else X), res, rank, sv


def _lstsq_back(grads, self, b, solution, vector, which):
    """torch's linalg_lstsq_backward: the gradient of input (which=0) or other (1)."""
    gX, gL = grads[0], grads[1]
    B = SH.unsqueeze(b, -1) if vector else b
    out = None
    pinvA = linalg_pinv(self)
    if which == 0:
        out = _pinv_back(matmul(SH.unsqueeze(gX, -1) if vector else gX, _mH(B)), pinvA, self)
    else:
        out = matmul(_mH(pinvA), SH.unsqueeze(gX, -1) if vector else gX)
        out = SH.squeeze(out, -1) if vector else out
    if gL.numel():
        X = SH.unsqueeze(solution, -1) if vector else solution
        r = matmul(self, X) - B
        gL = SH.unsqueeze(gL, -2)
        if which == 0:
            out = out + 2 * matmul(gL * r, _mH(X))
        else:
            g = -2 * gL * r
            out = out + (SH.squeeze(g, -1) if vector else g)
    return out


LINALG_LSTSQ = defop(
    "linalg_lstsq", _lstsq_k, inputs=("self", "b"),
    attrs=("rcond", "driver", "vector", "residuals"),
    outputs=("solution", "residuals", "rank", "singular_values"), nondiff=(2, 3),
    self=lambda grads, self, b, solution, vector: _lstsq_back(grads, self, b, solution,
                                                               vector, 0),
    b=lambda grads, self, b, solution, vector: _lstsq_back(grads, self, b, solution, vector, 1))

_LinalgLstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank",
                                             "singular_values"))


@autocast_op("linalg_lstsq")
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """torch.linalg.lstsq: the least-squares (minimum-norm) solution of AX = B with its
    residuals (m > n, drivers gels/gelsd/gelss, full rank), the rank (not for gels) and the
    singular values (gelsd, gelss), as torch.return_types.linalg_lstsq; one
    LinalgLstsqBackward0 node. Computed through the SVD for every driver: the values are
    LAPACK's for full-rank A (for rank-deficient A the rank comes from the singular values
    where gelsy estimates it).

    >>> import eagergrad as torch
    >>> torch.linalg.lstsq(torch.tensor([[1.0], [1.0]]), torch.tensor([[1.0], [3.0]])).rank
    tensor(1)
    """
    name = "torch.linalg.lstsq"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype.scalar_name} and other's dtype "
                           f"{B.dtype.scalar_name}")
    diff = A.ndim - B.ndim
    if diff not in (0, 1):
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = diff == 1
    _broadcast_batch(A._shape[:-2], B._shape[:-1 if vector else -2])
    if A._shape[-2] != (B._shape[-1] if vector else B._shape[-2]):
        raise RuntimeError(f"{name}: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    _float_check(A, name)
    if A.dtype.itemsize < (8 if A.dtype.is_complex else 4):
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = A._shape[-2:]
    if rcond is None:
        rcond = _eps(A) * max(m, n)
    residuals = m > n and driver != "gelsy"
    out = call_op(LINALG_LSTSQ, (A, B), (float(rcond), driver, vector, residuals))
    if residuals and driver in ("gelsd", "gelss") and not isinstance(
            out[2]._value, jax.core.Tracer) and int(np.asarray(out[2]._value).min()) < n:
        # torch's residuals need every matrix of full rank (read on the host)
        out = call_op(LINALG_LSTSQ, (A, B), (float(rcond), driver, vector, False))
    X, res, rank, sv = out
    return _LinalgLstsq((X if vector else _lapack_layout(X), res, rank, sv))


# ---- linalg.pinv, torch.pinverse, linalg.matrix_rank -------------------------------------------
def _pinv_k(self, atol, rtol, hermitian):
    if not hermitian:
        U, Sv, Vh = jnp.linalg.svd(self, full_matrices=False)
        V, max_val = jnp.conj(jnp.swapaxes(Vh, -1, -2)), Sv[..., :1]
        absS = Sv
    else:
        V, Sv = jax.lax.linalg.eigh(self, symmetrize_input=False)
        absS = jnp.abs(Sv)
        max_val = jnp.max(absS, -1, keepdims=True, initial=0)
        U = V
    tol = jnp.maximum(atol[..., None], rtol[..., None] * max_val)
    keep = absS > tol
    Sp = jnp.where(keep, 1 / jnp.where(keep, Sv, 1), 0).astype(self.dtype)
    return jnp.matmul(V * Sp[..., None, :], jnp.conj(jnp.swapaxes(U, -1, -2)))


def _pinv_back(grad, pinvA, A):
    """torch's pinv_backward."""
    m, n = A._shape[-2:]
    pinvAh, gradh = _mH(pinvA), _mH(grad)
    if m <= n:
        K = matmul(gradh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return -_mH(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh) + \
            matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A))
    K = matmul(pinvA, gradh)
    pinvAhK = matmul(pinvAh, K)
    return -_mH(matmul(K, pinvA)) + matmul(matmul(gradh - matmul(A, K), pinvA), pinvAh) + \
        pinvAhK - matmul(matmul(pinvAhK, pinvA), A)


LINALG_PINV = defop(
    "linalg_pinv", _pinv_k, inputs=("self", "atol", "rtol"), attrs=("hermitian",),
    self=lambda grad, result, self: _pinv_back(grad, result, self))


def _tolerance(t, name, which):
    if t is None:
        return None
    if isinstance(t, Tensor):
        if t.dtype.is_complex:
            raise RuntimeError(f"{name}: {which} tensor of complex type is not supported. Got "
                               f"{t.dtype.scalar_name}")
        return t if t.dtype is D.float64 else SH.to(t, D.float64)
    if isinstance(t, complex):
        raise RuntimeError(f"{name}: {which} tensor of complex type is not supported. Got "
                           "ComplexDouble")
    return float(t)


def _atol_rtol(A, atol, rtol, name):
    """torch's get_atol_rtol: atol 0 by default; rtol eps * max(m, n) by default, 0 when
    atol is given (a tensor atol: where atol > 0)."""
    atol = _tolerance(atol, name, "atol")
    rtol = _tolerance(rtol, name, "rtol")
    default = _eps(A) * max(A._shape[-2:])
    if rtol is None:
        if atol is None:
            rtol = default
        elif isinstance(atol, Tensor):
            rtol = where(atol > 0, 0.0, _make(jnp.asarray(default, jnp.float64)))
        else:
            rtol = 0.0 if atol > 0 else default
    if atol is None:
        atol = 0.0
    f64 = jnp.float64
    return tuple(t if isinstance(t, Tensor) else _make(jnp.asarray(t, f64)) for t in (atol, rtol))


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch.linalg.pinv: the pseudoinverse, singular values (hermitian: |eigenvalues|)
    below max(atol, rtol * the largest) dropped (rcond, positional: rtol); one
    LinalgPinvBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.pinv(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    _no_out(out, "torch.linalg.pinv")
    if A.dtype.name not in ("float32", "float64", "complex64", "complex128") or A.ndim < 2:
        raise RuntimeError(f"linalg.pinv({A.dtype.scalar_name}{{{list(A._shape)}}}): expected "
                           "a tensor with 2 or more dimensions of float, double, cfloat or "
                           "cdouble types")
    name = "torch.linalg.pinv"
    if rcond is not None:
        atol, rtol = 0.0, rcond
    atol, rtol = _atol_rtol(A, atol, rtol, name)
    return call_op(LINALG_PINV, (A, atol, rtol), (bool(hermitian),))


@autocast_op("pinverse")
def pinverse(input, rcond=1e-15):
    """torch.pinverse (Tensor.pinverse): linalg.pinv with rtol=rcond.

    >>> import eagergrad as torch
    >>> torch.pinverse(torch.tensor([[2.0]]))
    tensor([[0.5000]])
    """
    return linalg_pinv(input, rcond)


@autocast_op("linalg_matrix_rank")
def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch.linalg.matrix_rank: the number of singular values (hermitian: |eigenvalues|)
    above max(atol, rtol * the largest); int64, no gradient (tol, positional: atol).

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_rank(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    from ..creation import zeros
    _no_out(out, "torch.linalg.matrix_rank")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if not A.dtype.is_differentiable or A.dtype.itemsize < (8 if A.dtype.is_complex else 4):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _atol_rtol(A, atol, rtol, "torch.linalg.matrix_rank")
    if A.numel() == 0:
        return zeros(A._shape[:-2], dtype=D.int64)
    if not hermitian:
        Sv = linalg_svdvals(A)
        max_S = SH.narrow(Sv, -1, 0, 1)
    else:
        Sv = linalg_eigvalsh(A).abs()
        max_S = amax(Sv, -1, True)
    from .pointwise import maximum
    tol_ = maximum(SH.unsqueeze(atol, -1), SH.unsqueeze(rtol, -1) * max_S)
    return _sum(Sv > tol_, -1)


# ---- linalg.lu, torch.lu_unpack, torch.lu / lu_solve ---------------------------------------
# (P last in the kernels: torch numbers only the differentiable outputs, L 0 and U 1)
def _unpack_k(lu, perm, m, n, unpack_data, unpack_pivots):
    k = min(m, n)
    if unpack_data:
        L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
        U = jnp.triu(lu[..., :k, :])
    else:
        L = U = jnp.zeros((0,), lu.dtype)
    if unpack_pivots:
        P = jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=lu.dtype), -1, -2)
    else:
        P = jnp.zeros((0,), lu.dtype)
    return L, U, P


def _linalg_lu_k(A, pivot):
    lu, _, perm = jax.lax.linalg.lu(A)
    return _unpack_k(lu, perm, *A.shape[-2:], True, True)


LINALG_LU = defop(
    "linalg_lu", _linalg_lu_k, inputs=("A",), attrs=("pivot",), outputs=("L", "U", "P"),
    nondiff=(2,), A=lambda grads, P, L, U, pivot: _lu_backward(grads[0], grads[1], P, L, U,
                                                               pivot))

_LinalgLu = _return_type("linalg_lu", ("P", "L", "U"))
_LuUnpack = _return_type("lu_unpack", ("P", "L", "U"))


def linalg_lu(A, *, pivot=True, out=None):
    """torch.linalg.lu: A = P L U with partial pivoting (P a permutation matrix, L unit
    lower, U upper); one LinalgLuBackward0 node (for L and U).

    >>> import eagergrad as torch
    >>> torch.linalg.lu(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    _no_out(out, "torch.linalg.lu")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._shape)} instead")
    if not A.dtype.is_differentiable:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype.scalar_name}'")
    _lapack_check(A, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    L, U, P = call_op(LINALG_LU, (A,), (True,))
    return _LinalgLu((P, L, U))


def _lu_unpack_k(LU_data, LU_pivots, unpack_data, unpack_pivots):
    m, n = LU_data.shape[-2:]
    perm = _permutation(LU_pivots, m) if unpack_pivots else None
    return _unpack_k(LU_data, perm, m, n, unpack_data, unpack_pivots)


def _lu_unpack_back(grads, m, n):
    """torch's lu_unpack_backward."""
    gL, gU = grads[0], grads[1]
    k = min(m, n)
    if m == n:
        U1 = triu(gU)  # (first, as torch's: an empty gU fails here)
        return tril(gL, -1) + U1
    L1 = tril(gL if m == k else SH.narrow(gL, -2, 0, k), -1)
    U1 = triu(gU if n == k else SH.narrow(gU, -1, 0, k))
    if m > n:
        return SH.cat([L1 + U1, SH.narrow(gL, -2, k, m - k)], -2)
    return SH.cat([L1 + U1, SH.narrow(gU, -1, k, n - k)], -1)


LU_UNPACK = defop(
    "lu_unpack", _lu_unpack_k, inputs=("LU_data", "LU_pivots"),
    attrs=("unpack_data", "unpack_pivots"), outputs=("L", "U", "P"), nondiff=(2,),
    saved_meta=(("LU_data_sym_argsize_minus_1", "LU_data_sym_argsize_minus_2"),
                lambda ts, needs: {"LU_data_sym_argsize_minus_1": ts[0]._shape[-1],
                                   "LU_data_sym_argsize_minus_2": ts[0]._shape[-2]}),
    LU_data=lambda grads, LU_data: _lu_unpack_back(grads, *LU_data._shape[-2:]))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """torch.lu_unpack: (P, L, U) from lu_factor's (LU, pivots); with unpack_data False
    (unpack_pivots False) L and U (P) are empty. One LuUnpackBackward0 node.

    >>> import eagergrad as torch
    >>> torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))).U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    _no_out(out, "torch.lu_unpack")
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data._shape)} instead")
    if unpack_pivots and LU_pivots.dtype.name != "int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    L, U, P = call_op(LU_UNPACK, (LU_data, LU_pivots), (bool(unpack_data), bool(unpack_pivots)))
    return _LuUnpack((P, L, U))


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (Tensor.lu; deprecated in torch for linalg.lu_factor(_ex)): (LU, pivots),
    with info too if get_infos; no error check, as torch.

    >>> import eagergrad as torch
    >>> torch.lu(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))[1]
    tensor([2, 2], dtype=torch.int32)
    """
    from .decomp import linalg_lu_factor_ex
    _no_out(out, "torch.lu")
    _warn_once("lu", (
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)"))
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


@autocast_op("lu_solve")
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (Tensor.lu_solve; deprecated in torch): linalg.lu_solve(LU_data,
    LU_pivots, b).

    >>> import eagergrad as torch
    >>> A = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> torch.lu_solve(torch.tensor([[2.0], [2.0]]), *torch.linalg.lu_factor(A))
    tensor([[1.0000],
            [0.5000]])
    """
    _no_out(out, "torch.lu_solve")
    _warn_once("lu_solve", (
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B)"))
    return linalg_lu_solve(LU_data, LU_pivots, b)


# ---- torch.triangular_solve, cholesky_solve, cholesky_inverse ------------------------------
def _broadcast2(b, A):
    batch = jnp.broadcast_shapes(b.shape[:-2], A.shape[:-2])
    return jnp.broadcast_to(b, batch + b.shape[-2:]), jnp.broadcast_to(A, batch + A.shape[-2:])


def _triangular_solve_k(self, A, upper, transpose, unitriangular):
    b, a = _broadcast2(self, A)
    x = jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=not upper,
                                        transpose_a=transpose, unit_diagonal=unitriangular)
    return x, a


def _triangular_solve_back(grads, self, A, solution, upper, transpose, unitriangular, which):
    """torch's triangular_solve_backward: the gradient of b (which=0) or A (1)."""
    gx, gm = grads
    gb = triangular_solve(gx, SH.conj(A), upper, not transpose, unitriangular)[0]
    if which == 0:
        return gb
    ga = -matmul(SH.conj(solution), SH.transpose(gb, -2, -1)) if transpose else \
        -matmul(gb, _mH(solution))
    ga = triu(ga, int(unitriangular)) if upper else tril(ga, -int(unitriangular))
    return ga + gm


TRIANGULAR_SOLVE = defop(
    "triangular_solve", _triangular_solve_k, inputs=("self", "A"),
    attrs=("upper", "transpose", "unitriangular"), outputs=("solution", "cloned_coefficient"),
    self=lambda grads, A, upper, transpose, unitriangular: _triangular_solve_back(
        grads, None, A, None, upper, transpose, unitriangular, 0),
    A=lambda grads, A, solution, upper, transpose, unitriangular: _triangular_solve_back(
        grads, None, A, solution, upper, transpose, unitriangular, 1))

_TriangularSolve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


def _linear_solve_checks(b, A, name):
    """ATen's linearSolveCheckInputs."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype.scalar_name} and A of type {A.dtype.scalar_name} instead.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")
    if A._shape[-1] != b._shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A._shape[-1]} by {A._shape[-1]} but each b matrix is "
                           f"{b._shape[-2]} by {b._shape[-1]}")
    _broadcast_batch(b._shape[:-2], A._shape[:-2])


@autocast_op("triangular_solve")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve (Tensor.triangular_solve; deprecated in torch for
    linalg.solve_triangular): (X with op(A) X = b, A's copy), batch dims broadcast; one
    TriangularSolveBackward0 node.

    >>> import eagergrad as torch
    >>> A = torch.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> torch.triangular_solve(torch.tensor([[3.0], [4.0]]), A).solution
    tensor([[1.],
            [1.]])
    """
    _no_out(out, "torch.triangular_solve")
    _warn_once("triangular_solve", (
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B)."))
    for t, nm in ((b, "b"), (A, "A")):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {nm} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    _linear_solve_checks(b, A, "triangular_solve")
    if not A.dtype.is_differentiable:
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")
    _lapack_check(A, "triangular_solve_cpu")
    x, a = call_op(TRIANGULAR_SOLVE, (b, A), (bool(upper), bool(transpose), bool(unitriangular)))
    return _TriangularSolve((_lapack_layout(x), _lapack_layout(a)))


def _cholesky_solve_k(self, input2, upper):
    b, f = _broadcast2(self, input2)
    tri = jax.lax.linalg.triangular_solve
    conj = jnp.iscomplexobj(f)
    if upper:  # A = U^H U
        y = tri(f, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        return tri(f, y, left_side=True, lower=False)
    y = tri(f, b, left_side=True, lower=True)  # A = L L^H
    return tri(f, y, left_side=True, lower=True, transpose_a=True, conjugate_a=conj)


def _cholesky_solve_input2(grad, input2, result, upper):
    """torch's cholesky_solve_backward, the gradient of the factor."""
    common = matmul(cholesky_solve(grad, input2, upper), _mH(result))
    common = common + _mH(common)
    return -matmul(input2, common) if upper else -matmul(common, input2)


CHOLESKY_SOLVE = defop(
    "cholesky_solve", _cholesky_solve_k, inputs=("self", "input2"), attrs=("upper",),
    self=lambda grad, input2, upper: cholesky_solve(grad, input2, upper),
    input2=_cholesky_solve_input2)


@autocast_op("cholesky_solve")
def cholesky_solve(B, L, upper=False, *, out=None):
    """torch.cholesky_solve (Tensor.cholesky_solve): X with A X = B where A = L L^H
    (U^H U if upper) from its Cholesky factor; batch dims broadcast, one
    CholeskySolveBackward0 node.

    >>> import eagergrad as torch
    >>> torch.cholesky_solve(torch.tensor([[4.0]]), torch.tensor([[2.0]]))
    tensor([[1.]])
    """
    _no_out(out, "torch.cholesky_solve")
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions "
                           "instead")
    if L.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    _linear_solve_checks(B, L, "cholesky_solve")
    if not L.dtype.is_differentiable:
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for "
                                  f"'{L.dtype.scalar_name}'")
    _lapack_check(L, "cholesky_solve_cpu")
    return _lapack_layout(call_op(CHOLESKY_SOLVE, (B, L), (bool(upper),)))


def _cholesky_inverse_k(self, upper):
    f = jnp.triu(self) if upper else jnp.tril(self)
    info = first_zero(jnp.diagonal(f, axis1=-2, axis2=-1))
    eye = jnp.broadcast_to(jnp.eye(f.shape[-1], dtype=f.dtype), f.shape)
    inv = jax.lax.linalg.triangular_solve(f, eye, left_side=True, lower=not upper)

    def product(w):  # (U^H U)^{-1} = U^{-1} U^{-H}, (L L^H)^{-1} = L^{-H} L^{-1}
        wh = jnp.conj(jnp.swapaxes(w, -1, -2))
        return jnp.matmul(w, wh) if upper else jnp.matmul(wh, w)
    out = product(inv)
    if jnp.iscomplexobj(inv) and inv.shape[-1]:
        # LAPACK's potri multiplies with lauu2, which takes the real part of the diagonal
        # (a Cholesky factor's is real) but for the last element, which it scales by it:
        # its values, with the derivative of the product
        n = f.shape[-1]
        last = jnp.real(inv[..., -1, -1]) * inv[..., -1, -1]
        lapack = product(jnp.where(jnp.eye(n, dtype=bool), jnp.real(inv).astype(inv.dtype),
                                   inv)).at[..., -1, -1].set(last)
        out = out + jax.lax.stop_gradient(lapack - out)
    return out, info


def _cholesky_inverse_back(grad, self, result, upper):
    """torch's cholesky_inverse_backward."""
    common = matmul(result, matmul(grad + _mH(grad), result))
    return -matmul(self, common) if upper else -matmul(common, self)


CHOLESKY_INVERSE = defop(
    "cholesky_inverse", _cholesky_inverse_k, attrs=("upper",), outputs=("result", "info"),
    nondiff=(1,), self=_cholesky_inverse_back)


@autocast_op("cholesky_inverse")
def cholesky_inverse(L, upper=False, *, out=None):
    """torch.cholesky_inverse (Tensor.cholesky_inverse): (L L^H)^{-1} (U^H U if upper)
    from a Cholesky factor; a zero on its diagonal raises LinAlgError. One
    CholeskyInverseBackward0 node.

    >>> import eagergrad as torch
    >>> torch.cholesky_inverse(torch.tensor([[2.0]]))
    tensor([[0.2500]])
    """
    _no_out(out, "torch.cholesky_inverse")
    _square_check(L, "cholesky_inverse")
    if not L.dtype.is_differentiable:
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for "
                                  f"'{L.dtype.scalar_name}'")
    _lapack_check(L, "cholesky_inverse_out_cpu")
    result, info = call_op(CHOLESKY_INVERSE, (L,), (bool(upper),))
    _check_errors(info, "cholesky_inverse", L.ndim == 2)
    return _lapack_layout(result)
