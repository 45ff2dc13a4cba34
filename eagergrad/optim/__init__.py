"""eagergrad.optim: torch.optim's optimizers and learning-rate schedulers.

>>> import eagergrad as torch
>>> w = torch.ones(3, requires_grad=True)
>>> opt = torch.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); opt.zero_grad()
"""
from .._torch_names import module_getattr
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]

__getattr__ = module_getattr("eagergrad.optim", "torch.optim")
