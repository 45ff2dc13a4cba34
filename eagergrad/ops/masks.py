"""Boolean masks: reads (x[mask], masks among other index tensors, masked_select),
writes (x[mask] = v, index_put_ with one mask, masked_scatter) and nonzero, without a
compile per count (NOTE [masks]); nonzero_static (a static shape: one kernel)."""
import functools
import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._cache import EXECUTABLES
from ..engine.grad_mode import STATE
from ..size import can_broadcast_to
from .._mode import COMPILING, FWD
from ..tensor import _make
from .pointwise import where
from ._table import _forward_tangents, _record, defop, call_op
from .scatter import _full_index, masked_fill, _zero_like0


# ---- boolean masks ------------------------------------------------------------------------
# NOTE [masks]: how many elements a mask selects is data, and XLA compiles one kernel per
# shape, so a naive `x[mask]` compiles on every call whose count is new. Instead:
# - Writes (`x[mask] = v`, index_put_ with one mask) never need the count when `v`
#   broadcasts without it (a number, a 0-dim or one-element tensor, a row broadcast over
#   the selected elements): one `jnp.where` (mask_put), static shapes, tracer-safe. When
#   `v` has one element per selected position, the k-th True element takes v's k-th
#   (a rank from a cumulative sum of the mask, mask_put_seq): still static shapes (v's)
#   and tracer-safe; the count is read back only to raise torch's shape error.
# - Reads (`x[mask]`, masks among other index tensors, masked_select) have a
#   data-dependent shape. A concrete mask is read back once (cached per array: _HostMask);
#   the gather runs on index arrays padded to a bucket size (the next power of two
#   >= the count, padding pointing out of bounds: gathered as 0, dropped by scatters),
#   and its result is cut to the count outside the kernel (a host copy; under a jax trace,
#   a traced slice). Their backward (mask_index_put, a scatter-add) pads the incoming
#   gradient to the bucket likewise. So kernels compile per bucket, about log2(numel) of
#   them per shape, not per count. These nodes run by their formulas in Python (they
#   are never part of a fused segment, whose structure would be keyed by the count).
# - nonzero runs on the host copy of the mask (no kernel at all).
# A mask that is a jax tracer cannot be read: reads raise NotImplementedError; writes
# work (they never look at the values).

_TRACED_MASK = ("boolean-mask indexing has a data-dependent shape and cannot run on jax "
                "tracers; use torch.where(mask, x, 0) instead")


