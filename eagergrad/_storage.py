"""Storage, version counters, strides, and reading/writing through view chains
(docs/design.md §3).

A Storage holds the current jax array of a base tensor; `generation` counts every write so
that a view can tell its cached array is stale. The version counter is a separate
object because `.data` shares storage but not the version counter, while views and
`detach()` share both.

A view is its base's storage plus a *chain*: the view ops `(fn, output index)` that map
the base array to the view array (`view_of` replays it). Every view op is linear, so
writing new values `v` into a view replaces, level by level, the elements the view
reads (an index map of the level's op, or, for a special view registered by the op
table such as real/imag/conj, its own write); the transpose of a view (its backward) is
that same write into zeros, adding (`write_into(..., add=True)`).

A view op with dynamic attributes (a select's index, a slice's start: ops/_table.py's
`dynamic=`) appears in a chain as `functools.partial(kernel, **those values)`, its
jitted kernel keyed by the static attributes only. A chain's *static structure*
(`split_chain`) is the chain with those values left out; writes are compiled per static
structure and take the values as traced arguments, so that writing through x[i],
x[i:i+2] or x.narrow(0, i, 3) for every i reuses one executable.
"""
import collections
import ctypes
import functools
import os
import platform
import threading

import jax
import jax.numpy as jnp
import numpy as np

from ._cache import EXECUTABLES


