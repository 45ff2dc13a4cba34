"""Loss modules (torch.nn.modules.loss): thin Modules over nn.functional's losses, with
torch's constructor arguments, `reduction` attribute and `weight`/`pos_weight` buffers;
LinearCrossEntropyLoss holds its projection as a Linear, as torch's."""
import math
import warnings

from .._functional import loss as F
from .linear import Linear
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
           "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss",
           "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
           "CrossEntropyLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
           "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "CTCLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class _forward:
    """`forward = _forward(function, *attrs)` in a loss class defines its forward(input,
    target) as F.<function>(input, target) with the module's attributes `attrs` as keyword
    arguments of the same names, in that order (a plain function named as a method of the
    class, as the `def forward` it stands for)."""

    def __init__(self, function, *attrs):
        self.function, self.attrs = function, attrs

    def __set_name__(self, owner, name):
        function, attrs = self.function, self.attrs

        def forward(self, input, target):
            return getattr(F, function)(input, target, **{a: getattr(self, a) for a in attrs})

        forward.__qualname__ = f"{owner.__qualname__}.{name}"
        setattr(owner, name, forward)


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import eagergrad as torch
    >>> torch.nn.L1Loss()(torch.tensor([1.0, -3.0]), torch.zeros(2))
    tensor(2.)
    """

    __constants__ = ("reduction",)

    forward = _forward("l1_loss", "reduction")


class MSELoss(_Loss):
    """Mean squared error.

    >>> import eagergrad as torch
    >>> torch.nn.MSELoss()(torch.tensor([1.0, 3.0]), torch.zeros(2))
    tensor(5.)
    """

    __constants__ = ("reduction",)

    forward = _forward("mse_loss", "reduction")


class SmoothL1Loss(_Loss):
    """Quadratic below `beta`, linear above.

    >>> import eagergrad as torch
    >>> torch.nn.SmoothL1Loss()(torch.tensor([0.5, 3.0]), torch.zeros(2))
    tensor(1.3125)
    """

    __constants__ = ("reduction",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    forward = _forward("smooth_l1_loss", "reduction", "beta")


class HuberLoss(_Loss):
    """Quadratic below `delta`, delta-scaled linear above.

    >>> import eagergrad as torch
    >>> torch.nn.HuberLoss()(torch.tensor([0.5, 3.0]), torch.zeros(2))
    tensor(1.3125)
    """

    __constants__ = ("reduction", "delta")

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    forward = _forward("huber_loss", "reduction", "delta")


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices.

    >>> import eagergrad as torch
    >>> torch.nn.NLLLoss()(torch.tensor([[-1.0, -2.0]]), torch.tensor([1]))
    tensor(2.)
    """

    __constants__ = ("ignore_index", "reduction")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    forward = _forward("nll_loss", "weight", "ignore_index", "reduction")


