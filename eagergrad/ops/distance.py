"""Distances (torch's Distance.cpp): pairwise_distance (one NormBackward1 node on
x1 - x2 + eps), cosine_similarity, and pdist (PdistBackward0, with torch's per-p
backward)."""
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ._table import call_op, defop
from .pointwise import _add_s


# ---- pairwise_distance and cosine_similarity --------------------------------------------
def _norm_k(self, p, dim, keepdim):
    from .reduce import _vnorm_k
    return _vnorm_k(self, p, dim, keepdim, D.FROM_NP[np.dtype(self.dtype)].to_real())


def _norm_back(grad, self, result, p, dim, keepdim):
    from .reduce import _vnorm_back
    return _vnorm_back(grad, self, result, p, dim, keepdim)


NORM_DIM = defop("norm_scalaropt_dim", _norm_k, attrs=("p", "dim", "keepdim"),
                 node="NormBackward1", self=_norm_back)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance: norm(x1 - x2 + eps, p) over the last dimension.

    >>> import eagergrad as torch
    >>> torch.pairwise_distance(torch.tensor([[3.0, 4.0]]), torch.zeros(1, 2), eps=0.0)
    tensor([5.])
    """
    out_dim = max(x1.ndim, x2.ndim)
    diff = _add_s(x1 - x2, eps)
    return call_op(NORM_DIM, (diff,), (float(p), (out_dim - 1,), bool(keepdim)))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity: each input divided by its (clamped) norm, then summed
    products along `dim`.

    >>> import eagergrad as torch
    >>> torch.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 0.0]]))
    tensor([1.])
    """
    from .._dtypes import promote_types
    from ..engine.grad_mode import no_grad
    from .reduce import vector_norm
    dt = promote_types(x1.dtype, x2.dtype)
    if not dt.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{dt.scalar_name}")
    x1 = x1 if x1.dtype.is_floating_point else x1.to(dt)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(dt)
    x1, x2 = _expand_outplace(x1, x2)
    n1 = vector_norm(x1, 2, dim, True).clone()
    n2 = vector_norm(x2, 2, dim, True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _expand_outplace(a, b):
    x, y = tuple(a._shape), tuple(b._shape)
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    for i, (u, v) in enumerate(zip(x, y)):
        if u != v and u != 1 and v != 1:
            raise RuntimeError(f"The size of tensor a ({u}) must match the size of tensor b "
                               f"({v}) at non-singleton dimension {i}")
    if x == y and len(a._shape) == len(b._shape):
        return a, b
    shape = tuple(v if u == 1 else u for u, v in zip(x, y))
    return a.expand(shape), b.expand(shape)


# ---- pdist: the p-norm distances between the rows of a matrix, pairs i < j ----------------
def _pairs(n):
    i, j = np.triu_indices(n, 1)
    return i, j


def _pdist_k(self, p):
    i, j = _pairs(self.shape[0])
    d = jnp.abs(self[i] - self[j])
    if p == 0:
        return jnp.sum(d != 0, axis=1).astype(self.dtype)
    if p == np.inf:
        return jnp.max(d, axis=1, initial=0.0)
    if p == 1:
        return jnp.sum(d, axis=1)
    if p == 2:
        return jnp.sqrt(jnp.sum(d * d, axis=1))
    return jnp.sum(d ** p, axis=1) ** (1.0 / p)


def _pdist_back_k(grad, self, result, p):
    # torch's per-p formulas (DistanceOpsKernel.cpp), zeros where they divide by 0
    i, j = _pairs(self.shape[0])
    diff = self[i] - self[j]
    g = grad[:, None]
    r = result[:, None]
    zero = jnp.zeros((), self.dtype)
    a = jnp.abs(diff)
    if p == 0:
        gd = jnp.zeros_like(diff)
    elif p == 1:
        gd = jnp.sign(diff) * g
    elif p < 1:
        gd = jnp.where(diff == 0, zero, jnp.sign(diff) * a ** (p - 1) * g / r ** (p - 1))
    elif p == 2:
        gd = jnp.where(r == 0, zero, g * diff / jnp.where(r == 0, 1.0, r))
    elif p == np.inf:
        gd = jnp.sign(diff) * (a == r) * g
    else:
        gd = jnp.where(r == 0, zero, diff * a ** (p - 2) * g / r ** (p - 1))
    out = jnp.zeros_like(self)
    return out.at[i].add(gd).at[j].add(-gd)


def _pdist_nyi(grad):
    raise RuntimeError("the derivative for '_pdist_backward' is not implemented.")


PDIST_BACK = defop("_pdist_backward", _pdist_back_k, inputs=("grad", "self", "result"),
                   attrs=("p",), node="PdistBackwardBackward0", grad=_pdist_nyi,
                   self=_pdist_nyi, result=_pdist_nyi)
PDIST = defop("_pdist_forward", _pdist_k, attrs=("p",), node="PdistBackward0",
              self=lambda grad, self, result, p: call_op(PDIST_BACK, (grad, self, result), (p,)))


def pdist(input, p=2):
    """torch.pdist: the p-norm distance between every pair of rows (i < j) of a matrix.

    >>> import eagergrad as torch
    >>> torch.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return call_op(PDIST, (input.contiguous(),), (float(p),))
