"""torch.jit as model code sees it when nothing is scripted or traced: `is_scripting()` and
`is_tracing()` are False; the TorchScript annotations (`ignore`, `unused`, `export`,
`interface`, `annotate`, `Final`, `Attribute`, `_overload`, `_overload_method`) leave the
eager code as it is, as in torch; `script_if_tracing(fn)` runs `fn`; `isinstance` refines
containers (`List[int]`, `Dict[str, Tensor]`, `Optional[...]`) with torch's eager checks;
`fork` runs the function at once and returns a completed `Future`, which `wait` reads
(`torch.fork` / `torch.wait` without torch.jit's deprecation warnings).
eagergrad has no TorchScript: `script`, `trace`, `save`, `load`, `freeze` and the rest raise
NotImplementedError naming them.

>>> import eagergrad as torch
>>> torch.jit.is_scripting()
False
>>> torch.wait(torch.fork(lambda x: x + 1, 41))  # (torch.jit's warn: deprecated)
42
"""
import ast
import builtins
import collections
import collections.abc
import functools
import inspect
import textwrap
import types
import typing
import warnings
from typing import Final  # noqa: F401  (torch.jit.Final is typing.Final)

from ._torch_names import missing, module_getattr
from .futures import Future, _CFuture

__all__ = ["Attribute", "Error", "Future", "annotate", "export", "fork", "freeze", "ignore",
           "interface", "is_scripting", "is_tracing", "isinstance", "load", "save", "script",
           "script_if_tracing", "trace", "unused", "wait"]


class Error(Exception):
    """torch.jit.Error (torch.JITException): what TorchScript code raises; eager code raises
    its own exceptions, so nothing in eagergrad raises it."""


# torch.jit.Attribute(value, type): a (value, type) pair for ScriptModule.__init__
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def is_scripting():
    """False: eager code never runs inside TorchScript."""
    return False


def is_tracing():
    """False: eagergrad never traces with torch.jit.trace."""
    return False


def annotate(the_type, the_value):
    """`the_value` (a type hint for TorchScript, which eager code ignores)."""
    return the_value


def export(fn):
    """`fn` itself (marks an entry point for TorchScript)."""
    return fn


def unused(fn):
    """`fn` (or the property) itself: TorchScript would replace it by a raise."""
    return fn


def ignore(drop=False, **kwargs):
    """`@ignore` or `@ignore(drop=...)`: the function itself, left to Python (torch's checks
    and deprecation warnings)."""
    if callable(drop):
        return drop
    if not builtins.isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now "
                      "drop the function call on compilation. Use torch.jit.unused now. {}",
                      stacklevel=2, category=FutureWarning)
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}",
                      stacklevel=2, category=FutureWarning)
    return lambda fn: fn


def interface(obj):
    """The class itself, after torch's checks (a class deriving directly from object or
    nn.Module); TorchScript would compile it as an interface type."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    from .nn import Module
    is_module_interface = issubclass(obj, Module) and len(obj.mro()) == 3
    if not is_module_interface and len(obj.mro()) > 2:
        raise RuntimeError("TorchScript interface does not support inheritance yet. "
                           "Please directly inherit from 'object' or 'nn.Module'.")
    return obj


def script_if_tracing(fn):
    """A wrapper of `fn` that calls it (torch scripts it only while tracing, which eagergrad
    never does)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def _fork(func, *args, **kwargs):
    """torch.fork: run `func(*args, **kwargs)` now (as torch does outside TorchScript) and
    return a completed Future of its result; an error it raises propagates at once."""
    fut = _CFuture([])
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait(future):
    """torch.wait: the value of a Future (its error raised)."""
    if not builtins.isinstance(future, _CFuture):
        raise TypeError(f"wait(): expected a torch.Future, got {type(future).__name__}")
    return future.wait()


def fork(func, *args, **kwargs):
    """torch.fork, with torch.jit's deprecation warning: `func(*args, **kwargs)` run now, in a
    completed Future."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return _fork(func, *args, **kwargs)


def wait(future):
    """torch.wait, with torch.jit's deprecation warning: the value of a Future from `fork`."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return _wait(future)


