"""torch.autograd.function: custom Functions."""
from ..engine.function import (BackwardCFunction, Function, FunctionCtx,  # noqa: F401
                               once_differentiable)
