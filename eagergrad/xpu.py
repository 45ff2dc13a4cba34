"""torch.xpu, as torch's build without XPU answers it: eagergrad's jax has no Intel GPU
device, so `is_available()` is False, `device_count()` 0, the seeding and memory queries
answer as torch's (nothing to seed, no memory in use), and what needs the device raises
torch's error. Other names raise NotImplementedError naming them.

>>> import eagergrad as torch
>>> torch.xpu.is_available(), torch.xpu.device_count(), torch.xpu.memory_allocated()
(False, 0, 0)
"""
import collections

from ._torch_names import module_getattr

_NO_XPU = "Torch not compiled with XPU enabled"
default_generators = ()


def _need_xpu():
    raise AssertionError(_NO_XPU)


def device_count():
    return 0


def is_available():
    return device_count() > 0


def is_initialized():
    return False


def init():
    _need_xpu()


def current_device():
    _need_xpu()


def set_device(device):
    _need_xpu()


def get_device_properties(device=None):
    _need_xpu()


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    get_device_properties(device)


def can_device_access_peer(device, peer):
    _need_xpu()


def synchronize(device=None):
    _need_xpu()


def current_stream(device=None):
    _need_xpu()


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


# ---- random: without a device torch queues the seeding calls (none ever runs) --------
def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    """Without XPU torch does nothing; so does eagergrad."""


def seed_all():
    """Without XPU torch does nothing; so does eagergrad."""


def initial_seed():
    _need_xpu()


def get_rng_state(device="xpu"):
    _need_xpu()


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="xpu"):
    new_state.clone()  # (torch copies the state, then queues the call)


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory: none in use without a device ----------------------------------------------
def empty_cache():
    """Nothing cached without XPU, as torch."""


def memory_stats(device=None):
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_snapshot(mempool_id=None):
    return []


def mem_get_info(device=None):
    _need_xpu()


def set_per_process_memory_fraction(fraction, device=None):
    _need_xpu()


def get_per_process_memory_fraction(device=None):
    _need_xpu()


__getattr__ = module_getattr("eagergrad.xpu", "torch.xpu")