def _bucket(n):
    """The padded length for n selected elements: the next power of two (>= 1)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


class _HostMask:
    """A concrete mask (or the != 0 of a tensor) read back once: the numpy bool array,
    its count, and lazily the positions of its True elements (host and device)."""

    __slots__ = ("ref", "host", "count", "_cols", "_padded", "_flat")

    def __init__(self, ref, host):
        self.ref = ref
        self.host = host
        self.count = int(np.count_nonzero(host))
        self._cols = self._padded = None
        self._flat = {}

    def columns(self, pad_to=None):
        """The nonzero columns as int64 device arrays (padded to `pad_to` with each
        dim's size, an out-of-bounds index)."""
        if pad_to is None:
            if self._cols is None:
                self._cols = tuple(jax.device_put(c.astype(np.int64))
                                   for c in np.nonzero(self.host))
            return self._cols
        if self._padded is None or self._padded[0] != pad_to:
            cols = []
            for c, n in zip(np.nonzero(self.host), self.host.shape):
                a = np.full(pad_to, n, np.int64)
                a[:c.size] = c
                cols.append(jax.device_put(a))
            self._padded = (pad_to, tuple(cols))
        return self._padded[1]

    def flat(self, shape):
        """(count, device positions padded to the bucket) of the mask broadcast to
        `shape`, flattened (masked_select)."""
        hit = self._flat.get(shape)
        if hit is None:
            pos = np.flatnonzero(np.broadcast_to(self.host, shape))
            a = np.full(_bucket(pos.size), math.prod(shape), np.int64)
            a[:pos.size] = pos
            hit = self._flat[shape] = (pos.size, jax.device_put(a))
        return hit


# id(array) -> _HostMask: a mask used again (x[m] = x[m] * 2, masked_select then its
# backward) is read back once. An entry goes with its array; at most _MASKS_MAX.
_masks = {}
_MASKS_MAX = 64


def _forget(ref, key):
    hit = _masks.get(key)
    if hit is not None and hit.ref is ref:
        _masks.pop(key, None)


def _host_mask(t):
    arr = t._value
    key = id(arr)
    hit = _masks.get(key)
    if hit is not None and hit.ref() is arr:
        return hit
    if isinstance(arr, jax.core.Tracer):
        if COMPILING.rec is None:
            raise NotImplementedError(_TRACED_MASK)
        h = t._host("a boolean mask")  # (a compiled call's trace: read, then checked)
        return _HostMask(None, h != 0 if h.dtype != np.bool_ else h)
    h = np.asarray(arr)  # (a view of the array's buffer, which it keeps alive: copied)
    h = h != 0 if h.dtype != np.bool_ else h.copy()
    hit = _HostMask(weakref.ref(arr, lambda r, key=key: _forget(r, key)), h)
    if len(_masks) >= _MASKS_MAX:
        _masks.clear()
    _masks[key] = hit
    return hit


def _known_count(mask):
    """The mask's count, or None when it is a tracer (then nothing can be checked)."""
    if isinstance(mask._value, jax.core.Tracer):
        return None
    return _host_mask(mask).count


def _index_shapes(shapes):
    """torch's broadcast of index tensors' shapes (its error when they do not)."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None


def _pad(a, axis, size, fill=0):
    """Array `a` padded along `axis` to `size` with `fill`: on the host (no kernel, so no
    compile per length), or traced."""
    n = a.shape[axis]
    if n == size:
        return a
    if isinstance(a, jax.core.Tracer):
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, size - n)
        return jnp.pad(a, widths, constant_values=fill)
    h = np.asarray(a)
    shape = list(h.shape)
    shape[axis] = size
    out = np.full(shape, fill, h.dtype)
    out[(slice(None),) * (axis % h.ndim) + (slice(0, n),)] = h
    return jax.device_put(out)


def _cut(a, axis, n):
    """The first n entries of array `a` along `axis` (host copy, or traced)."""
    if a.shape[axis] == n:
        return a
    if isinstance(a, jax.core.Tracer):
        return jax.lax.slice_in_dim(a, 0, n, axis=axis)
    return jax.device_put(np.asarray(a)[(slice(None),) * axis + (slice(0, n),)])


def _mask_b(mask, ndim, d):
    """A mask for dims d .. d + mask.ndim - 1 of an ndim-array, shaped to broadcast."""
    return mask.reshape(mask.shape + (1,) * (ndim - d - mask.ndim))


def _pad_gather_k(self, *indices, positions):
    return self.at[_full_index(positions, self.ndim, indices)].get(mode="fill", fill_value=0)


def _pad_scatter_k(self, values, *indices, positions):
    return self.at[_full_index(positions, self.ndim, indices)].add(
        values.astype(self.dtype), mode="drop")


def _select_k(self, pos, shape):
    return jnp.broadcast_to(self, shape).reshape(-1).at[pos].get(mode="fill", fill_value=0)


_jits = EXECUTABLES.owner({})


def _jit(kernel, **static):
    return EXECUTABLES.get(_jits, (kernel, tuple(static.items())),
                           lambda: jax.jit(functools.partial(kernel, **static)))


def _python_apply(node, grads):
    """The backward of the data-dependent-shape nodes: their formulas, run on tensors
    (padding and cutting on the host, see NOTE [masks]), never a jitted vjp per count."""
    if all(g is None for g in grads):
        return [None] * len(node._next)
    return node._apply_recorded(grads)


def _out(op, tensors, attrs, arr, diff):
    """The result tensor of a custom-forward op; its node when grad mode records one."""
    t = _make(arr)
    if STATE.grad:
        for x in diff:
            if x._requires_grad:
                _record(op, tensors, attrs, (t,))
                if t._grad_fn is not None:  # a Python point for the engine (not fused)
                    t._grad_fn._sig = None
                break
    if FWD.active:
        _forward_tangents(op, tensors, attrs, (t,))
    return t


def _mask_gather(src, indices, positions, axis, count):
    """src indexed by (padded) index tensors at dims `positions`, the result cut to
    `count` along `axis` (IndexBackward0)."""
    arr = _jit(_pad_gather_k, positions=positions)(src._value, *[i._value for i in indices])
    return _out(MASK_INDEX, (src, *indices), (positions, src._shape, axis, count),
                _cut(arr, axis, count), (src,))


def _mask_scatter(base, values, indices, positions, axis, count):
    """base with values (count along axis) added at the (padded) index tensors'
    positions (IndexPutBackward0, accumulate)."""
    size = _index_shapes([i._shape for i in indices])[-1]
    v = _pad(values._value, axis, size)
    arr = _jit(_pad_scatter_k, positions=positions)(base._value, v,
                                                    *[i._value for i in indices])
    return _out(MASK_INDEX_PUT, (base, values, *indices), (positions, axis, count), arr,
                (base, values))


MASK_INDEX = defop("mask_index", lambda self, *indices, positions, self_sym_sizes, axis, count:
                   jax.lax.slice_in_dim(_pad_gather_k(self, *indices, positions=positions), 0,
                                        count, axis=axis),
                   inputs=("self", "*indices"),
                   attrs=("positions", "self_sym_sizes", "axis", "count"), node="IndexBackward0",
                   self=lambda grad, indices, positions, self_sym_sizes, axis, count:
                   _mask_scatter(grad.new_zeros(self_sym_sizes), grad, indices, positions, axis,
                                 count))
MASK_INDEX_PUT = defop("mask_index_put", lambda self, values, *indices, positions, axis, count:
                       _pad_scatter_k(self, values, *indices, positions=positions),
                       inputs=("self", "values", "*indices"), attrs=("positions", "axis", "count"),
                       node="IndexPutBackward0",
                       self=lambda grad: grad,
                       values=lambda grad, indices, positions, axis, count:
                       _mask_gather(grad, indices, positions, axis, count))
MASKED_SELECT = defop("masked_select", lambda self, mask, *indices, shape, count:
                      _select_k(self, indices[0], shape)[:count],
                      inputs=("self", "mask", "*indices"), attrs=("shape", "count"),
                      node="MaskedSelectBackward0",
                      # torch's masked_select_backward: zeros masked_scatter'ed with grad
                      self=lambda grad, self, mask, shape:
                      _masked_scatter_padded(grad.new_zeros(shape), mask, grad))
for _op in (MASK_INDEX, MASK_INDEX_PUT, MASKED_SELECT):
    _op.Node.apply = _python_apply
    _op.Node._fusable = lambda node: False
    _op.Node._vjp_maker = lambda node: None


def _mask_read(src, adv):
    """src[adv] where adv ({dim: tensor}) holds a bool mask: torch's index with the mask
    as its nonzero columns, computed on columns padded to a bucket (NOTE [masks])."""
    if len(adv) == 1:
        (d, mask), = adv.items()
        hm = _host_mask(mask)
        cols = hm.columns(_bucket(hm.count))
        return _mask_gather(src, [_make(c) for c in cols], tuple(range(d, d + mask.ndim)), d,
                            hm.count)
    positions, entries = [], []
    for p in sorted(adv):
        t = adv[p]
        if t.dtype is D.bool_ or t.dtype is D.uint8:
            positions.extend(range(p, p + t.ndim))
            entries.extend(_host_mask(t).columns())
        else:
            positions.append(p)
            entries.append(t._value)
    shape = _index_shapes([e.shape for e in entries])
    n = shape[-1]
    size = _bucket(n)
    # every index whose last dim is the count's is padded (out of bounds) to the bucket
    padded = [_pad(e, -1, size, src._shape[p]) if e.ndim and e.shape[-1] == n else e
              for e, p in zip(entries, positions)]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    axis = (positions[0] if adjacent else 0) + len(shape) - 1
    return _mask_gather(src, [_make(e) for e in padded], tuple(positions), axis, n)


def masked_select(input, mask, *, out=None):
    if mask.dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_pair(mask._shape, input._shape)
    if out is not None:
        if out.dtype is not input.dtype:
            raise RuntimeError("masked_select(): self and result must have the same scalar type")
        raise NotImplementedError("eagergrad does not implement torch.masked_select(out=...) "
                                  "yet")
    count, pos = _host_mask(mask).flat(shape)
    arr = _jit(_select_k, shape=shape)(input._value, pos)
    return _out(MASKED_SELECT, (input, mask, _make(pos)), (shape, count), _cut(arr, 0, count),
                (input,))


def _broadcast_pair(a, b):
    """torch's broadcast of two shapes, with its error (a: the first tensor's)."""
    # (not _shapes.broadcast_shape: this error names the leftmost mismatch, that one the
    # rightmost, so their messages differ when several dimensions mismatch)
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a1, b1)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _masked_scatter_k(self, mask, source, shape, source_sym_sizes):
    """The k-th True element of the (broadcast) mask takes source's k-th element."""
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    out = jnp.broadcast_to(self, shape).reshape(-1)
    s = source.reshape(-1).astype(self.dtype)
    if s.size == 0:
        return out.reshape(shape)
    rank = jnp.clip(jnp.cumsum(m) - 1, 0, s.size - 1)
    return jnp.where(m, s[rank], out).reshape(shape)


