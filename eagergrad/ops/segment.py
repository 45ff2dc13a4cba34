"""torch.segment_reduce: reductions over consecutive segments of dimension 0, given by
their lengths or offsets (ATen's _segment_reduce; SegmentReduceBackward0). The initial
value, when given, takes part in every segment's reduction (and is an empty segment's
value); without it an empty segment gets the reduction's identity (mean: nan). The kernel
takes the segments as offsets (lengths: their running sum from 0); elements outside
[offsets[0], offsets[-1]) belong to no segment. Checks that read lengths' values are
skipped on traced values."""
import jax
import jax.numpy as jnp

from .._shapes import wrap_dim as _wrap_dim
from ..creation import arange, zeros
from ._table import call_op, defop
from .pointwise import where
from .reduce import cumsum
from .search import searchsorted
from .shape import cat

_REDUCES = ("sum", "prod", "mean", "max", "min")


def _ids(offsets, n):
    """Each element's segment; S (past the last) for elements in none."""
    s = offsets.shape[0] - 1
    i = jnp.arange(n)
    ids = jnp.searchsorted(offsets[1:], i, side="right")
    return jnp.where(i < offsets[0], s, ids)


def _segment_k(data, offsets, reduce, initial):
    s = offsets.shape[0] - 1
    ids = _ids(offsets, data.shape[0])
    init = None if initial is None else jnp.asarray(initial, data.dtype)
    if reduce in ("sum", "mean"):
        out = jax.ops.segment_sum(data, ids, s)
        if init is not None:
            out = out + init
        if reduce == "mean":
            n = (offsets[1:] - offsets[:-1]).astype(data.dtype)
            n = n.reshape((s,) + (1,) * (data.ndim - 1))
            out = out / n if init is None else jnp.where(n == 0, init, out / n)
        return out
    if reduce == "prod":
        out = jax.ops.segment_prod(data, ids, s)
        return out if init is None else out * init
    f = jax.ops.segment_max if reduce == "max" else jax.ops.segment_min
    out = f(data, ids, s)
    if init is not None:
        out = (jnp.maximum if reduce == "max" else jnp.minimum)(out, init)
    return out


def _gather(t, ids, valid):
    """t's row of each element's segment (zero for an element in none)."""
    g = t.index_select(0, ids.clamp(max=t.shape[0] - 1))
    return where(valid.view((-1,) + (1,) * (g.dim() - 1)), g, 0.0)


def _segment_back(grad, data, offsets, result, reduce, initial):
    """torch's _segment_reduce_backward (its CPU kernel's rules): max/min give each element
    equal to its segment's result (or NaN) the gradient, divided by their count when
    several tie and the gradient is positive; prod's zeros and NaNs get the product of
    the others."""
    n, s = data.shape[0], offsets.shape[0] - 1
    i = arange(n)
    ids = searchsorted(offsets[1:], i, right=True)
    valid = (i >= offsets[0]) & (ids < s)
    shape = (s,) + (1,) * (data.dim() - 1)
    if reduce == "sum":
        return _gather(grad, ids, valid)
    if reduce == "mean":
        count = (offsets[1:] - offsets[:-1]).clamp(min=1).to(data.dtype).view(shape)
        return _gather(grad / count, ids, valid)
    into = ids.clamp(max=s - 1)
    mine = valid.view((-1,) + shape[1:])

    def per_segment(mask):  # how many elements of each element's segment the mask marks
        c = zeros(result.shape, dtype=data.dtype).index_add(0, into, (mask & mine).to(
            data.dtype))
        return _gather(c, ids, valid)
    g = _gather(grad, ids, valid)
    if reduce in ("max", "min"):
        hit = ((data == _gather(result, ids, valid)) | data.isnan()) & mine
        count = per_segment(hit)
        return where(hit, where((count >= 2) & (g > 0), g / count.clamp(min=1), g), 0.0)
    nan, zero = data.isnan(), data == 0
    special = nan | zero
    plain = call_op(SEGMENT_REDUCE, (where(special, 1.0, data), offsets), ("prod", initial))
    other_nan = per_segment(nan) - nan.to(data.dtype)
    other_zero = per_segment(zero) - zero.to(data.dtype)
    others = where(other_nan > 0, float("nan"),
                   where(other_zero > 0, 0.0, _gather(plain, ids, valid)))
    out = _gather(result, ids, valid)
    return where(special, g * others, g * out / where(special, 1.0, data))


SEGMENT_REDUCE = defop("segment_reduce", _segment_k, inputs=("data", "offsets"),
                       attrs=("reduce", "initial"), nondiff=(1,), data=_segment_back)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce consecutive segments of dimension `axis` (given by `lengths` or `offsets`)
    with sum, prod, mean, max or min.

    >>> import eagergrad as torch
    >>> torch.segment_reduce(torch.arange(5.), "sum", lengths=torch.tensor([2, 0, 3]))
    tensor([1., 0., 9.])
    """
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.is_floating_point():
        raise NotImplementedError(f'"_segment_reduce_cpu" not implemented for '
                                  f"'{data.dtype.scalar_name}'")
    bounds = lengths if offsets is None else offsets
    if bounds.dim() != 1:
        raise NotImplementedError("eagergrad does not implement torch.segment_reduce with "
                                  "multi-dimensional lengths or offsets yet")
    axis = _wrap_dim(axis, data.dim())
    if axis != 0:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if offsets is None:
        if not unsafe and not isinstance(lengths._value, jax.core.Tracer):
            if bool((lengths < 0).any()):
                raise RuntimeError("lengths contains negative value!")
            if int(lengths.sum()) != data.shape[0]:
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis "
                                   "to sum to data.size(lengths.dim()-1) when !unsafe.")
        offsets = cat([zeros(1, dtype=lengths.dtype), cumsum(lengths, 0)])
    return call_op(SEGMENT_REDUCE, (data, offsets),
                   (reduce, None if initial is None else float(initial)))
