"""eagergrad.optim: torch.optim's optimizers and learning-rate schedulers.

>>> import eagergrad as torch
>>> w = torch.ones(3, requires_grad=True)
>>> opt = torch.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); opt.zero_grad()
"""
from .._torch_names import module_getattr
from . import lr_scheduler, swa_utils
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["SGD", "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam",
           "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state"]

__getattr__ = module_getattr("eagergrad.optim", "torch.optim")
