"""torch.nn's activation modules (ReLU, Tanh, Sigmoid, Softmax, LogSoftmax are in
layers.py): torch's constructor signatures, attributes, extra_repr and forward calls."""
import warnings

from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU6",
    "SiLU",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
]


def _inplace_str(inplace, sep=", "):
    return f"{sep}inplace=True" if inplace else ""


class _Activation(Module):
    __module__ = "eagergrad.nn.modules.activation"


class _Inplace(_Activation):
    """An activation whose only argument is `inplace`."""

    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Threshold(_Activation):
    """value where x <= threshold, else x.

    >>> import eagergrad as torch
    >>> torch.nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    >>> torch.nn.Threshold(1.0, 0.0)(torch.tensor([0.5, 2.0]))
    tensor([0., 2.])
    """

    __constants__ = ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class RReLU(_Activation):
    """Randomized leaky ReLU: random slopes in [lower, upper] in training mode, their
    mean in eval mode.

    >>> import eagergrad as torch
    >>> torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor([-1.0, 1.0]))
    tensor([-0.2000,  1.0000])
    """

    __constants__ = ("lower", "upper", "inplace")

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(_Activation):
    """x clamped to [min_val, max_val].

    >>> import eagergrad as torch
    >>> torch.nn.Hardtanh(-2, 2)(torch.tensor([-3.0, 1.0]))
    tensor([-2.,  1.])
    """

    __constants__ = ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6).

    >>> import eagergrad as torch
    >>> torch.nn.ReLU6()(torch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SiLU(_Inplace):
    """x * sigmoid(x).

    >>> import eagergrad as torch
    >>> torch.nn.SiLU()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x)).

    >>> import eagergrad as torch
    >>> torch.nn.Mish()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    >>> import eagergrad as torch
    >>> torch.nn.Hardsigmoid()(torch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6.

    >>> import eagergrad as torch
    >>> torch.nn.Hardswish()(torch.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class ELU(_Activation):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import eagergrad as torch
    >>> torch.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """

    __constants__ = ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(_Activation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import eagergrad as torch
    >>> torch.nn.CELU(0.5, inplace=True)
    CELU(alpha=0.5, inplace=True)
    """

    __constants__ = ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with SELU's constants.

    >>> import eagergrad as torch
    >>> torch.nn.SELU()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(_Activation):
    """a * sigmoid(b), a and b the halves of the input along dim.

    >>> import eagergrad as torch
    >>> torch.nn.GLU()(torch.tensor([[2.0, 0.0]]))
    tensor([[1.]])
    """

    __constants__ = ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(_Activation):
    """x * Phi(x); approximate='tanh' uses torch's tanh formula.

    >>> import eagergrad as torch
    >>> torch.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    __constants__ = ("approximate",)

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(_Activation):
    """x where |x| > lambd, else 0.

    >>> import eagergrad as torch
    >>> torch.nn.Hardshrink()
    Hardshrink(0.5)
    """

    __constants__ = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_Activation):
    """x - lambd * sign(x) where |x| > lambd, else 0.

    >>> import eagergrad as torch
    >>> torch.nn.Softshrink(0.3)
    Softshrink(0.3)
    """

    __constants__ = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class LeakyReLU(_Activation):
    """x if x > 0 else negative_slope * x.

    >>> import eagergrad as torch
    >>> torch.nn.LeakyReLU()
    LeakyReLU(negative_slope=0.01)
    """

    __constants__ = ("inplace", "negative_slope")

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class LogSigmoid(_Activation):
    """log(sigmoid(x)).

    >>> import eagergrad as torch
    >>> torch.nn.LogSigmoid()(torch.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(_Activation):
    """log(1 + exp(beta * x)) / beta, linear above threshold.

    >>> import eagergrad as torch
    >>> torch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    __constants__ = ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(_Activation):
    """x if x > 0 else weight * x, with a learnable `weight` of num_parameters values
    (one, or one per channel), all `init`.

    >>> import eagergrad as torch
    >>> m = torch.nn.PReLU(3)
    >>> m
    PReLU(num_parameters=3)
    >>> m.weight
    Parameter containing:
    tensor([0.2500, 0.2500, 0.2500], requires_grad=True)
    """

    __constants__ = ("num_parameters",)

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, **factory_kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(_Activation):
    """x / (1 + |x|).

    >>> import eagergrad as torch
    >>> torch.nn.Softsign()(torch.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(_Activation):
    """x - tanh(x).

    >>> import eagergrad as torch
    >>> torch.nn.Tanhshrink()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(_Activation):
    """softmax(-x) along dim.

    >>> import eagergrad as torch
    >>> torch.nn.Softmin(dim=0)(torch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    __constants__ = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(_Activation):
    """softmax over the channel dim (-3) of a 3-d or 4-d input.

    >>> import eagergrad as torch
    >>> torch.nn.Softmax2d()(torch.zeros(2, 1, 1))
    tensor([[[0.5000]],
    <BLANKLINE>
            [[0.5000]]])
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
