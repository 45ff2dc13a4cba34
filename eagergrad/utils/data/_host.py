"""Host mode: what a DataLoader worker forked from this process runs instead of jax.

NOTE [fork workers and jax]: a forked child has only the thread that forked; XLA's thread
pools stay behind in the parent, so in the child a jax compile (every new kernel) waits
forever, and any lock another thread held at the fork stays held (measured: in a child
forked after jax ran, reading an array or running an already-compiled kernel returned, a
new op hung). A worker forked by the DataLoader (the default start method on Linux, as
torch's) therefore never calls jax. `enter()` switches the child, and only the child:

- tensors hold numpy arrays (a Tensor whose storage array is an np.ndarray), and the
  dataset's own tensors are read as numpy (the parent made their values ready and
  concrete before forking: `prepare`);
- the factories that copy host data (`tensor`, `as_tensor`, `asarray`, `from_numpy`,
  `zeros`/`ones`/`full`/`empty`, `arange`) make such tensors, and `manual_seed`,
  `initial_seed` and `Generator(...).manual_seed` work (the key is made lazily);
- indexing (`x[i]`: torch's read semantics are numpy's; torch's errors) and the ops of
  `_KERNELS` (dtype conversions, copies, reshapes, permutes and other views, `stack`,
  `cat`, `unbind`, `split`) run in numpy: enough for the default collate, for
  TensorDataset and Subset, and for the usual `__getitem__` (`torch.from_numpy(img)
  .permute(2, 0, 1).float()`, `self.x[i]`);
- any other op, random draw or jax call made through eagergrad raises NotImplementedError
  (`refusal`) instead of hanging: every `call_op` global of eagergrad's modules and every
  global that is a jax module are replaced in the child, and jax refuses to lower or
  compile, its caches emptied (`_stop_jax`: so does any other jax computation).

A worker started by "spawn" or "forkserver" is a fresh process where jax is safe: it runs
eagergrad unchanged (importing it and compiling its kernels: seconds per worker)."""
import functools
import sys
import types

import numpy as np

from ..._mode import STATE
from ...ops import _table
from ...tensor import Tensor, _make

__all__ = ["enter", "host_array", "prepare", "refusal"]

_ACTIVE = [False]


def refusal(what):
    return NotImplementedError(
        f"{what} cannot run in a DataLoader worker process started by fork: jax, which runs "
        "eagergrad's ops, is not fork-safe (a compile in the child hangs). In such a worker, "
        "tensors hold numpy data and support the factories that copy data (tensor, "
        "as_tensor, from_numpy, zeros, arange, ...), indexing, dtype conversions, reshapes "
        "and permutes, stack and cat; do other work with numpy in the dataset (numpy's and "
        "Python's random are seeded per worker, as torch's) or on the batch in the main "
        "process, or pass multiprocessing_context='forkserver' (or 'spawn'), "
        "whose workers run eagergrad fully.")


# ---- in the parent, before forking --------------------------------------------------------
_LEAVES = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic, type,
           types.ModuleType, types.BuiltinFunctionType)
_WALK_LIMIT = 100_000


def prepare(*roots):
    """Make every tensor reachable from `roots` (the dataset, collate_fn, worker_init_fn:
    attributes, containers, closures) concrete and ready, so that the child reads its
    values as numpy without jax: a lazy view's array is computed and every array waited
    for (np.asarray of a CPU array is a view of its buffer, no copy)."""
    _sites()
    seen, stack, n = set(), list(roots), 0
    while stack and n < _WALK_LIMIT:
        x = stack.pop()
        if isinstance(x, _LEAVES) or id(x) in seen:
            continue
        seen.add(id(x))
        n += 1
        try:
            _visit(x, stack)
        except Exception:  # noqa: BLE001 - an object that cannot be looked into: skipped
            pass


def _visit(x, stack):
    if isinstance(x, Tensor):
        np.asarray(x._value)
    elif isinstance(x, dict):
        stack.extend(x.values())
    elif isinstance(x, (list, tuple, set, frozenset)):
        stack.extend(x)
    elif isinstance(x, types.FunctionType):
        for c in x.__closure__ or ():
            try:
                stack.append(c.cell_contents)
            except ValueError:  # (an empty cell)
                pass
        stack.extend(x.__defaults__ or ())
    elif isinstance(x, types.MethodType):
        stack.append(x.__self__)
    else:
        d = getattr(x, "__dict__", None)
        if isinstance(d, dict):
            stack.extend(d.values())
        for cls in type(x).__mro__:
            for s in cls.__dict__.get("__slots__", ()):
                if isinstance(s, str) and s not in ("__dict__", "__weakref__"):
                    stack.append(getattr(x, s, None))
        if isinstance(x, functools.partial):
            stack.extend((x.func, *x.args, *x.keywords.values()))


# ---- in the child -------------------------------------------------------------------------
def enter():
    """Switch this (forked) process to host mode; see the NOTE above."""
    if _ACTIVE[0]:
        return
    _ACTIVE[0] = True
    call_op = _table.call_op  # (before the loop replaces _table's own)
    for g, k, v in _sites():
        g[k] = _call_op if v is call_op else _Refusing(v)
    Tensor.__getitem__ = _getitem
    _stop_jax()


