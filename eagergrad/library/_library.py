"""torch.library.Library: a block of registrations (operator definitions, kernels, fake
impls) that lasts as long as the object."""
import contextlib
import re
import sys
import weakref

from . import _dispatch
from ._dispatch import OpOverload
from ._schema import Tag, parse_schema

_impls = set()
_defs = set()
_reserved_namespaces = ["prim"]
_DEF_NAMESPACES = {}  # namespace -> (file, line) of the live kind="DEF" Library
NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


def _validate_out_schema(schema):
    mutable = [a for a in schema.arguments if a.is_write]
    if not mutable:
        raise ValueError("Schema tagged with torch.Tag.out must have at least one mutable "
                         f"argument. Got: {schema}")
    positional = [a.name for a in mutable if not a.kwarg_only]
    if positional:
        raise ValueError("Schema tagged with torch.Tag.out requires all mutable arguments to "
                         "be keyword-only (after the *). Found mutable positional args: "
                         f"{positional}. Got: {schema}")
    bad = [a.name for a in mutable if not a.type.is_tensor()]
    if bad:
        raise ValueError("Schema tagged with torch.Tag.out only supports Tensor mutable "
                         f"arguments. Found unsupported mutable args: {bad}. Got: {schema}")
    if len(schema.returns) != len(mutable):
        raise ValueError("Schema tagged with torch.Tag.out must return all mutable arguments "
                         f"(got {len(mutable)} mutable args but {len(schema.returns)} "
                         f"returns). Got: {schema}")
    for i, (r, a) in enumerate(zip(schema.returns, mutable)):
        if r.alias_info is None:
            raise ValueError(f"Return {i} of schema tagged with torch.Tag.out must alias "
                             f"mutable arg '{a.name}'. Got: {schema}")
        if not r.alias_info.is_write:
            raise ValueError(f"Return {i} of schema tagged with torch.Tag.out must be a mutable "
                             f"alias (e.g., Tensor(a!), not Tensor(a)) of arg '{a.name}'. "
                             f"Got: {schema}")
        if r.alias_info.before_set != a.alias_info.before_set:
            raise ValueError(f"Return {i} of schema tagged with torch.Tag.out must alias "
                             f"mutable arg '{a.name}' (return aliases "
                             f"{r.alias_info.before_set} but arg aliases "
                             f"{a.alias_info.before_set}). Got: {schema}")


def _validate_inplace_schema(schema):
    args = schema.arguments
    pre = "Schema tagged with torch.Tag.inplace"
    if not args or args[0].kwarg_only:
        raise ValueError(f"{pre} must have at least one positional argument. Got: {schema}")
    first = args[0]
    if not first.is_write:
        raise ValueError(f"{pre} requires the first positional argument to be mutable (e.g., "
                         f"Tensor(a!)). Got: {schema}")
    if not first.type.is_tensor():
        raise ValueError(f"{pre} requires the first positional argument to be a Tensor. Got "
                         f"type '{first.type}' for arg '{first.name}'. Got: {schema}")
    if len(schema.returns) != 1:
        raise ValueError(f"{pre} must return exactly one value (the first argument). Got "
                         f"{len(schema.returns)} returns. Got: {schema}")
    r = schema.returns[0]
    if not r.type.is_tensor():
        raise ValueError(f"{pre} must return the first mutable argument (return must be a "
                         f"Tensor, got type '{r.type}'). Got: {schema}")
    if r.alias_info is None:
        raise ValueError(f"{pre} must return the first mutable argument (return must alias "
                         f"the first argument). Got: {schema}")
    if not r.alias_info.is_write:
        raise ValueError(f"{pre} must return the first mutable argument (return must be a "
                         f"mutable alias, e.g., Tensor(a!)). Got: {schema}")
    if r.alias_info.before_set != first.alias_info.before_set:
        raise ValueError(f"{pre} must return the first mutable argument (return aliases "
                         f"{r.alias_info.before_set} but first arg aliases "
                         f"{first.alias_info.before_set}). Got: {schema}")
    other = [a.name for a in args[1:] if a.is_write]
    if other:
        raise ValueError(f"{pre} must only mutate the first positional argument. Found "
                         f"additional mutable args: {other}. Got: {schema}")


def _undo_all(undo):
    while undo:
        undo.pop()()


