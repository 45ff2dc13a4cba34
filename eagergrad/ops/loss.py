"""Loss functions as op-table entries: mse, smooth_l1 and huber, nll_loss/nll_loss2d,
binary_cross_entropy (with logits), and the losses torch composes from them (cross_entropy,
kl_div, poisson_nll_loss, margin_ranking_loss), with the helpers the other loss files
share. Margin and embedding losses are in margin.py, ctc_loss in ctc.py, distances
(pairwise_distance, cosine_similarity, pdist) in distance.py.

`reduction` is torch's enum (0 none, 1 mean, 2 sum), as the nodes save it. An optional
`weight`/`pos_weight` that is not given travels as an empty tensor (the kernels branch
on its static shape), and the node's `_saved_weight` shows None, as torch's.
The ops torch composes in C++ (cross_entropy, kl_div...) live in nn/_functional/loss.py;
pointwise.py's scalar mul/add/div entries give them torch's MulBackward1/AddBackward1/
DivBackward1 nodes (a C++ `tensor * double`), which Python operators never record.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import arange, zeros
from ._autocast import autocast_op
from .reduce import _mean_k
from ._table import call_op, defop
from .pointwise import _add_s, _div_s, _mul_s, where


NONE, MEAN, SUM = 0, 1, 2


def _reduce(loss, reduction):
    if reduction == MEAN:
        return _mean_k(loss)
    if reduction == SUM:
        return jnp.sum(loss)
    return loss


def _norm(self, reduction):
    """The backward's scale: 1/numel for a mean."""
    return 1.0 / self.numel() if reduction == MEAN else 1.0


def _empty_meta(*names):
    """saved_meta: `_saved_<name>` is None where the optional tensor was not given."""
    def f(tensors, needs_grad):
        out = {}
        for k, i in names:
            t = tensors[i]
            out[k] = None if t.ndim == 1 and t._shape[0] == 0 else t
        return out
    return frozenset(k for k, _ in names), f


# ---- xlogy (kl_div's XlogyBackward0) ------------------------------------------------------
def _xlogy_k(self, other):
    r = jnp.where(self == 0, jnp.zeros_like(self * other), self * jnp.log(other))
    return jnp.where(jnp.isnan(other), other, r)


XLOGY = defop("xlogy", _xlogy_k, inputs=("self", "other"),
              self=lambda grad, self, other: grad * _xlogy(self != 0, other),
              other=lambda grad, self, other: grad * self / other)


def _xlogy(a, b):
    from ._args import as_t, promote
    a, b = as_t(a), as_t(b)
    dt = promote(a, b)
    if not dt.is_differentiable:
        dt = D.get_default_dtype()
    return call_op(XLOGY, (a.to(dt), b.to(dt)))


# ---- mse / smooth l1 / huber --------------------------------------------------------------
def _mse_k(self, target, reduction):
    d = self - target
    return _reduce(d * d, reduction)


def _mse_back(grad, a, b, reduction):
    return 2.0 * _norm(a, reduction) * (a - b) * grad


MSE = defop("mse_loss", _mse_k, inputs=("self", "target"), attrs=("reduction",),
            self=lambda grad, self, target, reduction: _mse_back(grad, self, target, reduction),
            target=lambda grad, self, target, reduction:
            _mse_back(grad, target, self, reduction))


