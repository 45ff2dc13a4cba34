"""What a compiled call can see of the Python world (NOTE [the heap of a call]): a walk
from its roots that gives the call's guard key, its state (the storages of every tensor
reached) and the slots tensors sit in.

NOTE [the heap of a call]: a compiled function does not run its Python on a replay, so
everything that Python could have read must be the same as when it was traced, and
everything it changed must be changed again. The walk starts at the roots (the arguments,
the function or module, the globals its code names, its closure cells, the optimizers and
schedulers reached from them) and goes through containers (dict, list, tuple, set), the
`__dict__` of objects (modules, optimizers, user objects), functions (their closure
cells, defaults and the globals their code names) and tensors (their .grad, hooks and
base). It emits a key: a token per thing reached, Python values by value (floats by
their hex, so -0.0 and NaN key right), tensors by their metadata (type, shape, dtype,
requires_grad, leaf-ness, view-ness) and their storage's and version counter's place in
the walk, objects by their place in the walk (the first visit numbers an object; a
second visit emits that number), everything else (modules, classes, builtins) by
identity. Equal keys mean equal Python-visible structure, up to which tensor objects sit
where: a tensor made by the call in a slot where the previous call's tensor sat keys the
same, and the replay makes a new one there (_step.py).

Floats of an optimizer's param_groups are keyed by type only when the optimizer's own
step is what reads them (`lift`): they are inputs of the compiled program, recomputed at
every call (_step.py, NOTE [lifted hyperparameters]).

The walk is bounded (MAX_OBJECTS): a call reaching more is not compiled (a graph break
naming the bound)."""
import collections
import functools
import hashlib
import os
import types

import numpy as np

from .._storage import Storage  # noqa: F401  (_step.py reads it from here)
from ..nn import Module
from ..optim.optimizer import Optimizer, ParamGroup
from ..tensor import Tensor

MAX_OBJECTS = 20000

_ATOMS = frozenset((type(None), bool, int, str, bytes, type(Ellipsis), type(NotImplemented)))
_EMPTY = frozenset((dict, collections.OrderedDict, list, tuple, set))
# code whose globals the walk does not follow (eagergrad's, its dependencies', the
# standard library's): what it reads is either eagergrad's own state or not user state
_LIBRARY = ("eagergrad", "jax", "jaxlib", "numpy", "torch", "functools", "builtins",
            "collections", "contextlib", "typing", "abc", "weakref", "threading")


class TooLarge(Exception):
    """The walk reached more than MAX_OBJECTS objects."""