_SITES = [0, []]  # (len(sys.modules) when found, the sites)


def _sites():
    """(module dict, name, value) of every global of eagergrad's modules that is call_op or
    a jax module that computes; found in the parent (`prepare`), so that a child only
    writes them (reading every module's dict there costs its pages' copies: ~60 ms)."""
    if _SITES[0] != len(sys.modules):
        found = []
        for name, mod in sys.modules.copy().items():
            if mod is None or not (name == "eagergrad" or name.startswith("eagergrad.")):
                continue
            g = vars(mod)
            found.extend((g, k, v) for k, v in g.copy().items()
                         if v is _table.call_op or _computes(v))
        _SITES[:] = len(sys.modules), found
    return _SITES[1]


def _stop_jax():
    """The last line: jax refuses to lower or compile, and to execute what the parent
    compiled, so that any jax computation left (a jax function kept in a closure, the
    dataset's own jax code) raises in the child instead of hanging (lowering hangs too, on
    MLIR's thread pool, left in the parent; a compiled kernel on its thread pools).
    `jax_no_execution` is part of the key of jax's caches of compiled functions: every call
    misses them (emptying them instead destroys each executable: seconds in a process that
    compiled thousands). Best effort: jax's private names (jax 0.10)."""
    import jax

    def refused(*args, **kwargs):
        raise refusal("a jax computation (called by eagergrad or the dataset)")
    try:
        from jax._src import compiler, pjit
        from jax._src.interpreters import pxla
    except ImportError:
        pass
    else:
        for mod, name in ((pjit, "_pjit_call_impl_python"),
                          (pxla, "lower_sharding_computation"),
                          (compiler, "compile_or_get_cached")):
            if hasattr(mod, name):
                setattr(mod, name, refused)
    try:
        jax.config.update("jax_no_execution", True)
    except AttributeError:  # (an older jax: its caches emptied instead)
        jax.clear_caches()


class _HostKey:
    """A seed standing in for a jax key in host mode: manual_seed works, a draw refuses."""

    def __init__(self, seed, *args, **kwargs):
        self.seed = seed

    def __array__(self, *args, **kwargs):  # (get_rng_state, Generator.get_state)
        raise refusal("eagergrad's random state")


# pure functions of dtypes and shapes (no device work): callable in the child
_PURE = frozenset(["Array", "ensure_compile_time_eval", "devices", "local_devices",
                   "default_backend", "issubdtype", "dtype", "iinfo", "finfo", "result_type",
                   "promote_types", "iscomplexobj", "isscalar", "ndim", "shape", "size",
                   "canonicalize_dtype"])


# jax's modules of pure Python over types, trees and dtypes (no device work): left whole
_PURE_MODULES = frozenset(["jax.tree_util", "jax.tree", "jax.dtypes", "jax.typing",
                           "jax.monitoring", "jax._src.tree_util", "jax._src.dtypes",
                           "jax._src.util", "jax._src.typing", "jax._src.monitoring"])


def _computes(v):
    """A jax module that may compute (refused in host mode but for `_PURE` names)."""
    return isinstance(v, types.ModuleType) and v.__name__.split(".")[0] in ("jax", "jaxlib") \
        and v.__name__ not in _PURE_MODULES


class _Refusing:
    """A jax module as host mode's child sees it: classes, constants and `_PURE` functions
    are the module's, `_HOST` names are numpy stand-ins, any other function raises."""

    def __init__(self, module):
        self._module = module
        self._host = _HOST.get(module.__name__, {})

    def __getattr__(self, name):
        if name in self._host:
            return self._host[name]
        v = getattr(self._module, name)
        if isinstance(v, types.ModuleType):
            return _Refusing(v) if _computes(v) else v
        if name in _PURE or isinstance(v, type) or not callable(v):
            return v
        what = f"{self._module.__name__}.{name} (called by eagergrad)"
        if self._module.__name__ == "jax.random":
            what = f"a random draw of eagergrad ({what})"
        raise refusal(what)


def _device_put(x, device=None, *args, **kwargs):
    if device is not None and getattr(device, "platform", "cpu") != "cpu":
        raise refusal(f"a copy to {device}")
    return np.asarray(x)


def _asarray(a, dtype=None, *args, **kwargs):
    return np.asarray(a, dtype=dtype)


def _array(a, dtype=None, copy=True, *args, **kwargs):
    return np.array(a, dtype=dtype, copy=copy)


# what eagergrad's Python code (not its kernels) asks jax for, on the host
_HOST = {"jax": {"device_put": _device_put},
         "jax.random": {"PRNGKey": _HostKey, "key": _HostKey},
         "jax.numpy": {"asarray": _asarray, "array": _array, "eye": np.eye, "full": np.full,
                       "zeros": np.zeros, "ones": np.ones, "empty": np.empty}}


def host_array(t):
    """A tensor's values as a numpy array (no jax in host mode: see `prepare`)."""
    a = t._storage.array if t._vchain is None else t._value
    return a if isinstance(a, np.ndarray) else np.asarray(a)


