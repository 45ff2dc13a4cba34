"""torch.nn.modules._functions: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..module import BackwardHookFunction  # noqa: F401
