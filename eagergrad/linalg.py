"""torch.linalg: the decompositions and solvers of ops/decomp.py (qr, lu_factor, lu_solve,
solve, solve_triangular, householder_product, matrix_exp), ops/linalg_decomp.py (svd, eigh,
eig, cholesky, inv, det, slogdet) and ops/linalg_solvers.py (lstsq, pinv, lu, ...), one node
each; the norms, cond, matrix_power, tensorinv/tensorsolve, vander (ops/linalg_compose.py),
vecdot, matmul, multi_dot and diagonal, composed from eagergrad ops as ATen composes them
(so the graphs are torch's: LinalgVectorNormBackward0, AmaxBackward0, MmBackward0, ...).
ldl_factor / ldl_solve raise NotImplementedError (jax has no Bunch-Kaufman LDL).

>>> import eagergrad as torch
>>> torch.linalg.vector_norm(torch.tensor([3.0, 4.0]))
tensor(5.)
"""

from . import _torch_names
from .ops._autocast import autocast_op
from .ops import decomp as _DC
from .ops import linalg as _L
from .ops import linalg_compose as _LC
from .ops import linalg_decomp as _LD
from .ops import linalg_solvers as _LS
from .ops import products as _P
from .ops import shape as _S
from .ops.pointwise import mul as _mul
from .ops.reduce import sum as _sum
from .ops.reduce import vector_norm

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

matmul = _L.matmul
matrix_exp = _DC.matrix_exp
householder_product = _DC.householder_product
solve = _DC.linalg_solve
cholesky = _LD.linalg_cholesky
cholesky_ex = _LD.linalg_cholesky_ex
cond = _LC.linalg_cond
det = _LD.linalg_det
eig = _LD.linalg_eig
eigh = _LD.linalg_eigh
eigvals = _LD.linalg_eigvals
eigvalsh = _LD.linalg_eigvalsh
inv = _LD.linalg_inv
inv_ex = _LD.linalg_inv_ex
ldl_factor = _LC.linalg_ldl_factor
ldl_factor_ex = _LC.linalg_ldl_factor_ex
ldl_solve = _LC.linalg_ldl_solve
lstsq = _LS.linalg_lstsq
lu = _LS.linalg_lu
lu_factor = _DC.linalg_lu_factor
lu_factor_ex = _DC.linalg_lu_factor_ex
lu_solve = _DC.linalg_lu_solve
matrix_norm = _LC.linalg_matrix_norm
matrix_power = _LC.linalg_matrix_power
matrix_rank = _LS.linalg_matrix_rank
norm = _LC.linalg_norm
pinv = _LS.linalg_pinv
slogdet = _LD.linalg_slogdet
solve_ex = _DC.linalg_solve_ex
svd = _LD.linalg_svd
svdvals = _LD.linalg_svdvals
tensorinv = _LC.linalg_tensorinv
tensorsolve = _LC.linalg_tensorsolve
vander = _LC.linalg_vander
LinAlgError = _LinAlgError = _DC.LinAlgError  # (_LinAlgError: torch's class name, for pickles)
solve_triangular = _DC.solve_triangular
cross = _P.linalg_cross


@autocast_op("linalg_qr")
def qr(A, mode="reduced", *, out=None):
    """torch.linalg.qr: A = QR, mode "reduced" (default), "complete" or "r" (Q empty);
    torch.return_types.linalg_qr(Q, R), one LinalgQrBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.qr(torch.tensor([[3.0], [4.0]])).Q
    tensor([[-0.6000],
            [-0.8000]])
    """
    if out is not None:
        raise _torch_names.missing("torch.linalg.qr(out=...)")
    return _DC._LinalgQr(_DC._linalg_qr(A, mode))