class Walk:
    """One walk: `key` (tuple of tokens), `objs` (the objects numbered, in order),
    `storages` and `counters` (in order of first reach), `slots` ((container number,
    kind, slot key, tensor number or None) for every slot holding a tensor),
    `lifted` ((group dict, key) of the floats keyed by type only)."""

    __slots__ = ("key", "objs", "ids", "storages", "sids", "counters", "vids", "slots",
                 "lifted", "paths", "_path", "_lift", "n_roots", "versions", "emit",
                 "no_lift", "lifted_nums", "aliased")

    def __init__(self, lift=True, paths=False, no_lift=frozenset()):
        self.key, self.objs, self.ids = [], [], {}
        self.storages, self.sids, self.counters, self.vids = [], {}, [], {}
        self.slots, self.lifted = [], []
        self.paths = [] if paths else None
        self._path = []
        self._lift = lift
        self.emit = self._emit_with_path if paths else self.key.append
        self.no_lift, self.lifted_nums, self.aliased = no_lift, set(), set()

    # ---- tokens ------------------------------------------------------------------
    def _emit_with_path(self, token):
        self.key.append(token)
        self.paths.append("".join(self._path))

    def number(self, obj):
        """obj's number, True when reached for the first time now."""
        n = self.ids.get(id(obj))
        if n is not None:
            self.emit(("@", n))
            if n in self.lifted_nums:  # (a lifted group reached another way too)
                self.aliased.add(id(obj))
            return n, False
        n = len(self.objs)
        if n >= MAX_OBJECTS:
            raise TooLarge
        self.ids[id(obj)] = n
        self.objs.append(obj)
        return n, True

    # ---- the walk ----------------------------------------------------------------
    def visit(self, x):
        cls = x.__class__
        if cls in _ATOMS:
            self.emit((cls, x))
        elif cls is float:
            self.emit((float, x.hex()))
        elif cls is complex:
            self.emit((complex, x.real.hex(), x.imag.hex()))
        elif isinstance(x, Tensor):
            self.tensor(x)
        elif cls is tuple or cls is list or cls is set or cls is frozenset:
            self.sequence(x, cls)
        elif isinstance(x, dict):
            self.mapping(x)
        elif isinstance(x, types.ModuleType):
            self.emit(("id", id(x)))
        elif isinstance(x, type):
            self.cls(x)
        elif cls is types.FunctionType:
            self.function(x)
        elif cls is types.BuiltinMethodType and not isinstance(x.__self__, types.ModuleType):
            n, new = self.number(x)  # (a bound C method: list.append, its list)
            if new:
                self.emit(("cmethod", n, x.__name__))
                self.visit(x.__self__)
        elif cls is types.MethodType:
            n, new = self.number(x)
            if new:
                self.emit(("method", n))
                self.visit(x.__self__)
                self.visit(x.__func__)
        elif cls is functools.partial:
            n, new = self.number(x)
            if new:
                self.emit(("partial", n))
                self.visit(x.func)
                self.visit(x.args)
                self.visit(x.keywords)
        elif isinstance(x, np.ndarray):  # (by value)
            self.emit(("ndarray", x.shape, x.dtype.str, array_bytes(x)))
        elif isinstance(x, (np.random.Generator, np.random.RandomState)):  # (by state)
            self.emit(("nprng", id(x), rng_state(x)))
        elif cls is collections.deque:
            self.sequence(x, cls)
        elif isinstance(x, tuple):  # (a namedtuple, torch.Size)
            self.sequence(x, cls)
        elif getattr(cls, "_walk_opaque", False):  # (a compiled function: its caches)
            self.emit(("id", id(x)))
        elif isinstance(x, (Module, Optimizer)) or _plain_object(x):
            n, new = self.number(x)
            if new:
                self.emit(("obj", n))
                self.cls(cls)
                self.mapping(x.__dict__, lift=self._lift and isinstance(x, Optimizer))
        elif not _library_module(cls.__module__) and _slot_names(cls):
            n, new = self.number(x)  # (a user object with __slots__: its slots' values)
            if new:
                self.emit(("obj", n))
                self.cls(cls)
                for name in _slot_names(cls):
                    self.emit(("slot", name))
                    self.visit(getattr(x, name, _UNSET))
        else:
            self.emit(("id", id(x)))

    def cls(self, c):
        """A class: by identity, and a user class's own attributes too (class-level state
        its methods may read or change), its bases' likewise."""
        n, new = self.number(c)
        if not new:
            return
        self.emit(("cls", id(c)))
        if c.__module__ in _LIBRARY_MODULES or _library_module(c.__module__):
            return
        for k, v in c.__dict__.items():
            if k.startswith("__") or isinstance(v, _METHODS):
                continue
            self.emit(("attr", k))
            self.visit(v)
        for b in c.__bases__:
            self.cls(b)

    def sequence(self, x, cls):
        n, new = self.number(x)
        if not new:
            return
        self.emit((cls, n, len(x)))
        for i, v in enumerate(x):
            self.slot(n, i, v)

    def mapping(self, d, lift=False):
        n, new = self.number(d)
        if not new:
            return
        emit = self.emit
        emit((d.__class__, n, len(d)))
        for k, v in d.items():
            vc = v.__class__
            if k.__class__ is str:  # (the common case, a token for key and value at once)
                if vc in _ATOMS:
                    if v is None:
                        self.slots.append((n, k, None))
                    emit((k, vc, v))
                    continue
                if vc is float:
                    emit((k, float, v.hex()))
                    continue
                if vc in _EMPTY and not v:  # (empty: holds nothing, never numbered)
                    emit((k, vc, 0))
                    continue
                emit((str, k))
            else:
                self.visit(k)
            if lift and k == "param_groups" and vc is list:
                self.groups(v)
            else:
                self.slot(n, k, v)

    def groups(self, groups):
        """An optimizer's param_groups, their floats keyed by type (lifted)."""
        n, new = self.number(groups)
        if not new:
            return
        self.emit((list, n, len(groups)))
        for g in groups:
            if (g.__class__ is not ParamGroup and g.__class__ is not dict) or \
                    id(g) in self.no_lift:  # (reached elsewhere too: keyed by value)
                self.visit(g)
                continue
            gn, new = self.number(g)
            if not new:
                self.aliased.add(id(g))
                continue
            self.lifted_nums.add(gn)
            self.emit((g.__class__, gn, len(g)))
            for k, v in dict.items(g):
                self.visit(k)
                if v.__class__ is float or (v.__class__ is tuple and v and
                                            all(e.__class__ is float for e in v)):
                    self.emit(("lifted", len(v) if v.__class__ is tuple else None))
                    self.lifted.append((g, k))
                else:
                    self.slot(gn, k, v)

    def slot(self, n, k, v):
        if self.paths is not None:
            self._path.append(f"[{k!r}]")
        if v is None:
            self.slots.append((n, k, None))
        elif isinstance(v, Tensor):
            self.slots.append((n, k, self.ids.get(id(v), len(self.objs))))
        self.visit(v)
        if self.paths is not None:
            self._path.pop()

    def tensor(self, t):
        n, new = self.number(t)
        if not new:
            return
        st = t._storage
        s = self.sids.get(id(st))
        if s is None:
            s = self.sids[id(st)] = len(self.storages)
            self.storages.append(st)
        vc = t._version_counter
        v = self.vids.get(id(vc))
        if v is None:
            v = self.vids[id(vc)] = len(self.counters)
            self.counters.append(vc)
        g = t._grad
        if g is None:  # (no .grad: one token for both)
            self.emit(("T", n, t.__class__, s, v, t._shape, t.dtype, t._requires_grad,
                       t._grad_fn is None, t._vchain is None, t._offset, t._retains_grad,
                       None))
            self.slots.append((n, "grad", None))
        else:
            self.emit(("T", n, t.__class__, s, v, t._shape, t.dtype, t._requires_grad,
                       t._grad_fn is None, t._vchain is None, t._offset, t._retains_grad))
            self.slot(n, "grad", g)
        if t.__class__ is not Tensor and hasattr(t, "_guard_layout"):
            self.emit(t._guard_layout())  # (a DTensor's mesh and placements)
        if t._hooks:
            self.visit(t._hooks)
        if t._post_acc_hooks:
            self.visit(t._post_acc_hooks)
        if t._base is not None:
            self.visit(t._base)

    def function(self, f):
        n, new = self.number(f)
        if not new:
            return
        self.emit(("fn", n, f.__code__))
        if f.__closure__:
            for cell in f.__closure__:
                try:
                    v = cell.cell_contents
                except ValueError:  # (an empty cell)
                    self.emit(("empty",))
                    continue
                self.visit(v)
        if f.__defaults__:
            self.visit(f.__defaults__)
        if f.__kwdefaults__:
            self.visit(f.__kwdefaults__)
        if is_library(f.__code__):
            return
        g = f.__globals__
        names = code_names(f.__code__)
        for name in names:
            if name in g:
                if self.paths is not None:
                    self._path.append(f" global {name}")
                self.emit(("global", name))
                v = g[name]
                self.visit(v)
                if v.__class__ is types.ModuleType and not _library_module(v.__name__):
                    # a user module (a config): its attributes the code may name
                    d = v.__dict__
                    for a in names:
                        if a in d:
                            self.emit(("modattr", a))
                            self.visit(d[a])
                if self.paths is not None:
                    self._path.pop()


