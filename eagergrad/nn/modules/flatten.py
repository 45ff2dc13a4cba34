"""torch.nn.modules.flatten: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