def _masked_scatter_bwd_k(grad, mask, source_sym_sizes, grad_sizes):
    """source's gradient: grad's elements under the mask, in order, zeros after."""
    m = jnp.broadcast_to(mask, grad.shape).reshape(-1)
    n = math.prod(source_sym_sizes)
    idx = jnp.where(m, jnp.cumsum(m) - 1, n)
    return jnp.zeros(n, grad.dtype).at[idx].add(grad.reshape(-1), mode="drop").reshape(
        source_sym_sizes)


MASKED_SCATTER = defop("masked_scatter", _masked_scatter_k, inputs=("self", "mask", "source"),
                       attrs=("shape", "source_sym_sizes"),
                       self=lambda grad, mask: masked_fill(grad, mask, 0.0),
                       source=lambda grad, mask, source_sym_sizes:
                       call_op(MASKED_SCATTER_BWD, (grad, mask), (source_sym_sizes, grad._shape)))
MASKED_SCATTER_BWD = defop("masked_scatter_backward", _masked_scatter_bwd_k,
                           inputs=("grad", "mask"), attrs=("source_sym_sizes", "grad_sizes"),
                           grad=lambda grad, mask, source_sym_sizes, grad_sizes:
                           call_op(MASKED_SCATTER, (grad.new_zeros(grad_sizes), mask, grad),
                               (grad_sizes, source_sym_sizes)))


