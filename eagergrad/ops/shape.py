"""View ops (outputs alias their input's storage), reshape, cat/stack/split, clone,
contiguous and dtype conversion. A view op declares `view=` to give its output's
strides and storage offset, which are torch's."""
import math
import warnings

import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtypes as D
from .._cache import put_bounded
from .._storage import (contiguous_strides, register_special, register_update,
                        view_strides as _aten_view_strides)
from ..device import device as _device
from ..size import format_shape
from .._shapes import wrap_dim as _wrap_dim
from ..tensor import Tensor
from ._args import no_out, promote
from .inplace import _can_cast
from ._autocast import autocast_op
from ._table import defop, call_op


def _infer_size(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{format_shape(shape)}' is invalid for input of size "
                               f"{numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{format_shape(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _view_strides(shape, stride, size):
    """ATen's computeStride, including a 0-dim input (any size-1 shape is a view)."""
    if not shape:
        return contiguous_strides(size)
    return _aten_view_strides(shape, stride, size)


def _shape_arg(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _same_offset(strides_fn):
    def meta(src, attrs, idx, shape):
        return strides_fn(src, attrs, shape), src._offset
    return meta


def _view_meta(src, attrs, idx, shape):
    st = _view_strides(src._shape, src.stride(), shape)
    return st, src._offset


VIEW = defop("view", lambda self, size, self_sym_sizes: jnp.reshape(self, size),
             attrs=("size", "self_sym_sizes"), view=_view_meta,
             self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
UNSAFE_VIEW = defop("_unsafe_view", lambda self, size, self_sym_sizes: jnp.reshape(self, size),
                    attrs=("size", "self_sym_sizes"), node="UnsafeViewBackward0",
                    self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
RESHAPE_ALIAS = defop("_reshape_alias", lambda self, size, self_sym_sizes: jnp.reshape(self, size),
                      attrs=("size", "self_sym_sizes"), view=_view_meta,
                      self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
ALIAS = defop("alias", lambda self: self, view=lambda s, a, i, sh: (s.stride(), s._offset),
              self=lambda grad: grad)


def view(input, *shape):
    """Tensor.view: same storage, new shape; raises when the strides do not allow it."""
    if len(shape) == 1 and isinstance(shape[0], (D.dtype,)):
        raise NotImplementedError("eagergrad does not implement Tensor.view(dtype) yet")
    size = _infer_size(_shape_arg(shape), input.numel())
    if _view_strides(input._shape, input.stride(), size) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return call_op(VIEW, (input,), (size, input._shape))


def reshape(input, *shape):
    """torch.reshape: a view when the strides allow one (`view` of a contiguous input,
    `_reshape_alias` of another), else a copy, as torch."""
    size = _infer_size(_shape_arg(shape), input.numel())
    if input.is_contiguous():
        return call_op(VIEW, (input,), (size, input._shape))
    if _view_strides(input._shape, input.stride(), size) is not None:
        return call_op(RESHAPE_ALIAS, (input,), (size, input._shape))
    return call_op(UNSAFE_VIEW, (clone(input),), (size, input._shape))


def view_as(input, other):
    return view(input, other._shape)


def reshape_as(input, other):
    return reshape(input, other._shape)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._shape[:s] + (math.prod(input._shape[s:e + 1]),) + input._shape[e + 1:]
    return reshape(input, shape)


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    sizes = _infer_size(sizes, input._shape[d])
    return view(input, input._shape[:d] + tuple(sizes) + input._shape[d + 1:])


def _unsqueeze_meta(src, attrs, idx, shape):
    (dim,) = attrs
    st = list(src.stride())
    new = st[dim] * src._shape[dim] if dim < len(st) else 1
    return tuple(st[:dim] + [new] + st[dim:]), src._offset


UNSQUEEZE = defop("unsqueeze", lambda self, dim: jnp.expand_dims(self, dim), attrs=("dim",),
                  view=_unsqueeze_meta, self=lambda grad, dim: grad.squeeze(dim))


def unsqueeze(input, dim):
    return call_op(UNSQUEEZE, (input,), (_wrap_dim(dim, input.ndim + 1),))


def _squeeze_meta(src, attrs, idx, shape):
    dims = attrs[0]
    st = src.stride()
    return tuple(s for i, s in enumerate(st) if i not in dims), src._offset


def _sq(node):
    # SqueezeBackward4 is squeeze_(dim) on a fresh result (matmul): not a view
    return defop("squeeze" + node[-1], lambda self, dim, self_sym_sizes: jnp.squeeze(self, dim),
                 attrs=("dim", "self_sym_sizes"), node=node,
                 view=None if node[-1] == "4" else _squeeze_meta,
                 self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))


SQUEEZE0, SQUEEZE1, SQUEEZE2, SQUEEZE4 = (_sq("SqueezeBackward" + n) for n in "0124")


def squeeze(input, dim=None):
    op, attrs = _squeeze_op(input, dim)
    return call_op(op, (input,), attrs)


def _squeeze_op(input, dim):
    """squeeze's (op, attrs): SqueezeBackward0 (all dims), 1 (a dim), 2 (dims)."""
    shape = input._shape
    if dim is None:
        return SQUEEZE0, (tuple(i for i, n in enumerate(shape) if n == 1), shape)
    if isinstance(dim, int):
        d = _wrap_dim(dim, input.ndim)
        return SQUEEZE1, ((d,) if input.ndim and shape[d] == 1 else (), shape)
    wrapped = [_wrap_dim(x, input.ndim) for x in dim]
    for k, d in enumerate(wrapped):
        if d in wrapped[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    dims = tuple(sorted(d for d in wrapped if input.ndim and shape[d] == 1))
    return SQUEEZE2, (dims, shape)


def _perm_meta(src, attrs, idx, shape):
    st = src._stride if src._stride is not None else contiguous_strides(src._shape)
    key = (attrs, st)
    r = _perm_strides.get(key)
    if r is None:
        r = put_bounded(_perm_strides, key, tuple(st[p] for p in _perm_of(attrs, len(st))),
                        4096)
    return r, src._offset


_perm_strides = {}  # (attrs, source strides) -> a transpose's or permute's strides


def _perm_of(attrs, nd):
    if len(attrs) == 2:  # transpose(dim0, dim1)
        if not nd:  # (a 0-d tensor's transpose(0, -1): itself)
            return []
        p = list(range(nd))
        p[attrs[0]], p[attrs[1]] = p[attrs[1]], p[attrs[0]]
        return p
    return attrs[0]


def _swapaxes(self, dim0, dim1):
    return jnp.swapaxes(self, dim0, dim1) if self.ndim else self


TRANSPOSE = defop("transpose", _swapaxes,
                  attrs=("dim0", "dim1"), view=_perm_meta, replay_in=True,
                  self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))
T = defop("t", _swapaxes, attrs=("dim0", "dim1"),
          node="TBackward0", view=_perm_meta, replay_in=True, self=lambda grad: grad.t())
PERMUTE = defop("permute", lambda self, dims: jnp.transpose(self, dims), attrs=("dims",),
                view=_perm_meta, replay_in=True,
                self=lambda grad, dims: grad.permute(tuple(sorted(range(len(dims)),
                                                                  key=dims.__getitem__))))


def transpose(input, dim0, dim1):
    nd = input.ndim
    return call_op(TRANSPOSE, (input,), (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    if input.ndim < 2:
        return call_op(T, (input,), (0, 0))
    return call_op(T, (input,), (0, 1))


def permute(input, *dims):
    return call_op(PERMUTE, (input,), (_permutation(input, _shape_arg(dims)),))


def _permutation(input, dims):
    """permute's dims, wrapped and checked."""
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
                           if len(dims) != input.ndim else "permute(): duplicate dims are not "
                           "allowed.")
    return dims


def _T(input):
    return permute(input, tuple(reversed(range(input.ndim))))


def _mT(input):
    return transpose(input, -2, -1)


def _H(input):
    """Tensor.H: a matrix's conjugate transpose (a view); a 0-d tensor's conj (deprecated)."""
    if input.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=3)
        return conj(input)
    if input.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""))
    return adjoint(input)


def adjoint(input):
    """torch.adjoint (and Tensor.mH): the conjugate transpose of the last two dims, a view.

    >>> import eagergrad as torch
    >>> torch.tensor([[1 + 2j, 3j]]).adjoint()
    tensor([[1.-2.j],
            [0.-3.j]])
    """
    return conj(transpose(input, -2, -1))


def _expand_meta(src, attrs, idx, shape):
    st = src.stride()
    lead = len(shape) - src.ndim
    out = [0] * lead + [s if src._shape[i] == shape[i + lead] else 0 for i, s in enumerate(st)]
    return tuple(out), src._offset


EXPAND = defop("expand", lambda self, size, self_sym_sizes: jnp.broadcast_to(self, size),
               attrs=("size", "self_sym_sizes"), view=_expand_meta,
               self=lambda grad, self_sym_sizes: grad.sum_to_size(self_sym_sizes))


def expand(input, *sizes):
    return call_op(EXPAND, (input,), (_expanded_size(input, _shape_arg(sizes)), input._shape))


def _expanded_size(input, sizes):
    """expand's target size, -1s resolved, with torch's checks."""
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input._shape)}}}, "
                           f"size={list(sizes)}): "
                           "the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({nd})")
    lead = len(sizes) - nd
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            out.append(s)
            continue
        cur = input._shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(input._shape)}")
        out.append(s)
    return tuple(out)


