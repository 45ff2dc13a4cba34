"""Shape, split, stack and index ops of torch's "Indexing, Slicing, Joining, Mutating" and
"Other operations" groups: flip, roll, rot90, diag_embed, the *_scatter ops, trace, take,
block_diag and narrow_copy are one node each with torch's formulas (FlipBackward0,
RollBackward0, ...); the rest (fliplr, diag, tile, hstack, tensor_split, take_along_dim,
broadcast_tensors, meshgrid, repeat_interleave, atleast_*d, cartesian_prod,
combinations, ...) are composed of eagergrad ops as ATen composes them, so their graphs
and views are torch's."""
import itertools
import math
import operator
import warnings
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._mode import COMPILING
from .. import _dtypes as D
from .._shapes import broadcast_shape, wrap_dim as _wrap_dim
from ..engine.grad_mode import STATE
from ..size import Size
from ..tensor import Tensor
from . import shape as S
from ._args import promote
from ._table import call_op, defop
from ._autocast import autocast_op
from .masks import masked_select
from .reduce import _sum_dtype
from .scatter import GATHER, INDEX_ADD, gather, index_select


_WARNED = set()  # the keys of the TORCH_WARN_ONCE warnings given so far


def _warn_once(key, message):
    """A UserWarning the first time only (in this process), as torch's TORCH_WARN_ONCE."""
    from .._settings import warn_once
    if warn_once(_WARNED, key):
        warnings.warn(message, UserWarning, stacklevel=3)


def _zeros(shape, dtype):
    from ..creation import zeros
    return zeros(tuple(shape), dtype=dtype)


def _dims_arg(dims):
    """An int, or a sequence of ints given as one argument or as several."""
    if len(dims) == 1 and not isinstance(dims[0], int):
        return tuple(int(d) for d in dims[0])
    return tuple(int(d) for d in dims)


def _unique_dims(dims, ndim):
    out = []
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    return tuple(out)


# ---- flip, roll, rot90 ---------------------------------------------------------------------
def _flip_k(self, dims):
    return jnp.flip(self, dims) if dims and self.ndim else jnp.array(self, copy=True)


FLIP = defop("flip", _flip_k, attrs=("dims",), self=lambda grad, dims: call_op(FLIP, (grad,),
                                                                                (dims,)))


def flip(input, *dims_, dims=None):
    """torch.flip: the elements reversed along `dims`; a copy, one FlipBackward0.

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).flip(0, 1)
    tensor([[4, 3],
            [2, 1]])
    """
    dims = _dims_arg(dims_) if dims is None else tuple(int(d) for d in S._shape_arg((dims,)))
    return call_op(FLIP, (input,), (_unique_dims(dims, input.ndim),))


def fliplr(input):
    """torch.fliplr: flip(input, [1]).

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2]]).fliplr()
    tensor([[2, 1]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """torch.flipud: flip(input, [0]).

    >>> import eagergrad as torch
    >>> torch.tensor([1, 2]).flipud()
    tensor([2, 1])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll_k(self, shifts, dims):
    if not dims:
        return jnp.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    return jnp.roll(self, shifts, dims)


ROLL = defop("roll", _roll_k, attrs=("shifts", "dims"),
             self=lambda grad, shifts, dims: call_op(
                 ROLL, (grad,), (tuple(-s for s in reversed(shifts)), tuple(reversed(dims)))))


def roll(input, shifts, dims=None):
    """torch.roll: the elements shifted cyclically along `dims` (the flattened tensor when
    dims is None); one RollBackward0.

    >>> import eagergrad as torch
    >>> torch.arange(5).roll(2)
    tensor([3, 4, 0, 1, 2])
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return call_op(ROLL, (input,), (shifts, ()))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return call_op(ROLL, (input,), (shifts, tuple(_wrap_dim(d, input.ndim) for d in dims)))


def _rot90_k(self, k, dims):
    k = k % 4
    return jnp.rot90(self, k, dims) if k else jnp.array(self, copy=True)


ROT90 = defop("rot90", _rot90_k, attrs=("k", "dims"),
              self=lambda grad, k, dims: call_op(ROT90, (grad,), (-k, dims)))


def rot90(input, k=1, dims=(0, 1)):
    """torch.rot90: rotated by 90 degrees k times in the plane of `dims`, from the first
    towards the second; one Rot90Backward0.

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = tuple(dims)
    nd = input.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return call_op(ROT90, (input,), (int(k), (_wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd))))