def _smooth_l1_k(self, target, reduction, beta):
    z = jnp.abs(self - target)
    return _reduce(jnp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def _smooth_l1_back(grad, a, b, reduction, beta):
    # x / beta inside (-beta, beta), sign(x) from |x| == beta on (torch's second order)
    x = a - b
    g = where(x.abs() < beta, x / beta, x.sign())
    return _norm(a, reduction) * g * grad


SMOOTH_L1 = defop("smooth_l1_loss", _smooth_l1_k, inputs=("self", "target"),
                  attrs=("reduction", "beta"),
                  self=lambda grad, self, target, reduction, beta:
                  _smooth_l1_back(grad, self, target, reduction, beta),
                  target=lambda grad, self, target, reduction, beta:
                  _smooth_l1_back(grad, target, self, reduction, beta))


def _huber_k(self, target, reduction, delta):
    z = jnp.abs(self - target)
    return _reduce(jnp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def _huber_back(grad, a, b, reduction, delta):
    x = a - b
    g = where(x.abs() < delta, x, delta * x.sign())
    return _norm(a, reduction) * g * grad


HUBER = defop("huber_loss", _huber_k, inputs=("self", "target"), attrs=("reduction", "delta"),
              self=lambda grad, self, target, reduction, delta:
              _huber_back(grad, self, target, reduction, delta),
              target=lambda grad, self, target, reduction, delta:
              _huber_back(grad, target, self, reduction, delta))


# ---- nll_loss / nll_loss2d ----------------------------------------------------------------
def _nll_k(self, target, weight, reduction, ignore_index):
    cdim = 0 if self.ndim == 1 else 1
    c = self.shape[cdim]
    ignored = target == ignore_index
    safe = jnp.clip(jnp.where(ignored, 0, target), 0, c - 1).astype(jnp.int32)
    picked = jnp.squeeze(jnp.take_along_axis(self, jnp.expand_dims(safe, cdim), axis=cdim),
                         cdim)
    w = weight[safe] if weight.shape[0] else jnp.ones_like(picked)
    w = jnp.where(ignored, jnp.zeros_like(w), w)
    out = -w * picked
    if reduction == NONE:
        return out, jnp.zeros((), self.dtype)
    total = jnp.sum(w)
    s = jnp.sum(out)
    return (s / total if reduction == MEAN else s), total


def _nll_back(grad, self, target, weight, total_weight, reduction, ignore_index):
    cdim = 0 if self.ndim == 1 else 1
    c = self._shape[cdim]
    ignored = target == ignore_index
    safe = where(ignored, 0, target)
    g = grad / total_weight if reduction == MEAN else grad
    if weight.numel():
        g = weight[safe] * g
    classes = arange(c).view([c] + [1] * (self.ndim - cdim - 1))
    hit = (classes == safe.unsqueeze(cdim)) & ~ignored.unsqueeze(cdim)
    return where(hit, -g.unsqueeze(cdim) if g.ndim else -g, 0.0)


_NLL_META = _empty_meta(("weight", 2))
NLL = defop("nll_loss", _nll_k, inputs=("self", "target", "weight"),
            attrs=("reduction", "ignore_index"), outputs=("result", "total_weight"),
            nondiff=(1,), node="NllLossBackward0", saved_meta=_NLL_META, self=_nll_back)
NLL2D = defop("nll_loss2d", _nll_k, inputs=("self", "target", "weight"),
              attrs=("reduction", "ignore_index"), outputs=("result", "total_weight"),
              nondiff=(1,), node="NllLoss2DBackward0", saved_meta=_NLL_META, self=_nll_back)


def _dims_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _no_grad_arg(fn, name, t):
    from ..engine.grad_mode import STATE
    if t is not None and t.requires_grad and STATE.grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


def _check_targets(target, n_classes, ignore_index):
    """torch's bounds check on class indices (reads the values, every rank's of a
    rank-local tensor; skipped on tracers)."""
    for v in target._rank_values():
        if isinstance(v, jax.core.Tracer) or v.size == 0:
            continue
        a = np.asarray(v)
        bad = (a != ignore_index) & ((a < 0) | (a >= n_classes))
        if bad.any():
            raise IndexError(f"Target {a[bad].flat[0]} is out of bounds.")


def _weight_or_empty(weight, input):
    if weight is None:
        return zeros(0, dtype=input.dtype)  # (made on the host: no compile)
    return weight


def _nll_common(input, target, weight, ignore_index, fn):
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name}")
    n_classes = input._shape[-1] if input.ndim < 2 else input._shape[1]
    if weight is not None:
        if weight.ndim != 1 or weight.numel() != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               "classes or no classes but got weight tensor of shape: "
                               f"{_dims_str(weight._shape)}")
        if weight.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                               f"{weight.dtype.scalar_name}")
    _no_grad_arg(fn, "weight", weight)
    _check_targets(target, n_classes, ignore_index)


@autocast_op("nll_loss")
def _nll_forward(input, target, weight, reduction, ignore_index):
    """aten::nll_loss (1-D or 2-D input): (output, total_weight)."""
    if not 1 <= input.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if not (input.ndim == 1 and target.ndim == 0) and input._shape[0] != target._shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_dims_str(input._shape)}, target: "
                           f"{_dims_str(target._shape)})")
    _nll_common(input, target, weight, ignore_index, "nll_loss_forward")
    return call_op(NLL, (input, target, _weight_or_empty(weight, input)),
                   (reduction, ignore_index))


