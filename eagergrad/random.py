"""torch.random: the global random stream's functions, its generator (`default_generator`),
and `fork_rng`, which restores the stream's state after a block. eagergrad has one global
stream for every device, so forking it forks the streams of all devices.

>>> import eagergrad as torch
>>> _ = torch.random.manual_seed(0)
>>> with torch.random.fork_rng():
...     a = torch.rand(2)
>>> bool((torch.rand(2) == a).all())
True
"""
import contextlib

from ._torch_names import module_getattr
from .creation import (default_generator, get_rng_state, initial_seed, manual_seed, seed,
                       set_rng_state)

__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state", "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Inside the block, draw from the global stream as usual; on exit, put its state back
    as it was on entry (enabled=False: do nothing)."""
    if device_type == "meta" or not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """In a DataLoader worker thread, that worker's own Generator (draws from it are safe
    from the other workers); elsewhere (the main process, worker processes) None, which
    makes the random functions use the global stream.

    >>> import eagergrad as torch
    >>> torch.thread_safe_generator() is None
    True
    """
    from .utils.data import get_worker_info  # (utils imports after this module)
    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None


__getattr__ = module_getattr("eagergrad.random", "torch.random")
