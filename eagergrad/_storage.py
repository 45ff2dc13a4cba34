"""Storage, version counters, strides, and reading/writing through view chains
(DESIGN.md §3).

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
"""
import collections
import ctypes
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
    __slots__ = ("array", "generation")

    def __init__(self, array):
        self.array = array
        self.generation = 0


class VersionCounter:
    __slots__ = ("version",)

    def __init__(self):
        self.version = 0


def contiguous_strides(shape):
    strides = []
    s = 1
    for n in reversed(shape):
        strides.append(s)
        s *= max(n, 1)
    return tuple(reversed(strides))


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


_SPECIAL = {}   # view fn -> write(parent, v): views that are not element selections
_writers = collections.OrderedDict()  # (chain, add) -> jitted write, LRU
_writers_lock = threading.Lock()
_WRITERS_MAX = 1024


def register_special(fn, write):
    """Declare view op `fn` (a jitted kernel) special: `write(parent, v)` writes into it."""
    _SPECIAL[fn] = write


def _apply(f, i, a):
    return f(a) if i is None else f(a)[i]


def _levels(chain):
    """Split a chain into levels: a special view alone, or a run of element selections
    (composed into one index map, so that an expand in the middle of a chain writes
    each memory location once)."""
    levels, run_ = [], []
    for f, i in chain:
        if f in _SPECIAL:
            if run_:
                levels.append(tuple(run_))
                run_ = []
            levels.append((f, i))
        else:
            run_.append((f, i))
    if run_:
        levels.append(tuple(run_))
    return levels


def _write_selection(sub, parent, v, add=False):
    """Write `v` into the elements of `parent` that the selection chain `sub` reads.
    Which positions are read is static (an index map from the shapes); when several view
    elements are one memory location (an expand), the one the in-place op changed wins,
    as it would in memory."""
    with jax.ensure_compile_time_eval():  # a constant, also while jit traces `write`
        idx = np.asarray(view_of(jnp.arange(parent.size).reshape(parent.shape), sub))
    idx = idx.reshape(-1)
    flat = parent.reshape(-1)
    v = v.reshape(-1).astype(parent.dtype)
    if add:
        return flat.at[idx].add(v).reshape(parent.shape)
    if len(np.unique(idx)) == idx.size or jnp.iscomplexobj(flat) or \
            not jnp.issubdtype(flat.dtype, jnp.floating):
        return flat.at[idx].set(v).reshape(parent.shape)
    changed = v != flat[idx]
    hit = jnp.zeros(flat.shape, bool).at[idx].max(changed)
    new = jnp.full(flat.shape, -jnp.inf, flat.dtype).at[idx].max(jnp.where(changed, v, -jnp.inf))
    return jnp.where(hit, new, flat).reshape(parent.shape)


def write_into(base, chain, v, add=False):
    """`base` with the elements the view `chain` reads replaced by `v` (jax arrays), or
    with `v` added to them (`add`: the transpose of the view, which sums the view elements
    that are one base element)."""
    w = _writers.get((chain, add))
    if w is None:
        levels = _levels(chain)

        def write(base, v):
            parents = [base]
            for lv in levels[:-1]:
                parents.append(view_of(parents[-1], lv) if isinstance(lv[0], tuple)
                               else _apply(lv[0], lv[1], parents[-1]))
            for lv, parent in zip(reversed(levels), reversed(parents)):
                if isinstance(lv[0], tuple):
                    v = _write_selection(lv, parent, v, add)
                else:
                    v = _SPECIAL[lv[0]](parent, v)
            return v
        w = EXECUTABLES.track(jax.jit(write))
        with _writers_lock:
            _writers[(chain, add)] = w
            if len(_writers) > _WRITERS_MAX:
                _writers.popitem(last=False)
    else:
        with _writers_lock:  # (another thread may have just evicted it)
            if (chain, add) in _writers:
                _writers.move_to_end((chain, add))
    return w(base, v)


def view_of(base, chain):
    """The view of array `base` that `chain` reads (the one replay of a view chain)."""
    for f, i in chain:
        base = f(base) if i is None else f(base)[i]
    return base