@autocast_op("linalg_vecdot")
def vecdot(x, y, *, dim=-1):
    """torch.linalg.vecdot: sum(x.conj() * y, dim), as ATen writes it.

    >>> import eagergrad as torch
    >>> torch.linalg.vecdot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.scalar_name} and y of type "
                           f"{y.dtype.scalar_name} instead")
    return _sum(_mul(_S.conj(x), y), dim)


def multi_dot(tensors):
    """torch.linalg.multi_dot: mm's in the cheapest order (ATen's matrix-chain order),
    a first/last 1-D tensor taken as a row/column vector, then a view to the result shape.

    >>> import eagergrad as torch
    >>> torch.linalg.multi_dot([torch.ones(2), torch.ones(2, 3), torch.ones(3)])
    tensor(6.)
    """
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    shape = []
    ts = list(tensors)
    for k, where, t in ((0, "first", first), (n - 1, "last", last)):
        if t.ndim == 1:
            ts[k] = _S.unsqueeze(t, 0 if k == 0 else -1)
        elif t.ndim == 2:
            shape.append(t._shape[0 if k == 0 else 1])
        else:
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if ts[i].dtype is not ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {ts[0].dtype} and tensor {i} {ts[i].dtype}")
        if ts[i - 1]._shape[-1] != ts[i]._shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{_sizes(tensors[i - 1])} and {_sizes(tensors[i])} cannot be "
                               "multiplied")
    if n == 2:
        out = _L.mm(ts[0], ts[1])
    elif n == 3:
        a, b = ts[0]._shape[0], ts[1]._shape[0]
        c, d = ts[2]._shape
        if a * c * (b + d) > b * d * (a + c):
            out = _L.mm(ts[0], _L.mm(ts[1], ts[2]))
        else:
            out = _L.mm(_L.mm(ts[0], ts[1]), ts[2])
    else:
        out = _chain(ts, _chain_order(ts), 0, n - 1)
    return _S.view(out, tuple(shape))


def _chain_matmul(*matrices, out=None):
    # (torch.chain_matmul: here beside multi_dot; eagergrad/__init__ exports it)
    """torch.chain_matmul (deprecated, warned once): multi_dot of two or more matrices,
    a clone of a single one.

    >>> import eagergrad as torch
    >>> torch.chain_matmul(torch.ones(2, 3), torch.ones(3, 1)).shape
    torch.Size([2, 1])
    """
    if out is not None:
        raise _torch_names.missing("torch.chain_matmul(out=...)")
    _P._warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a "
                  "future PyTorch release. Use torch.linalg.multi_dot instead, which accepts a "
                  "list of two or more tensors rather than multiple parameters.")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return _S.clone(matrices[0])
    return multi_dot(matrices)


def _frobenius_norm(input, dim, keepdim=False):
    # (torch.frobenius_norm: deprecated, beside chain_matmul; eagergrad/__init__ exports it)
    """torch.frobenius_norm (deprecated, warned once): at::norm(input, 2, dim, keepdim), at
    most two dims (none: all), one NormBackward1 node.

    >>> import warnings, eagergrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.frobenius_norm(torch.tensor([[3.0, 4.0]]), (0, 1))
    tensor(5.)
    """
    from ._shapes import wrap_dim
    from .ops.distance import NORM_DIM
    from .ops._table import call_op
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if isinstance(keepdim, int) and not isinstance(keepdim, bool):
        raise TypeError("frobenius_norm(): argument 'keepdim' must be bool, not int")
    _P._warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for "
                  "JIT compatibility. It will be removed in a future PyTorch release. Please "
                  "use `linalg.vector_norm(A, 2., dim, keepdim)` instead")
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    if not input.dtype.is_differentiable:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.scalar_name} instead.")
    wrapped = [wrap_dim(d, input.ndim) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not wrapped or not input.ndim:
        wrapped = list(range(input.ndim))
    return call_op(NORM_DIM, (input,), (2.0, tuple(wrapped), bool(keepdim)))


def _sizes(t):
    return "[" + ", ".join(map(str, t._shape)) + "]"


def _chain_order(ts):
    """The matrix-chain split points (Cormen et al. 15.2), with ATen's tie-breaking."""
    n = len(ts)
    p = [t._shape[0] for t in ts] + [ts[-1]._shape[1]]
    m = [[0] * n for _ in range(n)]
    s = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            m[i][j] = None
            for k in range(i, j):
                q = m[i][k] + m[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if m[i][j] is None or q < m[i][j]:
                    m[i][j], s[i][j] = q, k
    return s


def _chain(ts, s, i, j):
    if i == j:
        return ts[i]
    return _L.mm(_chain(ts, s, i, s[i][j]), _chain(ts, s, s[i][j] + 1, j))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: torch.diagonal with the last two dims as default."""
    return _S.diagonal(A, offset, dim1, dim2)


__getattr__ = _torch_names.module_getattr("eagergrad.linalg", "torch.linalg")