# ---- diagonals -----------------------------------------------------------------------------
def _diag_embed_k(self, offset, dim1, dim2):
    n = self.shape[-1]
    m = n + abs(offset)
    i = jnp.arange(n)
    out = jnp.zeros(self.shape[:-1] + (m, m), self.dtype)
    out = out.at[..., i + max(-offset, 0), i + max(offset, 0)].set(self)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


DIAG_EMBED = defop("diag_embed", _diag_embed_k, attrs=("offset", "dim1", "dim2"),
                   self=lambda grad, offset, dim1, dim2: S.diagonal(grad, offset, dim1, dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: the last dimension of `input` put on the diagonal (`offset`) of
    new 2-D planes over dims `dim1` and `dim2` of the result; one DiagEmbedBackward0.

    >>> import eagergrad as torch
    >>> torch.diag_embed(torch.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    nd = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return call_op(DIAG_EMBED, (input,), (int(offset), d1, d2))


DIAGONAL_COPY = defop("diagonal_copy", lambda self, offset, dim1, dim2, self_sym_sizes:
                      jnp.diagonal(self, offset, dim1, dim2),
                      attrs=("offset", "dim1", "dim2", "self_sym_sizes"),
                      node="DiagonalBackward0_copy",
                      self=lambda grad, offset, dim1, dim2, self_sym_sizes: call_op(
                          S.DIAGONAL_BACKWARD, (grad,), (self_sym_sizes, offset, dim1, dim2)))


def diag(input, diagonal=0):
    """torch.diag: a 1-D input on the `diagonal` of a square matrix (diag_embed), or a
    copy of a 2-D input's diagonal (diagonal_copy, DiagonalBackward0_copy).

    >>> import eagergrad as torch
    >>> torch.diag(torch.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    return call_op(DIAGONAL_COPY, (input,), (int(diagonal), 0, 1, input._shape))


def diagflat(input, offset=0):
    """torch.diagflat: input.contiguous().view(-1).diag(offset).

    >>> import eagergrad as torch
    >>> torch.diagflat(torch.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    return diag(S.view(S.contiguous(input), -1), offset)


def _no_complex_autograd(name, input, src):
    """torch's autograd kernel of select_scatter and slice_scatter refuses complex results."""
    if input.dtype.is_complex and STATE.grad and (input.requires_grad or src.requires_grad):
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           "with complex dtype.")


def _check_src(src, slice_shape):
    if tuple(src._shape) != tuple(slice_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._shape)}, slice size = {list(slice_shape)}")


def _diag_scatter_k(self, src, offset, dim1, dim2):
    idx = jnp.diagonal(jnp.arange(math.prod(self.shape)).reshape(self.shape), offset, dim1, dim2)
    flat = self.reshape(-1).at[idx.reshape(-1)].set(src.reshape(-1).astype(self.dtype))
    return flat.reshape(self.shape)


def _diag_scatter_self(grad, offset, dim1, dim2):
    z = S.diagonal(grad, offset, dim1, dim2)
    return call_op(DIAGONAL_SCATTER, (grad, _zeros(z._shape, grad.dtype)), (offset, dim1, dim2))


DIAGONAL_SCATTER = defop("diagonal_scatter", _diag_scatter_k, inputs=("self", "src"),
                         attrs=("offset", "dim1", "dim2"), self=_diag_scatter_self,
                         src=lambda grad, offset, dim1, dim2:
                         S.diagonal(grad, offset, dim1, dim2))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """torch.diagonal_scatter: a copy of input with its diagonal (offset, dim1, dim2)
    replaced by src; one DiagonalScatterBackward0.

    >>> import eagergrad as torch
    >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    d = S.diagonal(input.detach(), offset, dim1, dim2)
    _check_src(src, d._shape)
    nd = input.ndim
    return call_op(DIAGONAL_SCATTER, (input, src), (int(offset), _wrap_dim(dim1, nd),
                                                    _wrap_dim(dim2, nd)))


SELECT_SCATTER = defop("select_scatter", lambda self, src, dim, index:
                       lax.dynamic_update_index_in_dim(self, src.astype(self.dtype), index, dim),
                       inputs=("self", "src"), attrs=("dim", "index"), dynamic=("index",),
                       self=lambda grad, dim, index: call_op(
                           SELECT_SCATTER, (grad, _zeros(grad._shape[:dim] + grad._shape[dim + 1:],
                                                         grad.dtype)), (dim, index)),
                       src=lambda grad, dim, index: S.select(grad, dim, index))


def select_scatter(input, src, dim, index):
    """torch.select_scatter: a copy of input with input.select(dim, index) replaced by
    src; one SelectScatterBackward0.

    >>> import eagergrad as torch
    >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    v = S.select(input.detach(), dim, index)
    _check_src(src, v._shape)
    _no_complex_autograd("select_scatter", input, src)
    d = _wrap_dim(dim, input.ndim)
    return call_op(SELECT_SCATTER, (input, src), (d, index % input._shape[d]))


def _slice_scatter_k(self, src, dim, start, end, step):
    return S._slice_update(self, src.astype(self.dtype), dim, start, end, step, None)


SLICE_SCATTER = defop("slice_scatter", _slice_scatter_k, inputs=("self", "src"),
                      attrs=("dim", "start", "end", "step"), dynamic=("start",),
                      self=lambda grad, dim, start, end, step: call_op(
                          SLICE_SCATTER, (grad, _zeros(S._slice(grad, dim, start, end, step)._shape,
                                                       grad.dtype)), (dim, start, end, step)),
                      src=lambda grad, dim, start, end, step: S._slice(grad, dim, start, end,
                                                                       step))
# the kernel's key: the slice's length in end's place, the start traced (as SLICE's)
SLICE_SCATTER.static_of = lambda attrs: (attrs[0], None, attrs[2] - attrs[1], attrs[3])


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """torch.slice_scatter: a copy of input with input[start:end:step] along dim replaced
    by src; one SliceScatterBackward0.

    >>> import eagergrad as torch
    >>> torch.slice_scatter(torch.zeros(4), torch.ones(2), start=1, end=3)
    tensor([0., 1., 1., 0.])
    """
    d = _wrap_dim(dim, input.ndim)
    v = S._slice(input.detach(), d, start, end, step)
    _check_src(src, v._shape)
    _no_complex_autograd("slice_scatter", input, src)
    n = input._shape[d]
    start_ = 0 if start is None else (start + n if start < 0 else start)
    end_ = n if end is None else (end + n if end < 0 else end)
    start_ = min(max(start_, 0), n)
    end_ = min(max(end_, start_), n)
    return call_op(SLICE_SCATTER, (input, src), (d, start_, end_, int(step)))


# ---- trace, take, narrow_copy, block_diag ------------------------------------------------
def _trace_k(self, self_sym_sizes):
    dt = _sum_dtype(D.FROM_NP[np.dtype(self.dtype)], None).np
    return jnp.sum(jnp.diagonal(self), dtype=dt).astype(dt)


def _trace_back(grad, self_sym_sizes):
    n = min(self_sym_sizes)
    return call_op(DIAGONAL_SCATTER, (_zeros(self_sym_sizes, grad.dtype), S.expand(grad, (n,))),
                   (0, 0, 1))


TRACE = defop("trace", _trace_k, attrs=("self_sym_sizes",), self=_trace_back)


@autocast_op("trace")
def trace(input):
    """torch.trace: the sum of a matrix's main diagonal (integers sum to int64).

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).trace()
    tensor(5)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype is D.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return call_op(TRACE, (input,), (input._shape,))


def _take_back(grad, index, self_sym_sizes):
    # (INDEX_ADD itself: take's negative indices count from the end, index_add's raise)
    flat = call_op(INDEX_ADD, (_zeros((math.prod(self_sym_sizes),), grad.dtype),
                               S.reshape(index, -1), S.reshape(grad, -1)), (0, 1))
    return S.reshape(flat, self_sym_sizes)


TAKE = defop("take", lambda self, index, self_sym_sizes: self.reshape(-1)[index],
             inputs=("self", "index"), attrs=("self_sym_sizes",), self=_take_back)


def _index_bounds(index):
    """min and max of a concrete index tensor (None under a jax trace: not checked)."""
    a = index._value
    if isinstance(a, jax.core.Tracer) or not a.size:
        return None
    a = np.asarray(a)
    return int(a.min()), int(a.max())


def take(input, index, *, out=None):
    """torch.take: input seen as 1-D, read at `index` (negative from the end); the result
    has index's shape. One TakeBackward0.

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).take(torch.tensor([0, -1]))
    tensor([1, 4])
    """
    if index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    n = input.numel()
    b = _index_bounds(index)
    if b is not None:
        bad = b[1] if b[1] >= n else b[0] if b[0] < -n else None
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    if out is not None:
        if out.dtype is not input.dtype:
            raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                               f"self.dtype = {input.dtype.scalar_name} and out.dtype = "
                               f"{out.dtype.scalar_name}")
        _no_out(out, "take")
    return call_op(TAKE, (input, index), (input._shape,))


NARROW_COPY = defop("narrow_copy", lambda self, dim, start, length, self_sym_sizes:
                    lax.dynamic_slice_in_dim(self, start, length, axis=dim),
                    attrs=("dim", "start", "length", "self_sym_sizes"), dynamic=("start",),
                    self=lambda grad, dim, start, length, self_sym_sizes: call_op(
                        S.SLICE_BACKWARD, (grad,), (self_sym_sizes, dim, start, start + length, 1)))


def narrow_copy(input, dim, start, length):
    """torch.narrow_copy: narrow(input, dim, start, length) as a new tensor; one
    NarrowCopyBackward0.

    >>> import eagergrad as torch
    >>> torch.arange(5).narrow_copy(0, 1, 2)
    tensor([1, 2])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.ndim:  # (torch's narrow_copy checks a non-negative dim so)
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return call_op(NARROW_COPY, (input,), (d, int(start), int(length), input._shape))


def _block(shape):
    return (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else tuple(shape)


def _block_diag_k(*tensors, dtype, shapes):
    blocks = [_block(s) for s in shapes]
    out = jnp.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)), dtype.np)
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        out = out.at[r:r + h, c:c + w].set(D.astype(t.reshape(h, w), dtype.np))
        r, c = r + h, c + w
    return out