def _large_buffers_back_to_os(threshold=4 << 20, keep=32 << 20):
    """XLA:CPU allocates arrays with malloc. glibc serves a freed large block's size from
    its heap from then on (a dynamic mmap threshold), so memory freed after backward (saved
    tensors released) stays in the process. A fixed threshold makes blocks of 4 MiB and
    more mmap'ed, returned to the OS when freed; smaller ones keep the fast heap. A fixed
    threshold also pins the heap's trim threshold at its 128 KiB default, which hands the
    heap's top back to the OS after nearly every free of a ~1 MiB array and page-faults it
    in again on the next allocation (2-5x slower elementwise ops of that size): `keep` is
    the free heap top kept instead. Skipped when the user set MALLOC_MMAP_THRESHOLD_, and
    off glibc."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or platform.libc_ver()[0] != "glibc":
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, threshold)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, keep)       # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


_large_buffers_back_to_os()


class Storage:
    # spare: elements beyond the base's that a resize_ to fewer kept (ops/resize.py), unset
    # until then
    __slots__ = ("array", "generation", "spare")

    def __init__(self, array):
        self.array = array
        self.generation = 0


class VersionCounter:
    __slots__ = ("version",)

    def __init__(self):
        self.version = 0


def contiguous_strides(shape):
    r = _contiguous.get(shape) if shape.__class__ is tuple else None
    if r is None:
        strides = []
        s = 1
        for n in reversed(shape):
            strides.append(s)
            s *= max(n, 1)
        r = tuple(reversed(strides))
        if shape.__class__ is tuple and len(_contiguous) < 4096:
            _contiguous[shape] = r
    return r


_contiguous = {}  # shape -> its contiguous strides (every base tensor's stride())


def view_strides(old_shape, old_stride, new_shape):
    """ATen's computeStride: strides for viewing (old_shape, old_stride) as new_shape,
    or None when no such view exists (then reshape must copy)."""
    numel = 1
    for n in old_shape:
        numel *= n
    if numel == 0:
        return contiguous_strides(new_shape) if old_shape != new_shape else tuple(old_stride)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


_SPECIAL = {}   # view op kernel -> write(parent, v): views that are not element selections
_writers = collections.OrderedDict()  # (split_chain's static structure, add) -> write, LRU
_writers_lock = threading.Lock()
_WRITERS_MAX = 1024


def register_special(kernel, write):
    """Declare view op `kernel` (the op's kernel function, as given to defop) special:
    `write(parent, v)` writes into it. Keyed by the kernel, not by a jitted function of
    it: an op's jitted functions are remade when its caches evict them, and a special
    view taken for an element selection would be written wrong."""
    _SPECIAL[kernel] = write


def _special_of(f):
    """The special write of chain function f (a jit of partial(kernel, ...)), or None."""
    if f.__class__ is functools.partial:
        f = f.func
    w = getattr(f, "__wrapped__", None)
    return _SPECIAL.get(w.func) if w.__class__ is functools.partial else None


_UPDATES = {}  # view op kernel -> update(parent, v, **its attrs): a box view written directly


def register_update(kernel, update):
    """Declare that view op `kernel` (the op's kernel function, as given to defop) reads a
    box of its input that `update(parent, v, **the kernel's attrs)` writes, a
    dynamic_update_slice (select, slice): a run of such views is written level by level,
    not by a scatter over its index map (at traced positions XLA:CPU's scatter took ~1.7x
    a dynamic_update_slice's time: a 1000-element row of a 1000x1000 array, 140 vs 85 us,
    where a scatter at constant positions took 80)."""
    _UPDATES[kernel] = update


def _update_of(f):
    """The direct update `update(parent, v)` of chain function f, or None."""
    kw = {}
    if f.__class__ is functools.partial:  # (dynamic attributes)
        if f.args:
            return None
        kw = f.keywords
        f = f.func
    w = getattr(f, "__wrapped__", None)  # (Op._jitted: jit of partial(kernel, static attrs))
    if w.__class__ is not functools.partial or w.args:
        return None
    u = _UPDATES.get(w.func)
    return None if u is None else functools.partial(u, **w.keywords, **kw)


_INVERSES = {}  # view op kernel -> inverse(**its attrs): the chain element undoing it


def register_inverse(kernel, inverse):
    """Declare view op `kernel` a relayout of all of its input's elements (an in-place
    view op's: unsqueeze_, squeeze_, transpose_), undone by the chain element
    `inverse(**the kernel's attrs)` (relative_chain)."""
    _INVERSES[kernel] = inverse


def relative_chain(chain, base_chain):
    """The chain from a base tensor's array to its view's, given both chains from their
    storage (`base_chain` None: the base is the storage's array), or None when there is
    none. A base changed by an in-place view op (x.unsqueeze_(0)) after the view was made
    is undone first, back to where the two chains agree (ops/inplace_views.py)."""
    if not base_chain:
        return chain
    n = len(base_chain)
    if chain[:n] == base_chain:
        return chain[n:]
    k = 0
    while k < n and k < len(chain) and chain[k] == base_chain[k]:
        k += 1
    undo = []
    for f, i in reversed(base_chain[k:]):
        w = getattr(f, "__wrapped__", None)
        inv = _INVERSES.get(w.func) if i is None and w.__class__ is functools.partial \
            and not w.args else None
        if inv is None:
            return None
        undo.append(inv(**w.keywords))
    return tuple(undo) + tuple(chain[k:])


def _apply(f, i, a):
    return f(a) if i is None else f(a)[i]


def split_chain(chain):
    """(static structure, dynamic values) of a view chain: per element `(kernel, bound
    positional args, names of its dynamic attributes or None, output index)`, and the
    values of those attributes in chain order (`join_chain` puts them back)."""
    key, dyn = [], []
    for f, i in chain:
        if f.__class__ is functools.partial:  # (Op.fwd of a dynamic op)
            kw = f.keywords
            key.append((f.func, f.args, tuple(kw), i))
            dyn.extend(kw.values())
        else:
            key.append((f, (), None, i))
    return tuple(key), tuple(dyn)


def join_chain(key, dyn):
    """The chain of static structure `key` with dynamic values `dyn` (concrete values or
    tracers: inside a jitted function the chain then reads at traced offsets)."""
    out, k = [], 0
    for f, args, names, i in key:
        if names is None:
            out.append((f, i))
        else:
            n = len(names)
            out.append((functools.partial(f, *args, **dict(zip(names, dyn[k:k + n]))), i))
            k += n
    return tuple(out)


def _levels(chain):
    """Split a chain into levels: a special view alone, or a run of element selections
    (composed into one index map, so that an expand in the middle of a chain writes
    each memory location once)."""
    levels, run_ = [], []
    for f, i in chain:
        if _special_of(f) is not None:
            if run_:
                levels.append(tuple(run_))
                run_ = []
            levels.append((f, i))
        else:
            run_.append((f, i))
    if run_:
        levels.append(tuple(run_))
    return levels


def _is_dynamic(sub):
    return any(f.__class__ is functools.partial for f, _ in sub)


def _write_selection(sub, parent, v, add=False, probe=None):
    """Write `v` into the elements of `parent` that the selection chain `sub` reads.
    Which positions are read is an index map from the shapes: a constant, or, when
    `sub` has dynamic values (traced offsets), computed from them in the kernel. When
    several view elements are one memory location (an expand), the one the in-place op
    changed wins, as it would in memory. Whether that can happen does not depend on
    offsets: it is decided at trace time on `probe`, `sub` with concrete values."""
    if probe is None:
        with jax.ensure_compile_time_eval():  # a constant, also while jit traces `write`
            idx = np.asarray(view_of(jnp.arange(parent.size).reshape(parent.shape), sub))
        idx = idx.reshape(-1)
        injective = add or len(np.unique(idx)) == idx.size
    else:
        idx = view_of(jnp.arange(parent.size).reshape(parent.shape), sub).reshape(-1)
        injective = add
        if not add:
            with jax.ensure_compile_time_eval():
                at = np.asarray(view_of(jnp.arange(parent.size).reshape(parent.shape),
                                        probe)).reshape(-1)
            injective = len(np.unique(at)) == at.size
    flat = parent.reshape(-1)
    v = v.reshape(-1).astype(parent.dtype)
    if add:
        return flat.at[idx].add(v).reshape(parent.shape)
    if injective or jnp.iscomplexobj(flat) or not jnp.issubdtype(flat.dtype, jnp.floating):
        return flat.at[idx].set(v).reshape(parent.shape)
    changed = v != flat[idx]
    hit = jnp.zeros(flat.shape, bool).at[idx].max(changed)
    new = jnp.full(flat.shape, -jnp.inf, flat.dtype).at[idx].max(jnp.where(changed, v, -jnp.inf))
    return jnp.where(hit, new, flat).reshape(parent.shape)


def _write_boxes(sub, updates, parent, v):
    """_write_selection for a run of box views (register_update): each level's update
    writes the level below into its parent (boxes are injective: nothing to decide)."""
    parents = [parent]
    for f, _ in sub:
        parents.append(f(parents[-1]))
    v = v.reshape(parents[-1].shape).astype(parent.dtype)
    for u, p in zip(reversed(updates), reversed(parents[:-1])):
        v = u(p, v)
    return v


def _writer(key, add, probe):
    """The jitted write(base, v, dynamic values) for a chain's static structure `key`;
    `probe`: the dynamic values of the call that made it (concrete, valid offsets)."""
    def write(base, v, dyn):
        chain = join_chain(key, dyn)
        levels = _levels(chain)
        probes = _levels(join_chain(key, probe)) if dyn else [None] * len(levels)
        parents = [base]
        for lv in levels[:-1]:
            parents.append(view_of(parents[-1], lv) if isinstance(lv[0], tuple)
                           else _apply(lv[0], lv[1], parents[-1]))
        for lv, pr, parent in zip(reversed(levels), reversed(probes), reversed(parents)):
            if not isinstance(lv[0], tuple):
                v = _special_of(lv[0])(parent, v)
                continue
            ups = None if add else [_update_of(f) if i is None else None for f, i in lv]
            if ups is not None and all(u is not None for u in ups):
                v = _write_boxes(lv, ups, parent, v)
            else:
                v = _write_selection(lv, parent, v, add,
                                     pr if pr is not None and _is_dynamic(lv) else None)
        return v
    return EXECUTABLES.track(jax.jit(write))


def write_into(base, chain, v, add=False):
    """`base` with the elements the view `chain` reads replaced by `v` (jax arrays), or
    with `v` added to them (`add`: the transpose of the view, which sums the view elements
    that are one base element). One executable per static structure of the chain (and
    shapes): the chain's dynamic values (indices, offsets) are its traced arguments."""
    key, dyn = split_chain(chain)
    wkey = (key, add)
    w = _writers.get(wkey)
    if w is None:
        w = _writer(key, add, dyn)
        with _writers_lock:
            _writers[wkey] = w
            if len(_writers) > _WRITERS_MAX:
                _writers.popitem(last=False)
    else:
        with _writers_lock:  # (another thread may have just evicted it)
            if wkey in _writers:
                _writers.move_to_end(wkey)
    return w(base, v, dyn)


def view_of(base, chain):
    """The view of array `base` that `chain` reads (the one replay of a view chain)."""
    for f, i in chain:
        base = f(base) if i is None else f(base)[i]
    return base
