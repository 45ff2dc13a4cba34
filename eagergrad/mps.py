"""torch.mps, as torch's build without MPS answers it: eagergrad's jax has no Metal device,
so `is_available()` is False, `device_count()` 0, `manual_seed` does nothing (as torch's),
and what needs the device raises torch's error. Other names raise NotImplementedError
naming them.

>>> import eagergrad as torch
>>> torch.mps.is_available(), torch.mps.device_count()
(False, 0)
"""
import os

from ._torch_names import module_getattr


def _no_mps(what):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def device_count():
    return 0


def is_available():
    return device_count() > 0


def synchronize():
    raise _no_mps("deviceSynchronize")


def get_rng_state(device="mps"):
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    new_state.clone()  # (torch copies the state first)
    raise _no_mps("getDefaultGenerator")


def manual_seed(seed):
    """Without MPS torch ignores this (before reading the seed); so does eagergrad."""


def seed():
    raise _no_mps("getDefaultGenerator")


def empty_cache():
    raise _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction):
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    raise _no_mps("setMemoryFraction")


def current_allocated_memory():
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory():
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory():
    raise _no_mps("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    if isinstance(source, (bytes, bytearray, str, os.PathLike)):
        raise RuntimeError("MPS is not available")
    raise TypeError(f"expected bytes or path, got {type(source).__name__}")


class Event:
    """torch.mps.Event: an event of the MPS device (torch's error without one)."""

    def __init__(self, enable_timing=False):
        raise _no_mps("acquireEvent")


__getattr__ = module_getattr("eagergrad.mps", "torch.mps")
