"""torch.nn.utils: gradient clipping, parameter/vector conversion, parametrizations and
the rnn helpers. Every other name of torch 2.13's torch.nn.utils raises
NotImplementedError naming it."""
from ..._torch_names import NN_UTILS_NAMES, nn_getattr
from . import rnn, parametrize, parametrizations, stateless  # noqa: F401
from .clip_grad import *  # noqa: F403
from .convert_parameters import *  # noqa: F403
from .weight_norm import *  # noqa: F403

__getattr__ = nn_getattr("eagergrad.nn.utils", "torch.nn.utils", NN_UTILS_NAMES)