@autocast_op("nll_loss2d")
def _nll2d_forward(input, target, weight, reduction, ignore_index):
    """aten::nll_loss2d (4-D input, 3-D target): (output, total_weight)."""
    if target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if input.ndim != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {input.ndim}")
    s, t = input._shape, target._shape
    if s[0] != t[0] or s[2] != t[1] or s[3] != t[2]:
        raise RuntimeError(f"size mismatch (got input: {_dims_str(s)} , target: "
                           f"{_dims_str(t)}")
    _nll_common(input, target, weight, ignore_index, "nll_loss2d_forward")
    return call_op(NLL2D, (input, target, _weight_or_empty(weight, input)),
                   (reduction, ignore_index))


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """torch's nll_loss_nd: nll_loss for 1-D/2-D input, nll_loss2d for 4-D, and for
    other ranks nll_loss2d on (N, C, 1, -1) views."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and (target.ndim == 0 or input._shape[0] != target._shape[0]):
        raise ValueError(f"Expected input batch_size ({input._shape[0]}) to match target "
                         f"batch_size ({target._shape[0] if target.ndim else 0}).")
    if input.ndim <= 2:
        return _nll_forward(input, target, weight, reduction, ignore_index)[0]
    if input.ndim == 4:
        return _nll2d_forward(input, target, weight, reduction, ignore_index)[0]
    n, c = input._shape[:2]
    out_size = (n,) + tuple(input._shape[2:])
    if tuple(target._shape[1:]) != tuple(input._shape[2:]):
        raise RuntimeError(f"Expected target size {_dims_str(out_size)}, got "
                           f"{_dims_str(target._shape)}")
    x, t = input.contiguous(), target.contiguous()
    x = x.view(n, c, 1, -1) if x.numel() > 0 else x.view(n, c, 0, 0)
    t = t.view(n, 1, -1) if t.numel() > 0 else t.view(n, 0, 0)
    out = _nll2d_forward(x, t, weight, reduction, ignore_index)[0]
    return out.view(out_size) if reduction == NONE else out


# ---- binary cross entropy -----------------------------------------------------------------
def _bce_k(self, target, weight, reduction):
    # torch clamps each log at -100
    loss = -(target * jnp.maximum(jnp.log(self), -100.0) +
             (1 - target) * jnp.maximum(jnp.log1p(-self), -100.0))
    if weight.shape[0]:
        loss = loss * weight
    return _reduce(loss, reduction)


_EPS = float(np.float32(1e-12))  # torch's EPSILON is a float


def _bce_back(grad, self, target, weight, reduction):
    g = grad * (self - target) / ((1 - self) * self).clamp_min(_EPS)
    if weight.numel():
        g = g * weight
    return g * _norm(self, reduction)


def _bce_target_back(grad, self, target, weight, reduction):
    g = grad * ((-self).log1p() - self.log())  # -logit(self), unclamped as torch
    if weight.numel():
        g = g * weight
    return g * _norm(self, reduction)


BCE = defop("binary_cross_entropy", _bce_k, inputs=("self", "target", "weight"),
            attrs=("reduction",), saved_meta=_empty_meta(("weight", 2)),
            self=_bce_back, target=_bce_target_back)


def _check_probabilities(input):
    """torch's input range check (reads the values; skipped on tracers)."""
    v = input._value
    if isinstance(v, jax.core.Tracer) or v.size == 0:
        return
    if not bool(jnp.all((v >= 0) & (v <= 1))):
        raise RuntimeError("all elements of input should be between 0 and 1")


@autocast_op("binary_cross_entropy")
def _bce(input, target, weight, reduction):
    _no_grad_arg("binary_cross_entropy", "weight", weight)
    _check_probabilities(input)
    return call_op(BCE, (input, target, _weight_or_empty(weight, input)), (reduction,))


def _bcel_k(self, target, weight, pos_weight, reduction):
    log_sig = jax.nn.log_sigmoid(self)
    if pos_weight.shape[0]:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * self - log_sig
    if weight.shape[0]:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bcel_back(grad, self, target, weight, pos_weight, reduction):
    if pos_weight.numel():
        t = pos_weight * target
        g = (t + 1 - target) * self.sigmoid() - t
    else:
        g = self.sigmoid() - target
    g = g * grad
    if weight.numel():
        g = g * weight
    return g * _norm(self, reduction)


def _log_sigmoid(x):
    # x - log1p(exp(x)) for x < 0, -log1p(exp(-x)) else; each branch fed only its own
    # half, so no overflow (and no nan gradient) from the branch not taken
    neg = x < 0
    lo = where(neg, x, 0.0)
    hi = where(neg, 0.0, x)
    return where(neg, lo - lo.exp().log1p(), -(-hi).exp().log1p())


def _bcel_target_back(grad, self, target, weight, pos_weight, reduction):
    if pos_weight.numel():
        g = -self - (pos_weight - 1) * _log_sigmoid(self)
    else:
        g = -self
    g = g * grad
    if weight.numel():
        g = g * weight
    return g * _norm(self, reduction)


BCEL = defop("binary_cross_entropy_with_logits", _bcel_k,
             inputs=("self", "target", "weight", "pos_weight"), attrs=("reduction",),
             saved_meta=_empty_meta(("weight", 2), ("pos_weight", 3)),
             self=_bcel_back, target=_bcel_target_back)