def expand_as(input, other):
    return expand(input, other._shape)


def broadcast_to(input, shape):
    return expand(input, shape)


def _sum_to_size(input, *size):
    size = _shape_arg(size)
    if input._shape == size:
        return input
    lead = input.ndim - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(size)
                                      if n == 1 and input._shape[i + lead] != 1)
    r = input.sum(dims, keepdim=True) if dims else input
    return r.view(size) if lead else r


# ---- select / slice and their backward (scatter into zeros) ----------------------------
def _select_meta(src, attrs, idx, shape):
    dim, index = attrs[0], attrs[1]
    st = list(src.stride())
    off = src._offset + index * st[dim]
    del st[dim]
    return tuple(st), off


SELECT_BACKWARD = defop("select_backward", lambda grad_output, input_sizes, dim, index:
                        jnp.zeros(input_sizes, grad_output.dtype).at[
                            (slice(None),) * dim + (index,)].set(grad_output),
                        inputs=("grad_output",), attrs=("input_sizes", "dim", "index"),
                        node="SelectBackwardBackward0",
                        grad_output=lambda grad, dim, index: grad.select(dim, index))
SELECT = defop("select", lambda self, dim, index, self_sym_sizes:
               lax.dynamic_index_in_dim(self, index, dim, keepdims=False),
               attrs=("dim", "index", "self_sym_sizes"), view=_select_meta, dynamic=("index",),
               self=lambda grad, dim, index, self_sym_sizes:
               call_op(SELECT_BACKWARD, (grad,), (self_sym_sizes, dim, index)))


