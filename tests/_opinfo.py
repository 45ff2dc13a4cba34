"""Running an entry of torch's own test databases (OpInfo, ModuleInfo) in both libraries.

torch ships `op_db` in its wheel: each OpInfo names an op and generates its sample inputs
(torch tensors, Python values) per dtype. `Converter` turns a sample into eagergrad's
(tensors by value, requires_grad kept, one eagergrad tensor per torch tensor object so
aliasing is kept; dtypes, devices, sizes, memory formats mapped by name), and `eg_callable`
finds eagergrad's version of the op: the same-named attribute of the matching namespace
for torch's builtins and methods, and for the Python functions and lambdas the database
defines, the same code with `torch` (and `F`, `np` stays numpy) rebound to eagergrad.
"""
import dataclasses
import types

import numpy as np
import torch

import eagergrad as eg


class Unconvertible(Exception):
    """A sample argument eagergrad has no counterpart for (a torch.Generator, a sparse
    tensor, a dtype eagergrad lacks...)."""


_NAMESPACES = (
    ("", torch, eg),
    ("Tensor.", torch.Tensor, eg.Tensor),
    ("nn.functional.", torch.nn.functional, eg.nn.functional),
    ("linalg.", torch.linalg, eg.linalg),
    ("fft.", torch.fft, "fft"),
    ("special.", torch.special, "special"),
    ("signal.windows.", torch.signal.windows, "signal.windows"),
)


def _eg_namespace(ns):
    if not isinstance(ns, str):
        return ns
    for part in ns.split("."):
        ns = getattr(eg if isinstance(ns, str) else ns, part, None)
        if ns is None:
            return None
    return ns


_BY_ID = None


def _index():
    global _BY_ID
    if _BY_ID is None:
        _BY_ID = {}
        for prefix, tns, ens in _NAMESPACES:
            for name in dir(tns):
                try:
                    obj = getattr(tns, name)
                except (AttributeError, RuntimeError):  # (deprecated/unavailable names)
                    continue
                _BY_ID.setdefault(id(obj), []).append((prefix, name, ens))
    return _BY_ID


class Missing(Exception):
    """eagergrad has no counterpart of this torch callable."""


def eg_callable(fn):
    """eagergrad's version of the torch callable `fn` (raises Missing)."""
    hit = _index().get(id(fn))
    if hit is None and isinstance(fn, types.FunctionType):
        return _rebind(fn)  # the database's own function or lambda
    if hit is None and isinstance(fn, torch._ops.OpOverloadPacket | torch._ops.OpOverload):
        raise Missing(f"aten op {fn}")
    if hit is None:
        name = getattr(fn, "__name__", repr(fn))
        raise Missing(f"unknown torch callable {name}")
    for _prefix, name, ens in hit:  # (one object under several names: torch.conv2d is F's)
        ns = _eg_namespace(ens)
        f = getattr(ns, name, None) if ns is not None else None
        if f is not None:
            return f
    raise Missing(" or ".join(prefix + name for prefix, name, _ in hit))


def _swap(v):
    if v is torch:
        return eg
    if v is torch.nn.functional:
        return eg.nn.functional
    if v is torch.nn:
        return eg.nn
    if isinstance(v, types.ModuleType) and v.__name__.startswith("torch."):
        sub = v.__name__[len("torch."):]
        ns = eg
        for part in sub.split("."):
            ns = getattr(ns, part, None)
            if ns is None:
                return _MissingModule(v.__name__)
        return ns
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType,
                      types.MethodDescriptorType)) and id(v) in _index():
        try:
            return eg_callable(v)
        except Missing as e:
            return _raiser(e)
    return v


def _raiser(e):
    def f(*args, **kwargs):
        raise e
    return f


class _MissingModule:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise Missing(f"{self._name}.{attr}")


class _Globals(dict):
    """fn's globals with torch's modules and functions swapped for eagergrad's."""

    def __init__(self, base):
        super().__init__()
        self._base = base

    def __missing__(self, key):
        v = self._base[key]
        v = _swap(v)
        if isinstance(v, types.FunctionType) and v.__module__.startswith("torch.testing"):
            v = _rebind(v)  # a helper of the database's
        self[key] = v
        return v


