"""The torch.linalg functions ATen composes from other ops, with torch's graphs:
matrix_norm (every order), norm, nuclear_norm, cond, matrix_power, tensorinv, tensorsolve,
vander; ldl_factor/ldl_solve (not implemented) and torch's removed
functions (torch.solve, lstsq, eig, symeig, matrix_rank), which raise torch's errors."""
import math

from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from . import shape as SH
from ._autocast import autocast_op
from .decomp import _check_errors, _float_check, _square_check, linalg_solve
from .linalg import matmul
from .linalg_decomp import (_low_precision_check, _no_out, _warn_once, linalg_inv,
                            linalg_inv_ex, linalg_svdvals)
from .reduce import amax, amin, sum as _sum, vector_norm

# ---- linalg.matrix_norm / norm, torch.nuclear_norm ------------------------------------------
def _norm_dtype_check(dtype, A, name):
    """ATen's check_linalg_norm_dtype."""
    if dtype is None:
        return None
    dt = D.as_dtype(dtype)
    if not dt.is_differentiable:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dt.scalar_name}")
    if dt.is_complex != A.dtype.is_complex:
        kind = "complex" if A.dtype.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got "
                           f"{dt.scalar_name}")
    if D.promote_types(A.dtype, dt) is not dt:
        raise RuntimeError(f"{name}: the dtype of the input ({A.dtype.scalar_name}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dt.scalar_name})")
    return dt


def _matrix_norm_checks(A, dim, dtype, low_precision):
    name = "linalg.matrix_norm"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    (_float_check if low_precision else _low_precision_check)(A, name)
    dim = list(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    dim = [_wrap_dim(d, A.ndim) for d in dim]
    if dim[0] == dim[1]:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return dim, _norm_dtype_check(dtype, A, name)


def _fmt(x):
    """A number as C++ streams a double ("3", "0.5", "inf")."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _svdvals_last(A, dim, dtype, reduce, keepdim):
    """reduce(svdvals over `dim`, -1) as ATen: the dims moved last by a permute, and back
    (unsqueezed) when keepdim."""
    if dtype is not None:
        A = SH.to(A, dtype)
    perm = [i for i in range(A.ndim) if i not in dim] + list(dim)
    result = reduce(linalg_svdvals(SH.permute(A, perm)))
    if keepdim:
        inv = [perm.index(i) for i in range(A.ndim)]
        result = SH.permute(SH.unsqueeze(result, -1), inv)
    return result


def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """torch.linalg.matrix_norm, composed as ATen: "fro" a vector 2-norm over `dim`;
    "nuc" the sum and 2 / -2 the max / min of the singular values (dims moved last);
    1, -1, inf, -inf the max / min over one dim of vector 1-norms over the other.

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]), 2)
    tensor(4.)
    """
    _no_out(out, "torch.linalg.matrix_norm")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        dim, dtype = _matrix_norm_checks(A, dim, dtype, ord != "nuc")
        if ord == "fro":
            return vector_norm(A, 2, dim, keepdim, dtype=dtype)
        return _svdvals_last(A, dim, dtype, lambda s: _sum(s, -1, keepdim), keepdim)
    if isinstance(ord, complex):
        raise RuntimeError("linalg.matrix_norm: Expected a non-complex scalar as the order of "
                           "norm.")
    if abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    dim, dtype = _matrix_norm_checks(A, dim, dtype, abs(ord) != 2)
    max_min = amax if ord > 0 else amin
    if abs(ord) == 2:
        return _svdvals_last(A, dim, dtype, lambda s: max_min(s, -1, keepdim), keepdim)
    d0, d1 = dim
    if abs(ord) == math.inf:  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return max_min(vector_norm(A, 1.0, d0, keepdim, dtype=dtype), d1, keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.norm: a vector norm (ord None is the 2-norm of the flattened input)
    or, for 2-D input with an ord or a 2-tuple dim, a matrix norm (see matrix_norm).

    >>> import eagergrad as torch
    >>> torch.linalg.norm(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(5.)
    """
    _no_out(out, "torch.linalg.norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If {'ord' if ord is not None else 'dim'} is "
                               f"specified, it must be of length 1 or 2. Got "
                               f"[{', '.join(map(str, dim))}]")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str) or (ord is not None and (
            (dim is not None and len(dim) == 2) or (dim is None and A.ndim == 2))):
        return linalg_matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim,
                                  dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    """torch.nuclear_norm: linalg.matrix_norm(input, "nuc", dim, keepdim).

    >>> import eagergrad as torch
    >>> torch.nuclear_norm(torch.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor(7.)
    """
    _no_out(out, "torch.nuclear_norm")
    _warn_once("nuclear_norm", (
        "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
        "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
        "keepdim)` instead"))
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return linalg_matrix_norm(input, "nuc", dim, keepdim)