def select(input, dim, index):
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    return call_op(SELECT, (input,), (d, index % n, input._shape))


def _slice_meta(src, attrs, idx, shape):
    dim, start, end, step = attrs[:4]
    st = list(src.stride())
    off = src._offset + start * st[dim]
    st[dim] *= step
    return tuple(st), off


SLICE_BACKWARD = defop("slice_backward", lambda grad_output, input_sizes, dim, start, end, step:
                       jnp.zeros(input_sizes, grad_output.dtype).at[
                           (slice(None),) * dim + (slice(start, end, step),)].set(grad_output),
                       inputs=("grad_output",), attrs=("input_sizes", "dim", "start", "end",
                                                        "step"),
                       node="SliceBackwardBackward0",
                       grad_output=lambda grad, dim, start, end, step:
                       call_op(SLICE, (grad,), (dim, start, end, step, grad._shape)))


def _slice_view_k(a, dim, start, end, step):
    """The slice kernel: `start` a traced scalar (in range: the front-end clamps it), and
    `end`, static, is the slice's length here (SLICE.static_of), so that one kernel
    serves every start."""
    a = lax.dynamic_slice_in_dim(a, start, end, axis=dim)
    return a if step == 1 else lax.slice_in_dim(a, 0, end, step, axis=dim)