_REBOUND = {}


def _rebind(fn):
    r = _REBOUND.get(fn)
    if r is None:
        g = _Globals(fn.__globals__)
        g["__builtins__"] = fn.__globals__["__builtins__"]
        closure = fn.__closure__
        if closure:
            closure = tuple(types.CellType(_swap(c.cell_contents)) for c in closure)
        r = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
        r.__kwdefaults__ = fn.__kwdefaults__
        _REBOUND[fn] = r
    return r


def dtype_of(name):
    dt = getattr(eg, name, None)
    if not isinstance(dt, type(eg.float32)):
        raise Unconvertible(f"dtype {name}")
    return dt


class Converter:
    """torch sample values -> eagergrad values; `pairs` lists (torch, eagergrad) tensors."""

    def __init__(self):
        self.memo = {}
        self.pairs = []

    def __call__(self, x):
        if isinstance(x, torch.Tensor):
            e = self.memo.get(id(x))
            if e is None:
                e = self.tensor(x)
                self.memo[id(x)] = e
                self.pairs.append((x, e))
            return e
        if isinstance(x, torch.dtype):
            return dtype_of(str(x).split(".")[1])
        if isinstance(x, torch.Size):
            return eg.Size(tuple(x))
        if isinstance(x, torch.device):
            return eg.device(str(x))
        if isinstance(x, torch.memory_format):
            name = str(x).split(".")[1]
            if not hasattr(eg, name):
                raise Unconvertible(f"memory format {name}")
            return getattr(eg, name)
        if isinstance(x, torch.layout):
            name = str(x).split(".")[1]
            if not hasattr(eg, name):
                raise Unconvertible(f"layout {name}")
            return getattr(eg, name)
        if isinstance(x, torch.Generator):
            raise Unconvertible("torch.Generator argument")
        if isinstance(x, torch.nn.Module):
            return self.module(x)
        if isinstance(x, torch.nn.LinearCrossEntropyOptions):  # (a dataclass of torch.nn's)
            return eg.nn.LinearCrossEntropyOptions(
                **{f.name: self(getattr(x, f.name)) for f in dataclasses.fields(x)})
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*map(self, x))
        if isinstance(x, (list, tuple)):
            return type(x)(map(self, x))
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        if isinstance(x, (types.FunctionType, types.BuiltinFunctionType,
                          types.MethodDescriptorType)):
            return eg_callable(x)
        return x

    def module(self, m):
        """eagergrad's module of m's class with m's settings (parameter-free modules, such
        as the PairwiseDistance a loss takes as its distance_function)."""
        cls = getattr(eg.nn, type(m).__name__, None)
        if cls is None or any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
            raise Unconvertible(f"module {type(m).__name__}")
        e = cls.__new__(cls)
        eg.nn.Module.__init__(e)
        for k, v in vars(m).items():
            if not k.startswith("_"):
                setattr(e, k, self(v))
        return e

    @staticmethod
    def tensor(x):
        if x.layout != torch.strided:
            raise Unconvertible(f"{x.layout} tensor")
        if x.device.type == "meta":
            raise Unconvertible("a meta tensor (no values)")
        if x.dim() > 64:
            raise Unconvertible(f"a {x.dim()}-d tensor (numpy's arrays have at most 64 dims)")
        name = str(x.dtype).split(".")[1]
        dt = dtype_of(name)
        if name == "bfloat16":
            a = x.detach().float().numpy()
        else:
            a = x.detach().resolve_conj().resolve_neg().numpy()
        e = eg.tensor(a, dtype=dt)
        if x.requires_grad:
            e.requires_grad_()
        return e


def leaves(x):
    """The values of a (nested) output: tensors, numbers, bools, None, strings."""
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in leaves(item)]
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in leaves(x[k])]
    return [x]


def to_np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy(force=True)
    return np.asarray(t.detach().resolve_conj().numpy())


def dtype_name(t):
    return str(t.dtype).split(".")[-1]
