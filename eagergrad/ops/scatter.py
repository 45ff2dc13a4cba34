"""Advanced-indexing ops on index tensors: index (IndexBackward0) and index_put
(IndexPutBackward0), gather/scatter/scatter_add along a dim (scatter's reduce=),
scatter_reduce, masked_fill, index_select/index_add/index_copy/index_fill/index_reduce,
and put."""
import math

import jax
import jax.numpy as jnp

from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from ..tensor import _make
from ..tensor import Tensor
from ._args import as_t, no_out, wrapped
from ._autocast import autocast_op
from .pointwise import check_scalar, where
from ._table import defop, call_op
from .inplace import overlap_rule


# ---- index and index_put (IndexBackward0, IndexPutBackward0) ----------------------------
def _full_index(positions, ndim, indices):
    idx = [slice(None)] * ndim
    for p, i in zip(positions, indices):
        idx[p] = i
    return tuple(idx)


INDEX_PUT_ACC = defop("index_put_acc", lambda self, values, *indices, positions:
                      self.at[_full_index(positions, self.ndim, indices)].add(
                          values.astype(self.dtype)),
                      inputs=("self", "values", "*indices"), attrs=("positions",),
                      node="IndexPutBackward0",
                      self=lambda grad: grad,
                      values=lambda grad, indices, positions: _index(grad, indices,
                                                                     positions))
# torch's IndexBackward0 keeps self's sizes, not self: writing to self later is fine
INDEX = defop("index", lambda self, *indices, positions, self_sym_sizes:
              self[_full_index(positions, self.ndim, indices)],
              inputs=("self", "*indices"), attrs=("positions", "self_sym_sizes"),
              self=lambda grad, indices, positions, self_sym_sizes:
              call_op(INDEX_PUT_ACC, (grad.new_zeros(self_sym_sizes), grad, *indices),
                  (positions,)))


def _index(t, indices, positions):
    return call_op(INDEX, (t, *indices), (positions, t._shape))


# ---- _unsafe_masked_index(_put_accumulate): indexing where a mask may hide bad indices ---
def _clamped(self, indices):
    """The indices clamped into self's dims (those under a False mask may be anything)."""
    return tuple(jnp.clip(i, -n, n - 1) for i, n in zip(indices, self.shape))


UNSAFE_MASKED_PUT_ACC = defop(
    "_unsafe_masked_index_put_accumulate",
    lambda self, mask, values, *indices: self.at[_clamped(self, indices)].add(
        jnp.where(mask, values, jnp.zeros((), values.dtype)).astype(self.dtype)),
    inputs=("self", "mask", "values", "*indices"), nondiff=(1,),
    self=lambda grad: grad,
    values=lambda grad, mask, indices: call_op(UNSAFE_MASKED_INDEX, (grad, mask, *indices),
                                               (0, grad._shape)))
UNSAFE_MASKED_INDEX = defop(
    "_unsafe_masked_index",
    lambda self, mask, *indices, fill, self_sym_sizes: jnp.where(
        mask, self[_clamped(self, indices)], jnp.asarray(fill, self.dtype)),
    inputs=("self", "mask", "*indices"), attrs=("fill", "self_sym_sizes"), nondiff=(1,),
    self=lambda grad, mask, indices, self_sym_sizes: call_op(
        UNSAFE_MASKED_PUT_ACC, (grad.new_zeros(self_sym_sizes), mask, grad, *indices)))


def _unsafe_indices(indices):
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 2, but got "
                            f"{type(i).__name__}")
    return tuple(indices)


def _unsafe_masked_index(input, mask, indices, fill):
    """torch._unsafe_masked_index: input[indices] where mask is True, fill elsewhere (the
    indices clamped into range: under False they need not be valid).

    >>> import eagergrad as torch
    >>> torch._unsafe_masked_index(torch.arange(3.), torch.tensor([True, False]),
    ...                            [torch.tensor([2, 7])], -1.0)
    tensor([ 2., -1.])
    """
    return call_op(UNSAFE_MASKED_INDEX, (input, mask, *_unsafe_indices(indices)),
                   (fill.item() if isinstance(fill, Tensor) else fill, input._shape))


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """torch._unsafe_masked_index_put_accumulate: input with values added at indices where
    mask is True (indices clamped into range).

    >>> import eagergrad as torch
    >>> torch._unsafe_masked_index_put_accumulate(torch.zeros(3), torch.tensor([True, False]),
    ...                                           [torch.tensor([1, 9])], torch.ones(2))
    tensor([0., 1., 0.])
    """
    return call_op(UNSAFE_MASKED_PUT_ACC,
                   (input, mask, values, *_unsafe_indices(indices)))