SLICE = defop("slice", lambda self, dim, start, end, step, self_sym_sizes:
              _slice_view_k(self, dim, start, end, step),
              attrs=("dim", "start", "end", "step", "self_sym_sizes"), view=_slice_meta,
              dynamic=("start",),
              self=lambda grad, dim, start, end, step, self_sym_sizes:
              call_op(SLICE_BACKWARD, (grad,), (self_sym_sizes, dim, start, end, step)))
# the kernel's key: the length in end's place, the start traced (x[i:i+2], narrow(0, i, 3)
# for every i: one executable, and one write through the view, _storage.write_into)
SLICE.static_of = lambda attrs: (attrs[0], None, attrs[2] - attrs[1], attrs[3], attrs[4])


def _slice_update(parent, v, dim, start, end, step, self_sym_sizes):
    """Write v into the slice of `parent` that _slice_view_k reads (end: the length)."""
    if step != 1:  # the window the slice strides over, written at its positions
        v = lax.dynamic_slice_in_dim(parent, start, end, axis=dim).at[
            (slice(None),) * dim + (slice(0, end, step),)].set(v)
    return lax.dynamic_update_slice_in_dim(parent, v, start, axis=dim)


register_update(SLICE.kernel, _slice_update)
register_update(SELECT.kernel, lambda parent, v, dim, index, self_sym_sizes:
                lax.dynamic_update_index_in_dim(parent, v, index, dim))


def _slice(input, dim, start, end, step=1):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    n = input._shape[dim]
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return call_op(SLICE, (input,), (dim, start, end, step, input._shape))


def narrow(input, dim, start, length):
    if isinstance(start, Tensor):  # (torch's narrow.Tensor: read on the host)
        if start.ndim or start.dtype.is_floating_point or start.dtype.is_complex or \
                start.dtype is D.bool_:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    if not input.ndim:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, start + length)


# ---- split / chunk / unbind: one node, several view outputs ---------------------------
def _split_meta(src, attrs, idx, shape):
    sizes, dim = attrs[0], attrs[1]
    st = src.stride()
    return st, src._offset + sum(sizes[:idx]) * st[dim]


def _split_k(self, sizes, dim, **_):
    out, start = [], 0
    for s in sizes:
        out.append(lax.slice_in_dim(self, start, start + s, axis=dim))
        start += s
    return tuple(out)


SPLIT = defop("split", lambda self, sizes, dim, split_size: _split_k(self, sizes, dim),
              attrs=("sizes", "dim", "split_size"), view=_split_meta,
              self=lambda grads, dim: cat(grads, dim))
SPLIT_SIZES = defop("split_with_sizes", lambda self, sizes, dim: _split_k(self, sizes, dim),
                    attrs=("sizes", "dim"), view=_split_meta,
                    self=lambda grads, dim: cat(grads, dim))


def _unbind_meta(src, attrs, idx, shape):
    dim = attrs[0]
    st = list(src.stride())
    off = src._offset + idx * st[dim]
    del st[dim]
    return tuple(st), off


UNBIND = defop("unbind", lambda self, dim: tuple(jnp.moveaxis(self, dim, 0)), attrs=("dim",),
               view=_unbind_meta, self=lambda grads, dim: stack(grads, dim))


