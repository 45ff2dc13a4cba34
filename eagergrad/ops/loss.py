"""Loss functions as op-table entries (mse_loss, nll_loss, binary_cross_entropy, ...).

`reduction` is torch's enum (0 none, 1 mean, 2 sum), as the nodes save it. An optional
`weight`/`pos_weight` that is not given travels as an empty tensor (the kernels branch
on its static shape), and the node's `_saved_weight` shows None, as torch's.
The ops torch composes in C++ (cross_entropy, kl_div...) live in nn/_functional/loss.py;
the scalar mul/add/div entries here give them torch's MulBackward1/AddBackward1/
DivBackward1 nodes (a C++ `tensor * double`), which Python operators never record.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import arange, zeros
from ._table import call_op, defop
from .pointwise import where

NONE, MEAN, SUM = 0, 1, 2


def _reduce(loss, reduction):
    if reduction == MEAN:
        return jnp.mean(loss)
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


# ---- scalar arithmetic as torch's C++ composites record it --------------------------------
MUL_S = defop("mul_scalar", lambda self, other: self * jnp.asarray(other, self.dtype),
              attrs=("other",), node="MulBackward1",
              self=lambda grad, other: grad * other)
ADD_S = defop("add_scalar", lambda self, other: self + jnp.asarray(other, self.dtype),
              attrs=("other",), node="AddBackward1", self=lambda grad: grad)
DIV_S = defop("div_scalar", lambda self, other: self / jnp.asarray(other, self.dtype),
              attrs=("other",), node="DivBackward1",
              self=lambda grad, other: grad / other)


def _mul_s(t, v):
    return call_op(MUL_S, (t,), (float(v),))


def _add_s(t, v):
    return call_op(ADD_S, (t,), (float(v),))


def _div_s(t, v):
    return call_op(DIV_S, (t,), (float(v),))


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
    """torch's bounds check on class indices (reads the values; skipped on tracers)."""
    v = target._value
    if isinstance(v, jax.core.Tracer) or v.size == 0:
        return
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


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    """torch.margin_ranking_loss: max(0, -target * (input1 - input2) + margin).

    >>> import eagergrad as torch
    >>> torch.margin_ranking_loss(torch.ones(2), torch.zeros(2), torch.ones(2), 0.0, 1)
    tensor(0.)
    """
    out = _add_s(-target * (input1 - input2), margin).clamp_min(0)
    return _reduce_t(out, reduction)


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


def _norm_k(self, p, dim, keepdim):
    from .reduce import _vnorm_k
    return _vnorm_k(self, p, dim, keepdim, D.FROM_NP[np.dtype(self.dtype)].to_real())


def _norm_back(grad, self, result, p, dim, keepdim):
    from .reduce import _vnorm_back
    return _vnorm_back(grad, self, result, p, dim, keepdim)


NORM_DIM = defop("norm_scalaropt_dim", _norm_k, attrs=("p", "dim", "keepdim"),
                 node="NormBackward1", self=_norm_back)


def _dim_sizes(a, b):
    return _dims_str(a._shape), _dims_str(b._shape)


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


_EPSILON = 1e-12


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


def _not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


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


# ---- ctc_loss: torch's alpha-beta recursions (LossCTC.cpp), a lax.scan over time -----------
_NEG_INF = -np.inf