# ---- gather / scatter along a dim --------------------------------------------------------
def _dim_index(index, dim):
    """Full integer index tuple addressing `index`'s positions, with `index` on dim."""
    grids = jnp.meshgrid(*[jnp.arange(n) for n in index.shape], indexing="ij")
    grids[dim] = index
    return tuple(grids)


def _nonempty(a):
    """A 0-dim array as a one-element vector, as torch's scatter/gather kernels see it."""
    return a.reshape(1) if a.ndim == 0 else a


def _gather_k(self, index, dim):
    if index.size == 0:
        return jnp.zeros(index.shape, self.dtype)
    return _nonempty(self)[_dim_index(_nonempty(index), dim)].reshape(index.shape)


def _scatter_k(self, index, src, dim, reduce):
    if index.size == 0:
        return self
    out, index = _nonempty(self), _nonempty(index)
    idx = _dim_index(index, dim)
    src = _nonempty(src)[tuple(slice(0, n) for n in index.shape)].astype(self.dtype)
    out = out.at[idx].add(src) if reduce == "add" else out.at[idx].set(src)
    return out.reshape(self.shape)


SCATTER_ADD = defop("scatter_add", lambda self, index, src, dim: _scatter_k(self, index, src, dim,
                                                                            "add"),
                    inputs=("self", "index", "src"), attrs=("dim",),
                    self=lambda grad: grad,
                    src=lambda grad, index, dim: _gather_u(grad, dim, index))
GATHER = defop("gather", _gather_k, inputs=("self", "index"), attrs=("dim",),
               self=lambda grad, self, index, dim:
               call_op(SCATTER_ADD, (self.new_zeros(self._shape).to(grad.dtype), index, grad),
                       (dim,)))
SCATTER = defop("scatter", lambda self, index, src, dim: _scatter_k(self, index, src, dim, None),
                inputs=("self", "index", "src"), attrs=("dim",), node="ScatterBackward0",
                self=lambda grad, index, dim: _scatter_zero_u(grad, dim, index),
                src=lambda grad, index, dim: _gather_u(grad, dim, index))
SCATTER_V = defop("scatter_value", lambda self, index, value, dim:
                  _scatter_k(self, index, jnp.broadcast_to(value, index.shape), dim, None),
                  inputs=("self", "index", "value"), attrs=("dim",), node="ScatterBackward1",
                  self=lambda grad, index, dim: _scatter_zero_u(grad, dim, index))


# the formulas' gathers and scatters skip gather's and scatter's checks: their forward call
# made them, and take_along_dim's negative indices (read from the end) would fail them
def _gather_u(t, dim, index):
    return call_op(GATHER, (t, index), (dim,))


def _scatter_zero_u(t, dim, index):
    return call_op(SCATTER_V, (t, index, _zero_like0(t)), (dim,))


def _check_index(index, name):
    if index.numel() and index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _size1(t, d):
    """torch's ensure_nonempty_size: a 0-dim tensor's size 1."""
    return t._shape[_wrap_dim(d, t.ndim)] if t.ndim else 1


def _check_gather_shapes(input, index, d):
    """torch's gather_shape_check (ScatterGatherChecks.h)."""
    n = max(input.ndim, 1)
    if n != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i in range(n):
        if i != d and _size1(index, i) > _size1(input, i):
            raise RuntimeError(f"Size does not match at dimension {i} expected index "
                               f"{list(index._shape)} to be no larger than self "
                               f"{list(input._shape)} apart from dimension {d}")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = _wrap_dim(dim, input.ndim)
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {input.dtype.cpp_name}, but got "
                           f"{out.dtype.cpp_name} instead")
    if index.numel():
        _check_index(index, "gather")
        _check_gather_shapes(input, index, d)
        _check_scatter_values(index, input, d)
    no_out(out, "gather")
    return call_op(GATHER, (input, index), (d,))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = _wrap_dim(dim, input.ndim)
    if src is None:
        src = value
    t = src if isinstance(src, Tensor) else None
    _check_index(index, "scatter")
    if t is not None:
        _same_dtype(input, t)
    _check_scatter_shapes(input, index, t, d)
    _check_scatter_values(index, input, d)
    if reduce is not None:
        return _scatter_with_reduce(input, d, index, src, reduce)
    if t is not None:
        return call_op(SCATTER, (input, index, src), (d,))
    return call_op(SCATTER_V, (input, index, as_t(src).to(input.dtype)), (d,))


