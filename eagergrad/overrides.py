"""torch.overrides: the __torch_function__ protocol's helpers, for code that lets its own
types override torch functions (`has_torch_function`, `handle_torch_function`). eagergrad's
own functions do not dispatch to __torch_function__; these helpers follow torch's rules on
the arguments they are given (NEP-18's order: subclasses before superclasses, then left to
right; the first result that is not NotImplemented).

>>> import eagergrad as torch
>>> class Logged:
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         return f"{func.__name__} on {cls.__name__}"
>>> def double(x):
...     if torch.overrides.has_torch_function_unary(x):
...         return torch.overrides.handle_torch_function(double, (x,), x)
...     return x * 2
>>> double(Logged())
'double on Logged'
"""
import threading
import warnings

from ._torch_names import module_getattr
from .tensor import Tensor

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like"]


# ---- torch._C.DisableTorchFunction(Subclass): __torch_function__ off in this thread ----
_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2


class _State(threading.local):
    value = _ENABLED


_STATE = _State()


class _Disable:
    _to = _ALL_DISABLED

    def __init__(self, *args, **kwargs):  # (torch's takes and ignores any arguments)
        self._old = _ENABLED  # (an exit without an enter restores this, as torch's)

    def __enter__(self):
        self._old = _STATE.value
        _STATE.value = self._to

    def __exit__(self, *exc):
        _STATE.value = self._old


class DisableTorchFunctionSubclass(_Disable):
    """Inside the block, this thread's __torch_function__ overrides are off: the helpers
    below see none (has_torch_function is False). eagergrad has no torch-function modes, so
    this is also what DisableTorchFunction does.

    >>> import eagergrad as torch
    >>> class Logged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return "overridden"
    >>> with torch.DisableTorchFunctionSubclass():
    ...     torch.overrides.has_torch_function((Logged(),))
    False
    """

    _to = _SUBCLASSES_DISABLED


class DisableTorchFunction(_Disable):
    """Inside the block, __torch_function__ overrides and modes are off in this thread."""


def is_tensor_like(inp):
    """A Tensor, or an object whose type defines __torch_function__."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def _overloaded_args(relevant_args):
    """The arguments whose types define __torch_function__, one per type, in calling order."""
    seen, out = set(), []
    if _STATE.value != _ENABLED:
        return out
    for arg in relevant_args:
        t = type(arg)
        if t in seen or not hasattr(t, "__torch_function__"):
            continue
        seen.add(t)
        index = len(out)
        for i, old in enumerate(out):
            if issubclass(t, type(old)):
                index = i
                break
        out.insert(index, arg)
    return out


def has_torch_function(relevant_args):
    """Whether any of `relevant_args` (an iterable) has a type defining __torch_function__."""
    return _STATE.value == _ENABLED and \
        any(hasattr(type(a), "__torch_function__") for a in relevant_args)


def has_torch_function_unary(arg):
    """has_torch_function((arg,))."""
    return _STATE.value == _ENABLED and hasattr(type(arg), "__torch_function__")


def has_torch_function_variadic(*args):
    """has_torch_function(args)."""
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the __torch_function__ overrides of `relevant_args` for `public_api(*args,
    **kwargs)`; TypeError when every one returns NotImplemented."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn(
                "Defining your `__torch_function__ as a plain method is deprecated and will be "
                "an error in future, please define it as a classmethod.", DeprecationWarning,
                stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


__getattr__ = module_getattr("eagergrad.overrides", "torch.overrides")
