"""Advanced-indexing ops on index tensors: index (IndexBackward0) and index_put
(IndexPutBackward0), gather/scatter/scatter_add along a dim, masked_fill, and
index_select/index_add/index_copy/index_fill."""
import math

import jax.numpy as jnp

from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from ..tensor import _make
from ..tensor import Tensor
from ._args import as_t, wrapped
from .pointwise import where
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


# ---- gather / scatter along a dim --------------------------------------------------------
def _dim_index(index, dim):
    """Full integer index tuple addressing `index`'s positions, with `index` on dim."""
    grids = jnp.meshgrid(*[jnp.arange(n) for n in index.shape], indexing="ij")
    grids[dim] = index
    return tuple(grids)


def _gather_k(self, index, dim):
    return self[_dim_index(index, dim)]


def _scatter_k(self, index, src, dim, reduce):
    idx = _dim_index(index, dim)
    src = src[tuple(slice(0, n) for n in index.shape)].astype(self.dtype)
    return self.at[idx].add(src) if reduce == "add" else self.at[idx].set(src)


SCATTER_ADD = defop("scatter_add", lambda self, index, src, dim: _scatter_k(self, index, src, dim,
                                                                            "add"),
                    inputs=("self", "index", "src"), attrs=("dim",),
                    self=lambda grad: grad,
                    src=lambda grad, index, dim: gather(grad, dim, index))
GATHER = defop("gather", _gather_k, inputs=("self", "index"), attrs=("dim",),
               self=lambda grad, self, index, dim:
               scatter_add(self.new_zeros(self._shape).to(grad.dtype), dim, index, grad))
SCATTER = defop("scatter", lambda self, index, src, dim: _scatter_k(self, index, src, dim, None),
                inputs=("self", "index", "src"), attrs=("dim",), node="ScatterBackward0",
                self=lambda grad, index, dim: scatter(grad, dim, index, 0.0),
                src=lambda grad, index, dim: gather(grad, dim, index))
SCATTER_V = defop("scatter_value", lambda self, index, value, dim:
                  _scatter_k(self, index, jnp.broadcast_to(value, index.shape), dim, None),
                  inputs=("self", "index", "value"), attrs=("dim",), node="ScatterBackward1",
                  self=lambda grad, index, dim: scatter(grad, dim, index, 0.0))


def _check_index(index, name):
    if index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def gather(input, dim, index, *, sparse_grad=False):
    _check_index(index, "gather")
    return call_op(GATHER, (input, index), (_wrap_dim(dim, input.ndim),))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("eagergrad does not implement torch.scatter(reduce=...) yet")
    _check_index(index, "scatter")
    d = _wrap_dim(dim, input.ndim)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return call_op(SCATTER, (input, index, src), (d,))
        _same_dtype(input, src)
    return call_op(SCATTER_V, (input, index, as_t(src).to(input.dtype)), (d,))


def scatter_add(input, dim, index, src):
def _same_dtype(input, src):
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


    _check_index(index, "scatter")
    return call_op(SCATTER_ADD, (input, index, src), (_wrap_dim(dim, input.ndim),))
    _same_dtype(input, src)


def zeros_scatter(grad, dim, indices, sizes):
    """value_selecting_reduction_backward: grad put at `indices` along dim, zeros elsewhere."""
    from ..creation import zeros
    return scatter(zeros(sizes, dtype=grad.dtype), dim, indices, grad)


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
                      jnp.where(mask, value.astype(self.dtype), self),
                      inputs=("self", "mask", "value"), node="MaskedFillBackward1",
                      self=lambda grad, mask: masked_fill(grad, mask, 0.0),
                      value=lambda grad, mask: where(mask, grad, 0.0).sum())


@overlap_rule(internal=False, partial=False)
def masked_fill(input, mask, value):
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.cpp_name}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return call_op(MASKED_FILL_T, (input, mask, value))
    return call_op(MASKED_FILL, (input, mask, _number(value, input.dtype)))


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
    if index.dtype._kind != 1:
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    return index


def index_select(input, dim, index):
    return call_op(INDEX_SELECT, (input, _index_arg(index, "index_select")),
               (_wrap_dim(dim, input.ndim), input._shape))


@overlap_rule(partial=False)
def index_add(input, dim, index, source, *, alpha=1):
    return call_op(INDEX_ADD, (input, _index_arg(index, "index_add"), source),
               (_wrap_dim(dim, input.ndim), alpha))


@overlap_rule(partial=False)
def index_copy(input, dim, index, source):
    return call_op(INDEX_COPY, (input, _index_arg(index, "index_copy"), source),
               (_wrap_dim(dim, input.ndim),))
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {input.dtype.scalar_name} and (source) "
                           f"{source.dtype.scalar_name}")


@overlap_rule(internal=False, partial=False)
def index_fill(input, dim, index, value):
    return call_op(INDEX_FILL, (input, _index_arg(index, "index_fill")),
               (_wrap_dim(dim, input.ndim), value))
