"""A compiled call's guard as straight-line Python (NOTE [written guards]).

NOTE [written guards]: the walk of _heap.py is the guard of a compiled call, but it is a
general traversal: a dispatch on every value's class, a token tuple per thing reached, a
dict of ids. For an entry, `write` follows the same walk once over the heap as it is and
writes a function that checks, in order, exactly what the walk would key on that heap
shape: every value's class first (so no user `__eq__` runs), atoms and floats by exact
value (floats equal and, for zeros and NaN, equal hex), tensors' metadata, dicts' and
sequences' lengths and keys by unpacking, functions' code, the globals their code names
(present or absent), classes and modules by identity. Objects the walk numbers are bound
to locals; a place where the walk met an object again checks identity with that local,
and at the end all numbered objects, storages and version counters must be distinct (the
walk would have met one again and keyed it so). The function returns what a replay needs
(the objects, storages, counters and lifted hyperparameters, in walk order) or None: a
call it refuses takes the walk, so a stricter check (a NaN, a class dict's order) only
costs time. `write` checks its function against the walk on the heap it was written from,
and with CHECK set every call that passes is checked against a full walk too (the tests
set it)."""
import functools
import types

import numpy as np

from ..nn import Module
from ..optim.optimizer import Optimizer, ParamGroup
from ..tensor import Tensor
from . import _heap

CHECK = [False]  # check every passing guard against a full walk (tests)


class Seen:
    """What a passing guard returns, in the walk's order (the attributes a replay reads
    of a Walk)."""
    __slots__ = ("objs", "storages", "counters", "lifted")

    def __init__(self, objs, storages, counters, lifted):
        self.objs, self.storages, self.counters, self.lifted = \
            objs, storages, counters, lifted


def _no_cell(cell):
    try:
        _ = cell.cell_contents
    except ValueError:
        return True
    return False


