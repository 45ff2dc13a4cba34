"""More products: vdot, linalg_cross, addmv, addr, addbmm and cdist are one node each with
torch's formulas (VdotBackward0, LinalgCrossBackward0, ..., CdistBackward0 with torch's
per-p backward, EuclideanDistBackward0 for cdist's matrix-product path); kron, tensordot
and inner are composed of eagergrad ops as ATen composes them (kron: _unsafe_view, mul,
_unsafe_view; tensordot: permute, reshape, mm or dot), so their graphs are torch's.
chain_matmul is in eagergrad/linalg.py beside multi_dot, which it calls."""
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._shapes import broadcast_shape, conj_scalar as _conj_scalar, wrap_dim as _wrap_dim
from ..tensor import Tensor
from . import linalg as L
from . import shape as S
from ._table import call_op, defop
from ._autocast import autocast_op
from .inplace import inplace
from .linalg import _hi, _check_expand, _check_vectors, _maybe_multiply, _scalar_arg
from .pointwise import mul
from .tensor_ops import _warn_once
from .reduce import sum as _sum

# ---- vdot, kron, tensordot, inner ---------------------------------------------------------
VDOT = defop("vdot", lambda self, other: jnp.vdot(self, other, precision=_hi()),
             inputs=("self", "other"),
             self=lambda grad, other: grad.conj() * other,
             other=lambda grad, self: grad * self)


def vdot(input, other, *, out=None):
    """torch.vdot: the dot product of two 1-D tensors, the first conjugated.

    >>> import eagergrad as torch
    >>> torch.vdot(torch.tensor([1j, 2]), torch.tensor([1j, 1]))
    tensor(3.+0.j)
    """
    _no_out(out, "vdot")
    _check_vectors(input, other)
    return call_op(VDOT, (input, other))


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")