def array_bytes(x):
    """A numpy array's value as a key: its bytes, a digest of large ones."""
    return x.tobytes() if x.nbytes <= 1024 else \
        hashlib.blake2b(np.ascontiguousarray(x).data).digest()


def rng_state(x):
    """A numpy random generator's state as a key."""
    bg = x.bit_generator if isinstance(x, np.random.Generator) else x._bit_generator
    return repr(bg.state)


def _library_dirs():
    import sysconfig

    import jax
    dirs = [os.path.dirname(os.path.dirname(__file__)), os.path.dirname(jax.__file__),
            os.path.dirname(np.__file__)]
    return (tuple(os.path.join(os.path.realpath(d), "") for d in dirs),
            os.path.join(os.path.realpath(sysconfig.get_paths()["stdlib"]), ""))


_LIBRARY_DIRS, _STDLIB = _library_dirs()


@functools.lru_cache(maxsize=4096)
def is_library(code):
    """Whether the code is eagergrad's, a dependency's or the standard library's: what
    it reads is eagergrad's own state or no user state, so the walk does not follow its
    globals."""
    path = os.path.realpath(code.co_filename)
    return path.startswith(_LIBRARY_DIRS) or (path.startswith(_STDLIB) and
                                              "site-packages" not in path)


_METHODS = (staticmethod, classmethod, property,
            types.MethodDescriptorType, types.WrapperDescriptorType,
            types.GetSetDescriptorType, types.MemberDescriptorType)
