"""torch.multiprocessing: Python's multiprocessing (the whole API, re-exported as torch
does), `spawn` / `start_processes`, the sharing-strategy settings, and tensors sent through
its queues and pipes.

Unlike torch, tensors are not shared: torch moves a sent tensor's storage to shared memory,
so the receiver's in-place writes show in the sender's tensor; eagergrad sends the values
(see `reductions`), so each process has its own copy, and a sharing strategy has nothing to
choose (`set_sharing_strategy` keeps the setting, with torch's check). eagergrad runs on
jax, whose threads do not survive `fork`: start processes with "spawn" (as `spawn` does) or
"forkserver".

>>> import eagergrad as torch
>>> torch.multiprocessing.get_sharing_strategy()
'file_descriptor'
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F403

from .._torch_names import module_getattr
from .reductions import init_reductions
from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext,  # noqa: F401
                    ProcessExitedException, ProcessRaisedException, SpawnContext, spawn,
                    start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

if sys.platform == "darwin" or sys.platform == "win32":
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of `get_all_sharing_strategies()`); as
    eagergrad copies tensors between processes, it only records the choice."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, "
                             f"expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The sharing strategies of this system (torch's: both on Linux)."""
    return _all_sharing_strategies


init_reductions()

__getattr__ = module_getattr("eagergrad.multiprocessing", "torch.multiprocessing")
