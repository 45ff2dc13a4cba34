"""torch.mtia, as torch's build without MTIA answers it: eagergrad's jax has no MTIA
device, so `is_available()` is False, `device_count()` 0, seeding is queued for a device
that never comes (nothing happens, as in torch), the memory queries answer 0, and what
needs the device raises torch's error. `Stream` and `Event` are torch.Stream and
torch.Event. Other names raise NotImplementedError naming them.

>>> import eagergrad as torch
>>> torch.mtia.is_available(), torch.mtia.device_count(), torch.mtia.memory_stats()
(False, 0, {})
"""
from ._streams import Event, Stream  # noqa: F401  (torch.mtia's are torch's)
from ._torch_names import module_getattr
from .device import device as _device

_NO_MTIA = ("Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
            "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")
default_generators = ()


def _no_backend(what):
    return RuntimeError(f"Cannot execute {what}() without MTIA backend.")


def _need_mtia():
    raise AssertionError(_NO_MTIA)


def _device_index(device, optional=False):
    """torch.mtia's _get_device_index: an int as is, an mtia device's index, -1 for the
    CPU; the current device (none here: torch's error) when optional and not given."""
    if device is None and optional:
        raise _no_backend("getCurrentDevice")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    idx = None
    if isinstance(device, _device):
        if device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        if device.type != "mtia":
            raise ValueError(f"Expected a mtia or cpu device, but got: {device}")
        idx = device.index
    if idx is None:
        if optional:
            raise _no_backend("getCurrentDevice")
        raise ValueError("Expected a torch.device with a specified index or an integer, but "
                         f"got: {device}")
    return idx


def device_count():
    return 0


def is_available():
    return False


def is_initialized():
    return False


def init():
    _need_mtia()


def current_device():
    raise _no_backend("getCurrentDevice")


def set_device(device):
    if _device_index(device) >= 0:
        raise _no_backend("setCurrentDevice")


def synchronize(device=None):
    if _device_index(device, optional=True) >= 0:
        raise _no_backend("maybeExchangeDevice")
    _need_mtia()


def current_stream(device=None):
    _device_index(device, optional=True)
    _need_mtia()


def default_stream(device=None):
    _device_index(device, optional=True)
    _need_mtia()


def set_stream(stream):
    if stream is not None:
        _need_mtia()


def get_device_capability(device=None):
    _device_index(device, optional=True)
    raise _no_backend("getDeviceCapability")


def get_device_properties(device=None):
    _device_index(device, optional=True)
    raise _no_backend("getDeviceProperties")


def is_bf16_supported(including_emulation=True):
    return True  # (torch's answer, device or not)


# ---- random: without a device torch queues the seeding calls (none ever runs) --------
def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    """Without MTIA torch does nothing; so does eagergrad."""


def seed_all():
    """Without MTIA torch does nothing; so does eagergrad."""


def initial_seed():
    _need_mtia()


def get_rng_state(device="mtia"):
    _need_mtia()


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="mtia"):
    new_state.clone()  # (torch copies the state, then queues the call)
    _device_index(device, optional=True)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory: none in use without a device ----------------------------------------------
def empty_cache():
    raise _no_backend("emptyCache")


def memory_stats(device=None):
    return {}


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    """Nothing to reset without MTIA, as torch."""


def record_memory_history(enabled="all", stacks="python", max_entries=0):
    """Nothing to record without MTIA, as torch."""


def snapshot():
    raise _no_backend("memorySnapshot")


def attach_out_of_memory_observer(observer):
    raise _no_backend("attachOutOfMemoryObserver")


__getattr__ = module_getattr("eagergrad.mtia", "torch.mtia")