@autocast_op("binary_cross_entropy_with_logits")
def _bce_with_logits(input, target, weight, pos_weight, reduction):
    name = "binary_cross_entropy_with_logits"
    _no_grad_arg(name, "weight", weight)
    _no_grad_arg(name, "pos_weight", pos_weight)
    return call_op(BCEL, (input, target, _weight_or_empty(weight, input),
                          _weight_or_empty(pos_weight, input)), (reduction,))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=MEAN):
    """torch.binary_cross_entropy_with_logits (reduction as torch's enum: 0, 1, 2).

    >>> import eagergrad as torch
    >>> torch.binary_cross_entropy_with_logits(torch.zeros(2), torch.ones(2))
    tensor(0.6931)
    """
    return _bce_with_logits(input, target, weight, pos_weight, reduction)


# ---- losses torch composes from other ops (same graphs as its C++ composites) --------------
def _reduce_t(loss, reduction):
    if reduction == MEAN:
        return loss.mean()
    if reduction == SUM:
        return loss.sum()
    return loss


@autocast_op("kl_div")
def kl_div(input, target, reduction=MEAN, *, log_target=False):
    """torch.kl_div: target * (log(target) - input), reduced (reduction as torch's enum).

    >>> import eagergrad as torch
    >>> torch.kl_div(torch.zeros(2), torch.ones(2))
    tensor(0.)
    """
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy(target, target) - target * input
    return _reduce_t(loss, reduction)


def _class_dim(input):
    return 0 if input.ndim == 1 else 1


@autocast_op("cross_entropy_loss")
def _cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing):
    """torch's cross_entropy_loss: log_softmax + nll_loss_nd, its label-smoothing term, or
    the probability-target form, each recorded as torch records it."""
    cdim = _class_dim(input)
    if tuple(input._shape) == tuple(target._shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {target.dtype.scalar_name}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_prob(input, target, weight, reduction, label_smoothing, cdim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        return _ce_smooth(input, target, weight, reduction, ignore_index, label_smoothing,
                          cdim)
    return _nll_loss_nd(input.log_softmax(cdim), target, weight, reduction, ignore_index)


def _weight_view(weight, input):
    if input.ndim > 1:
        return weight.view([1, weight._shape[0]] + [1] * (input.ndim - 2))
    return weight


def _ce_prob(input, target, weight, reduction, label_smoothing, cdim):
    n_classes = input._shape[cdim]
    logp = input.log_softmax(cdim)
    if label_smoothing > 0.0:
        target = _add_s(_mul_s(target, 1 - label_smoothing), label_smoothing / n_classes)
    prod = logp * target
    if weight is not None:
        prod = prod * _weight_view(weight, input)
    if reduction == MEAN:
        if input.numel() == 0:
            return -(prod.sum()) * float("nan")
        return _div_s(-prod.sum(), input.numel() // n_classes)
    if reduction == SUM:
        return -prod.sum()
    return -prod.sum(cdim)


def _ce_smooth(input, target, weight, reduction, ignore_index, label_smoothing, cdim):
    logp = input.log_softmax(cdim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = logp._shape[cdim]
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _weight_view(weight, input)).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth.masked_fill_(ignore_mask, 0.0)
    if reduction == MEAN:
        if weight is not None:
            ret = smooth.sum() / weight.gather(0, target.masked_select(~ignore_mask)
                                               .flatten()).sum()
        else:
            ret = smooth.sum() / (~ignore_mask).sum()
    elif reduction == SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    return _mul_s(nll, 1 - label_smoothing) + _mul_s(ret, label_smoothing / n_classes)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """torch.poisson_nll_loss (reduction as torch's enum).

    >>> import eagergrad as torch
    >>> torch.poisson_nll_loss(torch.zeros(2), torch.zeros(2), True, False, 1e-8, 1)
    tensor(1.)
    """
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _add_s(input, eps).log()
    if full:
        stirling = target * target.log() - target + _mul_s(
            _mul_s(target, 6.283185307179586).log(), 0.5)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce_t(loss, reduction)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    """torch.margin_ranking_loss: max(0, -target * (input1 - input2) + margin).

    >>> import eagergrad as torch
    >>> torch.margin_ranking_loss(torch.ones(2), torch.zeros(2), torch.ones(2), 0.0, 1)
    tensor(0.)
    """
    out = _add_s(-target * (input1 - input2), margin).clamp_min(0)
    return _reduce_t(out, reduction)


# ---- backward ops torch does not differentiate (margin.py, ctc.py) ----------------------
def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula
