"""eagergrad.optim: torch.optim's optimizers and learning-rate schedulers.

>>> import eagergrad as torch
>>> w = torch.ones(3, requires_grad=True)
>>> opt = torch.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); opt.zero_grad()
"""
from .._torch_names import module_getattr
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["SGD", "ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler"]

__getattr__ = module_getattr("eagergrad.optim", "torch.optim")
