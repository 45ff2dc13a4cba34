"""torch.cpu: the CPU as a device module (`is_available()`, `device_count()`, ...);
`torch.cpu.amp` (deprecated autocast and GradScaler spellings) is put here by
eagergrad/__init__.py. Other names raise NotImplementedError naming them.

>>> import eagergrad as torch
>>> torch.cpu.is_available(), torch.cpu.device_count(), torch.cpu.current_device()
(True, 1, 'cpu')
"""
from ._torch_names import module_getattr


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for, as torch on the CPU."""


__getattr__ = module_getattr("eagergrad.cpu", "torch.cpu")
