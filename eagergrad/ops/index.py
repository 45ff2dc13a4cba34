"""torch's __getitem__ and __setitem__: basic indexing as views, then one advanced `index`
op (IndexBackward0) for the tensor indices, or `fill_`/`copy_`/`index_put_` in place for a
write; index_put. Bool masks among the indices go to masks.py (NOTE [masks]); the index,
index_put, gather/scatter and index_* ops are in scatter.py."""
import weakref

import numpy as np

from .. import _dtypes as D
from ..tensor import _make
from ..tensor import Tensor
from ._args import as_t
from ._table import call_op
from .fill import _copy, _fill, checked_fill
from .inplace import inplace, overlap_rule
from . import shape as S
from .masks import _host_mask, _index_shapes, MASK_PUT, _mask_put, _mask_read
from .scatter import _index, INDEX_PUT, INDEX_PUT_ACC, _number


# ---- __getitem__ ------------------------------------------------------------------------
def _to_index(x):
    if isinstance(x, Tensor):
        return x
    return as_t(x) if not isinstance(x, (list, tuple)) else _list_index(x)


def _list_index(x):
    from ..creation import tensor
    return tensor(x)


def _basic(self, index, keep_single_slice):
    """Apply the basic part of an index (ints select, slices slice, None unsqueezes,
    Ellipsis fills; full slices are skipped, as torch does) as views. Returns the view
    and the tensor indices left for its dims: {dim: long tensor, or bool mask covering
    dims dim .. dim + mask.ndim - 1}."""
    if not isinstance(index, tuple):
        if isinstance(index, slice) and keep_single_slice:
            return S._slice(_need_dim(self), 0, index.start, index.stop,
                            1 if index.step is None else index.step), {}
        index = (index,)
    if any(isinstance(i, bool) for i in index):
        raise NotImplementedError("eagergrad does not implement indexing with Python bools yet")
    specified = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if isinstance(i, Tensor) and i.dtype is D.bool_:
            specified += max(i.ndim, 1)
        else:
            specified += 1
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    result = self
    dim = 0
    adv = {}
    n_idx = 0  # index tensors so far, a mask counting as one per dim (torch's numbering)
    seen_ellipsis = False
    for i in index:
        if i is None:
            result = S.unsqueeze(result, dim)
            dim += 1
        elif i is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += self.ndim - specified
        elif isinstance(i, int):
            n = result._shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            result = S.select(result, dim, i)
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            n = result._shape[dim]
            if not (i.start in (None, 0) and (i.stop is None or i.stop >= n) and step == 1):
                result = S._slice(result, dim, i.start, i.stop, step)
            dim += 1
        else:
            t = _to_index(i)
            if t.dtype is D.bool_ or t.dtype is D.uint8:
                if t.ndim == 0:
                    raise NotImplementedError("eagergrad does not implement indexing with a "
                                              "0-dim bool tensor yet")
                _check_mask_shape(t, result, dim)
                adv[dim] = _uint8_warn(t)
                n_idx += t.ndim
                dim += t.ndim
            elif t.dtype._kind == 1:
                _check_bounds(t, result._shape[dim], n_idx)  # torch: k-th index tensor
                adv[dim] = t
                n_idx += 1
                dim += 1
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
    return result, adv


def _uint8_warn(t):
    if t.dtype is D.uint8:
        import warnings
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
    return t


def _check_mask_shape(mask, t, dim):
    for j, n in enumerate(mask._shape):
        if dim + j >= t.ndim:
            raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
        if t._shape[dim + j] != n:
            raise IndexError(
                f"The shape of the mask {list(mask._shape)} at index {j} does not "
                f"match the shape of the indexed tensor {list(t._shape)} at "
                f"index {dim + j}")


def getitem(self, index):
    """torch's indexing: basic indexing as views, then integer/bool tensors index the
    remaining dims in one `index` op (IndexBackward0)."""
    result, adv = _basic(self, index, keep_single_slice=True)
    if adv:
        for t in adv.values():
            if t.dtype is D.bool_ or t.dtype is D.uint8:
                return _mask_read(result, adv)
        positions = tuple(sorted(adv))
        return _index(result, [adv[p] for p in positions], positions)
    if result is self:  # x[...], x[:, :]: a shallow alias, as torch
        return call_op(S.ALIAS, (self,))
    return result


def _need_dim(t):
    if t.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    return t


def _check_bounds(idx, n, dim):
    arr = idx._value
    hit = _bounds.get(id(arr))
    if hit is not None and hit[0]() is arr:
        lo, hi = hit[1:]
    else:
        try:
            a = np.asarray(arr)
        except Exception:  # noqa: BLE001 - a tracer has no values
            return  # traced: jax clamps; cannot check without the values
        if not a.size:
            return
        lo, hi = a.min(), a.max()
        if len(_bounds) >= 256:
            _bounds.clear()
        _bounds[id(arr)] = (weakref.ref(arr), lo, hi)
    if hi >= n or lo < -n:
        bad = hi if hi >= n else lo
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


# min and max of index arrays seen (arrays are immutable): an index reused every step
# (x[arange(n), y]) is read back from the device once
_bounds = {}


# ---- writes: index_put and __setitem__ --------------------------------------------------
@overlap_rule(internal=False)
def index_put(input, indices, values, accumulate=False):
    """torch.index_put: `indices` a sequence of long tensors, bool masks (each covering
    as many dims as it has) or None (a full slice)."""
    adv = {}
    dim = 0
    for k, i in enumerate(indices):
        if i is None:
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got NoneType")
        t = _to_index(i)
        if t.dtype is D.bool_ or t.dtype is D.uint8:
            _check_mask_shape(t, input, dim)
            adv[dim] = _uint8_warn(t)
            dim += t.ndim
        else:
            adv[dim] = t
            dim += 1
    if dim > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {dim})")
    return _put(input, adv, as_t(values), accumulate)


