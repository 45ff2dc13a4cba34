"""Indexing: torch's __getitem__ (basic indexing as views, then one advanced `index`
op), gather/scatter and the index_put used by IndexBackward0."""
import weakref

import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..tensor import _wrap_dim
from ..tensor import Tensor
from ._args import as_t
from .pointwise import where
from ._table import defop, run
from . import shape as S


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
              run(INDEX_PUT_ACC, (grad.new_zeros(self_sym_sizes), grad, *indices),
                  (positions,)))


def _index(t, indices, positions):
    return run(INDEX, (t, *indices), (positions, t._shape))


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
    and the integer/bool tensor indices left for its dims, {dim: long tensor}."""
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
                for j, n in enumerate(t._shape):
                    if result._shape[dim + j] != n:
                        raise IndexError(
                            f"The shape of the mask {list(t._shape)} at index {j} does not "
                            f"match the shape of the indexed tensor {list(result._shape)} at "
                            f"index {dim + j}")
                for j, nz in enumerate(_nonzero(t)):
                    adv[dim + j] = nz
                dim += t.ndim
            elif t.dtype._kind == 1:
                _check_bounds(t, result._shape[dim], len(adv))  # torch: k-th index tensor
                adv[dim] = t
                dim += 1
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
    return result, adv


def getitem(self, index):
    """torch's indexing: basic indexing as views, then integer/bool tensors index the
    remaining dims in one `index` op (IndexBackward0)."""
    result, adv = _basic(self, index, keep_single_slice=True)
    if adv:
        positions = tuple(sorted(adv))
        return _index(result, [adv[p] for p in positions], positions)
    if result is self:  # x[...], x[:, :]: a shallow alias, as torch
        return run(S.ALIAS, (self,))
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
        except Exception:
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


def _nonzero(mask):
    from ..creation import from_jax
    try:
        nz = jnp.nonzero(mask._value)
    except Exception as e:
        raise NotImplementedError(
            "boolean-mask indexing has a data-dependent shape and cannot run on jax tracers; "
            "use torch.where(mask, x, 0) instead") from e
    return [from_jax(a.astype(jnp.int64)) for a in nz]


def nonzero(input, *, as_tuple=False):
    cols = _nonzero(input if input.dtype is D.bool_ else input != 0)
    if as_tuple:
        return tuple(cols)
    return S.stack(cols, 1) if cols else input.new_zeros((0, 0)).long()


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
    return run(GATHER, (input, index), (_wrap_dim(dim, input.ndim),))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("eagergrad does not implement torch.scatter(reduce=...) yet")
    _check_index(index, "scatter")
    d = _wrap_dim(dim, input.ndim)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return run(SCATTER, (input, index, src), (d,))
    return run(SCATTER_V, (input, index, as_t(src).to(input.dtype)), (d,))


def scatter_add(input, dim, index, src):
    _check_index(index, "scatter")
    return run(SCATTER_ADD, (input, index, src), (_wrap_dim(dim, input.ndim),))


def zeros_scatter(grad, dim, indices, sizes):
    """value_selecting_reduction_backward: grad put at `indices` along dim, zeros elsewhere."""
    from ..creation import zeros
    return scatter(zeros(sizes, dtype=grad.dtype), dim, indices, grad)


# ---- writes: index_put, masked_fill, index_add, index_copy, and __setitem__ ------------------
INDEX_PUT = defop("index_put", lambda self, values, *indices, positions:
                  self.at[_full_index(positions, self.ndim, indices)].set(
                      values.astype(self.dtype)),
                  inputs=("self", "values", "*indices"), attrs=("positions",),
                  self=lambda grad, indices, positions:
                  run(INDEX_PUT, (grad, _zero_like0(grad), *indices), (positions,)),
                  values=lambda grad, indices, positions: _index(grad, indices, positions))


def _zero_like0(t):
    from ._args import wrapped
    return wrapped(0.0).to(t.dtype)


def index_put(input, indices, values, accumulate=False):
    idx = [_to_index(i) if i is not None else None for i in indices]
    positions = tuple(p for p, i in enumerate(idx) if i is not None)
    tensors = []
    for p in positions:
        t = idx[p]
        if t.dtype is D.bool_:
            raise NotImplementedError("eagergrad does not implement index_put with a bool "
                                      "index list yet; use x[mask] = v")
        tensors.append(t)
    return run(INDEX_PUT_ACC if accumulate else INDEX_PUT, (input, as_t(values), *tensors),
               (positions,))


MASKED_FILL = defop("masked_fill", lambda self, mask, value: jnp.where(mask, jnp.asarray(
                    value, self.dtype), self), inputs=("self", "mask"), attrs=("value",),
                    node="MaskedFillBackward0",
                    self=lambda grad, mask: masked_fill(grad, mask, 0.0))
MASKED_FILL_T = defop("masked_fill_tensor", lambda self, mask, value:
                      jnp.where(mask, value.astype(self.dtype), self),
                      inputs=("self", "mask", "value"), node="MaskedFillBackward1",
                      self=lambda grad, mask: masked_fill(grad, mask, 0.0),
                      value=lambda grad, mask: where(mask, grad, 0.0).sum())


# how torch's kernels name a dtype in some messages: the C++ type behind it
_CPP_TYPE = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def masked_fill(input, mask, value):
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_TYPE.get(mask.dtype.name, mask.dtype.name)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return run(MASKED_FILL_T, (input, mask, value))
    return run(MASKED_FILL, (input, mask), (value,))


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
                   self=lambda grad, index, dim: run(INDEX_FILL, (grad, index), (dim, 0.0)),
                   source=lambda grad, index, dim: index_select(grad, dim, index))
INDEX_FILL = defop("index_fill", lambda self, index, dim, value:
                   self.at[_along(dim, self.ndim, index)].set(jnp.asarray(value, self.dtype)),
                   inputs=("self", "index"), attrs=("dim", "value"),
                   self=lambda grad, index, dim: run(INDEX_FILL, (grad, index), (dim, 0.0)))


def _index_arg(index, name):
    if index.dtype._kind != 1:
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    return index


def index_select(input, dim, index):
    return run(INDEX_SELECT, (input, _index_arg(index, "index_select")),
               (_wrap_dim(dim, input.ndim), input._shape))


def index_add(input, dim, index, source, *, alpha=1):
    return run(INDEX_ADD, (input, _index_arg(index, "index_add"), source),
               (_wrap_dim(dim, input.ndim), alpha))


def index_copy(input, dim, index, source):
    return run(INDEX_COPY, (input, _index_arg(index, "index_copy"), source),
               (_wrap_dim(dim, input.ndim),))


def index_fill(input, dim, index, value):
    return run(INDEX_FILL, (input, _index_arg(index, "index_fill")),
               (_wrap_dim(dim, input.ndim), value))


def setitem(self, index, value):
    """torch's __setitem__: the basic part of the index as a view of self (nothing when it
    is all full slices), then `fill_` (0-dim value), `copy_`, or `index_put_` for tensor
    indices, in place on it."""
    from . import _copy, _fill
    from .inplace import inplace
    target, adv = _basic(self, index, keep_single_slice=False)
    value = as_t(value)
    if adv:
        positions = tuple(sorted(adv))
        tensors = [adv[p] for p in positions]
        value = value.to(target.dtype)
        return inplace(target, lambda t, v: run(INDEX_PUT, (t, v, *tensors), (positions,)),
                       value)
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