class Library:
    """A registration block (torch.library.Library): `kind` "DEF" (the namespace's one
    definition block), "FRAGMENT" (one of several) or "IMPL" (kernels only). Its
    registrations last as long as the object (or until `_destroy()`).

    >>> import eagergrad as torch
    >>> lib = torch.library.Library("doclib", "FRAGMENT")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'twice'
    >>> lib.impl("twice", lambda x: x * 2, "CPU")
    >>> torch.ops.doclib.twice(torch.ones(2))
    tensor([2., 2.])
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             "with another name.")
        f = sys._getframe(1)
        self._where = f"{f.f_code.co_filename}:{f.f_lineno}"
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration "
                    f"of TORCH_LIBRARY was registered at {_DEF_NAMESPACES[ns]}; latest "
                    f"registration was registered at {self._where}")
        if dispatch_key:
            _dispatch.check_key(dispatch_key)
        self.m = self._undo = []
        _dispatch.namespace(ns)
        if kind == "DEF":
            _DEF_NAMESPACES[ns] = self._where
            self._undo.append(lambda: _DEF_NAMESPACES.pop(ns, None))
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs, self._op_impls = set(), set()
        self._registration_handles = []
        weakref.finalize(self, _del_library, self._undo, self._op_impls, self._op_defs)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def _block(self):
        return "TORCH_LIBRARY_IMPL" if self.kind == "IMPL" else "TORCH_LIBRARY"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator from its schema ("name(Tensor x) -> Tensor"); returns its
        name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        if isinstance(tags, Tag):
            tags = (tags,)
        parsed = parse_schema(schema)
        name = parsed.name
        if self.kind == "IMPL":
            raise RuntimeError(
                f'def("{name}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL '
                "block.  All def()s should be placed in the (unique) TORCH_LIBRARY block for "
                "their namespace.  (Error occurred while processing TORCH_LIBRARY_IMPL block at "
                f"{self._where})")
        if "::" in name:
            ns, name = name.split("::")
            if ns != self.ns:
                raise RuntimeError(
                    f"Explicitly provided namespace ({ns}) in schema string does not match "
                    f"namespace of enclosing TORCH_LIBRARY block ({self.ns}).  Move this "
                    "definition to the (unique) TORCH_LIBRARY block corresponding to this "
                    "namespace (and consider deleting the namespace from your schema string.)  "
                    f"(Error occurred while processing TORCH_LIBRARY block at {self._where})")
        if Tag.out in tags:
            _validate_out_schema(parsed)
        if Tag.inplace in tags:
            _validate_inplace_schema(parsed)
        qual = f"{self.ns}::{name}"
        parsed.name = qual
        ops = _dispatch.DEFS.setdefault(qual, {})
        if parsed.overload_name in ops:
            old = ops[parsed.overload_name]
            raise RuntimeError(
                f"Tried to register an operator ({parsed}) with the same name and overload name "
                "multiple times. Each overload's schema should only be registered with a single "
                f"call to def(). Duplicate registration: registered at {self._where}. Original "
                f"registration: registered at {old.where}")
        op = _dispatch._Operator(parsed, tags, self._where)
        lib_ns = self.ns
        ops[parsed.overload_name] = op
        qualname = qual + (f".{parsed.overload_name}" if parsed.overload_name else "")

        def undo():
            d = _dispatch.DEFS.get(qual)
            if d is not None and d.get(parsed.overload_name) is op:
                del d[parsed.overload_name]
                if not d:
                    del _dispatch.DEFS[qual]
                    ns_obj = _dispatch.NAMESPACES.get(lib_ns)
                    if ns_obj is not None:
                        ns_obj._packets.pop(name, None)
        self._undo.append(undo)
        self._op_defs.add(qualname)
        _defs.add(qualname)
        return name

    def _resolve_op_name(self, op_name, api_name):
        if isinstance(op_name, str):
            return op_name
        if isinstance(op_name, OpOverload):
            s = op_name._schema
            return s.name + (f".{s.overload_name}" if s.overload_name else "")
        raise RuntimeError(f"{api_name} should be passed either a name or an OpOverload object "
                           f"as the first argument, got {type(op_name)}")

    def _qualname(self, name):
        if "::" in name:
            ns, rest = name.split("::")
            if ns != self.ns:
                raise RuntimeError(
                    f"Explicitly provided namespace ({ns}) in operator name does not match "
                    f"namespace of enclosing {self._block()} block ({self.ns}).  Move this "
                    "definition to the TORCH_LIBRARY_IMPL block corresponding to this namespace "
                    "(and consider deleting the namespace from your schema string.)  (Error "
                    f"occurred while processing {self._block()} block at {self._where})")
            name = rest
        return f"{self.ns}::{name}"

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register `fn` as the kernel of operator `op_name` at `dispatch_key` ("CPU",
        "CompositeImplicitAutograd", "Autograd", ...; "": the library's key, else
        CompositeImplicitAutograd)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        name = self._resolve_op_name(op_name, "impl")
        key = self.ns + "/" + name.split("::")[-1] + "/" + dispatch_key
        if not allow_override and key in _impls:
            raise RuntimeError(
                "This is not allowed since there's already a kernel registered from python "
                f"overriding {name.split('::')[-1]}'s behavior for {dispatch_key} dispatch key "
                f"and {self.ns} namespace.")
        qual = self._qualname(name)
        real_key = _dispatch.check_key(dispatch_key or "CompositeImplicitAutograd")
        if dispatch_key == "Meta" and \
                _dispatch.KERNELS.get((qual, "CompositeImplicitAutograd")):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator '{name}', "
                "because it has a CompositeImplicitAutograd kernel in core. Instead we should "
                "let the operator decompose, and ensure that we have meta kernels for the base "
                "ops that it decomposes into.")
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        if with_keyset:
            raise NotImplementedError("eagergrad does not implement torch.library.Library.impl's"
                                      " with_keyset=True yet")
        self._add_kernel(qual, real_key, fn)
        _impls.add(key)
        self._op_impls.add(key)

    def _add_kernel(self, qual, key, fn):
        entry = (object(), fn)
        stack = _dispatch.KERNELS.setdefault((qual, key), [])
        stack.append(entry)

        def undo():
            s = _dispatch.KERNELS.get((qual, key))
            if s is not None and entry in s:
                s.remove(entry)
                if not s:
                    del _dispatch.KERNELS[(qual, key)]
        self._undo.append(undo)

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=True):
        qual = self._qualname(op_name)
        self._add_kernel(qual, "Fake", fn)

    def _register_torch_dispatch_rule(self, op_name, torch_dispatch_class, fn):
        raise NotImplementedError("eagergrad does not implement torch.library's "
                                  "register_torch_dispatch yet (no __torch_dispatch__)")

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("eagergrad does not implement torch.library.Library.fallback "
                                  "yet")

    def _destroy(self):
        if self.m is not None:
            _undo_all(self._undo)
        self.m = None
        global _impls
        _impls -= self._op_impls
        _defs.difference_update(self._op_defs)


Library.__module__ = "eagergrad.library"


def _del_library(undo, op_impls, op_defs):
    _impls.difference_update(op_impls)
    _defs.difference_update(op_defs)
    _undo_all(undo)


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()