# ---- linalg.cond -----------------------------------------------------------------------------
@autocast_op("linalg_cond")
def linalg_cond(A, p=None, *, out=None):
    """torch.linalg.cond: the condition number in norm p, composed as ATen: 2 / -2 /
    None a ratio of singular values, "nuc" a product of sums of them, otherwise
    norm(A) * norm(A^{-1}) with an infinite norm where A is singular.

    >>> import eagergrad as torch
    >>> torch.linalg.cond(torch.tensor([[4.0, 0.0], [0.0, 1.0]]))
    tensor(4.)
    """
    from ..creation import zeros
    _no_out(out, "torch.linalg.cond")
    if isinstance(p, str):
        _square_check(A, f"linalg.cond(ord={p})")
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        if A.numel() == 0:
            return zeros(A._shape[:-2], dtype=A.dtype.to_real())
        if p == "nuc":
            s = linalg_svdvals(A)
            return _sum(s, -1) * _sum(s.reciprocal(), -1)
        return _cond_helper(A, p)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else p
    if abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_fmt(ord)}")
    if A.numel() == 0:
        return zeros(A._shape[:-2], dtype=A.dtype.to_real())
    if abs(ord) == 2:
        s = linalg_svdvals(A)
        smax, smin = SH.narrow(s, -1, 0, 1), SH.narrow(s, -1, -1, 1)
        return SH.squeeze(smin / smax if ord == -2 else smax / smin, -1)
    # C++'s std::to_string: "%f" for a floating ord, the integer otherwise
    shown = f"{ord:f}" if isinstance(ord, float) else str(int(ord))
    _square_check(A, f"linalg.cond(ord={shown})")
    return _cond_helper(A, ord)


def _cond_helper(A, ord):
    inverse, info = linalg_inv_ex(A)
    inverse.masked_fill_(SH.unsqueeze(SH.unsqueeze(info, -1), -1) > 0, math.inf)
    result = linalg_matrix_norm(A, ord) * linalg_matrix_norm(inverse, ord)
    # (0 * inf: NumPy's answer)
    return result.nan_to_num_(math.inf, math.inf, -math.inf)


# ---- linalg.matrix_power -------------------------------------------------------------------
def linalg_matrix_power(A, n, *, out=None):
    """torch.linalg.matrix_power (torch.matrix_power, Tensor.matrix_power): A^n by
    binary exponentiation with ATen's order of matmuls (n < 0: of A's inverse; n = 0: the
    identity, a copy into a clone of A).

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    from ..creation import eye
    _no_out(out, "torch.linalg.matrix_power")
    _square_check(A, "linalg.matrix_power")
    n = int(n)
    if n == 0:
        return SH.clone(A).copy_(eye(A._shape[-2], dtype=A.dtype))
    if n == 1:
        return SH.clone(A)
    if n == -1:
        return linalg_inv(A)
    a = linalg_inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def matrix_power(input, n):
    """torch.matrix_power: linalg.matrix_power.

    >>> import eagergrad as torch
    >>> torch.matrix_power(torch.tensor([[2.0]]), -1)
    tensor([[0.5000]])
    """
    return linalg_matrix_power(input, n)


# ---- linalg.tensorinv / tensorsolve / vander ------------------------------------------------
def _prod(shape):
    return math.prod(shape)


@autocast_op("linalg_tensorinv")
def linalg_tensorinv(A, ind=2, *, out=None):
    """torch.linalg.tensorinv: the inverse of A as a map from its last to its first `ind`
    dims (a reshape, an inverse, a reshape, as ATen).

    >>> import eagergrad as torch
    >>> torch.linalg.tensorinv(torch.eye(4).reshape(4, 2, 2), ind=1).shape
    torch.Size([2, 2, 4])
    """
    _no_out(out, "torch.linalg.tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = A._shape[ind:], A._shape[:ind]
    if _prod(end) != _prod(start):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {_prod(end)} != {_prod(start)}")
    k = _prod(end)
    inv, info = linalg_inv_ex(SH.reshape(A, (k, k)))
    _check_errors(info, "inv", True)
    return SH.reshape(inv, end + start)


@autocast_op("linalg_tensorsolve")
def linalg_tensorsolve(A, B, dims=None, *, out=None):
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B (A's `dims` moved
    last first), as a matrix solve between reshapes.

    >>> import eagergrad as torch
    >>> torch.linalg.tensorsolve(2 * torch.eye(4).reshape(2, 2, 4), torch.ones(2, 2)).shape
    torch.Size([4])
    """
    _no_out(out, "torch.linalg.tensorsolve")
    nd = A.ndim
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = SH.movedim(A, dims, list(range(nd - len(dims), nd)))
    shape = A._shape[B.ndim:]
    if _prod(shape) != _prod(B._shape):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {_prod(shape)} != "
                           f"{_prod(B._shape)}")
    k = _prod(shape)
    return SH.reshape(linalg_solve(SH.reshape(A, (k, k)), SH.flatten(B)), shape)