def _same_dtype(input, src):
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


def scatter_add(input, dim, index, src):
    d = _wrap_dim(dim, input.ndim)
    _check_index(index, "scatter")
    _same_dtype(input, src)
    _check_scatter_shapes(input, index, src, d)
    _check_scatter_values(index, input, d)
    return call_op(SCATTER_ADD, (input, index, src), (d,))


def zeros_scatter(grad, dim, indices, sizes):
    """value_selecting_reduction_backward: grad put at `indices` along dim, zeros elsewhere."""
    from ..creation import zeros
    return call_op(SCATTER, (zeros(sizes, dtype=grad.dtype), indices, grad),
                   (_wrap_dim(dim, len(sizes)),))


# ---- writes: index_put, masked_fill, index_add, index_copy, index_fill ------------------
INDEX_PUT = defop("index_put", lambda self, values, *indices, positions:
                  self.at[_full_index(positions, self.ndim, indices)].set(
                      values.astype(self.dtype)),
                  inputs=("self", "values", "*indices"), attrs=("positions",),
                  self=lambda grad, indices, positions:
                  call_op(INDEX_PUT, (grad, _zero_like0(grad), *indices), (positions,)),
                  values=lambda grad, indices, positions: _index(grad, indices, positions))


def _zero_like0(t):
    return wrapped(0.0).to(t.dtype)


# (a number is an array argument, not a static one: no compile per distinct value)
MASKED_FILL = defop("masked_fill", lambda self, mask, value: jnp.where(
                    mask, value.astype(self.dtype), self), inputs=("self", "mask", "value"),
                    node="MaskedFillBackward0",
                    self=lambda grad, mask: masked_fill(grad, mask, 0.0))
MASKED_FILL_T = defop("masked_fill_tensor", lambda self, mask, value:
                      jnp.where(mask, _real_unless_complex(value, self.dtype).astype(self.dtype),
                                self),
                      inputs=("self", "mask", "value"), node="MaskedFillBackward1",
                      self=lambda grad, mask: masked_fill(grad, mask, 0.0),
                      value=lambda grad, mask: where(mask, grad, 0.0).sum())


def _real_unless_complex(a, dtype):
    """a complex value's real part for a real dtype (its imaginary part checked zero)."""
    return jnp.real(a) if jnp.iscomplexobj(a) and not jnp.issubdtype(dtype, jnp.complexfloating) \
        else a


@overlap_rule(internal=False, partial=False)
def masked_fill(input, mask, value):
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.cpp_name}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        if value.dtype is not input.dtype and not isinstance(value._value, jax.core.Tracer):
            _checked_convert(value._value.item(), input.dtype)  # (torch's value.item())
        return call_op(MASKED_FILL_T, (input, mask, value))
    value = _checked_convert(value, input.dtype)
    return call_op(MASKED_FILL, (input, mask, _number(value, input.dtype)))


def _checked_convert(v, dt):
    """torch's c10::checked_convert of the number v to dtype dt: raises where it overflows
    (an imaginary part into a real dtype; a finite value past a floating dtype's range);
    v, real if dt is."""
    check_scalar(v, dt)  # (the integral dtypes)
    if dt is D.uint8 and isinstance(v, int) and v < 0:
        return v + 256  # (two's complement, as torch's conversion)
    if dt is D.bool_ or dt._kind == 1:
        return v
    parts = [v]
    if isinstance(v, complex):
        parts = [v.real, v.imag] if dt.is_complex else [v.real]
        bad = not dt.is_complex and v.imag != 0
        v = v if dt.is_complex else v.real
    else:
        bad = False
    big = float(jnp.finfo(dt.to_real().np).max)
    bad = bad or any(not math.isinf(p) and abs(float(p)) > big for p in parts)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dt.cpp_name} without overflow")
    return v


