"""torch.linalg: qr, householder_product, matrix_exp, solve and solve_triangular (ops of
ops/decomp.py); the norms, vecdot, matmul, multi_dot and diagonal, composed from eagergrad
ops as ATen composes them (so the graphs are torch's: LinalgVectorNormBackward0,
AmaxBackward0, MmBackward0, ...). Every other torch.linalg function raises
NotImplementedError naming it.

>>> import eagergrad as torch
>>> torch.linalg.vector_norm(torch.tensor([3.0, 4.0]))
tensor(5.)
"""
import math

from . import _torch_names
from .ops import decomp as _DC
from .ops import linalg as _L
from .ops import shape as _S
from .ops.pointwise import mul as _mul
from .ops.reduce import amax as _amax
from .ops.reduce import amin as _amin
from .ops.reduce import sum as _sum
from .ops.reduce import vector_norm
from ._shapes import wrap_dim as _wrap_dim

__all__ = [
    "LinAlgError",
    "diagonal",
    "householder_product",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "multi_dot",
    "norm",
    "qr",
    "solve",
    "solve_triangular",
    "vecdot",
    "vector_norm",
]

matmul = _L.matmul
matrix_exp = _DC.matrix_exp
householder_product = _DC.householder_product
solve = _DC.solve
solve_triangular = _DC.solve_triangular


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


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: raised by decompositions of singular or ill-conditioned
    matrices (eagergrad implements none yet)."""


def _matrix_dims(A, dim):
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not A.dtype.is_differentiable:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                           f"as input. Got {A.dtype.scalar_name}")
    dim = list(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    dim = [_wrap_dim(d, A.ndim) for d in dim]
    if dim[0] == dim[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return dim


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """torch.linalg.matrix_norm for ord "fro" (a vector 2-norm over `dim`, as ATen) and
    1, -1, inf, -inf (max/min over one dim of vector 1-norms over the other). "nuc", 2
    and -2 need singular values, which eagergrad lacks: NotImplementedError.

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        if ord == "nuc":
            raise _torch_names.missing("torch.linalg.matrix_norm(ord='nuc')")
        dim = _matrix_dims(A, dim)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    if abs(ord) == 2:
        raise _torch_names.missing(f"torch.linalg.matrix_norm(ord={ord})")
    d0, d1 = _matrix_dims(A, dim)
    if abs(ord) == math.inf:  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    norms = vector_norm(A, 1.0, d0, keepdim, dtype=dtype)
    return (_amax if ord > 0 else _amin)(norms, d1, keepdim)


def _fmt(x):
    """A number as C++ streams a double ("3", "0.5", "inf")."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm (ord None is the 2-norm of the flattened input)
    or, for 2-D input with an ord or a 2-tuple dim, a matrix norm (see matrix_norm).

    >>> import eagergrad as torch
    >>> torch.linalg.norm(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(5.)
    """
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
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


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
