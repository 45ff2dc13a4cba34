"""torch.compiler, the parts that mean something without a compiler: eagergrad runs every
function eagerly, so `is_compiling()` is False, `disable(fn)` gives a function running `fn`
eagerly, `allow_in_graph` and `assume_constant_result` return the function, and `reset()`
has no cache to clear. eagergrad has no `torch.compile` yet: `compile` and the rest raise
NotImplementedError naming them.

>>> import eagergrad as torch
>>> @torch.compiler.disable
... def f(x):
...     return x * 2
>>> f(torch.ones(2)), torch.compiler.is_compiling()
(tensor([2., 2.]), False)
"""
import functools
import inspect

from ._torch_names import missing, module_getattr

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "reset"]


def compile(*args, **kwargs):
    """Raises NotImplementedError: eagergrad has no torch.compile yet."""
    raise missing("torch.compile")


def is_compiling():
    """False: nothing in eagergrad runs inside torch.compile."""
    return False


def is_dynamo_compiling():
    """False: nothing in eagergrad runs inside dynamo."""
    return False


def is_exporting():
    """False: nothing in eagergrad runs inside torch.export."""
    return False


def reset():
    """Clear the compilation caches of torch.compile: eagergrad has none."""


def allow_in_graph(fn):
    """`fn` itself (a list of functions gives a list), which a compiler would put in its graph
    without tracing into it."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """`fn` itself, whose result a compiler could treat as a constant."""
    return fn


def _eager(fn):
    fn = getattr(fn, "_torchdynamo_orig_callable", fn)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    from .nn import Module
    if isinstance(fn, Module):
        raise NotImplementedError(
            "eagergrad does not implement torch.compiler.disable of an nn.Module yet (torch "
            "wraps it in an OptimizedModule): disable its forward instead")
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """`fn` to run eagerly, outside any compiled region: a wrapper calling it (a class is
    returned as it is); `disable()` is the decorator.

    >>> import eagergrad as torch
    >>> torch.compiler.disable(abs)(-3)
    3
    """
    def wrap(fn):
        fn = _eager(fn)
        if recursive and inspect.isclass(fn):
            return fn

        @functools.wraps(fn)
        def eager(*args, **kwargs):
            return fn(*args, **kwargs)
        eager._torchdynamo_orig_callable = fn
        return eager
    if fn is None:
        return wrap
    return wrap(fn)


__getattr__ = module_getattr("eagergrad.compiler", "torch.compiler")