_OVERLOAD_EXAMPLE = """
Example usage of overload function:
@torch.jit._overload
def my_function(x: type0) -> type0: # decl 1
    pass

@torch.jit._overload
def my_function(x: type1) -> type1: # decl 2
    pass

def my_function(x):                 # implementation
    if isinstance(x, type0):
        return x
    elif isinstance(x, type1):
        return x
"""


def _check_overload_body(func):
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.",
                      stacklevel=3)
        return
    body = ast.parse(textwrap.dedent(source)).body[0].body
    stmt = body[0]
    if len(body) != 1 or not (builtins.isinstance(stmt, ast.Pass) or (
            builtins.isinstance(stmt, ast.Expr) and builtins.isinstance(stmt.value, ast.Constant)
            and stmt.value.value is Ellipsis)):
        msg = "Only `pass` statement or `...` can be the body of overload declaration:\n"
        msg += "\n".join(source.split("\n")[:3])
        raise RuntimeError(msg + " <- Expecting `pass` or `...` here!\n" + _OVERLOAD_EXAMPLE)


def _overload(func):
    """An overload declaration for TorchScript (its body `pass` or `...`): `func` itself; the
    implementation defined after it is what eager calls run."""
    _check_overload_body(func)
    return func


def _overload_method(func):
    """As `_overload`, for a method."""
    _check_overload_body(func)
    return func


# ---- torch.jit.isinstance: torch's eager container checks ------------------------------------
_RAW_TYPE_NAMES = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict",
                   typing.List: "List", typing.Optional: "Optional",
                   typing.Tuple: "Tuple"}


def _check_args_exist(target_type):
    name = _RAW_TYPE_NAMES.get(target_type)
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _check_empty(obj):
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                      "in eager mode. For example, List[int] would become list and therefore "
                      "falsely return True for List[float] or List[str].", stacklevel=4)


def _is(obj, t):
    return _containers(obj, t) if typing.get_origin(t) else builtins.isinstance(obj, t)


def _containers(obj, target_type):
    origin = typing.get_origin(target_type)
    _check_args_exist(target_type)
    args = typing.get_args(target_type)
    if origin is None:
        return False
    if origin is list:
        _check_empty(obj)
        return builtins.isinstance(obj, list) and all(_is(el, args[0]) for el in obj)
    if origin is dict:
        _check_empty(obj)
        return builtins.isinstance(obj, dict) and all(
            builtins.isinstance(k, args[0]) and _is(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _check_empty(obj)
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and all(
            _is(el, t) for el, t in zip(obj, args))
    if origin is typing.Union or issubclass(origin, types.UnionType):  # Optional too
        if obj is None:
            return True
        for t in args:
            if typing.get_origin(t):
                return _containers(obj, t)  # (torch decides on the first container type)
            if builtins.isinstance(obj, t):
                return True
    return False


def isinstance(obj, target_type):
    """Whether `obj` is of `target_type`, which may be a parametrized container
    (`List[int]`, `Dict[str, List[Tensor]]`, `Optional[Tuple[int, str]]`) or a tuple of
    types, checked element by element as torch does in eager mode.

    >>> from typing import Dict, List
    >>> import eagergrad as torch
    >>> torch.jit.isinstance([torch.ones(1)], List[torch.Tensor])
    True
    >>> torch.jit.isinstance({"a": 1}, Dict[str, str])
    False
    """
    if builtins.isinstance(target_type, collections.abc.Container):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type "
                               "or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type):
        return _containers(obj, target_type)
    _check_args_exist(target_type)
    return builtins.isinstance(obj, target_type)


# ---- TorchScript itself: absent -------------------------------------------------------------
def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Raises NotImplementedError: eagergrad has no TorchScript compiler."""
    raise missing("torch.jit.script")


def trace(func, example_inputs=None, *args, **kwargs):
    """Raises NotImplementedError: eagergrad has no TorchScript tracer."""
    raise missing("torch.jit.trace")


def save(m, f, _extra_files=None):
    """Raises NotImplementedError: eagergrad has no ScriptModules to save."""
    raise missing("torch.jit.save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raises NotImplementedError: eagergrad cannot run TorchScript archives."""
    raise missing("torch.jit.load")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Raises NotImplementedError: eagergrad has no ScriptModules to freeze."""
    raise missing("torch.jit.freeze")


__getattr__ = module_getattr("eagergrad.jit", "torch.jit")