def _number(v, dt):
    """A Python number as a 0-dim tensor of dtype dt (torch converts it to the written
    tensor's dtype). Cached, except -0.0 and NaN, which the number cache would confuse
    with 0.0 (equal keys) or never find (NaN != NaN)."""
    if type(v) is float and (v != v or (v == 0.0 and math.copysign(1.0, v) < 0)):
        return _make(jnp.asarray(v, dt.np))
    return wrapped(v, dt)


def _along(dim, ndim, index):
    return (slice(None),) * dim + (index,)


INDEX_SELECT = defop("index_select", lambda self, index, dim, self_sym_sizes:
                     jnp.take(self, index, axis=dim),
                     inputs=("self", "index"), attrs=("dim", "self_sym_sizes"),
                     self=lambda grad, index, dim, self_sym_sizes:
                     index_add(grad.new_zeros(self_sym_sizes), dim, index, grad))
INDEX_ADD = defop("index_add", lambda self, index, source, dim, alpha:
                  self.at[_along(dim, self.ndim, index)].add(
                      (source * alpha).astype(self.dtype)),
                  inputs=("self", "index", "source"), attrs=("dim", "alpha"),
                  self=lambda grad: grad,
                  source=lambda grad, index, dim, alpha:
                  index_select(grad, dim, index) * alpha if alpha != 1 else
                  index_select(grad, dim, index))
INDEX_COPY = defop("index_copy", lambda self, index, source, dim:
                   self.at[_along(dim, self.ndim, index)].set(source.astype(self.dtype)),
                   inputs=("self", "index", "source"), attrs=("dim",),
                   self=lambda grad, index, dim: call_op(INDEX_FILL, (grad, index), (dim, 0.0)),
                   source=lambda grad, index, dim: index_select(grad, dim, index))
INDEX_FILL = defop("index_fill", lambda self, index, dim, value:
                   self.at[_along(dim, self.ndim, index)].set(jnp.asarray(value, self.dtype)),
                   inputs=("self", "index"), attrs=("dim", "value"),
                   self=lambda grad, index, dim: call_op(INDEX_FILL, (grad, index), (dim, 0.0)))


def _index_arg(index, name):
    """torch's checks of index_copy_/index_fill_'s index (each its own)."""
    dt, n = index.dtype, index.ndim
    if name == "index_copy":
        if dt is not D.int64:
            raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                               f"{dt.scalar_name}")
        if n > 1:
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {n})")
    else:
        if dt is not D.int64:
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        if n > 1:
            raise RuntimeError("Index has to be a vector/scalar")
    return index


def index_select(input, dim, index, *, out=None):
    if index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    if input.ndim and index.ndim == 0:  # (a 0-dim index selects as a one-element vector)
        index = index.reshape(1)
    r = _index_range(index)
    n = input._shape[d] if input.ndim else 1
    if r is not None and (r[0] < 0 or r[1] >= n):
        raise RuntimeError(f"INDICES element is out of DATA bounds, id="
                           f"{r[1] if r[1] >= n else r[0]} axis_dim={n}")
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError("index_select(): self and result must have the same scalar type")
    no_out(out, "index_select")
    return call_op(INDEX_SELECT, (input, index), (d, input._shape))


@overlap_rule(partial=False)
def index_add(input, dim, index, source, *, alpha=1):
    d = _wrap_dim(dim, input.ndim)
    _index_func_checks("index_add", input, d, index, source)
    r = _index_range(index)
    n = input._shape[d] if input.ndim else 1
    if r is not None and (r[0] < 0 or r[1] >= n):
        raise RuntimeError(f"index {r[1] if r[1] >= n else r[0]} is out of bounds for dimension "
                           f"{d} with size {n}")
    return call_op(INDEX_ADD, (input, index, source), (d, alpha))


def _index_func_checks(func, input, d, index, source):
    """torch's index_func_meta_impl (index_add, index_reduce): index a vector of int32/int64,
    source of input's dtype with one slice per index and input's other sizes."""
    if index.ndim > 1:
        raise IndexError(f"{func}_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {index.dtype.scalar_name} and size: "
                         f"{list(index._shape)}")
    if index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError(f"{func}_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{func}_(): self ({input.dtype.scalar_name}) and source "
                           f"({source.dtype.scalar_name}) must have the same scalar type")
    if d != 0 and d >= source.ndim:
        raise RuntimeError(f"{func}_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    n = source._shape[d] if source.ndim else 1
    if index.numel() != n:
        raise RuntimeError(f"{func}_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({n}), for dim: {d}")
    a, b = list(input._shape), list(source._shape)
    if a and b:
        del a[d], b[d]
    if a != b:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input._shape)} "
                           f"source.shape = {list(source._shape)}")