def masked_scatter(input, mask, source):
    """torch.masked_scatter: static shapes (a rank gather); the count is read back only
    for torch's check that source is long enough."""
    if mask.dtype is not D.bool_:
        if mask.dtype is D.uint8:
            import warnings
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this "
                          "behavior is now deprecated,please use a mask with dtype torch.bool "
                          "instead.", UserWarning, stacklevel=2)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype.scalar_name} and {source.dtype.scalar_name}")
    shape = _broadcast_pair(mask._shape, input._shape)
    if not isinstance(mask._value, jax.core.Tracer) and \
            source.numel() < _host_mask(mask).flat(shape)[0]:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return call_op(MASKED_SCATTER, (input, mask, source), (shape, source._shape))


def _masked_scatter_padded(zeros, mask, values):
    """masked_scatter of `values` (one per True element: a count-long vector) into
    `zeros`, with values padded to the bucket on the host (no compile per count);
    recorded as MaskedScatterBackward0 (masked_select's double backward)."""
    shape = zeros._shape
    v = _pad(values._value, 0, _bucket(values._shape[0]))
    arr = _jit(_masked_scatter_k, shape=shape, source_sym_sizes=v.shape)(
        zeros._value, mask._value, v)
    return _out(MASKED_SCATTER, (zeros, mask, values), (shape, values._shape), arr,
                (zeros, values))