def _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank):
    """Per batch element: the extended labels (blank, l1, blank, l2, ..., blank) and
    which of them may be reached by skipping one; masks from the (static) lengths."""
    b = log_probs.shape[1]
    lmax = max(target_lengths) if target_lengths else 0
    s = 2 * lmax + 1
    if targets.ndim == 1:  # concatenated: static gather indices from the lengths
        offs = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        idx = offs[:, None] + np.arange(max(lmax, 1))[None, :]
        idx = np.minimum(idx, max(targets.shape[0] - 1, 0))
        tg = targets[idx] if targets.shape[0] else jnp.zeros(idx.shape, targets.dtype)
    else:
        tg = targets[:, :max(lmax, 1)] if targets.shape[1] else \
            jnp.zeros((b, 1), targets.dtype)
    tl = np.asarray(target_lengths, np.int64)
    pos = np.arange(s)
    in_target = (pos[None, :] < 2 * tl[:, None] + 1)  # (B, S) static
    lab_idx = np.maximum((pos - 1) // 2, 0)
    ext = jnp.where(jnp.asarray(pos % 2 == 1)[None, :] & jnp.asarray(in_target),
                    tg[:, lab_idx] if lmax else jnp.full((b, s), blank, tg.dtype), blank)
    ext = ext.astype(jnp.int32)
    prev2 = jnp.concatenate([jnp.full((b, 2), -1, ext.dtype), ext[:, :-2]], axis=1)
    skip = (ext != blank) & (ext != prev2) & jnp.asarray(pos >= 2)[None, :]
    return ext, skip, jnp.asarray(in_target), tl


def _lse3(a, b, c):
    m = jnp.maximum(jnp.maximum(a, b), c)
    dead = jnp.isneginf(m)
    safe = jnp.where(dead, jnp.zeros_like(m), m)
    tot = jnp.exp(a - safe) + jnp.exp(b - safe) + jnp.exp(c - safe)
    # log(1) where all are -inf: no inf * 0 in a jax vjp through the branch not taken
    r = safe + jnp.log(jnp.where(dead, jnp.ones_like(tot), tot))
    return jnp.where(dead, m, r)


def _shift(a, k):
    return jnp.concatenate([jnp.full(a.shape[:-1] + (k,), _NEG_INF, a.dtype), a[..., :-k]],
                           axis=-1)


def _ctc_k(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    t_max, b, _ = log_probs.shape
    ext, skip, valid, tl = _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank)
    s = ext.shape[1]
    ninf = jnp.asarray(_NEG_INF, log_probs.dtype)
    lp_ext = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext[None], (t_max, b, s)), axis=2)
    pos = jnp.arange(s)[None, :]
    a0 = jnp.where((pos == 0) | ((pos == 1) & jnp.asarray(tl > 0)[:, None]), lp_ext[0], ninf)
    in_len = jnp.asarray(input_lengths)

    def step(a, xs):
        lp_t, t = xs
        new = _lse3(a, _shift(a, 1), jnp.where(skip, _shift(a, 2), ninf)) + lp_t
        new = jnp.where(valid, new, ninf)
        a = jnp.where((t < in_len)[:, None], new, a)
        return a, a

    last, rest = jax.lax.scan(step, a0, (lp_ext[1:], jnp.arange(1, t_max)))
    alphas = jnp.concatenate([a0[None], rest], axis=0)  # (T, B, S)
    end = jnp.asarray(2 * tl)[:, None]
    fin = jnp.where((pos == end) | ((pos == end - 1) & jnp.asarray(tl > 0)[:, None]), last,
                    ninf)
    nll = -jax.scipy.special.logsumexp(fin, axis=1)
    # an empty input explains only an empty target (torch's -0.0)
    empty_in = jnp.asarray(np.asarray(input_lengths) == 0)
    nll = jnp.where(empty_in, jnp.where(jnp.asarray(tl == 0), -jnp.zeros_like(nll),
                                        jnp.full_like(nll, np.inf)), nll)
    return nll, jnp.transpose(alphas, (1, 0, 2))


def _ctc_back_k(grad, log_probs, targets, result0, result1, input_lengths, target_lengths,
                blank, zero_infinity):
    t_max, b, c = log_probs.shape
    ext, skip, valid, tl = _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank)
    s = ext.shape[1]
    ninf = jnp.asarray(_NEG_INF, log_probs.dtype)
    lp_ext = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext[None], (t_max, b, s)), axis=2)
    pos = jnp.arange(s)[None, :]
    in_len = jnp.asarray(input_lengths)
    end = jnp.asarray(2 * tl)[:, None]
    skip_next = jnp.concatenate([skip[:, 2:], jnp.zeros((b, 2), bool)], axis=1)

    def unshift(a, k):
        return jnp.concatenate([a[..., k:], jnp.full(a.shape[:-1] + (k,), _NEG_INF, a.dtype)],
                               axis=-1)

    def step(beta, xs):
        lp_t, t = xs
        init = jnp.where((pos == end) | ((pos == end - 1) & jnp.asarray(tl > 0)[:, None]),
                         lp_t, ninf)
        rec = _lse3(beta, unshift(beta, 1), jnp.where(skip_next, unshift(beta, 2), ninf)) + lp_t
        rec = jnp.where(valid, rec, ninf)
        tt = t[None]
        new = jnp.where((tt == in_len - 1)[:, None], init,
                        jnp.where((tt < in_len - 1)[:, None], rec, ninf))
        return new, new

    beta0 = jnp.full((b, s), _NEG_INF, log_probs.dtype)
    _, betas = jax.lax.scan(step, beta0, (lp_ext, jnp.arange(t_max)), reverse=True)
    alphas = jnp.transpose(result1, (1, 0, 2))  # (T, B, S)
    ab = alphas + betas
    onehot = ext[:, :, None] == jnp.arange(c)[None, None, :]  # (B, S, C)
    lcab = jax.scipy.special.logsumexp(
        jnp.where(onehot[None], ab[..., None], ninf), axis=2)  # (T, B, C)
    nll = result0
    g = jnp.exp(log_probs) - jnp.exp(lcab + nll[None, :, None] - log_probs)
    g = g * grad[None, :, None]
    live = jnp.arange(t_max)[:, None] < in_len[None, :]
    if zero_infinity:
        live = live & ~jnp.isinf(nll)[None, :]
    return jnp.where(live[..., None], g, jnp.zeros_like(g))


