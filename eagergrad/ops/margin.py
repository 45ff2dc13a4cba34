"""Margin and embedding losses (torch's C++ composites in Loss.cpp, and the ops
behind them): cosine_embedding, hinge_embedding, triplet_margin, soft_margin,
multi_margin and multilabel_margin. `reduction` is torch's enum, as in loss.py."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ._autocast import autocast_op
from ._table import call_op, defop
from .pointwise import _add_s, where
from .distance import pairwise_distance
from .loss import (_dims_str, _empty_meta, MEAN, _no_grad_arg, NONE, _norm,
                   _not_implemented, _reduce, _reduce_t, _weight_or_empty)


# ---- margin and embedding losses (torch's C++ composites in Loss.cpp / Distance.cpp) -------
SUB_S = defop("sub_scalar", lambda self, other: self - jnp.asarray(other, self.dtype),
              attrs=("other",), node="SubBackward1", self=lambda grad: grad)


def _sub_s(t, v):
    return call_op(SUB_S, (t,), (float(v),))


def _scalar_minus(v, t):
    """C++ `scalar - tensor`: a filled tensor minus t (SubBackward0, no edge for the
    scalar), as at::operator- records it."""
    from ..creation import full_like
    return full_like(t, v) - t


def _dim_sizes(a, b):
    return _dims_str(a._shape), _dims_str(b._shape)


_EPSILON = 1e-12


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    """torch.cosine_embedding_loss (reduction as torch's enum).

    >>> import eagergrad as torch
    >>> torch.cosine_embedding_loss(torch.ones(1, 2), torch.ones(1, 2), torch.ones(1), 0.0, 1)
    tensor(0.)
    """
    from ..creation import zeros_like
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and input1.ndim != 2:
        a, b = _dim_sizes(input1, input2)
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {a} and {b}.")
    if td == 0 and input1.ndim != 1:
        a, b = _dim_sizes(input1, input2)
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {a} and {b}.")
    prod_sum = (input1 * input2).sum(td)
    mag_square1 = _add_s((input1 * input1).sum(td), _EPSILON)
    mag_square2 = _add_s((input2 * input2).sum(td), _EPSILON)
    denom = (mag_square1 * mag_square2).sqrt()
    cos = prod_sum / denom
    zeros = zeros_like(cos)
    pos = _scalar_minus(1.0, cos)
    neg = _sub_s(cos, margin).clamp_min(0)
    out = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce_t(out, reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, reduction=MEAN):
    """torch.hinge_embedding_loss: x where target is 1, max(0, margin - x) where -1.

    >>> import eagergrad as torch
    >>> torch.hinge_embedding_loss(torch.tensor([0.5, 2.0]), torch.tensor([-1.0, 1.0]), 1.0, 2)
    tensor(2.5000)
    """
    from ..creation import zeros_like
    zeros = zeros_like(input)
    margin_clamp = _scalar_minus(margin, input).clamp_min(0)
    out = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce_t(out, reduction)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=MEAN):
    """torch.triplet_margin_loss: max(margin + d(a, p) - d(a, n), 0), pairwise distances.

    >>> import eagergrad as torch
    >>> a = torch.zeros(1, 2)
    >>> torch.triplet_margin_loss(a, a, a + 3.0, 1.0, 2.0, 0.0, False, 1)
    tensor(0.)
    """
    from .pointwise import minimum
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           "the same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    out = (_add_s(dist_pos, margin) - dist_neg).clamp_min(0)
    return _reduce_t(out, reduction)


# soft margin: log(1 + exp(-y x)); its backward is an op with torch's double backward
def _soft_margin_k(self, target, reduction):
    return _reduce(jnp.log1p(jnp.exp(-self * target)), reduction)


def _soft_margin_back_k(grad_output, self, target, reduction):
    norm = 1.0 / self.size if reduction == MEAN else 1.0
    z = jnp.exp(-target * self)
    return -norm * target * z / (1.0 + z) * grad_output


def _smb_self(grad, grad_output, self, target, reduction):
    z = (self * -target).exp()
    zp1 = _add_s(z, 1.0)
    return grad * grad_output * _norm(self, reduction) * (target * target) * z / (zp1 * zp1)


def _smb_grad_output(grad, grad_output, self, target, reduction):
    if reduction == NONE:
        return call_op(SOFT_MARGIN_BACK, (grad, self, target), (reduction,))
    from ..creation import ones_like
    r = call_op(SOFT_MARGIN_BACK, (ones_like(grad_output), self, target), (reduction,))
    return (r * grad).sum()


SOFT_MARGIN_BACK = defop("soft_margin_loss_backward", _soft_margin_back_k,
                         inputs=("grad_output", "self", "target"), attrs=("reduction",),
                         node="SoftMarginLossBackwardBackward0", nondiff=(2,),
                         grad_output=_smb_grad_output, self=_smb_self)
SOFT_MARGIN = defop("soft_margin_loss", _soft_margin_k, inputs=("self", "target"),
                    attrs=("reduction",), nondiff=(1,),
                    self=lambda grad, self, target, reduction:
                    call_op(SOFT_MARGIN_BACK, (grad, self, target), (reduction,)))


@autocast_op("soft_margin_loss")
def _soft_margin_loss(input, target, reduction=MEAN):
    """torch's soft_margin_loss (SoftMarginLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.soft_margin_loss(torch.zeros(2), torch.ones(2))
    tensor(0.6931)
    """
    _no_grad_arg("soft_margin_loss", "target", target)
    if tuple(target._shape) != tuple(input._shape):
        target = target.expand(input._shape)  # the kernel's output has input's shape
    return call_op(SOFT_MARGIN, (input, target), (reduction,))


# multi_margin_loss: sum over j != y of max(0, margin - x[y] + x[j])^p (* weight[y]) / C
def _mm_parts(self, target, p, margin, weight):
    x = self.reshape((-1, self.shape[-1])) if self.ndim else self.reshape((1, 1))
    t = target.reshape((-1,))
    c = x.shape[1]
    xt = jnp.take_along_axis(x, t[:, None], axis=1)
    z = margin - xt + x
    other = jnp.arange(c)[None, :] != t[:, None]
    w = weight[t][:, None] if weight.shape[0] else jnp.ones((), x.dtype)
    return x, t, z, other, w, c


def _mm_k(self, target, weight, p, margin, reduction):
    x, _, z, other, w, c = _mm_parts(self, target, p, margin, weight)
    h = jnp.where(other & (z > 0), z if p == 1 else z * z, jnp.zeros((), x.dtype)) * w
    loss = jnp.sum(h, axis=1) / c
    if reduction == NONE:
        return loss.reshape(target.shape) if self.ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction)


def _mm_back_k(grad_output, self, target, weight, p, margin, reduction):
    x, t, z, other, w, c = _mm_parts(self, target, p, margin, weight)
    g = 1.0 / (x.shape[0] * c) if reduction == MEAN else 1.0 / c
    h = jnp.where(other & (z > 0), g if p == 1 else 2 * g * z, jnp.zeros((), x.dtype)) * w
    hit = jnp.arange(c)[None, :] == t[:, None]
    gi = jnp.where(hit, -jnp.sum(h, axis=1, keepdims=True), h)
    go = grad_output.reshape((-1, 1)) if reduction == NONE else grad_output
    return (gi * go).reshape(self.shape)


MM_BACK = defop("multi_margin_loss_backward", _mm_back_k,
                inputs=("grad_output", "self", "target", "weight"),
                attrs=("p", "margin", "reduction"), node="NotImplemented", nondiff=(2, 3),
                grad_output=_not_implemented("multi_margin_loss_backward"),
                self=_not_implemented("multi_margin_loss_backward"))
MULTI_MARGIN = defop("multi_margin_loss", _mm_k, inputs=("self", "target", "weight"),
                     attrs=("p", "margin", "reduction"), nondiff=(1, 2),
                     saved_meta=_empty_meta(("weight", 2)),
                     self=lambda grad, self, target, weight, p, margin, reduction:
                     call_op(MM_BACK, (grad, self, target, weight), (p, margin, reduction)))


def _check_index_values(target, n, msg):
    """A class-index range check (reads the values; skipped on tracers)."""
    v = target._value
    if isinstance(v, jax.core.Tracer) or v.size == 0:
        return
    a = np.asarray(v)
    if ((a < 0) | (a >= n)).any():
        raise RuntimeError(msg)


def _check_long(target):
    if target.dtype != D.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.scalar_name}")


def _check_input_2d(input):
    nd = input.ndim
    if not ((nd == 2 and input._shape[1] != 0) or (nd == 1 and input._shape[0] != 0) or
            nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_dims_str(input._shape)}")


@autocast_op("multi_margin_loss")
def _multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction=MEAN):
    """torch's multi_margin_loss (MultiMarginLossBackward0; p 1 or 2).

    >>> import eagergrad as torch
    >>> torch.nn.functional.multi_margin_loss(torch.tensor([[0.1, 0.9]]), torch.tensor([1]))
    tensor(0.1000)
    """
    _check_input_2d(input)
    _check_long(target)
    nframe = 1 if input.ndim <= 1 else input._shape[0]
    dim = 1 if input.ndim == 0 else input._shape[-1]
    if not (target.ndim <= 1 and target.numel() == nframe):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {_dims_str(target._shape)}. Input has shape "
                           f"{_dims_str(input._shape)}.")
    if weight is not None and not (weight.ndim <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{_dims_str(weight._shape)}")
    _no_grad_arg("multi_margin_loss", "weight", weight)
    _check_index_values(target, dim, "target out of range")
    w = _weight_or_empty(weight, input) if weight is None else weight.reshape(-1)
    return call_op(MULTI_MARGIN, (input, target, w), (p, float(margin), reduction))


# multilabel_margin_loss: targets are the class indices before the first -1 of each row
def _mlm_parts(self, target):
    x = self.reshape((-1, self.shape[-1])) if self.ndim else self.reshape((1, 1))
    t = target.reshape(x.shape)
    valid = jnp.cumprod(t >= 0, axis=1).astype(bool)
    safe = jnp.where(valid, t, 0)
    c = x.shape[1]
    is_target = jnp.any(valid[:, :, None] & (safe[:, :, None] == jnp.arange(c)), axis=1)
    xt = jnp.take_along_axis(x, safe, axis=1)
    z = 1.0 - xt[:, :, None] + x[:, None, :]  # (row, target j, class k)
    mask = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return x, z, mask, is_target, safe, c


def _mlm_k(self, target, reduction):
    x, z, mask, is_target, _, c = _mlm_parts(self, target)
    loss = jnp.sum(jnp.where(mask, z, jnp.zeros((), x.dtype)), axis=(1, 2)) / c
    if self.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction), is_target.astype(self.dtype).reshape(self.shape)


def _mlm_back_k(grad_output, self, target, is_target, reduction):
    x, _, mask, _, safe, c = _mlm_parts(self, target)
    g = 1.0 / (x.shape[0] * c) if reduction == MEAN else 1.0 / c
    m = mask.astype(x.dtype) * g
    gi = jnp.sum(m, axis=1)  # += g for each (target, non-target k) pair with z > 0
    down = jnp.sum(m, axis=2)  # -= g at each target index
    gi = gi - jnp.sum(jax.nn.one_hot(safe, c, dtype=x.dtype) * down[:, :, None], axis=1)
    go = grad_output.reshape((-1, 1)) if reduction == NONE else grad_output
    return (gi * go).reshape(self.shape)


MLM_BACK = defop("multilabel_margin_loss_backward", _mlm_back_k,
                 inputs=("grad_output", "self", "target", "is_target"),
                 attrs=("reduction",), node="NotImplemented", nondiff=(2, 3),
                 grad_output=_not_implemented("multilabel_margin_loss_backward"),
                 self=_not_implemented("multilabel_margin_loss_backward"))
MULTILABEL_MARGIN = defop(
    "multilabel_margin_loss", _mlm_k, inputs=("self", "target"), attrs=("reduction",),
    outputs=("result", "is_target"), nondiff=(1,),
    self=lambda grad, self, target, is_target, reduction:
    call_op(MLM_BACK, (grad, self, target, is_target), (reduction,)))


def _check_label_prefix(target, n):
    """torch's range check of the indices before each row's first negative one (reads the
    values; skipped on tracers)."""
    v = target._value
    if isinstance(v, jax.core.Tracer) or v.size == 0:
        return
    a = np.asarray(v).reshape(-1, n)
    valid = np.cumprod(a >= 0, axis=1).astype(bool)
    if (valid & (a >= n)).any():
        raise RuntimeError("argument #2 'target' is out of range")


@autocast_op("multilabel_margin_loss")
def _multilabel_margin_loss(input, target, reduction=MEAN):
    """torch's multilabel_margin_loss (MultilabelMarginLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.multilabel_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                            torch.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    _check_input_2d(input)
    _check_long(target)
    if input.ndim <= 1:
        dim = 1 if input.ndim == 0 else input._shape[0]
        ok = target.ndim <= 1 and target.numel() == dim
    else:
        ok = target.ndim == 2 and tuple(target._shape) == tuple(input._shape)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_dims_str(target._shape)} for input "
                           f"of size: {_dims_str(input._shape)}")
    _check_label_prefix(target, 1 if input.ndim == 0 else input._shape[-1])
    return call_op(MULTILABEL_MARGIN, (input, target), (reduction,))[0]