def _unsafe_view(t, shape):
    if S._view_strides(t._shape, t.stride(), shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return call_op(S.UNSAFE_VIEW, (t,), (tuple(shape), t._shape))


def kron(input, other, *, out=None):
    """torch.kron: the Kronecker product, as ATen's KronImpl: both inputs viewed with
    interleaved singleton dims (_unsafe_view), multiplied, viewed to the result's shape.

    >>> import eagergrad as torch
    >>> torch.kron(torch.tensor([1, 2]), torch.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    _no_out(out, "kron")
    n = max(input.ndim, other.ndim)
    pa, pb = n - input.ndim, n - other.ndim
    a_shape, b_shape, r_shape = [], [], []
    for i in range(n):
        a = input._shape[i - pa] if i >= pa else 1
        b = other._shape[i - pb] if i >= pb else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        r_shape.append(a * b)
    return _unsafe_view(mul(_unsafe_view(input, a_shape), _unsafe_view(other, b_shape)), r_shape)


def _dims_bitset(dims, ndim):
    seen = set()
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return seen


def _tensordot(input1, input2, dims1, dims2):
    """ATen's tensordot(input1, input2, dims1, dims2)."""
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if input1.dtype is not input2.dtype:
        raise RuntimeError("both inputs should have same dtype")
    csize = 1
    t1, t2 = input1, input2
    for a, b in zip(dims1, dims2):
        s1 = input1._shape[_wrap_dim(a, input1.ndim)]
        s2 = input2._shape[_wrap_dim(b, input2.ndim)]
        if s2 == 1:  # broadcast dimensions are summed right away
            t1 = _sum(t1, a, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = _sum(t2, b, True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size "
                                   f"{s1} in dim {a} and second has size {s2} in dim {b}")
            csize *= s1
    c1, c2 = _dims_bitset(dims1, input1.ndim), _dims_bitset(dims2, input2.ndim)
    p1 = [i for i in range(input1.ndim) if i not in c1] + list(dims1)
    p2 = list(dims2) + [i for i in range(input2.ndim) if i not in c2]
    r1 = [t1._shape[i] for i in range(input1.ndim) if i not in c1]
    r2 = [t2._shape[i] for i in range(input2.ndim) if i not in c2]
    size1, size2 = math.prod(r1), math.prod(r2)
    t1, t2 = S.permute(t1, p1), S.permute(t2, p2)
    rsizes = tuple(r1 + r2)
    if size1 != 1 or size2 != 1:
        out = L.mm(S.reshape(t1, (size1, csize)), S.reshape(t2, (csize, size2)))
        return S.reshape(out, rsizes)
    if t1.is_contiguous() and t2.is_contiguous():  # a full contraction: a dot of views
        return S.reshape(L.dot(S.flatten(t1), S.flatten(t2)), rsizes)
    return S.reshape(_sum(mul(S.squeeze(t1), S.squeeze(t2)), dtype=t1.dtype), rsizes)


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: the contraction of a's `dims[0]` with b's `dims[1]` (an int n: a's
    last n with b's first n), as ATen: permute, reshape, mm (dot for a full contraction).

    >>> import eagergrad as torch
    >>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), 1).shape
    torch.Size([2, 4])
    """
    _no_out(out, "tensordot")
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        for name, pos, d in (("dims_self", 3, dims_a), ("dims_other", 4, dims_b)):
            if not isinstance(d, (list, tuple)):
                raise TypeError(f"tensordot(): argument '{name}' (position {pos}) must be tuple "
                                f"of ints, not {type(d).__name__}")
    return _tensordot(a, b, [int(d) for d in dims_a], [int(d) for d in dims_b])


def inner(input, other, *, out=None):
    """torch.inner: the sum of products over the last dims (a 0-D input: a product), as
    ATen: tensordot(input, other, [-1], [-1]).

    >>> import eagergrad as torch
    >>> torch.inner(torch.tensor([1, 2]), torch.tensor([3, 4]))
    tensor(11)
    """
    _no_out(out, "inner")
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input._shape)} and {list(other._shape)}")
    return _tensordot(input, other, [-1], [-1])


# ---- cross ---------------------------------------------------------------------------------
def _cross(self, other, dim):
    return call_op(LINALG_CROSS, (self, other), (dim,))


LINALG_CROSS = defop("linalg_cross", lambda self, other, dim: jnp.cross(self, other, axis=dim),
                     inputs=("self", "other"), attrs=("dim",),
                     self=lambda grad, other, dim: _cross(other.conj(), grad, dim),
                     other=lambda grad, self, dim: _cross(grad, self.conj(), dim))


def linalg_cross(input, other, *, dim=-1, out=None):
    """torch.linalg.cross: the cross product of 3-vectors along `dim` (default -1), the
    other dims broadcast; one LinalgCrossBackward0.

    >>> import eagergrad as torch
    >>> torch.linalg.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0]))
    tensor([0, 0, 1])
    """
    _no_out(out, "linalg.cross")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim)
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input._shape[d]} and {other._shape[d]}")
    broadcast_shape(input._shape, other._shape)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{other.dtype.scalar_name}")
    return _cross(input, other, d)


def cross(input, other, dim=None, *, out=None):
    """torch.cross: linalg.cross along `dim`; without dim (deprecated, warned once) the
    first dimension of size 3.

    >>> import eagergrad as torch
    >>> torch.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0]), dim=0)
    tensor([0, 0, 1])
    """
    _no_out(out, "cross")
    if dim is None:
        _warn_once("cross", "Using torch.cross without specifying the dim arg is deprecated.\n"
                   "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                   "The default value of dim will change to agree with that of linalg.cross in "
                   "a future release.")
        dim = next((i for i, n in enumerate(input._shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


# ---- addmv, addr, addbmm --------------------------------------------------------------------
def _scalars(beta, alpha, dt):
    return (beta if beta.__class__ is int and beta == 1 else _scalar_arg(beta, dt),
            alpha if alpha.__class__ is int and alpha == 1 else _scalar_arg(alpha, dt))


def _addmv_k(self, mat, vec, beta, alpha):
    out = jnp.matmul(mat, vec, precision=_hi())
    if not L._is_one(alpha):
        out = out * alpha
    if beta == 0:  # torch ignores self then: its nan and inf are not propagated
        return out
    return out + (self if L._is_one(beta) else self * beta)


ADDMV = defop("addmv", _addmv_k, inputs=("self", "mat", "vec"), attrs=("beta", "alpha"),
              self=lambda grad, beta: _maybe_multiply(grad, _conj_scalar(beta)),
              mat=lambda grad, vec, alpha: _maybe_multiply(L.outer(grad, vec.conj()),
                                                           _conj_scalar(alpha)),
              vec=lambda grad, mat, alpha: _maybe_multiply(L.mv(mat.t().conj(), grad),
                                                           _conj_scalar(alpha)))


def _addmv_check(input, mat, vec):
    if not (mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat._shape[1] != vec._shape[0] or (mat._shape[0] != input.numel() and
                                          input.numel() != 1):
        raise RuntimeError(f"size mismatch, got input ({input._shape[0] if input.ndim else ''}),"
                           f" mat ({mat._shape[0]}x{mat._shape[1]}), vec ({vec._shape[0]})")
    if not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{input.dtype.scalar_name}, {mat.dtype.scalar_name}, and "
                           f"{vec.dtype.scalar_name}")
    if mat.dtype is D.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """torch.addmv: beta * input + alpha * (mat @ vec), input broadcast to the result;
    one AddmvBackward0 (beta == 0 ignores input, its nan and inf too).

    >>> import eagergrad as torch
    >>> torch.addmv(torch.ones(2), torch.ones(2, 3), torch.ones(3), alpha=2)
    tensor([7., 7.])
    """
    _no_out(out, "addmv")
    _addmv_check(input, mat, vec)
    return call_op(ADDMV, (input, mat, vec), _scalars(beta, alpha, mat.dtype))


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """Tensor.addmv_: addmv written into input, which must have the result's shape."""
    _addmv_check(input, mat, vec)
    if input._shape != (mat._shape[0],):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input._shape)} and "
                           f"output tensor size {[mat._shape[0]]} should match")
    return inplace(input, addmv, mat, vec, beta=beta, alpha=alpha)


