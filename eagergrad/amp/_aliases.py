"""torch.cpu.amp and torch.cuda.amp: the deprecated spellings of torch.amp (each warns,
naming the torch.amp form, as torch 2.13's). `CPU_AMP` and `CUDA_AMP` are the namespaces
eagergrad/__init__.py puts at eagergrad.cpu.amp and eagergrad.cuda.amp."""
import functools
import importlib.machinery
import types
import warnings

from .. import _dtypes as D
from .. import cuda as _cuda
from .autocast_mode import autocast as _autocast
from .autocast_mode import custom_bwd as _custom_bwd
from .autocast_mode import custom_fwd as _custom_fwd
from .grad_scaler import GradScaler as _GradScaler
from .grad_scaler import OptState


def _warn(old, new):
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.", FutureWarning,
                  stacklevel=3)


class CpuAutocast(_autocast):
    """torch.cpu.amp.autocast: torch.amp.autocast("cpu", ...), deprecated."""

    def __init__(self, enabled=True, dtype=D.bfloat16, cache_enabled=True):
        _warn("torch.cpu.amp.autocast", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CudaAutocast(_autocast):
    """torch.cuda.amp.autocast: torch.amp.autocast("cuda", ...), deprecated."""

    def __init__(self, enabled=True, dtype=D.float16, cache_enabled=True):
        _warn("torch.cuda.amp.autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CpuGradScaler(_GradScaler):
    """torch.cpu.amp.GradScaler: torch.amp.GradScaler("cpu", ...), deprecated."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _warn("torch.cpu.amp.GradScaler", "torch.amp.GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


class CudaGradScaler(_GradScaler):
    """torch.cuda.amp.GradScaler: torch.amp.GradScaler("cuda", ...), deprecated."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _warn("torch.cuda.amp.GradScaler", "torch.amp.GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


for _cls, _name in ((CpuAutocast, "autocast"), (CudaAutocast, "autocast"),
                    (CpuGradScaler, "GradScaler"), (CudaGradScaler, "GradScaler")):
    _cls.__name__ = _cls.__qualname__ = _name


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd: torch.amp.custom_fwd(device_type='cuda'), deprecated."""
    _warn("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(_custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd: torch.amp.custom_bwd(device_type='cuda'), deprecated."""
    _warn("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(_custom_bwd, device_type="cuda")(bwd)


def amp_definitely_not_available():
    return not _cuda.is_available()


CPU_AMP = types.ModuleType("eagergrad.cpu.amp", "torch.cpu.amp (deprecated: torch.amp)")
CPU_AMP.__dict__.update(autocast=CpuAutocast, GradScaler=CpuGradScaler)
CUDA_AMP = types.ModuleType("eagergrad.cuda.amp", "torch.cuda.amp (deprecated: torch.amp)")
CUDA_AMP.__dict__.update(autocast=CudaAutocast, GradScaler=CudaGradScaler,
                         custom_fwd=custom_fwd, custom_bwd=custom_bwd, OptState=OptState,
                         amp_definitely_not_available=amp_definitely_not_available)
for _m in (CPU_AMP, CUDA_AMP):  # pickles find the classes where their namespace is
    for _v in vars(_m).values():
        if isinstance(_v, type) and _v.__module__ == __name__:
            _v.__module__ = _m.__name__
for _m in (CPU_AMP, CUDA_AMP):  # (found by the import system: `from torch.cuda.amp import ...`)
    _m.__spec__ = importlib.machinery.ModuleSpec(_m.__name__, None)
