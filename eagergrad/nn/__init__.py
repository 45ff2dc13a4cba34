"""torch.nn: Module, Parameter, containers, layers; `functional` and `init`.

Every other name of torch 2.13's torch.nn raises NotImplementedError naming it.

>>> import eagergrad as torch
>>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Tanh())
>>> net
Sequential(
  (0): Flatten(start_dim=1, end_dim=-1)
  (1): Tanh()
)
"""
from .._torch_names import NN_NAMES, nn_getattr
from . import functional, grad, init, modules, parameter, utils
from .modules import *  # noqa: F403 - every module class, as torch.nn does
from . import parallel
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [*modules.__all__, "Buffer", "Parameter", "UninitializedBuffer",
           "UninitializedParameter", "functional", "grad", "init", "parameter", "utils", "parallel",
           "DataParallel"]

__getattr__ = nn_getattr("eagergrad.nn", "torch.nn", NN_NAMES)