def _addr_k(self, vec1, vec2, beta, alpha, dtype):
    self, vec1, vec2 = (D.astype(t, dtype.np) for t in (self, vec1, vec2))
    if dtype is D.bool_:
        outer = jnp.logical_and(vec1[:, None], vec2[None, :])
        if not alpha:
            outer = jnp.zeros_like(outer)
        return jnp.broadcast_to(outer if not beta else jnp.logical_or(self, outer), outer.shape)
    outer = (vec1[:, None] * alpha) * vec2[None, :] if not L._is_one(alpha) else \
        vec1[:, None] * vec2[None, :]
    if beta == 0:
        return outer
    return outer + (self if L._is_one(beta) else self * beta)


def _mv_of(mat, vec):
    """mv in addr's formulas: torch's mv is an addmv into a tensor of vec's dtype, so the
    gradient of a promoted addr fails there, with addmv's message."""
    if mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{vec.dtype.scalar_name}, {mat.dtype.scalar_name}, and "
                           f"{vec.dtype.scalar_name}")
    return L.mv(mat, vec)


ADDR = defop("addr", _addr_k, inputs=("self", "vec1", "vec2"), attrs=("beta", "alpha", "dtype"),
             self=lambda grad, beta: _maybe_multiply(grad, _conj_scalar(beta)),
             vec1=lambda grad, vec2, alpha: _maybe_multiply(_mv_of(grad, vec2.conj()),
                                                            _conj_scalar(alpha)),
             vec2=lambda grad, vec1, alpha: _maybe_multiply(_mv_of(grad.t(), vec1.conj()),
                                                            _conj_scalar(alpha)))


def _addr_scalar(v, dt, name):
    if isinstance(v, bool) and dt is not D.bool_:
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if not dt.is_differentiable and isinstance(v, (float, complex)):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                           "floating point number.")
    if dt is D.bool_:
        return bool(v)
    return v if v.__class__ is int and v == 1 else _scalar_arg(v, dt)


def _addr_args(input, vec1, vec2, beta, alpha, expand_input):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    n, m = vec1._shape[0], vec2._shape[0]
    if expand_input:
        _check_expand(input, (n, m))
    elif input.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {input.ndim}D tensor for input")
    elif input._shape != (n, m):
        raise RuntimeError(f"size mismatch, input: {list(input._shape)}, v1: {[n]}, v2: {[m]}")
    dt = D.promote_types(D.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    return dt, (_addr_scalar(beta, dt, "beta"), _addr_scalar(alpha, dt, "alpha"))


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """torch.addr: beta * input + alpha * outer(vec1, vec2), in the promoted dtype of the
    three; one AddrBackward0.

    >>> import eagergrad as torch
    >>> torch.addr(torch.zeros(2, 2), torch.tensor([1., 2.]), torch.tensor([1., 3.]))
    tensor([[1., 3.],
            [2., 6.]])
    """
    _no_out(out, "addr")
    dt, scalars = _addr_args(input, vec1, vec2, beta, alpha, True)
    return call_op(ADDR, (input, vec1, vec2), scalars + (dt,))


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    """Tensor.addr_: addr written into input (a matrix of the result's shape)."""
    _addr_args(input, vec1, vec2, beta, alpha, False)
    return inplace(input, addr, vec1, vec2, beta=beta, alpha=alpha)


def _addbmm_k(self, batch1, batch2, beta, alpha):
    out = jnp.einsum("bij,bjk->ik", batch1, batch2, precision=_hi()).astype(self.dtype)
    if not L._is_one(alpha):
        out = out * alpha
    if beta == 0:
        return out
    return out + (self if L._is_one(beta) else self * beta)


def _addbmm_grad(grad, batch1, batch2):
    return S.expand(S.unsqueeze(grad, 0), (batch1._shape[0], batch1._shape[1],
                                           batch2._shape[2]))


ADDBMM = defop("addbmm", _addbmm_k, inputs=("self", "batch1", "batch2"), attrs=("beta", "alpha"),
               self=lambda grad, beta: _maybe_multiply(grad, _conj_scalar(beta)),
               batch1=lambda grad, batch1, batch2, alpha: _maybe_multiply(
                   L.bmm(_addbmm_grad(grad, batch1, batch2), batch2.transpose(1, 2).conj()),
                   _conj_scalar(alpha)),
               batch2=lambda grad, batch1, batch2, alpha: _maybe_multiply(
                   L.bmm(batch1.transpose(1, 2).conj(), _addbmm_grad(grad, batch1, batch2)),
                   _conj_scalar(alpha)))


def _addbmm_check(input, batch1, batch2):
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1._shape[0] != batch2._shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1._shape[0]} and {batch2._shape[0]}")
    if batch1._shape[2] != batch2._shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1._shape[1]}x"
                           f"{batch1._shape[2]} and {batch2._shape[1]}x{batch2._shape[2]})")
    if batch1._shape[0]:
        for name, t in (("self", input), ("mat1", batch1)):
            if t.dtype is not batch2.dtype:
                raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                                   f"{t.dtype.scalar_name} and {batch2.dtype.scalar_name}")