def linalg_vander(x, *, N=None):
    """torch.linalg.vander: the Vandermonde matrix of powers 0..N-1 of x (last dim), as
    ATen: a column of ones before the cumprod of x repeated.

    >>> import eagergrad as torch
    >>> torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]])
    """
    from .scan import cumprod
    dt = x.dtype
    if dt.name in ("bool", "float16", "bfloat16") or not (
            dt.is_differentiable or dt.name.startswith(("int", "uint"))):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {dt.scalar_name}")
    x_ = SH.unsqueeze(x, -1) if x.ndim == 0 else x
    n = x_._shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = cumprod(SH.expand(SH.unsqueeze(x_, -1), x_._shape + (n - 1,)), -1)
    return SH.cat([result.new_ones(x_._shape + (1,)), result], -1)


# ---- what eagergrad lacks, and torch's removed functions ----------------------------------
def _ldl_missing(name):
    def f(*args, **kwargs):
        raise NotImplementedError(f"eagergrad does not implement {name} yet (LAPACK's "
                                  "Bunch-Kaufman sytrf, which jax does not expose)")
    f.__name__ = name.rsplit(".", 1)[-1]
    return f


linalg_ldl_factor_ex = _ldl_missing("torch.linalg.ldl_factor_ex")
linalg_ldl_factor = _ldl_missing("torch.linalg.ldl_factor")
linalg_ldl_solve = _ldl_missing("torch.linalg.ldl_solve")

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def solve(input, A, *, out=None):
    """torch.solve: removed from torch (torch.linalg.solve replaces it); raises its error."""
    raise RuntimeError(
        _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)")


def lstsq(input, A, *, out=None):
    """torch.lstsq: removed from torch (torch.linalg.lstsq replaces it); raises its error."""
    raise RuntimeError(
        _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
        "solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
        "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
        "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
        "with:\nX = torch.linalg.lstsq(A, B).solution")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """torch.eig: removed from torch (torch.linalg.eig replaces it); raises its error."""
    raise RuntimeError(
        _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """torch.symeig: removed from torch (torch.linalg.eigh replaces it); raises its error."""
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
        "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should "
        "be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """torch.matrix_rank: removed from torch (torch.linalg.matrix_rank replaces it)."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
        "`torch.linalg.matrix_rank` function instead. The "
        "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def vander(x, N=None, increasing=False):
    """torch.vander: the Vandermonde matrix of 1-D x, powers N-1..0 (0..N-1 if increasing),
    as ATen builds it: ones, x copied into columns 1.., their cumprod copied back, flipped.

    >>> import eagergrad as torch
    >>> torch.vander(torch.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    from ..creation import empty
    from .scan import cumprod
    from .tensor_ops import flip
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    result = empty((x._shape[0], n), dtype=D.promote_types(x.dtype, D.int64))
    if n > 0:
        result.fill_(1)
    if n > 1:
        result[:, 1:].copy_(SH.unsqueeze(x, 1))
        result[:, 1:].copy_(cumprod(result[:, 1:], 1))
    return result if increasing else flip(result, [1])


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm as torch/functional.py routes it: "fro" over at most two dims and any
    number p are vector norms; other strings ("nuc") matrix norms over dim (default: every
    dim), which checks them as linalg.matrix_norm.

    >>> import eagergrad as torch
    >>> torch.norm(torch.tensor([[3.0, 0.0], [0.0, -4.0]]), "nuc")
    tensor(7.)
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        dim = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else dim
        return linalg_matrix_norm(input, p, dim, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)