def _tensor(a):
    return _make(np.asarray(a))


def _astype(a, np_dtype):
    if a.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        a = a.real  # complex to real keeps the real part, as torch (with its warning)
    return a.astype(np_dtype)


def _to_copy(a, dtype, device):
    if device is not None and device.type != "cpu":
        raise refusal(f"a copy to {device}")
    return _astype(a, dtype.np)


def _reshape(a, size, self_sym_sizes=None):
    return np.reshape(a, size)


def _squeeze(a, dim, self_sym_sizes):
    return np.squeeze(a, dim)


def _select(a, dim, index, self_sym_sizes):
    return np.take(a, index, axis=dim)


def _slice(a, dim, start, end, step, self_sym_sizes):
    return a[(slice(None),) * dim + (slice(start, end, step),)]


def _split(a, sizes, dim, split_size=None):
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _swap(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1)


def _stack(*arrays, dim, dtype):
    return np.stack([_astype(a, dtype.np) for a in arrays], axis=dim)


def _cat(*arrays, dim, dtype, sizes):
    return np.concatenate([_astype(a, dtype.np) for a in arrays], axis=dim)


# op name -> numpy kernel(arrays, **attrs): the call_op of host mode. The ops' front ends
# (argument parsing, dtypes, torch's errors) run unchanged before it.
_KERNELS = {
    "_to_copy": _to_copy,
    "clone": lambda a: a.copy(),
    "alias": lambda a: a,
    "view": _reshape,
    "_reshape_alias": _reshape,
    "_unsafe_view": _reshape,
    "unsqueeze": lambda a, dim: np.expand_dims(a, dim),
    "squeeze0": _squeeze, "squeeze1": _squeeze, "squeeze2": _squeeze, "squeeze4": _squeeze,
    "permute": lambda a, dims: np.transpose(a, dims),
    "transpose": _swap,
    "t": _swap,
    "expand": lambda a, size, self_sym_sizes: np.broadcast_to(a, size),
    "select": _select,
    "slice": _slice,
    "unbind": lambda a, dim: tuple(np.moveaxis(a, dim, 0)),
    "split": _split,
    "split_with_sizes": _split,
    "unsafe_split": lambda a, dim, split_size, sizes: _split(a, sizes, dim),
    "stack": _stack,
    "cat": _cat,
}


def _call_op(op, tensors, attrs=()):
    kernel = _KERNELS.get(op.name)
    if kernel is None:
        raise refusal(f"eagergrad's op {op.name!r}")
    if STATE.grad and any(t._requires_grad for t in tensors):
        raise refusal(f"autograd (op {op.name!r} on a tensor that requires grad)")
    out = kernel(*[host_array(t) for t in tensors], **dict(zip(op.attr_names, attrs)))
    if isinstance(out, tuple):
        return tuple(_tensor(o) for o in out)
    return _tensor(out)


def _index(i):
    """A torch index as numpy's (torch's read semantics are numpy's), with torch's errors
    where numpy would accept."""
    if isinstance(i, tuple):
        return tuple(_index(x) for x in i)
    if isinstance(i, Tensor):
        a = host_array(i)
        if a.dtype == np.uint8:
            return a.astype(np.bool_)  # (torch reads a uint8 index as a mask)
        if a.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return a
    if isinstance(i, slice):
        parts = [int(v) if isinstance(v, Tensor) else v for v in (i.start, i.stop, i.step)]
        if parts[2] is not None and parts[2] <= 0:
            raise ValueError("step must be greater than zero")
        return slice(*parts)
    if isinstance(i, list):
        return np.asarray([_index(x) for x in i])
    return i


def _check(shape, index):
    """torch's IndexErrors for reading `index` (numpy's form) of a tensor of `shape`: an
    integer names its position among the index's entries (an ellipsis counting the dims it
    spans), an integer array its rank among the advanced indices; each its first bad value."""
    items = list(index) if isinstance(index, tuple) else [index]
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1
               for i in items if i is not None and i is not Ellipsis and
               not isinstance(i, (bool, np.bool_)))
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    pos = src = k = 0
    for i in items:
        if i is Ellipsis:
            pos, src = pos + len(shape) - used, src + len(shape) - used
            continue
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            for j, (m, n) in enumerate(zip(i.shape, shape[src:])):
                if m != n:
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(shape)} at index {src + j}")
            src, k = src + i.ndim, k + 1
        elif i is not None and not isinstance(i, (bool, np.bool_, slice)):
            a, n = np.asarray(i), shape[src]
            bad = a[(a >= n) | (a < -n)]
            if bad.size:
                raise IndexError(f"index {bad[0]} is out of bounds for dimension "
                                 f"{k if a.ndim else pos} with size {n}")
            src, k = src + 1, k + (a.ndim > 0)
        elif isinstance(i, slice):
            src += 1
        pos += 1


def _getitem(self, index):
    a = host_array(self)
    if not a.ndim and not isinstance(index, (type(None), type(Ellipsis), tuple, bool)):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    index = _index(index)
    _check(a.shape, index)
    return _tensor(a[index])
