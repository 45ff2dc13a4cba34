"""torch.nn.modules.module: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..module import Module

__all__ = ["Module"]
