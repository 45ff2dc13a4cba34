"""torch.nn.functional: the functions eagergrad covers so far; every other name of
torch 2.13's namespace raises NotImplementedError naming it."""
import warnings

from .._torch_names import NN_FUNCTIONAL_NAMES, nn_getattr
from ._functional_linear import *  # noqa: F401,F403
from ._functional_loss import *  # noqa: F401,F403
from ._functional_conv import *  # noqa: F401,F403
from ._functional_norm import *  # noqa: F401,F403
from ._functional_activation import *  # noqa: F401,F403
from ._functional_batchnorm import *  # noqa: F401,F403
from ._functional_rnn import *  # noqa: F401,F403
from ._functional_attention import *  # noqa: F401,F403
from ._functional_spatial import *  # noqa: F401,F403


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


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


__getattr__ = nn_getattr("eagergrad.nn.functional", "torch.nn.functional",
                         NN_FUNCTIONAL_NAMES)
