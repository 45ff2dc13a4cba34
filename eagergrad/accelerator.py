"""torch.accelerator: the machine's accelerator (a GPU jax can use), answered from jax's
backends; None / False / 0 on a CPU-only machine, as torch.

>>> import eagergrad as torch
>>> torch.accelerator.is_available() == (torch.accelerator.device_count() > 0)
True
"""
import sys

from . import cuda as _cuda
from .device import NO_ACCELERATOR, device as _device
from ._torch_names import module_getattr

_current = [0]


def is_available():
    return _cuda.is_available()


def device_count():
    return _cuda.device_count()


def current_accelerator(check_available=False):
    """device('cuda') when jax has a GPU, else None."""
    return _device("cuda") if is_available() else None


def _need():
    if not is_available():
        raise RuntimeError(NO_ACCELERATOR)


def current_device_index():
    _need()
    return _current[0]


current_device_idx = current_device_index


def set_device_index(device):
    _need()
    i = device.index if isinstance(device, _device) else int(device)
    if not 0 <= i < device_count():
        raise RuntimeError(f"device index {i} is out of range (device_count={device_count()})")
    _current[0] = i


set_device_idx = set_device_index


def synchronize(device=None):
    _need()
    _cuda.synchronize(device)


def _get_device_module(device=None):
    """torch.get_device_module: the eagergrad module of a device type (eagergrad.cuda for
    "cuda:0"); of the accelerator, or eagergrad.cpu, when None.

    >>> import eagergrad as torch
    >>> torch.get_device_module("cpu").__name__
    'eagergrad.cpu'
    """
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        cur = current_accelerator()
        name = "cpu" if cur is None else cur.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    module = sys.modules.get(f"eagergrad.{name}")  # (the package imports its device modules)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module


# (torch.get_device_module: eagergrad/__init__ exports it)
_get_device_module.__module__ = "eagergrad"
_get_device_module.__name__ = _get_device_module.__qualname__ = "get_device_module"
__getattr__ = module_getattr("eagergrad.accelerator", "torch.accelerator")
