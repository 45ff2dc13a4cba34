"""Loss modules (torch.nn.modules.loss): thin Modules over nn.functional's losses, with
torch's constructor arguments, `reduction` attribute and `weight`/`pos_weight` buffers."""
from . import _functional_loss as F
from .module import Module


class _Loss(Module):
    __module__ = "eagergrad.nn.modules.loss"

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


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import eagergrad as torch
    >>> torch.nn.L1Loss()(torch.tensor([1.0, -3.0]), torch.zeros(2))
    tensor(2.)
    """

    __constants__ = ("reduction",)

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error.

    >>> import eagergrad as torch
    >>> torch.nn.MSELoss()(torch.tensor([1.0, 3.0]), torch.zeros(2))
    tensor(5.)
    """

    __constants__ = ("reduction",)

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


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

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


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

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


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

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


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

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    >>> import eagergrad as torch
    >>> torch.nn.BCELoss()(torch.tensor([0.5]), torch.ones(1))
    tensor(0.6931)
    """

    __constants__ = ("reduction",)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


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

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


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
