"""torch.autograd.profiler: `record_function` labels a region for a profiler; eagergrad has
no profiler, so a label does nothing (as in torch when no profiler runs), and `profile` and
the other entry points raise NotImplementedError naming them.

>>> import eagergrad as torch
>>> with torch.autograd.profiler.record_function("forward"):
...     y = torch.ones(2) * 2
>>> y
tensor([2., 2.])
"""
import functools

from .._torch_names import missing


class record_function:
    """record_function(name, args=None): a labelled region (a context manager or decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with record_function(self.name, self.args):
                return fn(*a, **kw)
        return wrapper


def kineto_available():
    """False: eagergrad has no profiler backend."""
    return False


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(f"module 'eagergrad.autograd.profiler' has no attribute '{name}'")
    raise missing(f"torch.autograd.profiler.{name}")