@autocast_op("index_copy")
@overlap_rule(partial=False)
def index_copy(input, dim, index, source):
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {input.dtype.scalar_name} and (source) "
                           f"{source.dtype.scalar_name}")
    index = _index_arg(index, "index_copy")
    if input.ndim and source.ndim and source.ndim != input.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    if not index.ndim and input.ndim:  # (torch: a 0-d index is one index, not a select)
        index = index.reshape(1)
    return call_op(INDEX_COPY, (input, index, source), (_wrap_dim(dim, input.ndim),))


@overlap_rule(internal=False, partial=False)
def index_fill(input, dim, index, value):
    return call_op(INDEX_FILL, (input, _index_arg(index, "index_fill")),
               (_wrap_dim(dim, input.ndim), value))


# ---- value-dependent checks (skipped on tracers) -------------------------------------------
_ranges = {}  # id(index array) -> (weakref, min, max): an index reused is read back once


def _index_range(idx):
    """(min, max) of a concrete integer index tensor (over every rank's values of a
    rank-local one), None if empty or traced."""
    found = [r for r in map(_array_range, idx._rank_values()) if r is not None]
    if not found:
        return None
    return min(r[0] for r in found), max(r[1] for r in found)


def _array_range(arr):
    import weakref
    import jax
    import numpy as np
    hit = _ranges.get(id(arr))
    if hit is not None and hit[0]() is arr:
        return hit[1:]
    if isinstance(arr, jax.core.Tracer) or arr.size == 0:
        return None
    a = np.asarray(arr)
    if len(_ranges) >= 256:
        _ranges.clear()
    out = _ranges[id(arr)] = (weakref.ref(arr), int(a.min()), int(a.max()))
    return out[1:]


def _warn_once(key, message):
    if key not in _WARNED:
        import warnings
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=4)


_WARNED = set()


def _no_complex_grad(name, *tensors):
    from ..engine.grad_mode import STATE
    if STATE.grad and any(t.dtype.is_complex for t in tensors) and \
            any(t.requires_grad for t in tensors):
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           "with complex dtype.")


# ---- scatter(reduce=...): torch records a NotImplemented node ------------------------------
def _as_1d(kernel):
    """A scatter kernel that also takes 0-dim tensors (as one-element vectors)."""
    def k(self, index, src, **attrs):
        if self.ndim:
            return kernel(self, index, src, **attrs)
        return kernel(self.reshape(1), index.reshape(1), src.reshape(1), **attrs).reshape(())
    return k


@_as_1d
def _legacy_k(self, index, src, dim, reduce):
    idx = _dim_index(index, dim)
    src = jnp.broadcast_to(src, index.shape) if src.ndim == 0 else \
        src[tuple(slice(0, n) for n in index.shape)]
    src = src.astype(self.dtype)
    return self.at[idx].add(src) if reduce == "add" else self.at[idx].multiply(src)


def _not_implemented(grad):
    raise RuntimeError("derivative for aten::scatter is not implemented")


SCATTER_REDUCE_ARG = defop("scatter_reduce_arg", _legacy_k, inputs=("self", "index", "src"),
                           attrs=("dim", "reduce"), node="NotImplemented",
                           self=_not_implemented, src=_not_implemented)
SCATTER_VALUE_REDUCE = defop("scatter_value_reduce", _legacy_k,
                             inputs=("self", "index", "src"), attrs=("dim", "reduce"),
                             node="NotImplemented", self=_not_implemented)


def _grad_edges_only(out):
    """torch's NotImplemented node has edges only to the inputs that require grad."""
    for t in out if isinstance(out, tuple) else (out,):
        fn = t._grad_fn
        if fn is not None and None in fn._next:
            fn._next = tuple(e for e in fn._next if e is not None)
    return out


def _scatter_with_reduce(input, d, index, src, reduce):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        _warn_once("scatter_reduce", "The reduce argument of torch.scatter with Tensor src is "
                   "deprecated and will be removed in a future PyTorch release. Use "
                   "torch.scatter_reduce instead for more reduction options.")
        return _grad_edges_only(call_op(SCATTER_REDUCE_ARG, (input, index, src), (d, reduce)))
    return call_op(SCATTER_VALUE_REDUCE, (input, index, as_t(src).to(input.dtype)), (d, reduce))


