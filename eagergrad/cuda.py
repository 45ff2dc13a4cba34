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


def current_device():
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return 0


def get_device_name(device=None):
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _gpus()[0].device_kind


def manual_seed(seed):
    """Without CUDA torch silently ignores this; so does eagergrad (one generator)."""


def manual_seed_all(seed):
    """Without CUDA torch silently ignores this; so does eagergrad (one generator)."""


def synchronize(device=None):
    """Wait for every computation queued on the devices (jax's arrays are asynchronous)."""
    (jax.device_put(0.0) + 0).block_until_ready()


def empty_cache():
    """torch frees its CUDA cache; jax manages its own memory: nothing to do."""


__getattr__ = module_getattr("eagergrad.cuda", "torch.cuda")
