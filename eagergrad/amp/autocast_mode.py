"""torch.amp.autocast_mode: the `autocast` context manager and decorator, and custom_fwd /
custom_bwd for custom autograd Functions, as torch 2.13's Python code. The casts it turns
on, and the state it sets, are ops/_autocast.py's (NOTE [autocast])."""
import collections
import functools
import warnings

import numpy as np

from .. import _dtypes as D
from .. import cuda as _cuda
from ..ops import _autocast as _A
from ..device import device as _device
from ..tensor import Tensor

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd",
           "custom_bwd"]

is_autocast_available = _A.is_autocast_available


def _type_repr(v):
    # (torch.device's class prints as <class 'torch.device'>)
    return "<class 'eagergrad.device'>" if isinstance(v, _device) else type(v)


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


_PRIVATEUSE1 = ("Tried to use AMP with the `privateuseone` backend, but the backend has not "
                "registered a module or  the module miss some necessary funcs. The backend "
                "should register a module by `torch._register_device_module`, and the module "
                "must have these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n")


class autocast:
    """A region (or a decorated function) where ops run in mixed precision: the ops torch
    lists run in the autocast dtype (matmuls, convolutions, linear, attention), in float32
    (losses, reductions that need range) or in the widest input type (cat, stack).

    `device_type` is required ("cpu", "cuda", "xla", ...); `dtype` defaults to
    get_autocast_dtype(device_type) (bfloat16 on CPU, float16 on CUDA). Nested regions and
    `enabled=False` subregions restore the previous state on exit; the state is
    thread-local.

    >>> import eagergrad as torch
    >>> a, b = torch.ones(2, 2), torch.ones(2, 2)
    >>> with torch.autocast("cpu"):
    ...     (a @ b).dtype, (a + b).dtype
    (torch.bfloat16, torch.float32)
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{_type_repr(device_type)}`")
        self.fast_dtype = _A.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{self.device}'")
        device_supported_dtypes = [D.bfloat16, D.float16]
        self.custom_backend_name = "privateuseone"
        if self.device == self.custom_backend_name:
            raise AssertionError(_PRIVATEUSE1)  # (no backend registers a module here)
        self._cache_enabled = (_A.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        device_name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                if not _cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
                elif self.fast_dtype is D.bfloat16 and not _cuda.is_bf16_supported():
                    raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                       "switch dtype to float16.")
            elif self.fast_dtype not in device_supported_dtypes:
                warnings.warn(
                    f"In {device_name} autocast, but the target dtype is not supported. "
                    f"Disabling autocast.\n{device_name} Autocast only supports dtypes of "
                    + ", ".join(map(str, device_supported_dtypes)) + " currently.",
                    stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _A.is_autocast_cache_enabled()
        self.prev = _A.is_autocast_enabled(self.device)
        self.prev_fastdtype = _A.get_autocast_dtype(self.device)
        _A.set_autocast_enabled(self.device, self._enabled)
        _A.set_autocast_dtype(self.device, self.fast_dtype)
        _A.autocast_increment_nesting()
        _A.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # drop the weight cache when leaving the outermost autocast region
        if _A.autocast_decrement_nesting() == 0:
            _A.clear_autocast_cache()
        _A.set_autocast_enabled(self.device, self.prev)
        _A.set_autocast_dtype(self.device, self.prev_fastdtype)
        _A.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")
        return autocast_decorator(self, func)


class _UnmanagedAutocast(autocast):
    pass


def _enter_autocast(*vals):
    mode = _UnmanagedAutocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)


def _cast(value, device_type, dtype):
    """Tensors (in containers too) cast to dtype when floating, of the device, not float64."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not D.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's forward: with `cast_inputs`, inside an autocast region
    its floating inputs are cast to it and it runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: "
                         f"`{_type_repr(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _A.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _A.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _A.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's backward: it runs with the autocast state its forward
    ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: "
                         f"`{_type_repr(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
