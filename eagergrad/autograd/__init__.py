"""torch.autograd: backward, grad, Function, grad modes."""
from ..engine.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ..engine.grad_mode import (enable_grad, inference_mode, no_grad,  # noqa: F401
                                set_grad_enabled)
from ..engine.anomaly import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                               is_anomaly_enabled, set_detect_anomaly)
from . import forward_ad, function, functional, graph  # noqa: F401
from ._api import backward, grad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401  (the functions, as torch)
from .variable import Variable  # noqa: F401
from .._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.autograd", "torch.autograd")
