"""torch.compiler: `torch.compile`'s companions. `reset()` forgets every compiled program,
`is_compiling()` is True inside a compiled function's trace, `set_stance` switches
compiled functions to eager or makes a recompile an error; `disable(fn)` gives a function
running `fn` as it is, `allow_in_graph` and `assume_constant_result` return the function
(eagergrad traces through every call).

>>> import eagergrad as torch
>>> @torch.compiler.disable
... def f(x):
...     return x * 2
>>> f(torch.ones(2)), torch.compiler.is_compiling()
(tensor([2., 2.]), False)
"""
import functools
import inspect

from ._torch_names import module_getattr

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "disable", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "reset", "set_stance"]


def compile(*args, **kwargs):
    """torch.compile (see eagergrad.compile)."""
    from ._dynamo import compile
    return compile(*args, **kwargs)


def is_compiling():
    """True inside a compiled function's trace."""
    from ._dynamo import is_compiling
    return is_compiling()


def is_dynamo_compiling():
    """True inside a compiled function's trace."""
    return is_compiling()


def is_exporting():
    """False: nothing in eagergrad runs inside torch.export."""
    return False


def reset():
    """Forget every compiled program (torch._dynamo.reset)."""
    from ._dynamo import reset
    reset()


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """How compiled functions run from now on: "default", "force_eager" (eagerly) or
    "fail_on_recompile" (a call that would compile again raises)."""
    from ._dynamo import set_stance
    set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe,
               force_backend=force_backend)


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
