"""torch.nn.modules.container: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