def _put(t, adv, value, accumulate):
    """`t` with the elements the tensor indices `adv` ({dim: long tensor or bool mask},
    as _basic returns them) select set to `value` (added to with `accumulate`):
    torch's index_put, IndexPutBackward0 in the graph. One bool mask alone is written
    without a data-dependent shape (NOTE [masks])."""
    mask_dims = [p for p, i in adv.items() if i.dtype is D.bool_ or i.dtype is D.uint8]
    single = len(adv) == 1 and bool(mask_dims)
    if single and not accumulate and value.numel() == 1 and adv[mask_dims[0]].dtype is D.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")  # (torch's index_put_ runs masked_fill_ here)
    if value.dtype is not t.dtype:
        if value._wrapped:  # a Python number: torch makes it a tensor of t's dtype
            value = value.to(t.dtype)
        elif not (single and not accumulate and value.numel() == 1):
            # (one mask and a one-element value: torch's index_put_ runs masked_fill_ with
            # value.item(), any dtype; otherwise the dtypes must match)
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {t.dtype.scalar_name} for the destination and "
                               f"{value.dtype.scalar_name} for the source.")
    if single:
        mask = adv[mask_dims[0]]
        return _mask_put(t, mask_dims[0], mask if mask.dtype is D.bool_ else mask != 0, value,
                         accumulate)
    positions, tensors = [], []
    for p in sorted(adv):
        i = adv[p]
        if i.dtype is D.bool_ or i.dtype is D.uint8:  # among other indices: nonzero columns
            positions.extend(range(p, p + i.ndim))
            tensors.extend(_make(a) for a in _host_mask(i).columns())
        else:
            positions.append(p)
            tensors.append(i)
    if mask_dims:
        _index_shapes([x._shape for x in tensors])
    _check_put_shape(t, value, positions, tensors)
    return call_op(INDEX_PUT_ACC if accumulate else INDEX_PUT, (t, value, *tensors),
               (tuple(positions),))


def _check_put_shape(t, value, positions, tensors):
    """torch's error when the values do not broadcast to the indexing result."""
    from ..size import can_broadcast_to
    try:
        b = tuple(np.broadcast_shapes(*[x._shape for x in tensors]))
    except ValueError:
        return  # (index_put's own broadcast error comes from the kernel's checks)
    rest = [n for i, n in enumerate(t._shape) if i not in positions]
    if positions == list(range(positions[0], positions[0] + len(positions))):
        shape = tuple(rest[:positions[0]]) + b + tuple(rest[positions[0]:])
    else:
        shape = b + tuple(rest)
    if not can_broadcast_to(value._shape, shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} cannot "
                           f"be broadcast to indexing result of shape {list(shape)}")


_DIMS = tuple(tuple(range(k)) for k in range(65))


@overlap_rule(internal=False)
def _put_mask_number(t, v, mask):
    return call_op(MASK_PUT, (t, v, mask), (False, _DIMS[mask.ndim], (), ()))


@overlap_rule(internal=False)
def _put_index(t, v, adv):
    return _put(t, adv, v, False)


def _checked(value, dt):
    """A number written by __setitem__: an int beyond int64 refused; into an integer
    tensor, torch's overflow check (never a wrapped int), then a negative int in uint8
    range as its two's complement, as torch's."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if dt._kind != 1 or type(value) is bool:
        return value
    value = checked_fill(value, dt)
    return value % 256 if type(value) is int and value < 0 and dt is D.uint8 else value


def setitem(self, index, value):
    """torch's __setitem__: the basic part of the index as a view of self (nothing when it
    is all full slices), then `fill_` (0-dim value), `copy_`, or `index_put_` for tensor
    indices, in place on it."""
    if isinstance(index, Tensor) and index.dtype is D.bool_ and type(value) in (int, float, bool):
        # x[mask] = number (autograd.Function backwards, clamping): what the general path
        # below does, with the index parsing and the checks that cannot fail skipped
        k = len(index._shape)
        if k and index._shape == self._shape[:k]:
            return inplace(self, _put_mask_number, _number(_checked(value, self.dtype),
                                                           self.dtype), index)
    target, adv = _basic(self, index, keep_single_slice=False)
    if adv:
        if isinstance(value, Tensor):
            k = 0  # torch's slicePrefix1sSize: leading 1-dims viewed away (ViewBackward0)
            while k < value.ndim and value._shape[k] == 1:
                k += 1
            if k:
                value = value.view(value._shape[k:])
        elif type(value) in (int, float, bool):
            value = _number(_checked(value, target.dtype), target.dtype)
        else:
            value = as_t(value)
        return inplace(target, _put_index, value, adv)
    if type(value) in (int, float):
        value = _checked(value, target.dtype)
    value = as_t(value)
    if value.ndim == 0:
        return inplace(target, _fill, value.to(target.dtype))
    if value._shape != target._shape:
        # torch's copy_to: leading 1-dims viewed away, then expanded (ViewBackward0,
        # ExpandBackward0 in the graph; expand's errors)
        k = 0
        while k < value.ndim and value._shape[k] == 1:
            k += 1
        value = value.view(value._shape[k:]).expand(target._shape)
    return inplace(target, _copy, value)