# ---- scatter_reduce (ScatterReduceBackward0) ------------------------------------------------
def _identity(reduce, dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if jnp.issubdtype(dt, jnp.inexact):
        return -jnp.inf if reduce == "amax" else jnp.inf
    info = jnp.iinfo(dt)
    return info.min if reduce == "amax" else info.max


def _segment_prod(self, at, src):
    """The product of the src elements sent to each position of self (`at`: their full
    coordinates), and where any was sent: a segmented scan over src sorted by target,
    which jax can differentiate (its scatter-multiply it cannot, at repeated targets)."""
    target = jnp.ravel_multi_index(at, self.shape, mode="clip").reshape(-1)
    order = jnp.argsort(target, stable=True)
    t, v = target[order], src.reshape(-1)[order]
    start = jnp.concatenate([jnp.ones(1, bool), t[1:] != t[:-1]])
    last = jnp.concatenate([t[1:] != t[:-1], jnp.ones(1, bool)])

    def combine(a, b):
        return jnp.where(b[1], b[0], a[0] * b[0]), a[1] | b[1]
    prods, _ = jax.lax.associative_scan(combine, (v, start))
    spot = jnp.where(last, t, self.size)  # (the segment ends: one per target)
    flat = jnp.ones(self.size, self.dtype).at[spot].set(prods, mode="drop")
    hit = jnp.zeros(self.size, bool).at[spot].set(True, mode="drop")
    return flat.reshape(self.shape), hit.reshape(self.shape)


def _reduce_into(self, at, src, reduce, include_self):
    """self with src reduced into positions `at` (src's full coordinates in self)."""
    boolean = self.dtype == jnp.bool_
    if boolean:
        self, src = self.astype(jnp.int32), src.astype(jnp.int32)
    src = src.astype(self.dtype)
    if reduce == "prod":
        if src.size == 0:
            return self != 0 if boolean else self
        prods, hit = _segment_prod(self, at, src)
        out = jnp.where(hit, (self if include_self else 1) * prods, self)
        return out != 0 if boolean else out
    if not include_self:
        self = self.at[at].set(jnp.asarray(_identity(reduce, self.dtype), self.dtype))
    if reduce in ("sum", "mean"):
        out = self.at[at].add(src)
    elif reduce == "amax":
        out = self.at[at].max(src)
    else:
        out = self.at[at].min(src)
    if reduce == "mean":
        n = jnp.full(self.shape, 1 if include_self else 0, self.dtype).at[at].add(
            jnp.ones(src.shape, self.dtype))
        n = jnp.where(n == 0, 1, n)
        out = out / n if jnp.issubdtype(self.dtype, jnp.inexact) else out // n
    return out != 0 if boolean else out


@_as_1d
def _scatter_reduce_k(self, index, src, dim, reduce, include_self):
    at = _dim_index(index, dim)
    src = src[tuple(slice(0, n) for n in index.shape)]
    return _reduce_into(self, at, src, reduce, include_self)


def _sr_self(grad, self, index, src, dim, reduce, include_self, result):
    """torch's scatter_reduce_backward, self's part."""
    if reduce == "sum":
        g = grad
    elif reduce == "prod":
        masked = self.masked_fill(self == 0, 1)
        g = grad * scatter_reduce(masked, dim, index, src, reduce, include_self=include_self) \
            / masked
    elif reduce == "mean":
        n = (grad.new_ones(grad._shape) if include_self else grad.new_zeros(grad._shape)) \
            .scatter_add(dim, index, src.new_ones(src._shape).to(grad.dtype))
        g = grad / n.masked_fill(n == 0, 1)
    else:
        g = (self == result) * (grad / _distribute(self, index, src, dim, result))
    return g if include_self else g.scatter(dim, index, 0)


def _distribute(self, index, src, dim, result):
    """amax/amin: how many of self and the scattered src elements equal each result."""
    at_result = (self == result).to(self.dtype)
    return at_result.scatter_add(dim, index, (src == result.gather(dim, index)).to(self.dtype))


def _sr_src(grad, self, index, src, dim, reduce, include_self, result):
    """torch's scatter_reduce_backward, src's part (its DelayedError for a double backward
    through > 1 zeros scattered to one position is not reproduced)."""
    if reduce == "sum":
        return grad.gather(dim, index)
    if reduce == "prod":
        zero = src == 0
        n_zeros = self.new_zeros(self._shape).scatter_add(dim, index, zero.to(self.dtype)) \
            .gather(dim, index)
        single = zero & (n_zeros == 1)
        without = scatter_reduce(self, dim, index, src.masked_fill(single, 1), reduce,
                                 include_self=include_self)
        return where(single, (grad * without).gather(dim, index),
                     (grad * result).gather(dim, index) / src.masked_fill(zero, 1))
    if reduce == "mean":
        n = (grad.new_ones(grad._shape) if include_self else grad.new_zeros(grad._shape)) \
            .scatter_add(dim, index, src.new_ones(src._shape).to(grad.dtype))
        n = n.masked_fill(n == 0, 1)
        return grad.gather(dim, index) / n.gather(dim, index)
    value = result.gather(dim, index)
    return (src == value) * (grad / _distribute(self, index, src, dim, result)).gather(dim, index)


SCATTER_REDUCE = defop("scatter_reduce", _scatter_reduce_k, inputs=("self", "index", "src"),
                       attrs=("dim", "reduce", "include_self"), self=_sr_self, src=_sr_src)
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _check_scatter_shapes(input, index, src, d):
    """torch's scatter_shape_check (ScatterGatherChecks.h); src None for a value."""
    if not index.numel():
        return
    n = max(input.ndim, 1)
    if n != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    bad = any(i != d and _size1(index, i) > _size1(input, i) for i in range(n))
    if not bad and src is not None:  # (src's sizes read over self's dims: IndexError past it)
        bad = any(_size1(index, i) > _size1(src, i) for i in range(n))
    if src is None:
        if bad:
            raise RuntimeError(f"Expected index {list(index._shape)} to be no larger than self "
                               f"{list(input._shape)} apart from dimension {d}")
        return
    if max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if bad:
        raise RuntimeError(f"Expected index {list(index._shape)} to be no larger than self "
                           f"{list(input._shape)} apart from dimension {d} and to be no larger "
                           f"size than src {list(src._shape)}")


def _check_scatter_values(index, input, d):
    r = _index_range(index)
    n = input._shape[d] if input.ndim else 1
    if r is not None and (r[0] < 0 or r[1] >= n):
        raise RuntimeError(f"index {r[1] if r[1] >= n else r[0]} is out of bounds for dimension "
                           f"{d} with size {n}")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src reduced into input at `index` along `dim` ("sum", "prod",
    "mean", "amax", "amin"; include_self=False leaves input's values out).

    >>> import eagergrad as torch
    >>> torch.tensor([1.0, 2.0]).scatter_reduce(0, torch.tensor([0, 0]),
    ...                                         torch.tensor([5.0, 7.0]), "amax")
    tensor([7., 2.])
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    _check_index(index, "scatter")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _wrap_dim(dim, input.ndim)
    _check_scatter_shapes(input, index, src, d)
    if input.dtype.is_complex and reduce in ("amax", "amin"):
        raise NotImplementedError(f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not "
                                  f"implemented for '{input.dtype.scalar_name}'")
    if input.dtype is D.bool_ and reduce == "mean":
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    _check_scatter_values(index, input, d)
    _no_complex_grad("scatter_reduce", input, src)
    return call_op(SCATTER_REDUCE, (input, index, src), (d, reduce, bool(include_self)))


# ---- index_reduce (IndexReduceBackward0) ----------------------------------------------------
def _index_reduce_k(self, index, source, dim, reduce, include_self):
    if self.ndim == 0:
        self, source, dim = self.reshape(1), source.reshape(1), 0
        return _index_reduce_k(self, index.reshape(1), source, dim, reduce,
                               include_self).reshape(())
    grids = jnp.meshgrid(*[jnp.arange(n) for n in source.shape], indexing="ij")
    grids[dim] = index.reshape(-1)[grids[dim]]
    return _reduce_into(self, tuple(grids), source, reduce, include_self)


def _ir_parts(grad, self, index, source, dim, reduce, include_self, result):
    """torch's index_reduce_backward: (self's gradient, source's gradient)."""
    if reduce == "prod":
        masked = self.masked_fill(self == 0, 1)
        g_self = grad * index_reduce(masked, dim, index, source, reduce,
                                     include_self=include_self) / masked
        zero = source == 0
        n_zeros = self.new_zeros(self._shape).index_add(dim, index, zero.to(self.dtype)) \
            .index_select(dim, index)
        single = zero & (n_zeros == 1)
        without = index_reduce(self, dim, index, source.masked_fill(single, 1), reduce,
                               include_self=include_self)
        g_src = where(single, (grad * without).index_select(dim, index),
                      (grad * result).index_select(dim, index) / source.masked_fill(zero, 1))
    elif reduce == "mean":
        n = (grad.new_ones(grad._shape) if include_self else grad.new_zeros(grad._shape)) \
            .index_add(dim, index, source.new_ones(source._shape).to(grad.dtype))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, grad.index_select(dim, index) / n.index_select(dim, index)
    else:
        value = result.index_select(dim, index)
        self_is = (self == result).to(self.dtype)
        src_is = (source == value).to(self.dtype)
        spread = grad / self_is.index_add(dim, index, src_is)
        g_self, g_src = self_is * spread, src_is * spread.index_select(dim, index)
    return (g_self if include_self else g_self.index_fill(dim, index, 0)), g_src


INDEX_REDUCE = defop("index_reduce", _index_reduce_k, inputs=("self", "index", "source"),
                     attrs=("dim", "reduce", "include_self"),
                     self=lambda grad, self, index, source, dim, reduce, include_self, result:
                     _ir_parts(grad, self, index, source, dim, reduce, include_self, result)[0],
                     source=lambda grad, self, index, source, dim, reduce, include_self, result:
                     _ir_parts(grad, self, index, source, dim, reduce, include_self, result)[1])


@overlap_rule(partial=False)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce (beta): source's slices reduced into input's at `index` along
    `dim` ("prod", "mean", "amax", "amin").

    >>> import eagergrad as torch
    >>> torch.ones(3).index_reduce(0, torch.tensor([0, 0]), torch.tensor([2.0, 3.0]), "prod")
    tensor([6., 1., 1.])
    """
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _wrap_dim(dim, input.ndim)
    _index_func_checks("index_reduce", input, d, index, source)
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"index_func_\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    r = _index_range(index)
    if r is not None and (r[0] < 0 or r[1] >= (input._shape[d] if input.ndim else 1)):
        raise IndexError("index out of range in self")
    return call_op(INDEX_REDUCE, (input, index, source), (d, reduce, bool(include_self)))


# ---- put (PutBackward0; take is in tensor_ops.py) ----------------------------------------------
def _flat_index(index, numel):
    i = index.reshape(-1)
    return jnp.where(i < 0, i + numel, i)


def _put_k(self, index, source, accumulate):
    flat = self.reshape(-1)
    i = _flat_index(index, flat.size)
    s = source.reshape(-1).astype(self.dtype)
    out = flat.at[i].add(s) if accumulate else flat.at[i].set(s)
    return out.reshape(self.shape)


PUT = defop("put", _put_k, inputs=("self", "index", "source"), attrs=("accumulate",),
            self=lambda grad, index, source, accumulate: grad if accumulate else
            put(grad, index, source.new_zeros(source._shape).to(grad.dtype)),
            source=lambda grad, index, source: grad.take(index).reshape(source._shape))


def _check_flat_index(index, numel, name):
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    r = _index_range(index)
    if r is not None and (r[0] < -numel or r[1] >= numel):
        bad = r[1] if r[1] >= numel else r[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} "
                         "elements.")


@overlap_rule(partial=False)
def put(input, index, source, accumulate=False):
    """torch.put: source's elements written (or added) at flat indices of input.

    >>> import eagergrad as torch
    >>> torch.zeros(2, 2).put(torch.tensor([3]), torch.tensor([1.0]))
    tensor([[0., 0.],
            [0., 1.]])
    """
    if not accumulate:  # (duplicate indices: the last write wins in any order, in torch)
        from .._settings import alert_not_deterministic
        alert_not_deterministic("put_")
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype.scalar_name} and source.dtype = "
                           f"{source.dtype.scalar_name}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    _check_flat_index(index, input.numel(), "put_")
    return call_op(PUT, (input, index, source), (bool(accumulate),))