CTC_BACK = defop("_ctc_loss_backward", _ctc_back_k,
                 inputs=("grad", "log_probs", "targets", "neg_log_likelihood", "log_alpha"),
                 attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
                 node="NotImplemented", nondiff=(2, 4),
                 grad=_not_implemented("_ctc_loss_backward"),
                 log_probs=_not_implemented("_ctc_loss_backward"),
                 neg_log_likelihood=_not_implemented("_ctc_loss_backward"))
CTC = defop("_ctc_loss", _ctc_k, inputs=("log_probs", "targets"),
            attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
            outputs=("result0", "result1"), nondiff=(1,),
            log_probs=lambda grad, log_probs, targets, result0, result1, input_lengths,
            target_lengths, blank, zero_infinity:
            call_op(CTC_BACK, (grad, log_probs, targets, result0, result1),
                    (input_lengths, target_lengths, blank, zero_infinity)))


def _lengths(v, name):
    from ..tensor import Tensor
    if isinstance(v, Tensor):
        if v.dtype not in (D.uint8, D.int8, D.int16, D.int32, D.int64):
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(x) for x in np.asarray(v._value).reshape(-1))  # static sizes
    return tuple(int(x) for x in v)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
             zero_infinity=False):
    """torch.ctc_loss (reduction as torch's enum): the negative log likelihood of the
    targets under all CTC alignments (CtcLossBackward0; 'mean' divides by target lengths).

    >>> import eagergrad as torch
    >>> lp = torch.zeros(2, 1, 2).log_softmax(2)
    >>> torch.ctc_loss(lp, torch.tensor([[1]]), [2], [1], 0, 0)
    tensor([0.2877])
    """
    from ..creation import tensor as _tensor
    from ..tensor import Tensor
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments: lengths "
                        "must be both Tensors or both sequences of ints")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    _ctc_checks(lp, targets, il, tl, blank)
    tg = targets if targets.dtype == D.int64 else targets.to(D.int64)
    res = call_op(CTC, (lp, tg), (il, tl, int(blank), bool(zero_infinity)))[0]
    if zero_infinity:
        res = where(res == float("inf"), zeros((), dtype=res.dtype), res)
    if reduction == MEAN:
        tlt = _tensor(list(tl), dtype=res.dtype).clamp_min(1)
        return (res / tlt).mean()
    if reduction == SUM:
        return res.sum()
    return res if batched else res.squeeze(0)


def _ctc_checks(lp, targets, il, tl, blank):
    c = "ctc_loss_allocate_outputs"
    bsz, n_labels = lp._shape[1], lp._shape[2]
    if not (0 <= blank < n_labels):
        raise RuntimeError("blank must be in label range")
    if len(il) != bsz:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != bsz:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.ndim == 1:
        if targets._shape[0] != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got "
                               f"size {targets._shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for {c})")
    else:
        if targets._shape[0] != bsz:
            raise RuntimeError(f"Expected tensor to have size {bsz} at dimension 0, but got "
                               f"size {targets._shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for {c})")
        mx = max(tl) if tl else 0
        if targets._shape[1] < mx:
            raise RuntimeError(f"Expected tensor to have size at least {mx} at dimension 1, "
                               f"but got size {targets._shape[1]} for argument #2 'targets' "
                               f"(while checking arguments for {c})")
    for v in il:
        if v > lp._shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp._shape[0]}, "
                               f"but got value {v} (while checking arguments for {c})")


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
