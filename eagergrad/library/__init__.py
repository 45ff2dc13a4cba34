"""torch.library: define operators and their kernels, eagerly (docs/design.md §5 holds
eagergrad's own op table; these are the user's operators, run by `_dispatch`'s dispatcher).

>>> import eagergrad as torch
>>> @torch.library.custom_op("doc::mysin", mutates_args=())
... def mysin(x: torch.Tensor) -> torch.Tensor:
...     return x.sin()
>>> def backward(ctx, grad):
...     return grad * ctx.x.cos()
>>> def setup_context(ctx, inputs, output):
...     ctx.x, = inputs
>>> mysin.register_autograd(backward, setup_context=setup_context)
>>> y = mysin(torch.zeros(2, requires_grad=True)); y.grad_fn.name()
'GeneratedBackwardFor_doc_mysin_defaultBackward'
"""
import functools
import warnings

from .._torch_names import module_getattr
from . import _dispatch
from ._custom_ops import (CustomOpDef, custom_op, infer_schema, make_autograd_impl,
                          maybe_get_opdef, is_functional_schema)
from ._dispatch import OpOverload, fallthrough_kernel, get_ctx
from ._library import (Library, NAMELESS_SCHEMA, _defs, _impls, _reserved_namespaces,  # noqa: F401
                       _scoped_library)
from ._opcheck import opcheck  # noqa: F401
from ._schema import Tag

# (torch's, less the names eagergrad lacks: register_autocast, register_torch_dispatch,
# register_vmap, get_kernel, triton_op, wrap_triton raise NotImplementedError when read)
__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract",
           "register_fake", "get_ctx", "custom_op", "infer_schema"]

_keep_alive = []


def _parse_namespace(qualname):
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f"Expected `qualname` to be of the form \"namespace::name\", but got "
                         f"{qualname}. The qualname passed to the torch.library APIs must "
                         "consist of a namespace and a name, e.g. aten::sin")
    return splits[0], splits[1]


@functools.singledispatch
def define(qualname, schema, *, lib=None, tags=()):
    """Define an operator: `define("mylib::foo", "(Tensor x) -> Tensor")`."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, "
                         f"got {type(qualname)}")
    namespace, name = _parse_namespace(qualname)
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. '
                         f'"(Tensor x) -> Tensor" but got "{schema}"')
    lib.define(name + schema, alias_analysis="", tags=tags)


@define.register
def _(lib: Library, schema, alias_analysis=""):
    def wrap(f):
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f
    return wrap


_KEY_NAMES = _dispatch._RUN_KEYS | _dispatch._KEPT_KEYS | _dispatch._OTHER_KEYS | {"Meta"}


def _device_type_to_key(device_type):
    if device_type == "default":
        return "CompositeExplicitAutograd"
    return _dispatch.key_for_device(device_type)


def _impl(qualname, types, func=None, *, lib=None, disable_dynamo=False):
    if isinstance(types, str):
        types = (types,)
    keys = set()
    for typ in types:
        keys.add(typ if typ in _KEY_NAMES else _device_type_to_key(typ))

    def register_(func):
        namespace, _ = _parse_namespace(qualname)
        use_lib = lib
        if use_lib is None:
            use_lib = Library(namespace, "FRAGMENT")
            _keep_alive.append(use_lib)
        for key in keys:
            use_lib.impl(qualname, func, key)

    if func is None:
        return register_
    register_(func)
    return None


@functools.singledispatch
def impl(qualname, types, func=None, *, lib=None):
    """Register a kernel for device types or dispatch keys:
    `impl("mylib::foo", "cpu", fn)` (or as a decorator)."""
    return _impl(qualname, types, func, lib=lib)


@impl.register
def _(lib: Library, name, dispatch_key=""):
    def wrap(f):
        lib.impl(name, f, dispatch_key)
        return f
    return wrap


def _resolve_op_for_registration(op, registration_name):
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"{registration_name}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, OpOverload):
        op = op._name
    opdef = maybe_get_opdef(op)
    if opdef is not None:
        return opdef
    return op


def _library_for_registration(namespace, lib):
    if lib is not None:
        return lib
    use_lib = Library(namespace, "FRAGMENT")
    _keep_alive.append(use_lib)
    return use_lib


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register the kernel of an operator for device types (None: all of them)."""
    op = _resolve_op_for_registration(op, "register_kernel")
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    if device_types is None:
        device_types = "CompositeExplicitAutograd"
    return _impl(op, device_types, func, lib=lib, disable_dynamo=True)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register an operator's FakeTensor implementation (kept: eager calls do not run
    it, as torch's do not)."""
    op = _resolve_op_for_registration(op, "register_fake")
    if isinstance(op, CustomOpDef):
        return op.register_fake if func is None else op.register_fake(func)

    def register(func):
        namespace, op_name = _parse_namespace(op)
        use_lib = _library_for_registration(namespace, lib)
        use_lib._register_fake(op_name, func, _stacklevel + 1, allow_override=allow_override)
        return func

    if func is None:
        return register
    return register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """Deprecated name of register_fake."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + 1)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register an operator's backward formula (and setup_context)."""
    op = _resolve_op_for_registration(op, "register_autograd")
    if isinstance(op, CustomOpDef):
        op.register_autograd(backward, setup_context=setup_context)
        return
    qualname = op
    overload = _lookup_op(qualname)
    o = overload._op()
    schema = o.schema
    if Tag.out in o.tags:
        raise RuntimeError(f"Cannot register autograd formula for operator tagged with "
                           f"torch.Tag.out: {overload}. Out variants do not support autograd.")
    if not is_functional_schema(schema):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                           f"{overload} with schema {schema}. Please create a functional "
                           "operator and register an autograd formula for that.")
    if any(a.kwarg_only and (a.type.is_tensor_like() or a.type.is_tensorlist_like())
           for a in schema.arguments):
        raise NotImplementedError("register_autograd with kwarg-only Tensor args. In the "
                                  "original definition of the op, please make your tensors not "
                                  f"kwarg-only. Got: {schema}")

    class _Info:
        _backward_fn = backward
        _setup_context_fn = setup_context

    kernel = make_autograd_impl(o, _Info)
    namespace, opname = _parse_namespace(qualname)
    _library_for_registration(namespace, lib).impl(opname, kernel, "Autograd")


def _lookup_op(qualname):
    namespace, name = _parse_namespace(qualname)
    overload = "default"
    if "." in name:
        name, overload = name.split(".")
    return getattr(getattr(_dispatch.namespace(namespace), name), overload)


__getattr__ = module_getattr("eagergrad.library", "torch.library")
