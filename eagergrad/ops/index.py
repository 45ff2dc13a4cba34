"""Indexing: torch's __getitem__ (basic indexing as views, then one advanced `index`
op), gather/scatter and the index_put used by IndexBackward0."""
import jax.numpy as jnp

from .. import _dtypes as D
from ..tensor import _wrap_dim
from ..tensor import Tensor
from ._args import as_t
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
                      values=lambda grad, indices, positions: run(INDEX, (grad, *indices),
                                                                  (positions,)))
INDEX = defop("index", lambda self, *indices, positions:
              self[_full_index(positions, self.ndim, indices)],
              inputs=("self", "*indices"), attrs=("positions",),
              self=lambda grad, self, indices, positions:
              run(INDEX_PUT_ACC, (self.new_zeros(self._shape).to(grad.dtype), grad, *indices),
                  (positions,)))


def _to_index(x):
    if isinstance(x, Tensor):
        return x
    return as_t(x) if not isinstance(x, (list, tuple)) else _list_index(x)


def _list_index(x):
    from ..creation import tensor
    return tensor(x)


def getitem(self, index):
    """torch's indexing: ints select, slices slice (views), None unsqueezes, Ellipsis
    fills, then integer/bool tensors index the remaining dims in one `index` op."""
    if not isinstance(index, tuple):
        if isinstance(index, slice):
            return S._slice(_need_dim(self), 0, index.start, index.stop,
                            1 if index.step is None else index.step)
        index = (index,)
        single = True
    else:
        single = False
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
        elif isinstance(i, int) and not isinstance(i, bool):
            result = S.select(result, dim, i)
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            n = result._shape[dim]
            if i.start in (None, 0) and (i.stop is None or i.stop >= n) and step == 1:
                dim += 1  # full slice: skipped, as torch
                continue
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
                adv[dim] = t
                dim += 1
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
    if adv:
        positions = tuple(sorted(adv))
        for p in positions:
            n = result._shape[p]
            _check_bounds(adv[p], n, p)
        return run(INDEX, (result, *[adv[p] for p in positions]), (positions,))
    if result is self:
        return run(S.ALIAS, (self,)) if not single or index[0] is Ellipsis else result
    return result


def _need_dim(t):
    if t.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    return t


def _check_bounds(idx, n, dim):
    try:
        import numpy as np
        a = np.asarray(idx._value)
    except Exception:
        return  # traced: jax clamps; cannot check without the values
    if a.size and (a.max() >= n or a.min() < -n):
        bad = a.max() if a.max() >= n else a.min()
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


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
                inputs=("self", "index", "src"), attrs=("dim",), node="ScatterBackward1",
                self=lambda grad, index, dim: scatter(grad, dim, index, 0.0),
                src=lambda grad, index, dim: gather(grad, dim, index))
SCATTER_V = defop("scatter_value", lambda self, index, value, dim:
                  _scatter_k(self, index, jnp.broadcast_to(value, index.shape), dim, None),
                  inputs=("self", "index", "value"), attrs=("dim",), node="ScatterBackward1",
                  self=lambda grad, index, dim: scatter(grad, dim, index, 0.0))


def _check_index(index, name):
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")


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
    _check_index(index, "scatter_add")
    return run(SCATTER_ADD, (input, index, src), (_wrap_dim(dim, input.ndim),))


def zeros_scatter(grad, dim, indices, sizes):
    """value_selecting_reduction_backward: grad put at `indices` along dim, zeros elsewhere."""
    from ..creation import zeros
    return scatter(zeros(sizes, dtype=grad.dtype), dim, indices, grad)


def index_select(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    return getitem(input, (slice(None),) * d + (index,))
