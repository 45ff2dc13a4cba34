"""nn.functional's losses (re-exported by nn.functional): torch's signatures, its legacy
size_average/reduce rules and warnings; the kernels are the op-table entries of
ops/loss.py, ops/margin.py and ops/ctc.py."""
import math
import warnings

from ... import _dtypes as D
from ..._shapes import broadcast_shape as _broadcast_shape
from ..._mode import AUTOCAST
from ...ops import ctc as _CTC
from ...ops._autocast import autocast_inputs
from ...ops import distance as _D
from ...ops import loss as _L
from ...ops import margin as _M
from ...ops.reduce import any as _any
from .linear import linear


# ---- torch.nn._reduction --------------------------------------------------------------------
def _get_enum(reduction):
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_get_string(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _get_enum(reduction)


def _size(t):
    return t.size()


def _warn_size(input, target):
    if tuple(target._shape) != tuple(input._shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input "
                      f"size ({_size(input)}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    """torch.broadcast_tensors: a tensor already of the common shape is returned as is."""
    shape = _broadcast_shape(tuple(input._shape), tuple(target._shape))
    return tuple(t if tuple(t._shape) == shape else t.expand(shape) for t in (input, target))


def _weighted(loss, weight, input, reduction, mean_by_weight):
    if tuple(weight._shape) != tuple(input._shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


# ---- regression losses ----------------------------------------------------------------------
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (MseLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.mse_loss(torch.tensor([1.0, 3.0]), torch.zeros(2))
    tensor(5.)
    """
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted((a - b).pow(2), weight, input, reduction, True)
    if AUTOCAST.n:
        a, b = autocast_inputs("mse_loss", a, b)
    return _L.call_op(_L.MSE, (a, b), (_get_enum(reduction),))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error, recorded as torch records it: abs(input - target), reduced.

    >>> import eagergrad as torch
    >>> torch.nn.functional.l1_loss(torch.tensor([1.0, -3.0]), torch.zeros(2))
    tensor(2.)
    """
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted((a - b).abs(), weight, input, reduction, True)
    if AUTOCAST.n:
        a, b = autocast_inputs("l1_loss", a, b)
    return _L._reduce_t((a - b).abs(), _get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below `beta`, linear above (SmoothL1LossBackward0; l1_loss for beta 0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0.5, 3.0]), torch.zeros(2))
    tensor(1.3125)
    """
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    a, b = _broadcast(input, target)
    if AUTOCAST.n:  # (l1_loss for beta 0: also float32)
        a, b = autocast_inputs("smooth_l1_loss", a, b)
    if beta == 0.0:
        return _L._reduce_t((a - b).abs(), _get_enum(reduction))
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _L.call_op(_L.SMOOTH_L1, (a, b), (_get_enum(reduction), float(beta)))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below `delta`, delta-scaled linear above (HuberLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.huber_loss(torch.tensor([0.5, 3.0]), torch.zeros(2))
    tensor(1.3125)
    """
    _warn_size(input, target)
    a, b = _broadcast(input, target)
    if AUTOCAST.n:
        a, b = autocast_inputs("huber_loss", a, b)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _L.call_op(_L.HUBER, (a, b), (_get_enum(reduction), float(delta)))
    loss = _L.call_op(_L.HUBER, (a, b), (0, float(delta)))
    return _weighted(loss, weight, input, reduction, False)


# ---- classification losses ------------------------------------------------------------------
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices (NllLossBackward0; NllLoss2DBackward0 for
    4-D input).

    >>> import eagergrad as torch
    >>> torch.nn.functional.nll_loss(torch.tensor([[-1.0, -2.0]]), torch.tensor([1]))
    tensor(2.)
    """
    red = _enum(size_average, reduce, reduction)
    return _L._nll_loss_nd(input, target, weight, red, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax + nll_loss for class indices; probabilities when target has the
    input's shape; with label smoothing as torch composes it.

    >>> import eagergrad as torch
    >>> torch.nn.functional.cross_entropy(torch.zeros(1, 2), torch.tensor([0]))
    tensor(0.6931)
    """
    red = _enum(size_average, reduce, reduction)
    return _L._cross_entropy(input, target, weight, red, ignore_index, label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities (BinaryCrossEntropyBackward0; logs clamped
    at -100 as torch).

    >>> import eagergrad as torch
    >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.ones(1))
    tensor(0.6931)
    """
    red = _enum(size_average, reduce, reduction)
    if tuple(target._shape) != tuple(input._shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the "
                         f"input size ({_size(input)}) is deprecated. Please ensure they have "
                         "the same size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shape(tuple(target._shape), tuple(weight._shape)))
    return _L._bce(input, target, weight, red)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """Binary cross entropy of logits (BinaryCrossEntropyWithLogitsBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.zeros(1), torch.ones(1))
    tensor(0.6931)
    """
    red = _enum(size_average, reduce, reduction)
    if tuple(target._shape) != tuple(input._shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size "
                         f"({_size(input)})")
    return _L._bce_with_logits(input, target, weight, pos_weight, red)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of log-probabilities `input` from `target`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.kl_div(torch.zeros(2), torch.ones(2), reduction="batchmean")
    tensor(0.)
    """
    if size_average is not None or reduce is not None:
        red = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = 2 if reduction == "batchmean" else _get_enum(reduction)
    out = _L.kl_div(input, target, red, log_target=log_target)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input._shape[0]
    return out


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of a Poisson distribution with rate exp(input) (or input).

    >>> import eagergrad as torch
    >>> torch.nn.functional.poisson_nll_loss(torch.zeros(2), torch.zeros(2))
    tensor(1.)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _L.poisson_nll_loss(input, target, log_input, full, eps, _get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of a Gaussian with mean `input` and variance `var`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.gaussian_nll_loss(torch.zeros(2), torch.zeros(2), torch.ones(2))
    tensor(0.)
    """
    from ...creation import ones_like
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool(_any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var._shape) != tuple(input._shape):
        if tuple(input._shape[:-1]) == tuple(var._shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(y for x, y in zip(input._shape, var._shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    from ...engine.grad_mode import no_grad
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), reduced.

    >>> import eagergrad as torch
    >>> torch.nn.functional.margin_ranking_loss(torch.ones(2), torch.zeros(2), torch.ones(2))
    tensor(0.)
    """
    red = _enum(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {_size(input1)}, input2: {_size(input2)}, target: "
            f"{_size(target)} ")
    return _L.margin_ranking_loss(input1, input2, target, margin, red)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.

    >>> import eagergrad as torch
    >>> x = torch.tensor([[1.0, 0.0]])
    >>> torch.nn.functional.cosine_embedding_loss(x, x, torch.tensor([1.0]))
    tensor(0.)
    """
    red = _enum(size_average, reduce, reduction)
    return _M.cosine_embedding_loss(input1, input2, target, margin, red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1, reduced.

    >>> import eagergrad as torch
    >>> torch.nn.functional.hinge_embedding_loss(torch.tensor([0.5]), torch.tensor([-1.0]))
    tensor(0.5000)
    """
    red = _enum(size_average, reduce, reduction)
    return _M.hinge_embedding_loss(input, target, margin, red)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with pairwise distances d.

    >>> import eagergrad as torch
    >>> a = torch.zeros(1, 2)
    >>> torch.nn.functional.triplet_margin_loss(a, a, a + 3.0)
    tensor(0.)
    """
    red = _enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _M.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, red)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance function (pairwise_distance by default).

    >>> import eagergrad as torch
    >>> a = torch.zeros(1, 2)
    >>> torch.nn.functional.triplet_margin_with_distance_loss(a, a, a + 3.0)
    tensor(0.)
    """
    from ...ops.pointwise import minimum
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a_dim}D, "
                           f"positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _D.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), reduced (SoftMarginLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.soft_margin_loss(torch.zeros(2), torch.ones(2))
    tensor(0.6931)
    """
    red = _enum(size_average, reduce, reduction)
    return _M._soft_margin_loss(input, target, red)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class logistic loss averaged over classes, then reduced.

    >>> import eagergrad as torch
    >>> torch.nn.functional.multilabel_soft_margin_loss(torch.zeros(1, 2), torch.ones(1, 2))
    tensor(0.6931)
    """
    from .activation import logsigmoid
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss (MultiMarginLossBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.multi_margin_loss(torch.tensor([[0.1, 0.9]]), torch.tensor([1]))
    tensor(0.1000)
    """
    red = _enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _M._multi_margin_loss(input, target, p, margin, weight, red)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-class multi-label hinge loss (MultilabelMarginLossBackward0); each target row
    lists class indices, ended by the first -1.

    >>> import eagergrad as torch
    >>> torch.nn.functional.multilabel_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                            torch.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    red = _enum(size_average, reduce, reduction)
    return _M._multilabel_margin_loss(input, target, red)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of (T, N, C) log-probabilities against
    padded (N, S) or concatenated targets (CtcLossBackward0).

    >>> import eagergrad as torch
    >>> lp = torch.zeros(2, 1, 2).log_softmax(2)
    >>> torch.nn.functional.ctc_loss(lp, torch.tensor([[1]]), [2], [1], reduction="sum")
    tensor(0.2877)
    """
    return _CTC.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                       _get_enum(reduction), zero_infinity)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): torch's
    reference path (options=None), logits reshaped to (N, C, *out_features) for a
    (C, *out_features, in_features) weight. A non-None `options` (torch's chunked path)
    raises NotImplementedError, except where torch itself falls back to the reference
    path (with its warning).

    >>> import eagergrad as torch
    >>> torch.nn.functional.linear_cross_entropy(torch.ones(1, 2), torch.zeros(3, 2),
    ...                                          torch.tensor([0]))
    tensor(1.0986)
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           "respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None:
        chunked = (not out_features and reduction in {"mean", "sum", "none"}
                   and label_smoothing == 0.0 and target.dtype is D.int64)
        if not chunked:
            bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
            warnings.warn(
                "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
                f"out_features == (). Got reduction={reduction!r}, "
                f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                f"out_features={out_features}, tracing=False, "
                f"linear_bias.shape={bias_shape}.", stacklevel=2)
        else:
            options._adjust(num_batches=input.shape[0] if input.dim() == 2 else 1,
                            in_features=in_features, num_classes=num_classes,
                            dtype=input.dtype, device=input.device)
            raise NotImplementedError(
                "eagergrad does not implement torch.nn.functional.linear_cross_entropy's "
                "chunked path (options=LinearCrossEntropyOptions(...)) yet; options=None "
                "computes the same loss on the reference path")
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes),
                                               in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