class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss (a FutureWarning on construction, as torch's).

    >>> import warnings, eagergrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.nn.NLLLoss2d()
    NLLLoss2d()
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL for class indices, or cross entropy with class probabilities.

    >>> import eagergrad as torch
    >>> torch.nn.CrossEntropyLoss()(torch.zeros(1, 2), torch.tensor([0]))
    tensor(0.6931)
    """

    __constants__ = ("ignore_index", "reduction", "label_smoothing")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    forward = _forward("cross_entropy", "weight", "ignore_index", "reduction", "label_smoothing")


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of the logits of a Linear(in_features, num_classes * prod(out_features))
    projection of the input (F.linear_cross_entropy; the weight stored flat, reshaped in
    forward, as torch's).

    >>> import eagergrad as torch
    >>> m = torch.nn.LinearCrossEntropyLoss(4, 3)
    >>> m.linear
    Linear(in_features=4, out_features=3, bias=False)
    """

    __constants__ = ("num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing")

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError("expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(
            input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    >>> import eagergrad as torch
    >>> torch.nn.BCELoss()(torch.tensor([0.5]), torch.ones(1))
    tensor(0.6931)
    """

    __constants__ = ("reduction",)

    forward = _forward("binary_cross_entropy", "weight", "reduction")


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, with optional `weight` and `pos_weight` buffers.

    >>> import eagergrad as torch
    >>> torch.nn.BCEWithLogitsLoss()(torch.zeros(1), torch.ones(1))
    tensor(0.6931)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence; `input` holds log-probabilities.

    >>> import eagergrad as torch
    >>> torch.nn.KLDivLoss(reduction="batchmean")(torch.zeros(2), torch.ones(2))
    tensor(0.)
    """

    __constants__ = ("reduction",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    forward = _forward("kl_div", "reduction", "log_target")


class PoissonNLLLoss(_Loss):
    """Negative log likelihood of a Poisson distribution.

    >>> import eagergrad as torch
    >>> torch.nn.PoissonNLLLoss()(torch.zeros(2), torch.zeros(2))
    tensor(1.)
    """

    __constants__ = ("log_input", "full", "eps", "reduction")

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log likelihood of a Gaussian with predicted mean and variance.

    >>> import eagergrad as torch
    >>> torch.nn.GaussianNLLLoss()(torch.zeros(2), torch.zeros(2), torch.ones(2))
    tensor(0.)
    """

    __constants__ = ("full", "eps", "reduction")

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (input1 - input2) + margin).

    >>> import eagergrad as torch
    >>> torch.nn.MarginRankingLoss()(torch.ones(2), torch.zeros(2), torch.ones(2))
    tensor(0.)
    """

    __constants__ = ("margin", "reduction")

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.

    >>> import eagergrad as torch
    >>> x = torch.tensor([[1.0, 0.0]])
    >>> torch.nn.CosineEmbeddingLoss()(x, x, torch.tensor([1.0]))
    tensor(0.)
    """

    __constants__ = ("margin", "reduction")

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x for target 1, max(0, margin - x) for target -1.

    >>> import eagergrad as torch
    >>> torch.nn.HingeEmbeddingLoss()(torch.tensor([0.5]), torch.tensor([-1.0]))
    tensor(0.5000)
    """

    __constants__ = ("margin", "reduction")

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    forward = _forward("hinge_embedding_loss", "margin", "reduction")


class TripletMarginLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0) with p-norm pairwise distances.

    >>> import eagergrad as torch
    >>> a = torch.zeros(1, 2)
    >>> torch.nn.TripletMarginLoss()(a, a, a + 3.0)
    tensor(0.)
    """

    __constants__ = ("margin", "p", "eps", "swap", "reduction")

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with any distance function (a PairwiseDistance by default).

    >>> import eagergrad as torch
    >>> a = torch.zeros(1, 2)
    >>> torch.nn.TripletMarginWithDistanceLoss()(a, a, a + 3.0)
    tensor(0.)
    """

    __constants__ = ("margin", "swap", "reduction")

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        from .distance import PairwiseDistance
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-y x)).

    >>> import eagergrad as torch
    >>> torch.nn.SoftMarginLoss()(torch.zeros(2), torch.ones(2))
    tensor(0.6931)
    """

    __constants__ = ("reduction",)

    forward = _forward("soft_margin_loss", "reduction")


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss, averaged over classes.

    >>> import eagergrad as torch
    >>> torch.nn.MultiLabelSoftMarginLoss()(torch.zeros(1, 2), torch.ones(1, 2))
    tensor(0.6931)
    """

    __constants__ = ("reduction",)

    forward = _forward("multilabel_soft_margin_loss", "weight", "reduction")


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss.

    >>> import eagergrad as torch
    >>> torch.nn.MultiMarginLoss()(torch.tensor([[0.1, 0.9]]), torch.tensor([1]))
    tensor(0.1000)
    """

    __constants__ = ("p", "margin", "reduction")

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p = p
        self.margin = margin

    forward = _forward("multi_margin_loss", "p", "margin", "weight", "reduction")


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss; target rows end at the first -1.

    >>> import eagergrad as torch
    >>> torch.nn.MultiLabelMarginLoss()(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                 torch.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    __constants__ = ("reduction",)

    forward = _forward("multilabel_margin_loss", "reduction")


class CTCLoss(_Loss):
    """Connectionist temporal classification loss.

    >>> import eagergrad as torch
    >>> lp = torch.zeros(2, 1, 2).log_softmax(2)
    >>> torch.nn.CTCLoss(reduction="sum")(lp, torch.tensor([[1]]), [2], [1])
    tensor(0.2877)
    """

    __constants__ = ("blank", "reduction")

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