def _block_diag_back(grad, shapes):
    out, r, c = [], 0, 0
    for s in shapes:
        h, w = _block(s)
        out.append(S.reshape(grad.narrow(0, r, h).narrow(1, c, w), s))
        r, c = r + h, c + w
    return out


BLOCK_DIAG = defop("block_diag", _block_diag_k, inputs=("*tensors",), attrs=("dtype", "shapes"),
                   tensors=_block_diag_back)


def block_diag(*tensors):
    """torch.block_diag: the tensors (0-D, 1-D as a row, 2-D) along the diagonal of a
    matrix of zeros, in their promoted dtype; one BlockDiagBackward0.

    >>> import eagergrad as torch
    >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    if not tensors:
        return _zeros((1, 0), D.get_default_dtype())
    return call_op(BLOCK_DIAG, tuple(tensors), (promote(*tensors),
                                                tuple(t._shape for t in tensors)))


# ---- composites: tile, stacks, splits --------------------------------------------------------
def tile(input, *dims_, dims=None):
    """torch.tile: repeat() with `dims` padded by leading ones to input's ndim.

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2]]).tile(2)
    tensor([[1, 2, 1, 2]])
    """
    from .batchnorm import repeat
    reps = _dims_arg(dims_) if dims is None else tuple(int(d) for d in S._shape_arg((dims,)))
    reps = (1,) * (input.ndim - len(reps)) + reps
    shape = (1,) * (len(reps) - input.ndim) + tuple(input._shape)
    out = [s * r for s, r in zip(shape, reps)]
    bad = next((n for n in out if n < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {out}")
    return repeat(input, reps)


def _tensor_list(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """torch.hstack: cat of atleast_1d(tensors) along dim 1 (dim 0 for 1-D tensors).

    >>> import eagergrad as torch
    >>> torch.hstack([torch.tensor([1]), torch.tensor([2, 3])])
    tensor([1, 2, 3])
    """
    _no_out(out, "hstack")
    rep = atleast_1d(_tensor_list(tensors, "hstack"))
    return S.cat(rep, 0 if rep[0].ndim == 1 else 1)


def vstack(tensors, *, out=None):
    """torch.vstack: cat of atleast_2d(tensors) along dim 0.

    >>> import eagergrad as torch
    >>> torch.vstack([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    _no_out(out, "vstack")
    return S.cat(atleast_2d(_tensor_list(tensors, "vstack")), 0)


row_stack = vstack


def dstack(tensors, *, out=None):
    """torch.dstack: cat of atleast_3d(tensors) along dim 2.

    >>> import eagergrad as torch
    >>> torch.dstack([torch.tensor([1, 2]), torch.tensor([3, 4])]).shape
    torch.Size([1, 2, 2])
    """
    _no_out(out, "dstack")
    return S.cat(atleast_3d(_tensor_list(tensors, "dstack")), 2)


def column_stack(tensors, *, out=None):
    """torch.column_stack: 0-D and 1-D tensors as columns (reshape(numel, 1)), then hstack.

    >>> import eagergrad as torch
    >>> torch.column_stack([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    _no_out(out, "column_stack")
    ts = _tensor_list(tensors, "column_stack")
    return hstack([S.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in ts])


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")


def _split_arg(fn, indices_or_sections, sections, indices, tensor_indices_or_sections):
    for v in (sections, indices, tensor_indices_or_sections):
        if v is not None:
            indices_or_sections = v
    if indices_or_sections is None:
        raise TypeError(f"{fn}() missing required argument 'indices_or_sections'")
    return indices_or_sections


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """torch.tensor_split: views (slices) of input along dim: `sections` nearly equal parts,
    or cut before each of `indices`.

    >>> import eagergrad as torch
    >>> [t.tolist() for t in torch.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    ios = _split_arg("tensor_split", indices_or_sections, sections, indices,
                     tensor_indices_or_sections)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, input.ndim)
    if isinstance(ios, Tensor):
        if ios.dtype is not D.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {ios.dtype.scalar_name}")
        if ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        ios = ios.tolist()
    n = input._shape[d]
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        small, extra = divmod(n, ios)
        out, start = [], 0
        for i in range(ios):
            size = small + 1 if i < extra else small
            out.append(S._slice(input, d, start, start + size))
            start += size
        return tuple(out)
    bounds = [0] + [int(i) for i in ios] + [n]
    return tuple(S._slice(input, d, a, b) for a, b in zip(bounds, bounds[1:]))


def _sections(name, ios):
    """torch's binding of h/v/dsplit's second argument: an int or a tuple of ints."""
    if isinstance(ios, (list, tuple)):
        for i, v in enumerate(ios):
            if isinstance(v, bool) or not hasattr(type(v), "__index__"):
                raise TypeError(f"{name}(): argument 'indices' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(v).__name__}\"")
        return ios
    if isinstance(ios, Tensor) and not ios.ndim and ios.dtype._kind == 1:
        return int(ios.item())
    if isinstance(ios, (bool, Tensor)) or not hasattr(type(ios), "__index__"):
        got = "Tensor" if isinstance(ios, Tensor) else type(ios).__name__
        why = ("      didn't match because some of the arguments have invalid types: "
               f"(Tensor, !{got}!)\n")
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{got}), but expected one of:\n * (Tensor input, int sections)\n{why}"
                        f" * (Tensor input, tuple of ints indices)\n{why}")
    return ios