class _Writer:
    """Follows the walk of _heap.Walk over one heap, writing the checks its tokens stand
    for (a method per method of Walk)."""

    def __init__(self, no_lift):
        self.lines, self.consts, self.cids = [], {}, {}
        self.no_lift = no_lift
        self.n = 0
        self.ids, self.objs, self.keep = {}, [], []  # numbered objects: their locals
        self.sids, self.storages = {}, []
        self.vids, self.counters = {}, []
        self.lifted = []

    # ---- writing -----------------------------------------------------------------
    def var(self):
        self.n += 1
        return f"x{self.n}"

    def const(self, obj):
        name = self.cids.get(id(obj))
        if name is None:
            name = self.cids[id(obj)] = f"k{len(self.consts)}"
            self.consts[name] = obj
            self.keep.append(obj)
        return name

    def check(self, cond):
        self.lines.append(f"if {cond}: return")

    def let(self, expr):
        v = self.var()
        self.lines.append(f"{v} = {expr}")
        return v

    def unpack(self, var, n, call=""):
        """Locals for the n items of var (an unpacking: a ValueError when there are not n,
        which the guard turns into a refusal)."""
        vs = [self.var() for _ in range(n)]
        self.lines.append(f"({', '.join(vs)},) = {call or var}")
        return vs

    def is_class(self, var, cls):
        self.check(f"{var}.__class__ is not {self.const(cls)}")

    def number(self, obj, var):
        """Like Walk.number: True when obj is reached for the first time."""
        n = self.ids.get(id(obj))
        if n is not None:
            if var != self.objs[n]:  # (a constant: a class met again is itself)
                self.check(f"{var} is not {self.objs[n]}")
            return False
        self.ids[id(obj)] = len(self.objs)
        self.objs.append(var)
        self.keep.append(obj)
        return True

    # ---- the walk ----------------------------------------------------------------
    def visit(self, x, var):
        cls = x.__class__
        if cls in _heap._ATOMS:
            self.atom(x, var)
        elif cls is float:
            self.float(x, var)
        elif cls is complex:
            self.is_class(var, complex)
            self.check(f"({var}.real.hex(), {var}.imag.hex()) != "
                       f"{self.const((x.real.hex(), x.imag.hex()))}")
        elif isinstance(x, Tensor):
            self.is_class(var, cls)
            self.tensor(x, var)
        elif cls in (tuple, list, set, frozenset):
            self.sequence(x, var, cls)
        elif isinstance(x, dict):
            self.mapping(x, var)
        elif isinstance(x, types.ModuleType):
            self.check(f"{var} is not {self.const(x)}")
        elif isinstance(x, type):
            self.check(f"{var} is not {self.const(x)}")
            self.cls(x)
        elif cls is types.FunctionType:
            self.function(x, var)
        elif cls is types.BuiltinMethodType and not isinstance(x.__self__, types.ModuleType):
            if self.number(x, var):
                self.is_class(var, cls)
                self.check(f"{var}.__name__ != {self.const(x.__name__)}")
                self.visit(x.__self__, self.let(f"{var}.__self__"))
        elif cls is types.MethodType:
            if self.number(x, var):
                self.is_class(var, cls)
                self.visit(x.__self__, self.let(f"{var}.__self__"))
                self.visit(x.__func__, self.let(f"{var}.__func__"))
        elif cls is functools.partial:
            if self.number(x, var):
                self.is_class(var, cls)
                self.visit(x.func, self.let(f"{var}.func"))
                self.visit(x.args, self.let(f"{var}.args"))
                self.visit(x.keywords, self.let(f"{var}.keywords"))
        elif isinstance(x, np.ndarray):
            self.is_class(var, cls)
            self.check(f"{var}.shape != {self.const(x.shape)} or {var}.dtype.str != "
                       f"{self.const(x.dtype.str)} or array_bytes({var}) != "
                       f"{self.const(_heap.array_bytes(x))}")
        elif isinstance(x, (np.random.Generator, np.random.RandomState)):
            self.check(f"{var} is not {self.const(x)} or rng_state({var}) != "
                       f"{self.const(_heap.rng_state(x))}")
        elif cls is __import__("collections").deque or isinstance(x, tuple):
            self.sequence(x, var, cls)
        elif getattr(cls, "_walk_opaque", False):
            self.check(f"{var} is not {self.const(x)}")
        elif isinstance(x, (Module, Optimizer)) or _heap._plain_object(x):
            if self.number(x, var):
                self.is_class(var, cls)
                self.cls(cls)
                self.mapping(x.__dict__, self.let(f"{var}.__dict__"),
                             lift=isinstance(x, Optimizer))
        elif not _heap._library_module(cls.__module__) and _heap._slot_names(cls):
            if self.number(x, var):
                self.is_class(var, cls)
                self.cls(cls)
                for name in _heap._slot_names(cls):
                    self.visit(getattr(x, name, _heap._UNSET),
                               self.let(f"getattr({var}, {name!r}, UNSET)"))
        else:
            self.check(f"{var} is not {self.const(x)}")

    def atom(self, x, var):
        if x is None or x.__class__ is bool or x is Ellipsis or x is NotImplemented:
            self.check(f"{var} is not {self.const(x)}")
        else:
            self.check(f"{var}.__class__ is not {self.const(x.__class__)} or "
                       f"{var} != {self.const(x)}")

    def float(self, x, var):
        if x == 0.0 or x != x:  # (signed zeros and NaN: by hex, as the walk keys them)
            self.check(f"{var}.__class__ is not float or {var}.hex() != {self.const(x.hex())}")
        else:
            self.check(f"{var}.__class__ is not float or {var} != {self.const(x)}")

    def cls(self, c):
        if not self.number(c, self.const(c)):
            return
        if c.__module__ in _heap._LIBRARY_MODULES or _heap._library_module(c.__module__):
            return
        k = self.const(c)
        d = self.let(f"{k}.__dict__")
        self.check(f"tuple({d}) != {self.const(tuple(c.__dict__))}")
        for name, v in c.__dict__.items():
            if name.startswith("__"):
                continue
            if isinstance(v, _heap._METHODS):
                self.check(f"not isinstance({d}[{name!r}], METHODS)")
                continue
            self.visit(v, self.let(f"{d}[{name!r}]"))
        self.check(f"{k}.__bases__ != {self.const(c.__bases__)}")
        for b in c.__bases__:
            self.cls(b)

    def sequence(self, x, var, cls):
        if not self.number(x, var):
            return
        self.is_class(var, cls)
        if not x:
            self.check(f"{var}")
            return
        for v, item in zip(self.unpack(var, len(x)), x):
            self.visit(item, v)

    def mapping(self, d, var, lift=False):
        if not self.number(d, var):
            return
        self.is_class(var, d.__class__)
        if not d:
            self.check(f"{var}")
            return
        if all(k.__class__ is str for k in d):  # (keys by equality: one comparison)
            self.check(f"tuple({var}) != {self.const(tuple(d))}")
            pairs = zip([None] * len(d), self.unpack(var, len(d), f"{var}.values()"))
        else:
            pairs = [self.unpack(pv, 2) for pv in self.unpack(var, len(d), f"{var}.items()")]
        for (kv, vv), (k, v) in zip(pairs, d.items()):
            vc = v.__class__
            if k.__class__ is str:
                if kv is not None:
                    self.check(f"{kv}.__class__ is not str or {kv} != {k!r}")
                if vc in _heap._ATOMS:
                    self.atom(v, vv)
                    continue
                if vc is float:
                    self.float(v, vv)
                    continue
                if vc in _heap._EMPTY and not v:
                    self.check(f"{vv}.__class__ is not {self.const(vc)} or {vv}")
                    continue
            else:
                self.visit(k, kv)
            if lift and k == "param_groups" and vc is list:
                self.groups(v, vv)
            else:
                self.visit(v, vv)

    def groups(self, groups, var):
        if not self.number(groups, var):
            return
        self.is_class(var, list)
        if not groups:
            self.check(var)
            return
        for gv, g in zip(self.unpack(var, len(groups)), groups):
            if (g.__class__ is not ParamGroup and g.__class__ is not dict) or \
                    id(g) in self.no_lift:
                self.visit(g, gv)
                continue
            if not self.number(g, gv):
                raise _Refuse  # (the walk keys an aliased group by value: no guard)
            self.is_class(gv, g.__class__)
            if not g:
                self.check(gv)
                continue
            pairs = self.unpack(gv, len(g), f"dict_items({gv})")
            for pv, (k, v) in zip(pairs, dict.items(g)):
                kv, vv = self.unpack(pv, 2)
                self.visit(k, kv)
                if v.__class__ is float:
                    self.check(f"{vv}.__class__ is not float")
                    self.lifted.append(f"({gv}, {kv})")
                elif v.__class__ is tuple and v and all(e.__class__ is float for e in v):
                    self.check(f"{vv}.__class__ is not tuple or len({vv}) != {len(v)} or "
                               f"any(e.__class__ is not float for e in {vv})")
                    self.lifted.append(f"({gv}, {kv})")
                else:
                    self.visit(v, vv)

    def tensor(self, t, var):
        if not self.number(t, var):
            return
        for ids, names, attr, obj in ((self.sids, self.storages, "_storage", t._storage),
                                      (self.vids, self.counters, "_version_counter",
                                       t._version_counter)):
            known = ids.get(id(obj))
            if known is None:
                ids[id(obj)] = self.let(f"{var}.{attr}")
                names.append(ids[id(obj)])
                self.keep.append(obj)
            else:
                self.check(f"{var}.{attr} is not {known}")
        c = self.const
        self.check(f"{var}._shape != {c(t._shape)} or {var}.dtype != {c(t.dtype)} or "
                   f"{var}._requires_grad != {c(t._requires_grad)} or "
                   f"({var}._grad_fn is None) is not {t._grad_fn is None} or "
                   f"({var}._vchain is None) is not {t._vchain is None} or "
                   f"{var}._offset != {c(t._offset)} or "
                   f"{var}._retains_grad != {c(t._retains_grad)}")
        if t.__class__ is not Tensor and hasattr(t, "_guard_layout"):  # (as _heap's walk)
            self.check(f"{var}._guard_layout() != {c(t._guard_layout())}")
        absent = []
        for attr, value, empty in (("_grad", t._grad, " is not None"),
                                   ("_hooks", t._hooks, ""),
                                   ("_post_acc_hooks", t._post_acc_hooks, ""),
                                   ("_base", t._base, " is not None")):
            if value is not None if empty else bool(value):
                self.visit(value, self.let(f"{var}.{attr}"))
            else:
                absent.append(f"{var}.{attr}{empty}")
        if absent:
            self.check(" or ".join(absent))

    def function(self, f, var):
        if not self.number(f, var):
            return
        self.is_class(var, types.FunctionType)
        self.check(f"{var}.__code__ is not {self.const(f.__code__)}")
        if f.__closure__:
            cells = self.let(f"{var}.__closure__")
            for i, cell in enumerate(f.__closure__):
                if _no_cell(cell):
                    self.check(f"not no_cell({cells}[{i}])")
                else:
                    self.visit(cell.cell_contents, self.let(f"{cells}[{i}].cell_contents"))
        for attr in ("__defaults__", "__kwdefaults__"):
            value = getattr(f, attr)
            if value:
                self.visit(value, self.let(f"{var}.{attr}"))
            else:
                self.check(f"{var}.{attr}")
        if _heap.is_library(f.__code__):
            return
        g, names = f.__globals__, _heap.code_names(f.__code__)
        gv = self.let(f"{var}.__globals__")
        for name in names:
            if name not in g:
                self.check(f"{name!r} in {gv}")
                continue
            v = g[name]
            self.visit(v, self.let(f"{gv}[{name!r}]"))
            if v.__class__ is types.ModuleType and not _heap._library_module(v.__name__):
                md = self.let(f"{self.const(v)}.__dict__")
                for a in names:
                    if a in v.__dict__:
                        self.visit(v.__dict__[a], self.let(f"{md}[{a!r}]"))
                    else:
                        self.check(f"{a!r} in {md}")