@autocast_op("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """torch.addbmm: beta * input + alpha * (the sum over the batch of batch1[b] @
    batch2[b]), input broadcast to the result; one AddbmmBackward0.

    >>> import eagergrad as torch
    >>> torch.addbmm(torch.zeros(1, 1), torch.ones(3, 1, 2), torch.ones(3, 2, 1))
    tensor([[6.]])
    """
    _no_out(out, "addbmm")
    n = batch1._shape[_wrap_dim(1, batch1.ndim)]
    p = batch2._shape[_wrap_dim(2, batch2.ndim)]
    _check_expand(input, (n, p))
    _addbmm_check(input, batch1, batch2)
    return call_op(ADDBMM, (input, batch1, batch2), _scalars(beta, alpha, input.dtype))


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """Tensor.addbmm_: addbmm written into input, which must have the result's shape."""
    _addbmm_check(input, batch1, batch2)
    shape = (batch1._shape[1], batch2._shape[2])
    if input._shape != shape:
        raise NotImplementedError("eagergrad does not implement Tensor.addbmm_ on a tensor "
                                  "without the result's shape (torch resizes it) yet")
    return inplace(input, addbmm, batch1, batch2, beta=beta, alpha=alpha)


# ---- cdist ----------------------------------------------------------------------------------
def _bcast_rows(x1, x2):
    """x1 and x2 (arrays) broadcast to their common batch dims."""
    batch = tuple(np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    return (jnp.broadcast_to(x1, batch + x1.shape[-2:]),
            jnp.broadcast_to(x2, batch + x2.shape[-2:]))


def _cdist_k(x1, x2, p, compute_mode):
    a, b = _bcast_rows(x1, x2)
    shape = a.shape[:-1] + (b.shape[-2],)
    if a.shape[-1] == 0 or 0 in shape:
        return jnp.zeros(shape, x1.dtype)
    d = jnp.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return jnp.sum(jnp.minimum(jnp.ceil(d), 1), axis=-1)
    if p == 1:
        return jnp.sum(d, axis=-1)
    if p == 2:
        return jnp.sqrt(jnp.sum(d * d, axis=-1))
    if math.isinf(p):  # (torch's max starts at 0 and skips nan)
        return jnp.max(jnp.where(d > 0, d, 0), axis=-1)
    return jnp.sum(d ** p, axis=-1) ** (1.0 / p)


def _cdist_back_k(grad, x1, x2, cdist, p):
    """torch's _cdist_backward: the gradient for x1 at the broadcast batch shape, summed
    over x2's rows of each pair's per-p derivative (DistanceOpsKernel.cpp)."""
    a, b = _bcast_rows(x1, x2)
    if 0 in a.shape or b.shape[-2] == 0:
        return jnp.zeros(x1.shape, x1.dtype)
    diff = a[..., :, None, :] - b[..., None, :, :]
    g, r = grad[..., None], cdist[..., None]
    zero = jnp.zeros((), diff.dtype)
    ad = jnp.abs(diff)
    safe = jnp.where(r == 0, 1, r)
    if p == 0:
        gd = jnp.zeros_like(diff)
    elif p == 1:
        gd = g * jnp.sign(diff)
    elif p < 2:
        gd = jnp.where(r == 0, zero, jnp.sign(diff) * ad ** (p - 1) * g / safe ** (p - 1))
        if p < 1:
            gd = jnp.where(diff == 0, zero, gd)
    elif p == 2:
        gd = jnp.where(r == 0, zero, g * diff / safe)
    elif math.isinf(p):
        gd = g * jnp.sign(diff) * (1 - jnp.minimum(1, jnp.ceil(jnp.abs(ad - r))))
    else:
        gd = jnp.where(r == 0, zero, diff * ad ** (p - 2) * g / safe ** (p - 1))
    return jnp.sum(gd, axis=-2)


def _cdist_nyi(grad):
    raise RuntimeError("the derivative for '_cdist_backward' is not implemented.")


CDIST_BACKWARD = defop("_cdist_backward", _cdist_back_k, inputs=("grad", "x1", "x2", "cdist"),
                       attrs=("p",), node="CdistBackwardBackward0", grad=_cdist_nyi,
                       x1=_cdist_nyi, x2=_cdist_nyi, cdist=_cdist_nyi)
CDIST = defop("_cdist_forward", _cdist_k, inputs=("x1", "x2"), attrs=("p", "compute_mode"),
              node="CdistBackward0",
              x1=lambda grad, x1, x2, result, p: call_op(CDIST_BACKWARD, (grad, x1, x2, result),
                                                         (p,)),
              x2=lambda grad, x1, x2, result, p: call_op(
                  CDIST_BACKWARD, (S.contiguous(S._mT(grad)), x2, x1,
                                   S.contiguous(S._mT(result))), (p,)))


def _euclidean_k(x1, x2):
    n1 = jnp.sum(x1 * x1, -1, keepdims=True)
    n2 = jnp.sum(x2 * x2, -1, keepdims=True)
    a = jnp.concatenate([x1 * -2, n1, jnp.ones_like(n1)], -1)
    b = jnp.concatenate([x2, jnp.ones_like(n2), n2], -1)
    return jnp.sqrt(jnp.maximum(jnp.matmul(a, jnp.swapaxes(b, -1, -2), precision=_hi()), 0))


def _euclidean_ratio(grad, result):
    from .scatter import masked_fill
    return masked_fill(grad / result, result == 0, 0)


def _euclidean_x1(grad, x1, x2, result):
    ratio = _euclidean_ratio(grad, result)
    return x1 * _sum(ratio, -1, True) - L.matmul(ratio, x2)


def _euclidean_x2(grad, x1, x2, result):
    ratio = _euclidean_ratio(grad, result)
    return x2 * S.unsqueeze(_sum(ratio, -2), -1) - L.matmul(S._mT(ratio), x1)


EUCLIDEAN_DIST = defop("_euclidean_dist", _euclidean_k, inputs=("x1", "x2"),
                       node="EuclideanDistBackward0", x1=_euclidean_x1, x2=_euclidean_x2)

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def _cdist_checks(x1, x2, p):
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{t.dtype.scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


@autocast_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """torch.cdist: the p-norm distance between each row of x1 and each row of x2 (batch
    dims broadcast). For p = 2 with more than 25 rows (or compute_mode
    "use_mm_for_euclid_dist") through a matrix product, as torch (EuclideanDistBackward0);
    else one CdistBackward0.

    >>> import eagergrad as torch
    >>> torch.cdist(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _MODES[compute_mode]
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._shape[-1]} X2: {x2._shape[-1]}")
    r1, r2 = x1._shape[-2], x2._shape[-2]
    p = float(p)
    _cdist_checks(x1, x2, p)
    batch = broadcast_shape(x1._shape[:-2], x2._shape[:-2])
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or (mode == 0 and
                                                               (r1 > 25 or r2 > 25))):
        return _cdist_mm(x1, x2, batch)
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype.scalar_name} but found "
                           f"{x2.dtype.scalar_name}")
    return call_op(CDIST, (x1, x2), (p, None if mode == 0 else mode))


def _cdist_mm(x1, x2, batch):
    """ATen's cdist_impl, matrix-product branch: batches flattened to one dim when there
    are several, _euclidean_dist, a view to the result's shape."""
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{x1.dtype.cpp_name} != {x2.dtype.cpp_name}")
    n = math.prod(batch)
    if n != 1:
        x1 = S.view(S.contiguous(S.expand(x1, batch + x1._shape[-2:])), (n,) + x1._shape[-2:])
        x2 = S.view(S.contiguous(S.expand(x2, batch + x2._shape[-2:])), (n,) + x2._shape[-2:])
    out = call_op(EUCLIDEAN_DIST, (x1, x2))
    return S.view(out, batch + (x1._shape[-2], x2._shape[-2]))
