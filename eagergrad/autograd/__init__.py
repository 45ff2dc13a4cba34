"""torch.autograd: backward, grad, Function, grad modes."""
import sys
import warnings  # noqa: F401  (torch.autograd.warnings, as torch's module has it)
from collections.abc import Mapping, Sequence  # noqa: F401  (ditto)
from typing import cast, overload  # noqa: F401  (ditto)

from ..engine.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ..engine.grad_mode import (enable_grad, inference_mode, no_grad,  # noqa: F401
                                set_grad_enabled)
from ..engine.anomaly import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                               is_anomaly_enabled, set_detect_anomaly)
from ..engine import anomaly as anomaly_mode, grad_mode  # noqa: F401
from . import forward_ad, function, functional, graph, profiler  # noqa: F401
from .profiler import kineto_available  # noqa: F401
from . import profiler_legacy, profiler_util  # noqa: F401
from ._profiler_backend import (DeviceType, ProfilerActivity, ProfilerConfig,  # noqa: F401
                                ProfilerEvent, ProfilerState)
from ._api import backward, grad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401  (the functions, as torch)
from .variable import Variable  # noqa: F401
from .._torch_names import module_getattr
from ..overrides import is_tensor_like  # noqa: F401

_MULTITHREADING = [True]


def is_multithreading_enabled():
    """Whether backward may use worker threads (torch's flag; eagergrad's backward always
    runs on the calling thread, as torch's does for CPU tensors)."""
    return _MULTITHREADING[0]


class set_multithreading_enabled:
    """Context manager setting is_multithreading_enabled() (torch's switch)."""

    def __init__(self, mode):
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _MULTITHREADING[0] = self.prev

    def clone(self):
        return type(self)(_MULTITHREADING[0])


def is_view_replay_enabled():
    """False: torch's view replay (_force_original_view_tracking) is off by default, and
    eagergrad rebuilds views from their chains whatever the flag."""
    return False


_getattr = module_getattr("eagergrad.autograd", "torch.autograd")


def __getattr__(name):
    if name == "torch":  # (torch's module imports torch)
        return sys.modules["eagergrad"]
    return _getattr(name)
