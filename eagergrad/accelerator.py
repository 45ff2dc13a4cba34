"""torch.accelerator: the machine's accelerator (a GPU jax can use), answered from jax's
backends; None / False / 0 on a CPU-only machine, as torch.

>>> import eagergrad as torch
>>> torch.accelerator.is_available() == (torch.accelerator.device_count() > 0)
True
"""
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


__getattr__ = module_getattr("eagergrad.accelerator", "torch.accelerator")