_LIBRARY_MODULES = {"builtins", "abc", "typing", "collections", "enum"}


@functools.lru_cache(maxsize=4096)
def _library_module(name):
    import sys
    root = name.split(".")[0]
    if root in ("eagergrad", "jax", "jaxlib", "numpy"):
        return True
    mod = sys.modules.get(name)
    f = getattr(mod, "__file__", None)
    return f is None or (os.path.realpath(f).startswith(_STDLIB) and "site-packages" not in f)


_UNSET = object()


@functools.lru_cache(maxsize=1024)
def _slot_names(cls):
    names = []
    for c in cls.__mro__:
        sl = c.__dict__.get("__slots__", ())
        names += [sl] if isinstance(sl, str) else [n for n in sl if n not in
                                                   ("__dict__", "__weakref__")]
    return tuple(names)


def _plain_object(x):
    """An object whose __dict__ is its state (a user's, or eagergrad's own: a scheduler,
    a generator), not a module or a class."""
    return hasattr(x, "__dict__")


@functools.lru_cache(maxsize=4096)
def code_names(code):
    """The global names a code object (and the code nested in it) may read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(code_names(c))
    return tuple(sorted(names))


def walk(roots, extra=(), lift=True, paths=False, no_lift=frozenset()):
    """The Walk of `roots` (a list of (name, object)), then of `extra` (the key's first
    `n_roots` tokens are the roots' own); `versions` the counters' versions. A param
    group reached through its optimizer and another way too is keyed by value (a walk
    again)."""
    w = Walk(lift, paths, no_lift)
    for i, (name, obj) in enumerate((*roots, *extra)):
        if i == len(roots):
            w.n_roots = len(w.key)
        if paths:
            w._path.append(name)
        w.emit(("root", name))
        w.visit(obj)
        if paths:
            w._path.pop()
    if not extra:
        w.n_roots = len(w.key)
    if w.aliased:
        return walk(roots, extra, lift, paths, no_lift | w.aliased)
    w.key = tuple(w.key)
    w.versions = [vc.version for vc in w.counters]
    return w


def first_difference(a, b):
    """Where two walks' keys first differ: (path, token in a, token in b)."""
    for i, (x, y) in enumerate(zip(a.key, b.key)):
        if x != y:
            return a.paths[i] if a.paths else "", x, y
    i = min(len(a.key), len(b.key))
    return (a.paths[i] if a.paths and i < len(a.paths) else ""), \
        a.key[i] if i < len(a.key) else None, b.key[i] if i < len(b.key) else None


