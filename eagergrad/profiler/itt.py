"""torch.profiler.itt: Intel ITT ranges for VTune. eagergrad has no ITT, as a torch build
without it: `is_available()` is False and the range functions raise torch's RuntimeError.

>>> from eagergrad.profiler import itt
>>> itt.is_available()
False
"""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _fail(*args, **kwargs):
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available():
    """Whether ITT is available: False."""
    return False


def range_push(msg):
    """Push a range onto the stack of nested ranges (no ITT: RuntimeError)."""
    return _fail(msg)


def range_pop():
    """Pop a range off the stack of nested ranges (no ITT: RuntimeError)."""
    return _fail()


def mark(msg):
    """Mark an instantaneous event (no ITT: RuntimeError)."""
    return _fail(msg)


@contextmanager
def range(msg, *args, **kwargs):
    """A context manager pushing an ITT range at entry and popping it at exit."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