class _Refuse(Exception):
    """The heap has something the writer does not follow: no written guard."""


def _merged(lines, most=12):
    """Consecutive checks as one `if a or b or ...: return` (fewer statements to run)."""
    out, conds = [], []

    def flush():
        if conds:
            out.append("if " + " or ".join(f"({c})" for c in conds) + ": return")
            conds.clear()
    for line in lines:
        if line.startswith("if ") and line.endswith(": return"):
            conds.append(line[3:-len(": return")])
            if len(conds) == most:
                flush()
        else:
            flush()
            out.append(line)
    flush()
    return out


_GLOBALS = {"array_bytes": _heap.array_bytes, "rng_state": _heap.rng_state,
            "METHODS": _heap._METHODS, "UNSET": _heap._UNSET, "no_cell": _no_cell,
            "dict_items": dict.items, "Seen": Seen}


def write(roots, no_lift=frozenset()):
    """The guard of the heap reached from roots ((name, object) pairs, as _heap.walk's):
    guard(*root objects) -> Seen or None. None when it cannot be written."""
    w = _Writer(no_lift)
    params = []
    try:
        for name, obj in roots:
            params.append(f"r_{name}")
            w.visit(obj, params[-1])
    except (_Refuse, _heap.TooLarge, RecursionError):
        return None
    body = _merged(w.lines) + [
        f"objs = [{', '.join(w.objs)}]",
        f"storages = [{', '.join(w.storages)}]",
        f"counters = [{', '.join(w.counters)}]",
        # (objects, storages and counters are of distinct classes: one set for all)
        f"if len({{*map(id, objs), *map(id, storages), *map(id, counters)}}) != "
        f"{len(w.objs) + len(w.storages) + len(w.counters)}: return",
        f"return Seen(objs, storages, counters, [{', '.join(w.lifted)}])"]
    src = (f"def guard({', '.join(params)}):\n  try:\n" +
           "".join(f"    {line}\n" for line in body) +
           "  except Exception:\n    return None\n")
    namespace = dict(_GLOBALS, **w.consts)
    exec(compile(src, "<compiled guard>", "exec"), namespace)
    guard = namespace["guard"]
    guard.source = src
    return guard


def agrees(seen, walk):
    """Whether a guard's Seen is what the walk found (identical objects, in order)."""
    def same(a, b):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return (same(seen.objs, walk.objs) and same(seen.storages, walk.storages) and
            same(seen.counters, walk.counters) and
            len(seen.lifted) == len(walk.lifted) and
            all(g is h and k == j for (g, k), (h, j) in zip(seen.lifted, walk.lifted)))