def _hvd_split(name, input, ios, dim, need):
    ios = _sections(name, ios)
    if input.ndim < need:
        what = "1 dimension" if need == 1 else f"{need} dimension"
        raise RuntimeError(f"torch.{name} requires a tensor with at least {what}, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if isinstance(ios, int):
        n = input._shape[dim]
        if ios == 0 or n % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.hsplit: tensor_split along dim 1 (dim 0 for a 1-D tensor); an int must divide
    that dimension.

    >>> import eagergrad as torch
    >>> [t.tolist() for t in torch.arange(4).hsplit(2)]
    [[0, 1], [2, 3]]
    """
    ios = _split_arg("hsplit", indices_or_sections, sections, indices, None)
    return _hvd_split("hsplit", input, ios, 0 if input.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.vsplit: tensor_split along dim 0 of a tensor of 2 or more dims.

    >>> import eagergrad as torch
    >>> [t.shape for t in torch.zeros(4, 2).vsplit([1])]
    [torch.Size([1, 2]), torch.Size([3, 2])]
    """
    ios = _split_arg("vsplit", indices_or_sections, sections, indices, None)
    return _hvd_split("vsplit", input, ios, 0, 2)


def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """torch.dsplit: tensor_split along dim 2 of a tensor of 3 or more dims.

    >>> import eagergrad as torch
    >>> len(torch.zeros(1, 1, 4).dsplit(2))
    2
    """
    ios = _split_arg("dsplit", indices_or_sections, sections, indices, None)
    return _hvd_split("dsplit", input, ios, 2, 3)


def atleast_1d(*tensors):
    """torch.atleast_1d: 0-D tensors as shape (1,) (a view); one tensor or a tuple.

    >>> import eagergrad as torch
    >>> torch.atleast_1d(torch.tensor(2))
    tensor([2])
    """
    return _atleast(tensors, lambda t: S.reshape(t, (1,)) if t.ndim == 0 else t)


def _atleast2(t):
    if t.ndim == 0:
        return S.reshape(t, (1, 1))
    return S.unsqueeze(t, 0) if t.ndim == 1 else t


def atleast_2d(*tensors):
    """torch.atleast_2d: 0-D as (1, 1), 1-D as a row (unsqueeze(0)); one tensor or a tuple.

    >>> import eagergrad as torch
    >>> torch.atleast_2d(torch.tensor([1, 2]))
    tensor([[1, 2]])
    """
    return _atleast(tensors, _atleast2)


def _atleast3(t):
    if t.ndim == 0:
        return S.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return S.unsqueeze(S.unsqueeze(t, 0), -1)
    return S.unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_3d(*tensors):
    """torch.atleast_3d: 0-D as (1, 1, 1), 1-D (n) as (1, n, 1), 2-D as (m, n, 1).

    >>> import eagergrad as torch
    >>> torch.atleast_3d(torch.tensor([1, 2])).shape
    torch.Size([1, 2, 1])
    """
    return _atleast(tensors, _atleast3)


def _atleast(tensors, f):
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return f(tensors)
    return tuple(f(t) for t in tensors)


# ---- broadcasting, grids and index helpers ------------------------------------------------
def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: each tensor expanded to the common shape (a tensor that
    already has it is returned as it is).

    >>> import eagergrad as torch
    >>> [t.shape for t in torch.broadcast_tensors(torch.zeros(2, 1), torch.zeros(3))]
    [torch.Size([2, 3]), torch.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        return ()
    shape = tuple(tensors[0]._shape)
    for t in tensors[1:]:
        shape = broadcast_shape(shape, t._shape)
    return tuple(t if tuple(t._shape) == shape else S.expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes: the shape the given shapes (ints for 1-D) broadcast to,
    with torch's errors (torch._refs._broadcast_shapes).

    >>> import eagergrad as torch
    >>> torch.broadcast_shapes((2,), (3, 1), (1, 1, 1))
    torch.Size([1, 3, 2])
    """
    shapes = tuple((x,) if isinstance(x, int) else x for x in shapes if x is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} "
                                   f"at {idx}! Mismatching argument at index {arg_idx} had "
                                   f"{shape}; but expected shape should be broadcastable to "
                                   f"{common}")
    for i, s in enumerate(common):
        if not isinstance(s, int):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                            f"'{type(s).__name__}')")
    return Size(common)


def unravel_index(indices, shape):
    """torch.unravel_index: flat indices as coordinates into `shape`, one tensor per dim
    (torch's composite: floor_divide by the strides, remainder by the sizes, unbind).

    >>> import eagergrad as torch
    >>> torch.unravel_index(torch.tensor([4, 1]), (3, 2))
    (tensor([2, 0]), tensor([0, 1]))
    """
    from ..creation import tensor
    if indices.dtype.is_complex or indices.dtype.is_floating_point or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = (shape,)
    for d in shape:
        if not isinstance(d, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(d)}")
    shape = tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)),
                                                    func=operator.mul))))
    res = indices.unsqueeze(-1).floor_divide(tensor(coefs, dtype=D.int64)) % \
        tensor(shape, dtype=D.int64)
    return res.unbind(-1)


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: each 0-D or 1-D tensor viewed along its own dim and expanded to the
    grid (views); indexing "ij" (matrix) or "xy" (Cartesian: the first two swapped).
    Without indexing: "ij", warned once.

    >>> import eagergrad as torch
    >>> x, y = torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]), indexing="ij")
    >>> x.shape
    torch.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _warn_once("meshgrid", "torch.meshgrid: in an upcoming release, it will be required to "
                   "pass the indexing argument.")
        indexing = "ij"
    return _meshgrid(list(tensors), indexing)


def _meshgrid(ts, indexing):
    n = len(ts)
    if not n:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(ts, ts[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and n >= 2
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        vs = [1] * n
        vs[i] = -1
        grids.append(S.expand(S.view(t, tuple(vs)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def take_along_dim(input, indices, dim=None, *, out=None):
    """torch.take_along_dim: gather along dim after broadcasting input and indices against
    each other (everything but dim); without dim, of the flattened tensors.

    >>> import eagergrad as torch
    >>> torch.tensor([[10, 30, 20]]).take_along_dim(torch.tensor([[1, 0]]), 1)
    tensor([[30, 10]])
    """
    _no_out(out, "take_along_dim")
    if dim is None:
        return gather(S.view(input, -1), 0, S.view(indices, -1))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    if indices.dtype is not D.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.scalar_name}")
    d = _wrap_dim(dim, input.ndim)
    sizes = list(input._shape)
    sizes[d] = indices._shape[d]
    idx = S.expand(indices, broadcast_shape(tuple(sizes), indices._shape))
    sizes = list(indices._shape)
    sizes[d] = input._shape[d]
    inp = S.expand(input, broadcast_shape(tuple(sizes), input._shape))
    # (GATHER itself: torch's take_along_dim reads negative indices from the end, unchecked,
    # where gather checks them)
    return call_op(GATHER, (inp, idx), (d,))


def _host_ints(t):
    """A concrete integer tensor's values (numpy), or None under a jax trace."""
    a = t._value
    if isinstance(a, jax.core.Tracer):  # (a compiled call's trace: read, then checked)
        return t._host("repeats") if COMPILING.rec is not None else None
    return np.asarray(a)


_TRACED_REPEATS = ("repeat_interleave with a tensor of repeats has a data-dependent shape and "
                   "cannot run on jax tracers without output_size")


def _repeat_indices(repeats, output_size):
    """at::repeat_interleave(repeats): each position i repeated repeats[i] times."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{repeats.dtype.scalar_name}'")
    from ..creation import tensor
    from ..tensor import _make
    host = _host_ints(repeats)
    if host is None:
        if output_size is None:
            raise NotImplementedError(_TRACED_REPEATS)
        n = repeats._shape[0]
        return _make(jnp.repeat(jnp.arange(n, dtype=repeats.dtype.np), repeats._value,
                                total_repeat_length=output_size))
    if output_size is None:
        if (host < 0).any():
            raise RuntimeError("repeats can not be negative")
    elif host.sum() != output_size or (host < 0).any():
        raise RuntimeError("allocated size does not match required size")
    return tensor(np.repeat(np.arange(host.shape[0]), host).astype(repeats.dtype.np),
                  device=repeats.device)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """torch.repeat_interleave: each element (or slice along dim) repeated `repeats` times
    (an int: unsqueeze, expand, clone, flatten, as ATen; a tensor: index_select). Alone,
    torch.repeat_interleave(repeats) gives the indices.

    >>> import eagergrad as torch
    >>> torch.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:
        return _repeat_indices(input, output_size)
    if isinstance(repeats, Tensor):
        x = input if dim is not None else S.flatten(input)
        d = 0 if dim is None else dim
        n = x._shape[_wrap_dim(d, x.ndim)]
        if repeats.ndim == 0 or (repeats.ndim == 1 and repeats._shape[0] == 1):
            repeats = S.expand(S.reshape(repeats, (1,)), (n,))
        elif repeats.ndim == 1:
            if repeats._shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {repeats._shape[0]} and input.size("
                                   f"{d}) = {n}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return index_select(x, d, _repeat_indices(repeats, output_size))
    x = input if dim is not None else S.flatten(input)
    d = _wrap_dim(0 if dim is None else dim, input.ndim)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = S.unsqueeze(x, d + 1)
    shape = list(x._shape)
    shape[d + 1] = int(repeats)
    x = S.expand(x, tuple(shape))
    if output_size is not None and output_size != repeats * shape[d]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{repeats * shape[d]} but got {output_size}")
    return S.flatten(S.clone(x), d, d + 1)


def cartesian_prod(*tensors):
    """torch.cartesian_prod: the rows of itertools.product over 1-D tensors (meshgrid,
    flatten, stack); one tensor is returned as it is.

    >>> import eagergrad as torch
    >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return S.stack([S.flatten(g) for g in _meshgrid(list(tensors), "ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """torch.combinations: the r-length combinations of a 1-D tensor's elements (with
    replacement: i <= j <= ...), as itertools.combinations orders them.

    >>> import eagergrad as torch
    >>> torch.combinations(torch.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    from ..creation import tensor
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _zeros((0,), input.dtype)
    n = input.numel()
    grids = _meshgrid([input] * r, "ij")
    idx = np.meshgrid(*[np.arange(n)] * r, indexing="ij")
    mask = np.ones((n,) * r, bool)
    for a, b in zip(idx, idx[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    m = tensor(mask, device=input.device)
    return S.stack([masked_select(g, m) for g in grids], 1)


def _indices(name, row, col, offset, dtype, device, lower):
    from ..creation import tensor
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = D.int64 if dtype is None else D.as_dtype(dtype)
    if dt not in (D.int64, D.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name}'")
    i, j = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return tensor(np.stack([i, j]).reshape(2, -1).astype(dt.np), device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """torch.tril_indices: the (row, col) coordinates of the lower triangle of a row x col
    matrix (diagonal `offset`), as a 2 x N int64 tensor in row-major order.

    >>> import eagergrad as torch
    >>> torch.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """torch.triu_indices: the coordinates of the upper triangle (from diagonal `offset`).

    >>> import eagergrad as torch
    >>> torch.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _indices("triu_indices", row, col, offset, dtype, device, False)
