"""torch.distributions.utils: broadcasting of parameters, logits <-> probabilities,
lazy properties, and the lower-triangle <-> vector conversions."""
from collections.abc import Callable
from functools import update_wrapper
from numbers import Number
from typing import Any, Final, Generic, TypeVar

import jax.numpy as jnp

from .. import _dtypes as D
from .._shapes import broadcast_shape
from ..creation import arange, empty, tensor
from ..engine.grad_mode import enable_grad
from ..nn.functional import softmax
from ..ops.pointwise import where
from ..ops.tensor_ops import broadcast_shapes
from ..size import Size
from ..tensor import Tensor

euler_constant: Final[float] = 0.57721566490153286060  # Euler Mascheroni Constant

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


class _Finfo:
    """torch.finfo's numbers for a floating dtype (eps, tiny, min, max)."""

    def __init__(self, dtype):
        fi = jnp.finfo(dtype.np)
        self.eps, self.tiny = float(fi.eps), float(fi.tiny)
        self.min, self.max = float(fi.min), float(fi.max)
        self.bits, self.resolution = int(fi.bits), float(fi.resolution)


def _finfo(dtype):
    return _Finfo(dtype)


_Number = (int, float)  # (torch.types._Number; bool is an int)


def _is_number(v):
    return isinstance(v, Number) and not isinstance(v, Tensor)


def _masked_put(t, mask, value):
    """`t[mask] = value`, returning t; a 0-dim mask (a distribution without batch
    dimensions) goes through `where`, as eagergrad does not index with 0-dim masks."""
    if mask.dim() == 0:
        return where(mask, value, t)
    t[mask] = value
    return t


def _broadcast_tensors(*ts):
    """torch.broadcast_tensors: each tensor expanded to the common shape (a tensor that
    has it is returned as is, as torch does)."""
    shape = ()
    for t in ts:
        shape = broadcast_shape(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in ts)


_broadcast_shapes = broadcast_shapes  # (torch.broadcast_shapes, with its errors)


def broadcast_all(*values):
    r"""The values broadcast to one shape: tensors as torch broadcasts them, numbers as
    tensors of the first tensor's dtype and device (all numbers: 0-dim tensors of the
    default dtype).

    >>> import eagergrad as torch
    >>> [v.shape for v in broadcast_all(torch.zeros(2, 1), torch.zeros(3), 1.0)]
    [torch.Size([2, 3]), torch.Size([2, 3]), torch.Size([2, 3])]
    """
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = dict(dtype=D.get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return _broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return empty(*shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    r"""`value` summed over its `dim` rightmost dimensions."""
    if dim == 0:
        return value
    required_shape = value.shape[:-dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits, is_binary=False):
    r"""Probabilities from logits: sigmoid (binary: log odds), else softmax over the last
    dimension.

    >>> import eagergrad as torch
    >>> logits_to_probs(torch.tensor([0.0]), is_binary=True)
    tensor([0.5000])
    """
    if is_binary:
        return logits.sigmoid()
    return softmax(logits, dim=-1)


def clamp_probs(probs):
    """The probabilities clamped to [eps, 1 - eps] (eps: the dtype's machine epsilon).

    >>> import eagergrad as torch
    >>> clamp_probs(torch.tensor([0.0, 0.5, 1.0]))
    tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    eps = _finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    r"""Logits from probabilities (clamped first): log odds if binary, else log.

    >>> import eagergrad as torch
    >>> probs_to_logits(torch.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


T = TypeVar("T", contravariant=True)
R = TypeVar("R", covariant=True)


class lazy_property(Generic[T, R]):
    r"""A method computed (with grad mode on) on first access, then kept as an instance
    attribute."""

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        self.wrapped: Callable[[T], R] = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property[T, R], property):
    """A lazy property that is also a property (for documentation tools)."""

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    r = arange(n, device=device)
    return r < r.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    r"""The lower triangle (from diagonal `diag`) of a (batch of) square matrix as a
    vector, in row order.

    >>> import eagergrad as torch
    >>> tril_matrix_to_vec(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    r"""The inverse of tril_matrix_to_vec: a (batch of) lower-triangular matrix.

    >>> import eagergrad as torch
    >>> vec_to_tril_matrix(torch.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = _finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
