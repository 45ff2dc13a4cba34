"""torch.library.custom_op: CustomOpDef, schema inference from type hints, and the
autograd kernel register_autograd installs (a custom autograd.Function named
`GeneratedBackwardFor_<ns>_<name>_<overload>`, as torch's)."""
import collections.abc
import inspect
import threading
import typing
import weakref
from types import GenericAlias

from .._dtypes import dtype as _dtype
from .._mode import FUNC, FWD, STATE
from ..device import device as _device
from ..engine.function import Function
from ..engine.grad_mode import no_grad
from ..tensor import Tensor
from . import _dispatch
from ._library import Library
from ._schema import Tag, fill_defaults, parse_schema

_Number = int | float | bool  # (torch.types.Number)


# ---- schema inference (torch._library.infer_schema) ----------------------------------------
def _derived(base, cpp, list_base, optional_base_list, optional_list_base):
    out = [(base, cpp), (typing.Optional[base], f"{cpp}?")]

    def seqs(t):
        return (typing.Sequence[t], typing.List[t],
                GenericAlias(collections.abc.Sequence, (t,)), GenericAlias(list, (t,)))

    if list_base:
        out += [(s, f"{cpp}[]") for s in seqs(base)]
    if optional_base_list:
        out += [(s, f"{cpp}?[]") for s in seqs(typing.Optional[base])]
    if optional_list_base:
        out += [(typing.Optional[s], f"{cpp}[]?") for s in seqs(base)]
    return out


SUPPORTED_PARAM_TYPES = dict(
    pair for line in [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
                      (float, "float", True, False, True), (bool, "bool", True, False, True),
                      (str, "str", False, False, False), (_Number, "Scalar", True, False, False),
                      (_dtype, "ScalarType", False, False, False),
                      (_device, "Device", False, False, False)]
    for pair in _derived(*line))

SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]",
                          list[Tensor]: "Tensor[]", int: "SymInt", float: "float",
                          bool: "bool", _Number: "Scalar"}


def _parse_return(annotation, error_fn):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. "
                     f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. "
                     f"The valid types are: {SUPPORTED_RETURN_TYPES}.")
    out = ", ".join(SUPPORTED_RETURN_TYPES[a] for a in args)
    if len(args) == 1:
        out = "(" + out + ")"
    return "(" + out + ")"


def _tuple_to_list(tuple_type):
    args = typing.get_args(tuple_type)
    if tuple_type is typing.Tuple or tuple_type is tuple or not args:
        return list
    if len(args) == 1 or len(args) == 2 and args[1] is Ellipsis:
        return list[args[0]]
    return list[typing.Union[tuple(args)]]


def _out_return(annotation, aliases, names, error_fn):
    if len(aliases) == 1:
        ok = annotation is Tensor
    else:
        ok = typing.get_origin(annotation) is tuple and \
            typing.get_args(annotation) == (Tensor,) * len(aliases)
    if not ok:
        error_fn("torch.Tag.out requires the return annotation to match the mutable "
                 f"keyword-only Tensor arguments {tuple(names)}.")
    rets = [f"Tensor({a}!)" for a in aliases]
    return rets[0] if len(rets) == 1 else f"({', '.join(rets)})"


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The schema of a function from its type hints (torch.library.infer_schema).

    >>> import eagergrad as torch
    >>> def f(x: torch.Tensor, n: int = 2) -> torch.Tensor: ...
    >>> torch.library.infer_schema(f, mutates_args=())
    '(Tensor x, SymInt n=2) -> Tensor'
    """
    unknown = "unknown"
    pf_globals = prototype_function.__globals__
    sig = inspect.signature(prototype_function)
    if tags is None:
        tags = ()
    elif isinstance(tags, Tag):
        tags = (tags,)
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def convert_type_string(s):
        try:
            return eval(s, pf_globals, None)
        except NameError as e:
            error_fn(f"Unsupported type annotation {s}. It is not a type. ({e}). If you are "
                     "using 'from __future__ import annotations', note that annotations are "
                     "evaluated lazily as strings; make sure all types referenced in "
                     "annotations are importable at module scope, not only inside a local "
                     "function.")
        except Exception as e:  # noqa: BLE001 - torch's message
            error_fn(f"Unsupported type annotation {s}. It is not a type. "
                     f"({type(e).__name__}: {e})")

    def unstringify(ty):
        if isinstance(ty, str):
            return convert_type_string(ty)
        origin = typing.get_origin(ty)
        if origin:
            args = typing.get_args(ty)
            new = tuple(unstringify(a) for a in args)
            if any(isinstance(a, str) for a in args):
                return GenericAlias(origin, new)
        return ty

    params, seen = [], set()
    saw_kwarg_only = False
    first_name = first_type = first_alias = None
    out_aliases, out_names = [], []
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not saw_kwarg_only:
            params.append("*")
            saw_kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = unstringify(param.annotation)
        if ann not in SUPPORTED_PARAM_TYPES:
            if getattr(ann, "__origin__", None) is tuple:
                lt = _tuple_to_list(ann)
                example = f"For example, {lt}.\n\n" if lt in SUPPORTED_PARAM_TYPES else "\n\n"
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. We do not "
                         "support Tuple inputs in schema. As a workaround, please try to use "
                         f"List instead. {example}"
                         f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                     f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
        stype = SUPPORTED_PARAM_TYPES[ann]
        if param.kind == param.POSITIONAL_OR_KEYWORD and first_name is None:
            first_name, first_type, first_alias = name, stype, f"a{idx}"
        mutated = False
        if type(mutates_args) is str:
            if mutates_args != unknown:
                raise ValueError("mutates_args must either be a sequence of the names of the "
                                 "arguments that are mutated or the string 'unknown'. ")
            if stype.startswith("Tensor"):
                mutated = True
                stype = f"Tensor(a{idx}!){stype[len('Tensor'):]}"
        elif name in mutates_args:
            mutated = True
            if not stype.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections "
                         "of Tensors can be mutated")
            stype = f"Tensor(a{idx}!){stype[len('Tensor'):]}"
        if is_out and mutated:
            if param.kind != param.KEYWORD_ONLY:
                error_fn("torch.Tag.out requires mutable arguments to be keyword-only.")
            if stype != f"Tensor(a{idx}!)":
                error_fn("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
            out_aliases.append(f"a{idx}")
            out_names.append(name)
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{stype} {name}")
            continue
        d = param.default
        if d is None or isinstance(d, (int, float, bool)):
            rep = str(d)
        elif isinstance(d, (str, _device)):
            rep = f'"{d}"'
        elif isinstance(d, _dtype):
            rep = str(d)[len("torch."):]
        else:
            error_fn(f"Parameter {name} has an unsupported default value type {type(d)}. "
                     "Please file an issue on GitHub so we can prioritize this.")
        params.append(f"{stype} {name}={rep}")
    if mutates_args != unknown:
        not_seen = set(mutates_args) - seen
        if not_seen:
            error_fn(f"{not_seen} in mutates_args were not found in the custom op's signature. "
                     "mutates_args should contain the names of all args that the custom op "
                     "mutates, or just the string 'unknown' if you don't know.")
    if is_inplace:
        if first_name is None:
            error_fn("torch.Tag.inplace requires a positional Tensor argument.")
        if first_type != "Tensor":
            error_fn("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if type(mutates_args) is str or set(mutates_args) != {first_name}:
            error_fn("torch.Tag.inplace requires mutates_args to contain exactly the first "
                     f"positional argument, got {mutates_args}.")
    if is_out and not out_aliases:
        error_fn("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    ret_ann = unstringify(sig.return_annotation)
    if is_out:
        ret = _out_return(ret_ann, out_aliases, out_names, error_fn)
    else:
        ret = _parse_return(ret_ann, error_fn)
    if is_inplace:
        if ret != "Tensor":
            error_fn("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        ret = f"Tensor({first_alias}!)"
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


# ---- the autograd kernel (torch._library.autograd.make_autograd_impl) ---------------------
_KWARGS = threading.local()


def _is_tensor_list(v):
    return isinstance(v, list) and all(isinstance(x, Tensor) for x in v)


def _flatten(values, leaf_list=_is_tensor_list):
    """values flattened one level: a list of tensors becomes its elements; the spec."""
    flat, spec = [], []
    for v in values:
        if leaf_list(v):
            flat.extend(v)
            spec.append(len(v))
        else:
            flat.append(v)
            spec.append(None)
    return flat, spec


def _unflatten(flat, spec):
    out, i = [], 0
    for s in spec:
        if s is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + s]))
            i += s
    return out


def _spec_str(spec):
    return "(" + ", ".join("*" if s is None else f"[{'*, ' * (s - 1)}*]" if s else "[]"
                           for s in spec) + ")"


_FUNCTORCH_ERROR = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


def make_autograd_impl(op, info):
    """The Autograd kernel of operator `op`: a custom Function when an input requires grad
    (its backward is `info._backward_fn`, or torch's "no autograd formula" error), else the
    layers below autograd."""
    ovl = _dispatch.overload_of(op)
    name = f"GeneratedBackwardFor_{ovl._namespace}_{ovl._opname}_{ovl._overloadname}"
    schema = op.schema
    has_kwarg_only = any(a.kwarg_only for a in schema.arguments)
    lists = any(a.type.is_tensorlist_like() for a in (*schema.arguments, *schema.returns))
    is_out = Tag.out in op.tags

    def below(args, kwargs):
        # torch's AutoDispatchBelowAutograd: the kernel's ops record no history and
        # propagate no forward-mode tangent
        values = _values(schema, args, kwargs)
        active = FWD.active
        FWD.active = False
        try:
            with no_grad():
                return _dispatch.backend(op, values)
        finally:
            FWD.active = active

    def forward(ctx, *flat):
        entry = _KWARGS.stack.pop()
        kwargs, in_spec = entry["kwargs"], entry["in_spec"]
        ctx._input_is_tensor = [isinstance(a, Tensor) for a in flat] + [False]
        args = _unflatten(flat, in_spec) if lists else flat
        result = below(args, kwargs)
        if info._setup_context_fn:
            full_args, full_kwargs = fill_defaults(schema, args, kwargs)
            if has_kwarg_only:
                info._setup_context_fn(ctx=ctx, inputs=full_args,
                                       keyword_only_inputs=full_kwargs, output=result)
            else:
                info._setup_context_fn(ctx=ctx, inputs=full_args, output=result)
        if not lists:
            return result
        single = not isinstance(result, tuple)
        flat_out, out_spec = _flatten((result,) if single else result)
        ctx._pt_metadata = entry["out"] = (in_spec, out_spec, single)
        return tuple(flat_out)

    def backward(ctx, *grads):
        if info._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {ovl} but no autograd formula was "
                               "registered. Please use register_autograd to add one.")
        prev = ctx.needs_input_grad
        if lists:
            in_spec, out_spec, single = ctx._pt_metadata
            grads = _unflatten(grads, out_spec)
            ctx.needs_input_grad = tuple(_unflatten(prev, in_spec))
        try:
            result = info._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        result = result if isinstance(result, tuple) else (result,)
        if lists:
            flat, spec = _flatten(result, lambda v: isinstance(v, list) and all(
                x is None or isinstance(x, Tensor) for x in v))
            if spec != in_spec:
                raise RuntimeError("Expected the return from backward to be of the same "
                                   f"structure as the inputs. Got: {_spec_str(spec)} (return "
                                   f"from backward), {_spec_str(in_spec)} (inputs)")
            result = tuple(flat) + (None,)
        return _validated(ctx, (*result, None), name + "Backward")  # (None: torch's metadata)

    gen = type(name, (Function,), {"forward": staticmethod(forward),
                                   "backward": staticmethod(backward)})

    def autograd_impl(*args, **kwargs):
        if is_out:
            if STATE.grad and any(t.requires_grad for t in _dispatch._tensors(
                    [*args, *kwargs.values()])):
                raise RuntimeError(f"{ovl._opname}(): functions with out=... arguments don't "
                                   "support automatic differentiation, but one of the "
                                   "arguments requires grad.")
            return below(args, kwargs)
        record = STATE.grad and any(t.requires_grad for t in _dispatch._tensors(args))
        if FUNC.levels:  # (torch.func: the tensors grad/vjp differentiate require grad)
            if record:
                raise RuntimeError(_FUNCTORCH_ERROR)
            if any(lv.kind in ("jvp", "jacfwd", "linearize") for lv in FUNC.levels):
                raise NotImplementedError(
                    "eagergrad does not implement custom operators (torch.library) inside "
                    "torch.func.jvp / jacfwd / linearize yet (torch's forward transforms give "
                    "their outputs zero tangents)")
        if not record:
            return below(args, kwargs)
        flat, in_spec = _flatten(args) if lists else (list(args), None)
        if not hasattr(_KWARGS, "stack"):
            _KWARGS.stack = []
        entry = {"kwargs": kwargs, "in_spec": in_spec}
        _KWARGS.stack.append(entry)
        try:
            out = gen.apply(*flat)
        finally:
            if _KWARGS.stack and _KWARGS.stack[-1] is entry:  # (apply failed before forward)
                _KWARGS.stack.pop()
        if not lists:
            return out
        _, out_spec, single = entry["out"]
        res = _unflatten(list(out), out_spec)
        return res[0] if single else tuple(res)

    autograd_impl._generated = gen
    return autograd_impl




def _values(schema, args, kwargs):
    """Kernel arguments back to one value per schema argument (defaults filled in)."""
    full_args, full_kwargs = fill_defaults(schema, args, kwargs)
    it = iter(full_args)
    return [full_kwargs[a.name] if a.kwarg_only else next(it) for a in schema.arguments]


def _validated(ctx, full, name):
    """torch's checks of a custom Function's gradients (PyNode::apply), with its
    metadata input counted."""
    flags = ctx._input_is_tensor
    n = len(flags)
    if len(full) > n and all(g is None for g in full[n:]):
        full = full[:n]
    if len(full) != n:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(full)})")
    for i, (g, t) in enumerate(zip(full, flags)):
        if t:
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        elif g is not None:
            raise RuntimeError(f"function {name} returned a gradient different than None at "
                               f"position {i + 1}, but the corresponding forward input was "
                               "not a Variable")
    return full[:n - 1]


# ---- CustomOpDef ------------------------------------------------------------------------------
def _normalize_tags(tags):
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


def _with_pt2_compliant_tag(tags):
    return [Tag.pt2_compliant_tag, *(t for t in tags if t != Tag.pt2_compliant_tag)]


OPDEF_TO_LIB = {}
OPDEFS = weakref.WeakValueDictionary()


class CustomOpDef:
    """A function turned into a custom operator by torch.library.custom_op; its methods
    register more behaviour (kernels per device, autograd, a fake impl)."""

    def __init__(self, namespace, name, schema, fn, tags=None):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns = {}
        self._vmap_fn = None
        self._autocast_dtype = {}
        self._is_inplace = False
        self._is_out = False
        self._out_kwarg_names = ()
        self._lib = _get_library_allowing_overwrite(namespace, name)
        self._register_to_dispatcher(self._tags)
        self._disabled_kernel = set()
        self._used_triton_kernels = []
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _register_to_dispatcher(self, tags):
        schema_str = self._name + self._schema
        cpp_schema = parse_schema(schema_str)
        if any((a.type.is_tensor_like() or a.type.is_tensorlist_like()) and a.kwarg_only
               for a in cpp_schema.arguments) and Tag.out not in self._tags:
            raise NotImplementedError("custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {schema_str}")
        self._lib.define(schema_str, tags=_with_pt2_compliant_tag(tags))
        self._opoverload = _lookup(self._qualname)
        op = self._opoverload._op()
        self._is_inplace = Tag.inplace in op.tags
        self._is_out = Tag.out in op.tags
        if self._is_out:
            self._out_kwarg_names = tuple(a.name for a in op.schema.arguments
                                          if a.is_write and a.kwarg_only)
        self._lib._register_fake(self._name, self._fake_impl)
        impl = make_autograd_impl(op, self)
        self._lib.impl(self._name, impl, "Autograd")
        if op.schema.is_mutable:
            op.mutation_bump = True

    def _fake_impl(self, *args, **kwargs):
        if self._abstract_fn is None:
            raise RuntimeError(
                f"There was no fake impl registered for {self}. This is necessary for "
                "torch.compile/export/fx tracing to work. Please use "
                f"`{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return self._abstract_fn(*args, **kwargs)

    @property
    def _op(self):
        return self._opoverload._op()

    def register_kernel(self, device_types, fn=None, /):
        """Register the implementation for some device types ("cpu", "cuda", ...;
        None: every device). May be used as a decorator."""
        def inner(fn):
            if device_types is None or isinstance(device_types, str):
                dtypes = [device_types]
            else:
                dtypes = list(device_types)
            for device_type in dtypes:
                if device_type not in self._backend_fns:
                    self._lib.impl(self._name, self._backend_impl(device_type),
                                   "CompositeExplicitAutograd" if device_type is None
                                   else _dispatch.key_for_device(device_type))

                def wrapped_fn(*args, _dt=device_type, **kwargs):
                    if _dt in self._disabled_kernel:
                        return self._init_fn(*args, **kwargs)
                    return fn(*args, **kwargs)
                self._backend_fns[device_type] = wrapped_fn
            return fn

        schema = self._op.schema
        if device_types is not None and not any(
                a.type.is_tensor_like() or a.type.is_tensorlist_like()
                for a in schema.arguments):
            idx = next((i for i, a in enumerate(schema.arguments)
                        if a.type.base == "Device" and not a.type.optional
                        and a.name == "device"), None)
            if idx is None:
                raise ValueError("Functions without tensor inputs are required to have a "
                                 "`device: torch.device` argument")
            self._register_backend_select_dispatcher(idx)
        if fn is None:
            return inner
        return inner(fn)

    def _backend_impl(self, device_type):
        def backend_impl(*args, **kwargs):
            result = self._backend_fns[device_type](*args, **kwargs)
            module = inspect.getmodule(backend_impl)
            if self._is_inplace:
                if result is not args[0]:
                    raise RuntimeError(f"{self._name} (with implementation in {module}): An "
                                       "operator tagged with torch.Tag.inplace must return "
                                       "its first argument.")
            elif self._is_out:
                names = self._out_kwarg_names
                if len(names) == 1:
                    ok = result is kwargs[names[0]]
                else:
                    ok = isinstance(result, tuple) and len(result) == len(names) and \
                        all(result[i] is kwargs[n] for i, n in enumerate(names))
                if not ok:
                    raise RuntimeError(f"{self._name} (with implementation in {module}): An "
                                       "operator tagged with torch.Tag.out must return its "
                                       "mutable keyword-only arguments.")
            elif not self._op.schema._is_view_op():
                _check_aliasing(self._name, args, kwargs, result, module)
            return result
        return backend_impl

    def _register_backend_select_dispatcher(self, device_arg_index):
        def backend_select(*args, **kwargs):
            device = args[device_arg_index].type
            if device not in self._backend_fns:
                raise RuntimeError(f"{self._name} does not have a kernel registered for "
                                   f"{device}. Please use register_kernel to do so.")
            op = self._op
            values = _values(op.schema, args, kwargs)
            return _dispatch.backend(op, values, False, _dispatch.key_for_device(device))
        self._lib.impl(self._name, backend_select, "BackendSelect")

    def set_kernel_enabled(self, device_type, enabled=True):
        """Context manager disabling (or re-enabling) the kernel registered for
        `device_type`, so the function given to custom_op runs instead."""
        return _KernelEnabled(self, device_type, enabled)

    def register_fake(self, fn, /):
        """Register the FakeTensor implementation (kept: eager calls never run it)."""
        if self._is_inplace or self._is_out:
            import warnings
            tag = "torch.Tag.inplace" if self._is_inplace else "torch.Tag.out"
            warnings.warn(f"The fake registration for {self} is unnecessary. Custom ops tagged "
                          f"with {tag} already get an autogenerated fake kernel. The provided "
                          "fake impl will be used instead.", stacklevel=2)
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register the backward formula (and `setup_context(ctx, inputs, output)`, which
        saves what backward needs on ctx)."""
        schema = self._op.schema
        if self._is_out:
            raise RuntimeError(f"Cannot register autograd formula for operator tagged with "
                               f"torch.Tag.out: {self}. Out variants do not support autograd.")
        if not is_functional_schema(schema, allow_valid_view=True):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {schema}. Please create a functional "
                               "operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("eagergrad does not implement torch.library.CustomOpDef."
                                  "register_torch_dispatch yet (no __torch_dispatch__)")

    def register_vmap(self, func=None):
        raise NotImplementedError("eagergrad does not implement torch.library.CustomOpDef."
                                  "register_vmap yet")

    def register_autocast(self, device_type, cast_inputs):
        raise NotImplementedError("eagergrad does not implement torch.library.CustomOpDef."
                                  "register_autocast yet")

    def register_effect(self, effect):
        raise NotImplementedError("eagergrad does not implement torch.library.CustomOpDef."
                                  "register_effect yet")


class _KernelEnabled:
    def __init__(self, opdef, device_type, enabled):
        self.opdef, self.device_type, self.enabled = opdef, device_type, enabled

    def __enter__(self):
        import logging
        log = logging.getLogger("torch._library.custom_ops")
        d, od = self.device_type, self.opdef
        action = "enable" if self.enabled else "disable"
        self.originally_disabled = d in od._disabled_kernel
        if d not in od._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this "
                        "device type.", action, d)
        if not self.enabled:
            if self.originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.",
                            d)
            else:
                od._disabled_kernel.add(d)
        elif not self.originally_disabled:
            log.warning("Attempted to enable kernel for  %s but it was already enabled.", d)
        else:
            od._disabled_kernel.remove(d)
        return None

    def __exit__(self, *exc):
        if self.originally_disabled:
            self.opdef._disabled_kernel.add(self.device_type)
        else:
            self.opdef._disabled_kernel.discard(self.device_type)


def _check_aliasing(name, args, kwargs, result, module):
    storages = {id(t._storage) for t in _dispatch._tensors([*args, *kwargs.values()])}
    outs = result if isinstance(result, tuple) else (result,)
    for t in _dispatch._tensors(list(outs)):
        key = id(t._storage)
        if key in storages:
            raise RuntimeError(
                f"{name} (with implementation in {module}): The output of this custom operator "
                "(1) must not also be an input to this custom operator and (2) may not alias "
                "any inputs to this custom operator or other returns. The most common way to "
                "trigger this error is if we have y = custom_op(x) and y and x are the same "
                "Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
                "return x.clone()) or refactor the custom operator to not return y.")
        storages.add(key)


def is_functional_schema(schema, *, allow_valid_view=False):
    if schema.is_mutable:
        return False
    rets = schema.returns
    view = bool(rets) and any(r.alias_info is not None and not r.alias_info.is_write
                              for r in rets)
    if view:
        n_in = sum(a.type.is_tensor() for a in schema.arguments)
        n_out = sum(r.type.is_tensor() for r in rets)
        return allow_valid_view and n_in == 1 and n_out == 1
    return bool(rets)


def _lookup(qualname):
    ns, name = qualname.split("::")
    overload = "default"
    if "." in name:
        name, overload = name.split(".")
    return getattr(getattr(_dispatch.namespace(ns), name), overload)


def _get_library_allowing_overwrite(namespace, name):
    qualname = f"{namespace}::{name}"
    if qualname in OPDEF_TO_LIB:
        OPDEF_TO_LIB[qualname]._destroy()
        del OPDEF_TO_LIB[qualname]
    lib = Library(namespace, "FRAGMENT")
    OPDEF_TO_LIB[qualname] = lib
    return lib


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap a function with type hints into a custom operator (torch.library.custom_op);
    as a decorator or called with the function.

    >>> import eagergrad as torch
    >>> @torch.library.custom_op("doc::twice", mutates_args=())
    ... def twice(x: torch.Tensor) -> torch.Tensor:
    ...     return x * 2
    >>> torch.ops.doc.twice(torch.ones(2))
    tensor([2., 2.])
    """
    def inner(fn):
        normalized = _normalize_tags(tags)
        if schema is None:
            schema_str = infer_schema(fn, mutates_args=mutates_args, tags=normalized)
        else:
            schema_str = schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn, normalized)
        if schema is not None:
            expected = {a.name for a in result._op.schema.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}which "
                    "is different from what was provided to us in `mutates_args`. Please make "
                    "these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


def maybe_get_opdef(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _dispatch.OpOverload):
        op = op._name
    if not isinstance(op, str):
        raise AssertionError(f"op must be str, got {type(op)}")
    return OPDEFS.get(op)