def split(tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        sizes = tuple(min(s, n - i) for i in range(0, n, s)) if n else (0,)
        return call_op(SPLIT, (tensor,), (sizes, d, s))
    return call_op(SPLIT_SIZES, (tensor,), _split_sizes(tensor, split_size_or_sections, d))


def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes: views of `input` of `split_sizes` along `dim`.

    >>> import eagergrad as torch
    >>> [t.tolist() for t in torch.arange(5).split_with_sizes([2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    d = _wrap_dim(dim, input.ndim)
    return call_op(SPLIT_SIZES, (input,), _split_sizes(input, split_sizes, d))


def _split_sizes(tensor, split_sizes, d):
    """split_with_sizes' attrs (sizes, dim), with torch's checks."""
    n = tensor._shape[d]
    sizes = tuple(int(s) for s in split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={list(sizes)}")
    return sizes, d


def chunk(input, chunks, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return split(input, max(-(-input._shape[d] // chunks), 1), d)


def unbind(input, dim=0):
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return call_op(UNBIND, (input,), (_wrap_dim(dim, input.ndim),))


# ---- cat / stack (variadic differentiable input) ---------------------------------------
def _cat_back(grad, dim, sizes):
    out, start = [], 0
    for s in sizes:
        if s is None:  # (a 1-d empty input: zeros, as torch's cat_tensors_backward)
            out.append(grad.new_zeros((0,)))
            continue
        out.append(grad.narrow(dim, start, s))
        start += s
    return out


def _cat_k(*tensors, dim, dtype, sizes):
    """(sizes: None for the 1-d empty inputs, which torch skips)"""
    parts = [t.astype(dtype.np) for t, s in zip(tensors, sizes) if s is not None]
    return jnp.concatenate(parts, axis=dim) if parts else jnp.zeros((0,), dtype.np)


CAT = defop("cat", _cat_k,
            inputs=("*tensors",), attrs=("dim", "dtype", "sizes"),
            tensors=lambda grad, dim, sizes: _cat_back(grad, dim, sizes))
STACK = defop("stack", lambda *tensors, dim, dtype:
              jnp.stack([t.astype(dtype.np) for t in tensors], axis=dim),
              inputs=("*tensors",), attrs=("dim", "dtype"),
              tensors=lambda grad, dim: grad.unbind(dim))


@autocast_op("cat")
def cat(tensors, dim=0, *, out=None):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError("cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    ref = next((t for t in tensors if t._shape != (0,)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if t._shape == (0,):
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {t.ndim}")
        for j, (a, b) in enumerate(zip(ref._shape, t._shape)):
            if j != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number {i} "
                                   "in the list.")
    dt = promote(*tensors)
    if out is not None:
        if not _can_cast(dt, out.dtype):
            raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                            f"{out.dtype.scalar_name}")
        no_out(out, "cat")
    sizes = tuple(t._shape[d] if t._shape != (0,) else None for t in tensors)
    return call_op(CAT, tuple(tensors), (d, dt, sizes))


concat = concatenate = cat


@autocast_op("stack")
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t._shape != tensors[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0]._shape)} at entry 0 and {list(t._shape)} at "
                               f"entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    return call_op(STACK, tuple(tensors), (d, promote(*tensors)))


# ---- copies and conversions --------------------------------------------------------------
CLONE = defop("clone", lambda self: jnp.array(self, copy=True), self=lambda grad: grad)
def _to_copy_k(self, dtype, device):
    self = D.astype(self, dtype.np)
    return self if device is None else jax.device_put(self, device.jax)


TO_COPY = defop("_to_copy", _to_copy_k, attrs=("dtype", "device"), self=lambda grad: grad)


def clone(input, *, memory_format=None):
    return call_op(CLONE, (input,))


def contiguous(input, memory_format=None):
    return input if input.is_contiguous() else clone(input)


def to(input, *args, dtype=None, device=None, copy=False, non_blocking=False,
       memory_format=None):
    """Tensor.to(dtype) / .to(device) / .to(other): returns self when nothing changes."""
    flags = []  # torch's positional non_blocking, copy after the dtype, device or tensor
    for a in args:
        if isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif a is not None:
            device = a
    if len(flags) > 1:
        copy = flags[1]
    out = input
    if dtype is not None and D.as_dtype(dtype) is not input.dtype:
        D.warn_if_discarding_imag(input.dtype, D.as_dtype(dtype))
        out = call_op(TO_COPY, (input,), (D.as_dtype(dtype), None))
    if device is not None and _device(device) != input.device:
        out = call_op(TO_COPY, (out,), (out.dtype, _device(device).available()))  # a copy
    if copy and out is input:
        out = clone(input)
    return out


def type_as(input, other):
    return to(input, other.dtype)


# ---- more views: diagonal, unfold, as_strided, view_as_real (real/imag), movedim -------------
def _diag_meta(src, attrs, idx, shape):
    offset, d1, d2 = attrs[:3]
    st = src.stride()
    off = src._offset
    if shape[-1]:  # torch moves the offset only for a non-empty diagonal
        off += offset * st[d2] if offset >= 0 else -offset * st[d1]
    rest = tuple(s for i, s in enumerate(st) if i not in (d1, d2))
    return rest + (st[d1] + st[d2],), off


def _iota_write(view_fn, sizes, grad, add=False):
    """zeros(sizes) with the elements `view_fn` reads set to (or, add: summed with) grad."""
    n = 1
    for s in sizes:
        n *= s
    idx = view_fn(jnp.arange(n).reshape(sizes)).reshape(-1)
    z = jnp.zeros(n, grad.dtype)
    z = z.at[idx].add(grad.reshape(-1)) if add else z.at[idx].set(grad.reshape(-1))
    return z.reshape(sizes)


DIAGONAL_BACKWARD = defop("diagonal_backward", lambda grad_output, input_sizes, offset, dim1,
                          dim2: _iota_write(lambda a: jnp.diagonal(a, offset, dim1, dim2),
                                            input_sizes, grad_output),
                          inputs=("grad_output",), attrs=("input_sizes", "offset", "dim1", "dim2"),
                          node="DiagonalBackwardBackward0",
                          grad_output=lambda grad, offset, dim1, dim2:
                          diagonal(grad, offset, dim1, dim2))
DIAGONAL = defop("diagonal", lambda self, offset, dim1, dim2, self_sym_sizes:
                 jnp.diagonal(self, offset, dim1, dim2),
                 attrs=("offset", "dim1", "dim2", "self_sym_sizes"), view=_diag_meta,
                 self=lambda grad, offset, dim1, dim2, self_sym_sizes:
                 call_op(DIAGONAL_BACKWARD, (grad,), (self_sym_sizes, offset, dim1, dim2)))


def diagonal(input, offset=0, dim1=0, dim2=1):
    return call_op(DIAGONAL, (input,), _diagonal_attrs(input, offset, dim1, dim2))


def _diagonal_attrs(input, offset, dim1, dim2):
    nd = input.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return offset, d1, d2, input._shape


def _unfold_k(self, dimension, size, step):
    if self.ndim == 0:  # torch: a 0-dim tensor unfolds to shape (1,)
        return self.reshape(1)
    count = (self.shape[dimension] - size) // step + 1
    idx = jnp.arange(count)[:, None] * step + jnp.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(self, idx, axis=dimension), dimension + 1, -1)


def _unfold_meta(src, attrs, idx, shape):
    d, size, step = attrs[:3]
    if not src.ndim:
        return (1,), src._offset
    st = list(src.stride())
    new = st[d]
    st[d] = st[d] * step
    return tuple(st) + (new,), src._offset


UNFOLD_BACKWARD = defop("unfold_backward", lambda grad_in, input_sizes, dim, size, step:
                        _iota_write(lambda a: _unfold_k(a, dim, size, step), input_sizes,
                                    grad_in, add=True),
                        inputs=("grad_in",), attrs=("input_sizes", "dim", "size", "step"),
                        node="UnfoldBackwardBackward0",
                        grad_in=lambda grad, dim, size, step: unfold(grad, dim, size, step))
UNFOLD = defop("unfold", lambda self, dimension, size, step, self_sym_sizes:
               _unfold_k(self, dimension, size, step),
               attrs=("dimension", "size", "step", "self_sym_sizes"), view=_unfold_meta,
               self=lambda grad, dimension, size, step, self_sym_sizes:
               call_op(UNFOLD_BACKWARD, (grad,), (self_sym_sizes, dimension, size, step)))


def unfold(input, dimension, size, step):
    return call_op(UNFOLD, (input,), _unfold_attrs(input, dimension, size, step))


def _unfold_attrs(input, dimension, size, step):
    d = _wrap_dim(dimension, max(input.ndim, 1))
    n = input._shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return d, size, step, input._shape


def _as_strided_k(self, size, stride, storage_offset):
    idx = jnp.asarray(storage_offset)
    for n, s in zip(size, stride):
        idx = idx[..., None] + jnp.arange(n) * s
    return self.reshape(-1)[idx.reshape(size)] if size else self.reshape(-1)[storage_offset]


AS_STRIDED_BACKWARD = defop("as_strided_backward", lambda grad, input_sizes, size, stride,
                            storage_offset: _iota_write(
                                lambda a: _as_strided_k(a, size, stride, storage_offset),
                                input_sizes, grad, add=True),
                            inputs=("grad",), attrs=("input_sizes", "size", "stride",
                                                     "storage_offset"),
                            node="AsStridedScatterBackward0",
                            grad=lambda grad, size, stride, storage_offset:
                            as_strided(grad, size, stride, storage_offset))
AS_STRIDED = defop("as_strided", lambda self, size, stride, storage_offset, self_sym_sizes:
                   _as_strided_k(self, size, stride, storage_offset),
                   attrs=("size", "stride", "storage_offset", "self_sym_sizes"),
                   view=lambda s, a, i, sh: (a[1], a[2]), dynamic=("storage_offset",),
                   self=lambda grad, size, stride, storage_offset, self_sym_sizes:
                   call_op(AS_STRIDED_BACKWARD, (grad,), (self_sym_sizes, size, stride,
                                                      storage_offset)))


def as_strided(input, size, stride, storage_offset=None):
    """Tensor.as_strided over the tensor's storage (eagergrad: of a base tensor, or of a
    view with the storage offset 0 and contiguous strides)."""
    return call_op(AS_STRIDED, (input,), _as_strided_attrs(input, size, stride, storage_offset))


def _as_strided_attrs(input, size, stride, storage_offset, name="as_strided"):
    if storage_offset is None:
        storage_offset = input._offset
    if not input.is_contiguous() or input._offset:
        raise NotImplementedError(f"eagergrad does not implement {name} on a view that "
                                  "does not start its storage contiguously yet")
    size, stride = tuple(size), tuple(stride)
    need = storage_offset + sum((n - 1) * s for n, s in zip(size, stride) if n) + 1
    if any(n == 0 for n in size):
        need = 0
    if need > input.numel():
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset}, and itemsize {input.dtype.itemsize} "
                           f"requiring a storage size of {need * input.dtype.itemsize} are out "
                           f"of bounds for storage of size {input.numel() * input.dtype.itemsize}")
    return size, stride, storage_offset, input._shape


def _var_meta(src, attrs, idx, shape):
    return tuple(2 * s for s in src.stride()) + (1,), 2 * src._offset


def _vac_meta(src, attrs, idx, shape):
    return tuple(s // 2 for s in src.stride()[:-1]), src._offset // 2


VIEW_AS_COMPLEX = defop("view_as_complex", lambda self: jax.lax.complex(self[..., 0],
                                                                         self[..., 1]),
                        view=_vac_meta, self=lambda grad: _view_as_real(grad))
VIEW_AS_REAL = defop("view_as_real", lambda self: jnp.stack([jnp.real(self), jnp.imag(self)], -1),
                     view=_var_meta, self=lambda grad: call_op(VIEW_AS_COMPLEX, (grad,)))


def view_as_real(input):
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    return _view_as_real(input)


def _view_as_real(input):
    return call_op(VIEW_AS_REAL, (input,))


@autocast_op("view_as_complex")
def view_as_complex(input):
    if input._shape[-1:] != (2,):
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return call_op(VIEW_AS_COMPLEX, (input,))


def _register_view_writers():

    def write(parent, v):
        return jax.lax.complex(v[..., 0], v[..., 1]).astype(parent.dtype)
    register_special(VIEW_AS_REAL.kernel, write)

    def write_complex(parent, v):
        return jnp.stack([jnp.real(v), jnp.imag(v)], -1).astype(parent.dtype)
    register_special(VIEW_AS_COMPLEX.kernel, write_complex)


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    nd = input.ndim
    given = src, dst
    src = [_wrap_dim(d, nd) for d in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    for name, dims, orig in (("source", src, given[0]), ("destination", dst, given[1])):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({orig})")
    if not nd:  # torch: a 0-d tensor's movedim(0, 0) is an alias
        return call_op(ALIAS, (input,))
    order = [d for d in range(nd) if d not in src]
    perm = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, perm)


moveaxis = movedim


# ---- complex parts (conj, real and imag are views, as in torch) --------------------------
# torch's conj() is lazy: a view of its input with the conjugate bit set (same strides),
# read through jnp.conj and written back through it (_storage.register_special)
_CONJ = defop("conj", jnp.conj, node="ConjBackward0",
              view=lambda src, attrs, idx, shape: (src._stride, src._offset),
              self=lambda grad: grad.conj())


def real(input):
    """torch.real: for complex input a view, view_as_real(input)[..., 0], as torch."""
    if not input.is_complex():
        return input
    return select(_view_as_real(input), -1, 0)


def imag(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(_view_as_real(input), -1, 1)


def conj(input):
    """torch.conj: for complex input a view with the conjugate bit set (is_conj()).

    >>> import eagergrad as torch
    >>> z = torch.tensor([1 + 2j])
    >>> w = z.conj()
    >>> _ = w.mul_(2)  # written back through the conjugate
    >>> z
    tensor([2.+4.j])
    """
    return input if not input.is_complex() else call_op(_CONJ, (input,))


def is_conj(input):
    """torch.is_conj: whether `input` reads its base through an odd number of conj() views.

    >>> import eagergrad as torch
    >>> z = torch.tensor([1 + 2j]); z.conj().is_conj(), z.conj().conj().is_conj()
    (True, False)
    """
    ch = input._vchain
    if not ch:
        return False
    f = _CONJ.fwd(())
    return sum(g is f for g, _ in ch) % 2 == 1


def resolve_conj(input):
    """torch.resolve_conj: a conj view materialized as a new tensor, else `input` itself.

    >>> import eagergrad as torch
    >>> torch.tensor([1 + 2j]).conj().resolve_conj().is_conj()
    False
    """
    return input.clone() if is_conj(input) else input


def is_neg(input):
    """torch.is_neg: whether `input` reads a conj view's imaginary part (torch's negative
    bit, set by imag() of a conjugated tensor and kept by the views of it).

    >>> import eagergrad as torch
    >>> z = torch.tensor([1 + 2j]); z.conj().imag.is_neg(), z.imag.is_neg()
    (True, False)
    """
    ch = input._vchain
    if not ch or input.is_complex():
        return False
    f, var = _CONJ.fwd(()), VIEW_AS_REAL.fwd(())
    conj = False
    for k, (g, _) in enumerate(ch):
        if g is f:
            conj = not conj
        elif g is var:  # imag() is view_as_real then select(-1, 1): select's index is traced
            nxt = ch[k + 1][0] if k + 1 < len(ch) else None
            return conj and getattr(nxt, "keywords", {}).get("index") == 1
    return False


def resolve_neg(input):
    """torch.resolve_neg: a negative view (is_neg) materialized as a new tensor, else
    `input` itself.

    >>> import eagergrad as torch
    >>> z = torch.tensor([1 + 2j]); z.conj().imag.resolve_neg()
    tensor([-2.])
    """
    return input.clone() if is_neg(input) else input


def ravel(input):
    """torch.ravel: input.contiguous().view(-1), a view of a contiguous input.

    >>> import eagergrad as torch
    >>> torch.tensor([[1, 2], [3, 4]]).t().ravel()
    tensor([1, 3, 2, 4])
    """
    return view(contiguous(input), -1)


register_special(_CONJ.kernel, lambda parent, v: jnp.conj(v).astype(parent.dtype))
