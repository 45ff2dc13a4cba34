"""torch.cuda, answered from jax's backends: `is_available()` is True when jax has GPU
devices. eagergrad places arrays with jax; the rest of torch.cuda raises
NotImplementedError naming it.

>>> import eagergrad as torch
>>> torch.cuda.is_available() == (torch.cuda.device_count() > 0)
True
"""
import jax

from ._torch_names import module_getattr


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend in this jax
        return []


def is_available():
    return bool(_gpus())


def device_count():
    return len(_gpus())


def is_initialized():
    return is_available()


def _need_cuda():
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    _need_cuda()
    return 0


def get_device_name(device=None):
    _need_cuda()
    return _gpus()[0].device_kind


def manual_seed(seed):
    """Without CUDA torch silently ignores this; so does eagergrad (one generator)."""


def manual_seed_all(seed):
    """Without CUDA torch silently ignores this; so does eagergrad (one generator)."""


def synchronize(device=None):
    """Wait for every computation queued on the GPUs (jax's arrays are asynchronous)."""
    _need_cuda()
    (jax.device_put(0.0) + 0).block_until_ready()


def seed():
    """Without CUDA torch silently ignores this; so does eagergrad."""


def seed_all():
    """Without CUDA torch silently ignores this; so does eagergrad."""


def initial_seed():
    _need_cuda()
    raise NotImplementedError("eagergrad does not implement torch.cuda.initial_seed yet")


def memory_allocated(device=None):
    """Bytes held by tensors on the GPU: 0 without one, as torch."""
    if not is_available():
        return 0
    raise NotImplementedError("eagergrad does not implement torch.cuda.memory_allocated yet")


def is_bf16_supported(including_emulation=True):
    return is_available()


def empty_cache():
    """torch frees its CUDA cache; jax manages its own memory: nothing to do."""


class OutOfMemoryError(RuntimeError):
    """Exception raised when device is out of memory"""


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device"""


# (torch.OutOfMemoryError and torch.AcceleratorError: eagergrad/__init__ exports them)
OutOfMemoryError.__module__ = AcceleratorError.__module__ = "eagergrad"


__getattr__ = module_getattr("eagergrad.cuda", "torch.cuda")