def nonzero(input, *, as_tuple=False):
    """torch.nonzero: computed on the host copy of `input != 0` (no kernel to compile per
    count); NotImplementedError on jax tracers (a data-dependent shape)."""
    h = _host_mask(input).host
    cols = np.nonzero(h.reshape(-1) if h.ndim == 0 else h)
    if as_tuple:
        return tuple(_make(jax.device_put(c.astype(np.int64))) for c in cols)
    if h.ndim == 0:
        return _make(jax.device_put(np.zeros((int(h), 0), np.int64)))
    return _make(jax.device_put(np.stack(cols, 1).astype(np.int64)))


def _nonzero_static_k(self, size, fill_value):
    if self.ndim == 0:  # (torch: no columns, whatever the value)
        return jnp.zeros((size, 0), jnp.int64)
    if self.size == 0:  # (jnp.nonzero pads an empty array with zeros)
        return jnp.full((size, self.ndim), fill_value, jnp.int64)
    cols = jnp.nonzero(self, size=size, fill_value=fill_value)
    return jnp.stack(cols, 1).astype(jnp.int64)


NONZERO_STATIC = defop("nonzero_static", _nonzero_static_k, attrs=("size", "fill_value"),
                       dynamic=("fill_value",))


def nonzero_static(input, *, size, fill_value=-1):
    """torch.nonzero_static: nonzero's rows, cut or padded with `fill_value` to `size` rows
    (a static shape: one kernel, tracer-safe).

    >>> import eagergrad as torch
    >>> torch.nonzero_static(torch.tensor([0.0, 2.0, 3.0]), size=3)
    tensor([[ 1],
            [ 2],
            [-1]])
    """
    for name, v in (("size", size), ("fill_value", fill_value)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not "
                            f"{type(v).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return call_op(NONZERO_STATIC, (input,), (size, fill_value))


# ---- writes through one mask: static shapes (NOTE [masks]) ----------------------------------
def _mask_put_k(self, values, mask, accumulate, positions, values_view, values_sizes):
    v = values.astype(self.dtype).reshape(values_view)
    return jnp.where(_mask_b(mask, self.ndim, positions[0]), self + v if accumulate else v,
                     self)


def _mask_put_seq_k(self, values, mask, accumulate, positions, count):
    """The k-th True element of the mask takes the k-th of values (count along the
    mask's dim): a rank from the mask's cumulative sum, a gather, a where."""
    if count == 0:
        return self
    d = positions[0]
    pre, post = self.shape[:d], self.shape[d + mask.ndim:]
    v = jnp.broadcast_to(values.astype(self.dtype), pre + (count,) + post)
    rank = jnp.clip(jnp.cumsum(mask.reshape(-1)) - 1, 0, count - 1)
    full = jnp.take(v, rank, axis=d).reshape(self.shape)
    return jnp.where(_mask_b(mask, self.ndim, d), self + full if accumulate else full, self)


def _mask_take_k(self, mask, positions, count, self_sym_sizes):
    """self[mask] for a known count (the values' gradient of mask_put_seq)."""
    d = positions[0]
    k = mask.ndim
    flat = self.reshape(self.shape[:d] + (math.prod(mask.shape),) + self.shape[d + k:])
    pos = jnp.nonzero(mask.reshape(-1), size=count, fill_value=0)[0]
    return jnp.take(flat, pos, axis=d)


def _mask_put_self_grad(grad, indices, accumulate, positions):
    if accumulate:
        return grad
    return call_op(MASK_PUT, (grad, _zero_like0(grad), *indices), (False, positions, (), ()))


def _mask_put_values_grad(grad, indices, positions, values_view, values_sizes):
    mask = indices[0]
    d = positions[0]
    g = where(mask.reshape(mask._shape + (1,) * (grad.ndim - d - mask.ndim)), grad, 0.0)
    full = (1,) * (grad.ndim - len(values_view)) + tuple(values_view)
    g = g.sum_to_size(full)
    return g.reshape(values_sizes) if full != tuple(values_sizes) else g


MASK_PUT = defop("mask_put", lambda self, values, *indices, accumulate, positions, values_view,
                 values_sizes: _mask_put_k(self, values, indices[0], accumulate, positions,
                                           values_view, values_sizes),
                 inputs=("self", "values", "*indices"),
                 attrs=("accumulate", "positions", "values_view", "values_sizes"),
                 node="IndexPutBackward0",
                 self=_mask_put_self_grad, values=_mask_put_values_grad)
MASK_PUT_SEQ = defop("mask_put_seq", lambda self, values, *indices, accumulate, positions, count:
                     _mask_put_seq_k(self, values, indices[0], accumulate, positions, count),
                     inputs=("self", "values", "*indices"),
                     attrs=("accumulate", "positions", "count"), node="IndexPutBackward0",
                     self=_mask_put_self_grad,
                     values=lambda grad, indices, positions, count:
                     call_op(MASK_TAKE, (grad, *indices), (positions, count, grad._shape)))
MASK_TAKE = defop("mask_take", lambda self, *indices, positions, count, self_sym_sizes:
                  _mask_take_k(self, indices[0], positions, count, self_sym_sizes),
                  inputs=("self", "*indices"), attrs=("positions", "count", "self_sym_sizes"),
                  node="IndexBackward0",
                  self=lambda grad, indices, positions, count, self_sym_sizes:
                  call_op(MASK_PUT_SEQ, (grad.new_zeros(self_sym_sizes), grad, *indices),
                      (True, positions, count)))


def _mask_put(t, d, mask, value, accumulate):
    """index_put with one bool mask on dims d .. d + mask.ndim - 1 (NOTE [masks])."""
    k = mask.ndim
    shape = t._shape
    pre, post = shape[:d], shape[d + k:]
    vs = value._shape
    positions = tuple(range(d, d + k))
    if can_broadcast_to(vs, pre + (1,) + post):  # no dim of the value meets the count
        if len(vs) <= len(post):
            view = vs
        else:
            c = len(vs) - len(post) - 1
            view = vs[:c] + (1,) * k + vs[c + 1:]
        return call_op(MASK_PUT, (t, value, mask), (accumulate, positions, view, vs))
    if len(vs) > len(post):
        n = vs[len(vs) - len(post) - 1]
        if can_broadcast_to(vs, pre + (n,) + post):
            count = _known_count(mask)
            if count is None or count == n:
                return call_op(MASK_PUT_SEQ, (t, value, mask), (accumulate, positions, n))
    count = _known_count(mask)
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(vs)} cannot be broadcast "
                       f"to indexing result of shape "
                       f"{list(pre) + ['?' if count is None else count] + list(post)}")


def argwhere(input):
    """torch.argwhere: nonzero(input), one row of indices per non-zero element.

    >>> import eagergrad as torch
    >>> torch.argwhere(torch.tensor([[1, 0], [0, 3]]))
    tensor([[0, 0],
            [1, 1]])
    """
    return nonzero(input)
