"""torch.nn.functional's non-linear activations (re-exported by nn.functional), recorded as
torch 2.13 records them on CPU: one op-table node each (ops/activation.py; relu, softmax,
log_softmax, tanh and sigmoid are Tensor methods), softsign / tanhshrink / softmin /
gumbel_softmax as torch's Python compositions; `inplace=True` runs the in-place variant
(EluBackward1, LeakyReluBackward1, ... or the out-of-place node on the old value, as
torch). The normalization functions are in normalization.py."""
import warnings

import jax
import jax.numpy as jnp

from ...creation import _next_key, from_jax
from ...ops import activation as A
from ...ops.inplace import inplace


def relu(input, inplace=False):
    """max(input, 0), recorded as ReluBackward0.

    >>> import eagergrad as torch
    >>> torch.nn.functional.relu(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """relu in place."""
    return input.relu_()


def gelu(input, approximate="none"):
    """x * Phi(x) (approximate='tanh': torch's tanh formula) (GeluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.gelu(torch.tensor([1.0]))
    tensor([0.8413])
    """
    return A._gelu(input, approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (SiluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.silu(torch.tensor([1.0]))
    tensor([0.7311])
    """
    return _inplace(input, A._silu) if inplace else A._silu(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x)) (MishBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.mish(torch.tensor([1.0]))
    tensor([0.8651])
    """
    return _inplace(input, A._mish) if inplace else A._mish(input)


def _inplace(input, fn, *args):
    """An in-place variant that torch records with its out-of-place node."""
    return inplace(input, fn, *args)


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x) - 1) (EluBackward0; in place EluBackward1).

    >>> import eagergrad as torch
    >>> torch.nn.functional.elu(torch.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    return A._elu_inplace(input, alpha) if inplace else A._elu(input, alpha)


def elu_(input, alpha=1.0):
    """elu in place (EluBackward1)."""
    return A._elu_inplace(input, alpha)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with SELU's constants (EluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.selu(torch.tensor([1.0]))
    tensor([1.0507])
    """
    return A.selu_(input) if inplace else A.selu(input)


def selu_(input):
    """selu in place (EluBackward1)."""
    return A.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (CeluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.celu(torch.tensor([2.0]))
    tensor([2.])
    """
    return A.celu_(input, alpha) if inplace else A.celu(input, alpha)


def celu_(input, alpha=1.0):
    """celu in place (CeluBackward1)."""
    return A.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x (LeakyReluBackward0; in place ...Backward1).

    >>> import eagergrad as torch
    >>> torch.nn.functional.leaky_relu(torch.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return A._leaky_relu_(input, negative_slope) if inplace else \
        A._leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place (LeakyReluBackward1)."""
    return A._leaky_relu_(input, negative_slope)


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold.

    >>> import eagergrad as torch
    >>> torch.nn.functional.softplus(torch.tensor([0.0]))
    tensor([0.6931])
    """
    return A._softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (HardtanhBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.hardtanh(torch.tensor([-2.0, 0.5, 2.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return A._hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh in place (HardtanhBackward0 on the old value)."""
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return inplace(input, A._hardtanh, min_val, max_val)


def relu6(input, inplace=False):
    """min(max(0, x), 6): hardtanh(x, 0, 6) (HardtanhBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.relu6(torch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """
    return hardtanh_(input, 0, 6) if inplace else A._hardtanh(input, 0, 6)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (HardswishBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.hardswish(torch.tensor([1.0]))
    tensor([0.6667])
    """
    return _inplace(input, A._hardswish) if inplace else A._hardswish(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6 (HardsigmoidBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.hardsigmoid(torch.tensor([0.0]))
    tensor([0.5000])
    """
    return _inplace(input, A._hardsigmoid) if inplace else A._hardsigmoid(input)


def logsigmoid(input):
    """log(sigmoid(x)), computed stably (LogSigmoidBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.logsigmoid(torch.tensor([0.0]))
    tensor([-0.6931])
    """
    return A._log_sigmoid(input)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of input along dim (GluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.glu(torch.tensor([2.0, 0.0]))
    tensor([1.])
    """
    return A._glu(input, dim)


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x (ThresholdBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.threshold(torch.tensor([0.5, 2.0]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return A.threshold_(input, threshold, value) if inplace else \
        A.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """threshold in place (ThresholdBackward1)."""
    return A.threshold_(input, threshold, value)


def prelu(input, weight):
    """x if x > 0 else weight * x, weight per channel (PreluKernelBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.prelu(torch.tensor([-2.0, 1.0]), torch.tensor([0.5]))
    tensor([-1.,  1.])
    """
    return A.prelu(input, weight)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0 (HardshrinkBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.hardshrink(torch.tensor([0.2, 1.0]))
    tensor([0., 1.])
    """
    return A.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    """x - lambd * sign(x) where |x| > lambd, else 0 (SoftshrinkBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.softshrink(torch.tensor([0.2, 1.0]))
    tensor([0.0000, 0.5000])
    """
    return A._softshrink(input, lambd)


def softsign(input):
    """x / (1 + |x|), torch's composition (DivBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.softsign(torch.tensor([1.0]))
    tensor([0.5000])
    """
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x), torch's composition (SubBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.tanhshrink(torch.tensor([0.0]))
    tensor([0.])
    """
    return input - input.tanh()


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: slopes uniform in [lower, upper] when training (eagergrad's
    generator), (lower + upper) / 2 otherwise (RreluWithNoiseBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.rrelu(torch.tensor([-1.0, 1.0]), 0.1, 0.3)
    tensor([-0.2000,  1.0000])
    """
    if inplace:
        return A.rrelu_(input, lower, upper, training)
    return A.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu in place (RreluWithNoiseBackward1)."""
    return A.rrelu_(input, lower, upper, training)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along dim (SoftmaxBackward0 after NegBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.softmin(torch.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    # (with a dtype: converted first, as ATen's softmax does: ToCopyBackward0)
    return (-input).softmax(dim) if dtype is None else (-input).to(dtype).softmax(dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(input) normalized to sum 1 along `dim`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.softmax(torch.zeros(2), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along `dim`, computed stably.

    >>> import eagergrad as torch
    >>> torch.nn.functional.log_softmax(torch.zeros(2), dim=0).exp()
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def tanh(input):
    """Elementwise tanh.

    >>> import eagergrad as torch
    >>> torch.nn.functional.tanh(torch.zeros(1))
    tensor([0.])
    """
    return input.tanh()


def sigmoid(input):
    """Elementwise 1 / (1 + exp(-input)).

    >>> import eagergrad as torch
    >>> torch.nn.functional.sigmoid(torch.zeros(1))
    tensor([0.5000])
    """
    return input.sigmoid()


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) along dim, g Gumbel(0, 1) noise from eagergrad's
    generator; hard=True: the one-hot of its argmax in the forward, the soft sample's
    gradient in the backward (straight-through).

    >>> import eagergrad as torch
    >>> torch.nn.functional.gumbel_softmax(torch.zeros(3), hard=True).sum()
    tensor(1.)
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    e = jax.random.exponential(_next_key(), tuple(logits.shape), logits.dtype.np)
    gumbels = from_jax(-jnp.log(e))
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = logits.new_zeros(tuple(logits.shape)).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft
