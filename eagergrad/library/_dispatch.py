"""The operators torch.library defines and the dispatcher that runs them eagerly.

An operator (`_Operator`) has a schema and a kernel per dispatch key. A call binds its
arguments to the schema (torch's conversions and errors), then dispatches as torch's
dispatcher does for CPU tensors, the only ones eagergrad has:

- the autograd layer, when an argument is a tensor and inference mode is off: a kernel at
  AutogradCPU or Autograd; else CompositeImplicitAutograd when neither CPU nor
  CompositeExplicitAutograd has one (it decomposes: its ops record history); else torch's
  autograd fallback around the backend layer (NOTE [autograd fallback]);
- the backend layer: CPU, CompositeExplicitAutograd, CompositeImplicitAutograd in that
  order (without tensor arguments: BackendSelect first, and no CPU).

Kernels registered at other device keys (CUDA, Meta, ...) are kept but never run on CPU
tensors, as in torch. A Python kernel receives what torch's dispatcher hands one: the
arguments converted, trailing positional and keyword-only arguments equal to their
defaults left out (`_schema.kernel_args`).

NOTE [autograd fallback]: torch's default ("warn") fallback for an operator without an
autograd kernel runs the backend kernel with grad mode as it is (its ops record); when an
input requires grad, an output that requires grad gets a hook that warns in backward, and
one that does not gets a `torch::autograd::WarnNotImplemented` node (edges to every tensor
input) that warns and returns no gradient.
"""
import types
import warnings

from .._mode import STATE
from .._torch_names import missing
from ..engine.graph import Node
from .. import ops as _ops
from ..tensor import Tensor
from ._schema import _Mismatch, _convert, bind, kernel_args

# the keys a kernel may be registered at (torch's DispatchKey names); other keys torch
# knows raise NotImplementedError, unknown ones torch's "could not parse" error
DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU", "mps": "MPS",
               "hip": "HIP", "xla": "XLA", "ipu": "IPU", "hpu": "HPU", "mtia": "MTIA",
               "lazy": "Lazy", "privateuseone": "PrivateUse1"}
_RUN_KEYS = {"CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "Autograd",
             "AutogradCPU", "BackendSelect"}
_KEPT_KEYS = set(DEVICE_KEYS.values()) - {"CPU"} | {
    "AutogradCUDA", "AutogradXPU", "AutogradMPS", "AutogradMeta", "AutogradXLA",
    "AutogradHPU", "AutogradLazy", "AutogradMTIA", "AutogradPrivateUse1",
    "CompositeExplicitAutogradNonFunctional"}
_OTHER_KEYS = {"Python", "PythonTLSSnapshot", "PythonDispatcher", "FuncTorchBatched",
               "FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode",
               "FuncTorchGradWrapper", "Functionalize", "ADInplaceOrView", "AutogradOther",
               "AutocastCPU", "AutocastCUDA", "AutocastXPU", "AutocastMPS", "Conjugate",
               "Negative", "ZeroTensor", "Named", "Batched", "VmapMode", "Tracer",
               "SparseCPU", "SparseCUDA", "QuantizedCPU", "QuantizedCUDA", "NestedTensorCPU",
               "AutogradNestedTensor", "Undefined", "Dense", "FPGA", "MAIA", "Vulkan",
               "Metal", "MkldnnCPU", "SparseCsrCPU", "PreDispatch", "TESTING_ONLY_GenericMode",
               "TESTING_ONLY_GenericWrapper"}


def fallthrough_kernel():
    """A dummy kernel: registered at a key, the dispatcher skips that key (at Autograd:
    no autograd fallback)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def check_key(key):
    """A dispatch key name eagergrad's dispatcher knows (kept or run); torch's error for
    an unknown one, NotImplementedError for one it cannot honour."""
    if key in _RUN_KEYS or key in _KEPT_KEYS or key == "Meta":
        return key
    if key in _OTHER_KEYS:
        raise NotImplementedError(f"eagergrad does not implement kernels at the dispatch "
                                  f"key {key} yet")
    raise RuntimeError(f"could not parse dispatch key: {key}")


def key_for_device(device_type):
    """torch._C._dispatch_key_for_device."""
    try:
        return DEVICE_KEYS[device_type]
    except KeyError:
        raise RuntimeError(f"Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                           f"ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
                           f"mtia, privateuseone device type at start of device string: "
                           f"{device_type}") from None


class _Operator:
    """One operator overload: its schema, tags, kernels (a stack per key: the last
    registration wins and removing it restores the one before) and its fake impl."""

    def __init__(self, schema, tags, where):
        self.schema, self.tags, self.where = schema, tuple(tags), where
        self.fake = None          # (fn, lib) of torch.library.register_fake / _register_fake
        self.mutation_bump = False  # custom_op's ADInplaceOrView kernel (version bumps)
        self.overload = None

    def kernel(self, key):
        stack = KERNELS.get((self.qualname, key))
        k = stack[-1][1] if stack else None
        return None if k is fallthrough_kernel else k

    @property
    def qualname(self):
        name = self.schema.name
        return name + (f".{self.schema.overload_name}" if self.schema.overload_name else "")


DEFS = {}     # "ns::name" -> {overload name: _Operator}, in definition order
KERNELS = {}  # ("ns::name[.overload]", key) -> [(handle, fn), ...]; kept for undefined ops too
FALLBACK_MODE = ["warn"]  # torch._C._set_autograd_fallback_mode ("nothing" for opcheck)
_BUILTIN_NS = {"aten", "prims", "prim", "quantized", "_quantized", "rngprims", "higher_order",
               "c10d", "_c10d_functional", "_c10d_functional_autograd", "_dtensor", "debugprims",
               "inductor", "profiler", "mkldnn", "onednn", "mkl", "xnnpack", "fbgemm",
               "torchvision", "image", "sparse", "cuda", "_inductor_test", "_test",
               "streams", "_nested_ops", "_quantized_ops", "fsdp", "quantized_decomposed",
               "_TorchScriptTesting", "symm_mem", "_c10d", "_fbgemm", "aoti_torch"}


CTX_GETTER = [lambda: None]


def get_ctx():
    """The FakeImplCtx of the fake impl running (torch.library.get_ctx): None outside one,
    as in torch; eagergrad never runs fake impls eagerly."""
    return CTX_GETTER[0]()


def lookup(ns, name):
    return DEFS.get(f"{ns}::{name}")


# ---- torch.ops ----------------------------------------------------------------------------
class OpOverload:
    """An operator overload (torch._ops.OpOverload): `torch.ops.mylib.foo.default`."""

    def __init__(self, packet, overloadname):
        self.overloadpacket, self._overloadname = packet, overloadname
        self._namespace, self._opname = packet._namespace, packet._opname
        self.__name__ = f"{self._opname}.{overloadname}"
        self.__qualname__ = self._name
        self.__module__ = "eagergrad.ops." + self._namespace

    def _op(self):
        ops = DEFS.get(self.overloadpacket._qualified_op_name)
        op = ops and ops.get("" if self._overloadname == "default" else self._overloadname)
        if op is None:
            raise RuntimeError(f"operator {self._name} was removed (its Library was destroyed)")
        return op

    @property
    def _schema(self):
        return self._op().schema

    @property
    def _name(self):
        q = self.overloadpacket._qualified_op_name
        return q if self._overloadname == "default" else f"{q}.{self._overloadname}"

    def name(self):
        return self._name

    @property
    def namespace(self):
        return self._namespace

    @property
    def tags(self):
        return list(self._op().tags)

    @property
    def op(self):
        return self

    def __call__(self, *args, **kwargs):
        return call(self._op(), args, kwargs)

    def __str__(self):
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', " \
               f"overload='{self._overloadname}')>"

    def __hash__(self):
        return hash((self._name,))

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._name == self._name

    def redispatch(self, *args, **kwargs):
        raise NotImplementedError("eagergrad does not implement torch._ops.OpOverload."
                                  "redispatch yet")


class OpOverloadPacket:
    """All overloads of an operator name (torch._ops.OpOverloadPacket):
    `torch.ops.mylib.foo`, called, picks the first overload whose schema fits."""

    def __init__(self, ns, opname):
        self._namespace, self._opname = ns, opname
        self._qualified_op_name = f"{ns}::{opname}"
        self.__name__ = opname
        self.__qualname__ = self._qualified_op_name
        self._overloads = {}

    def overloads(self):
        return ["default" if k == "" else k for k in DEFS.get(self._qualified_op_name, {})]

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        ops = DEFS.get(self._qualified_op_name, {})
        if ("" if key == "default" else key) not in ops:
            raise AttributeError(f"The underlying op of '{self._namespace}.{self._opname}' "
                                 f"has no overload name '{key}'")
        ov = self._overloads.get(key)
        if ov is None:
            ov = self._overloads[key] = OpOverload(self, key)
        return ov

    @property
    def op(self):
        return self

    def __call__(self, *args, **kwargs):
        ops = list(DEFS.get(self._qualified_op_name, {}).values())
        if not ops:
            raise RuntimeError(f"operator {self._qualified_op_name} was removed (its Library was "
                               "destroyed)")
        if len(ops) == 1:
            return call(ops[0], args, kwargs)
        errors = []
        for op in ops:
            try:
                values = bind(op.schema, args, kwargs)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            return dispatch(op, values)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                           "schema:\n" + "".join(e + "\n\n" for e in errors))

    def __str__(self):
        return f"{self._namespace}.{self._opname}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._opname}')>"


class _OpNamespace(types.ModuleType):
    """`torch.ops.<namespace>`: its operators as attributes."""

    def __init__(self, name):
        super().__init__("eagergrad.ops." + name)
        self.__file__ = "eagergrad.ops"
        self.name = name
        self._packets = {}

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        packets = self.__dict__["_packets"]
        ns = self.__dict__["name"]
        if f"{ns}::{op_name}" not in DEFS:
            packets.pop(op_name, None)
            if ns in _BUILTIN_NS:
                raise missing(f"torch.ops.{ns}.{op_name}")
            raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{op_name}'")
        p = packets.get(op_name)
        if p is None:
            p = packets[op_name] = OpOverloadPacket(ns, op_name)
        return p

    def __dir__(self):
        pre = f"{self.name}::"
        return sorted(k[len(pre):] for k in DEFS if k.startswith(pre))


NAMESPACES = {}


def namespace(name):
    """torch.ops.<name> (made on first use, as torch's)."""
    ns = NAMESPACES.get(name)
    if ns is None:
        ns = NAMESPACES[name] = _OpNamespace(name)
    return ns


def ops_getattr(name):
    """`torch.ops.<name>` (eagergrad.ops's module __getattr__): the namespace of a
    Library; torch's own namespaces (aten, prims, ...) are not implemented."""
    ns = NAMESPACES.get(name)
    if ns is not None:
        return ns
    if name in _BUILTIN_NS or name in ("load_library", "import_module", "loaded_libraries"):
        raise missing(f"torch.ops.{name}")
    raise AttributeError(f"module 'eagergrad.ops' has no attribute '{name}'")


def overload_of(op):
    """The OpOverload object of an _Operator."""
    ns, name = op.schema.name.split("::")
    return getattr(getattr(namespace(ns), name), op.schema.overload_name or "default")


# ---- calling --------------------------------------------------------------------------------
def call(op, args, kwargs):
    return dispatch(op, bind(op.schema, args, kwargs))


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, list):
            yield from (x for x in v if isinstance(x, Tensor))


def dispatch(op, values):
    """Run operator `op` on its bound argument values (from the autograd layer down)."""
    has_tensor = any(True for _ in _tensors(values))
    if has_tensor and not STATE.inference:
        k = op.kernel("AutogradCPU") or op.kernel("Autograd")
        if k is not None:
            return run(op, k, values)
        if _is_fallthrough(op, "AutogradCPU") or _is_fallthrough(op, "Autograd"):
            return backend(op, values, True)
        ci = op.kernel("CompositeImplicitAutograd")
        if ci is not None and op.kernel("CPU") is None and \
                op.kernel("CompositeExplicitAutograd") is None:
            return run(op, ci, values)
        return _fallback(op, values)
    return backend(op, values, has_tensor)


def _is_fallthrough(op, key):
    stack = KERNELS.get((op.qualname, key))
    return bool(stack) and stack[-1][1] is fallthrough_kernel


def run(op, kernel, values):
    args, kwargs = kernel_args(op.schema, values)
    return returned(op, kernel(*args, **kwargs))


def backend(op, values, has_tensor=None, key=None):
    """The layers below autograd: custom_op's version bumps, then the backend kernel
    (`key`'s, when a BackendSelect kernel redispatches)."""
    if has_tensor is None:
        has_tensor = any(True for _ in _tensors(values))
    if op.mutation_bump:
        for a, v in zip(op.schema.arguments, values):
            if a.is_write:
                for t in _tensors([v]):
                    t._version_counter.version += 1
    if key is not None:
        k = op.kernel(key) or op.kernel("CompositeExplicitAutograd") or \
            op.kernel("CompositeImplicitAutograd")
    elif has_tensor:
        k = op.kernel("CPU") or op.kernel("CompositeExplicitAutograd") or \
            op.kernel("CompositeImplicitAutograd")
    else:
        k = op.kernel("BackendSelect") or op.kernel("CompositeExplicitAutograd") or \
            op.kernel("CompositeImplicitAutograd")
    if k is None:
        keys = sorted({kk for (q, kk), s in KERNELS.items() if q == op.qualname and s})
        if not has_tensor and key is None:
            raise NotImplementedError(
                "There were no tensor arguments to this function (e.g., you passed an empty "
                "list of Tensors), but no fallback function is registered for schema "
                f"{op.schema.name}.  This usually means that this function requires a "
                "non-empty list of Tensors, or that you (the operator writer) forgot to "
                f"register a fallback function.  Available functions are [{', '.join(keys)}]")
        raise NotImplementedError(
            f"Could not run '{op.schema.name}' with arguments from the '{key or 'CPU'}' "
            "backend. This could be because the operator doesn't exist for this backend, or "
            "was omitted during the selective/custom build process (if using custom build). "
            "If you are a Facebook employee using PyTorch on mobile, please visit "
            "https://fburl.com/ptmfixes for possible resolutions. "
            f"'{op.schema.name}' is only available for these backends: [{', '.join(keys)}].")
    return run(op, k, values)


def returned(op, out):
    """A kernel's result as the caller receives it (torch converts it to the schema's
    returns and back, with these errors): None for no returns, a tuple for several."""
    rets = op.schema.returns
    if not rets:
        if out is not None:
            raise RuntimeError(f"Expected PythonKernelHolder for {op.schema.name} to return "
                               "None but it returned something else instead.")
        return None
    if len(rets) == 1:
        return _returned_one(rets[0], out)
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"Object of type '{type(out).__name__}' is not an instance of "
                        "'sequence'")
    if len(out) != len(rets):
        raise RuntimeError(f"Expected {len(rets)} return values from the kernel of "
                           f"{op.schema.name}, got {len(out)}")
    return tuple(_returned_one(r, o) for r, o in zip(rets, out))


def _cast_error(v):
    return RuntimeError(f"Unable to cast Python instance of type {type(v)} to C++ type '?' "
                        "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for "
                        "details)")


def _returned_one(ret, out):
    t = ret.type
    if out is None and (t.base == "Tensor" and not t.is_list or t.optional):
        return None
    if t.base == "Tensor" and not t.is_list:
        if not isinstance(out, Tensor):
            raise RuntimeError(f"Unable to cast {out} to Tensor")
        return out
    if t.is_list:
        if not isinstance(out, (list, tuple)):
            raise _cast_error(out)
        try:
            return [None if x is None and t.elem_optional else _convert(t.base, x)
                    for x in out]
        except _Mismatch:
            raise _cast_error(out) from None
    if t.base == "Scalar" and isinstance(out, Tensor):
        raise RuntimeError(f"Cannot cast {out} to number")
    if t.base in ("int", "SymInt", "float", "bool") and isinstance(out, Tensor):
        raise _cast_error(out)
    if t.base in ("int", "SymInt") and isinstance(out, float):
        raise _cast_error(out)
    try:
        return _convert(t.base, out)
    except _Mismatch:
        raise _cast_error(out) from None


# ---- NOTE [autograd fallback] ---------------------------------------------------------------
def _not_implemented_warning(op_name):
    warnings.warn(
        f"{op_name}: an autograd kernel was not registered to the Autograd key(s) but we are "
        "trying to backprop through it. This may lead to silently incorrect behavior. This "
        "behavior is deprecated and will be removed in a future version of PyTorch. If your "
        "operator is differentiable, please ensure you have registered an autograd kernel to "
        "the correct Autograd key (e.g. DispatchKey::Autograd, "
        "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or "
        "to squash this warning and use the previous behavior, please register "
        "torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.", UserWarning,
        stacklevel=2)


class WarnNotImplemented(Node):
    """torch::autograd::WarnNotImplemented: warns, and gives no gradient."""

    __slots__ = ("_op_name",)

    def name(self):
        return "torch::autograd::WarnNotImplemented"

    def apply(self, grads):
        _not_implemented_warning(self._op_name)
        return [None] * len(self._next)


def _fallback(op, values):
    tensors = list(_tensors(values))
    any_rg = FALLBACK_MODE[0] == "warn" and STATE.grad and any(t.requires_grad for t in tensors)
    out = backend(op, values, True)
    if not any_rg:
        return out
    name = op.schema.name
    node = WarnNotImplemented(tuple(t._edge() if t.requires_grad else None for t in tensors))
    node._op_name = name
    outs = out if len(op.schema.returns) > 1 else (out,)
    meta = []
    for r, o in zip(op.schema.returns, outs):
        for t in _tensors([o]):
            if not t.dtype.is_differentiable:
                continue
            if t.requires_grad:
                t.register_hook(lambda g: _not_implemented_warning(name))
                if t._base is not None and r.is_write and t._base.requires_grad:
                    t._base.register_hook(lambda g: _not_implemented_warning(name))
                continue
            if not r.is_write:
                t._requires_grad, t._grad_fn, t._out_nr = True, node, len(meta)
                meta.append((t._shape, t.dtype))
    node._meta_in = tuple(meta)
    return out


_ops.OP_NAMESPACE[0] = ops_getattr
