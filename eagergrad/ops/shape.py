"""View ops (outputs alias their input's storage), reshape, cat/stack/split, clone,
contiguous and dtype conversion. A view op declares `view=` to give its output's
strides and storage offset, which are torch's."""
import math

import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtypes as D
from .._storage import view_strides
from ..tensor import _wrap_dim
from ._table import defop, run


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
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _shape_arg(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _same_offset(strides_fn):
    def meta(src, attrs, idx, shape):
        return strides_fn(src, attrs, shape), src._offset
    return meta


def _view_meta(src, attrs, idx, shape):
    st = view_strides(src._shape, src.stride(), shape)
    return st, src._offset


VIEW = defop("view", lambda self, size, self_sym_sizes: jnp.reshape(self, size),
             attrs=("size", "self_sym_sizes"), view=_view_meta,
             self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
UNSAFE_VIEW = defop("_unsafe_view", lambda self, size, self_sym_sizes: jnp.reshape(self, size),
                    attrs=("size", "self_sym_sizes"), node="UnsafeViewBackward0",
                    self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
ALIAS = defop("alias", lambda self: self, view=lambda s, a, i, sh: (s.stride(), s._offset),
              self=lambda grad: grad)


def view(input, *shape):
    """Tensor.view: same storage, new shape; raises when the strides do not allow it."""
    if len(shape) == 1 and isinstance(shape[0], (D.dtype,)):
        raise NotImplementedError("eagergrad does not implement Tensor.view(dtype) yet")
    size = _infer_size(_shape_arg(shape), input.numel())
    if view_strides(input._shape, input.stride(), size) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return run(VIEW, (input,), (size, input._shape))


def reshape(input, *shape):
    """torch.reshape: a view when the strides allow one, else a copy (as torch)."""
    size = _infer_size(_shape_arg(shape), input.numel())
    if view_strides(input._shape, input.stride(), size) is not None:
        return run(VIEW, (input,), (size, input._shape))
    return run(UNSAFE_VIEW, (clone(input),), (size, input._shape))


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
    return run(UNSQUEEZE, (input,), (_wrap_dim(dim, input.ndim + 1),))


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
    shape = input._shape
    if dim is None:
        dims = tuple(i for i, n in enumerate(shape) if n == 1)
        return run(SQUEEZE0, (input,), (dims, shape))
    if isinstance(dim, int):
        d = _wrap_dim(dim, input.ndim)
        dims = (d,) if input.ndim and shape[d] == 1 else ()
        return run(SQUEEZE1, (input,), (dims, shape))
    dims = tuple(sorted(d for d in {_wrap_dim(x, input.ndim) for x in dim} if shape[d] == 1))
    return run(SQUEEZE2, (input,), (dims, shape))


def _perm_meta(src, attrs, idx, shape):
    st = src.stride()
    return tuple(st[p] for p in _perm_of(attrs, src.ndim)), src._offset


def _perm_of(attrs, nd):
    if len(attrs) == 2:  # transpose(dim0, dim1)
        p = list(range(nd))
        p[attrs[0]], p[attrs[1]] = p[attrs[1]], p[attrs[0]]
        return p
    return attrs[0]


TRANSPOSE = defop("transpose", lambda self, dim0, dim1: jnp.swapaxes(self, dim0, dim1),
                  attrs=("dim0", "dim1"), view=_perm_meta,
                  self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))
T = defop("t", lambda self, dim0, dim1: jnp.swapaxes(self, dim0, dim1), attrs=("dim0", "dim1"),
          node="TBackward0", view=_perm_meta, self=lambda grad: grad.t())
PERMUTE = defop("permute", lambda self, dims: jnp.transpose(self, dims), attrs=("dims",),
                view=_perm_meta,
                self=lambda grad, dims: grad.permute(tuple(sorted(range(len(dims)),
                                                                  key=dims.__getitem__))))


def transpose(input, dim0, dim1):
    nd = input.ndim
    return run(TRANSPOSE, (input,), (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    if input.ndim < 2:
        return run(T, (input,), (0, 0))
    return run(T, (input,), (0, 1))


def permute(input, *dims):
    dims = tuple(_wrap_dim(d, input.ndim) for d in _shape_arg(dims))
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
                           if len(dims) != input.ndim else "permute(): duplicate dims are not "
                           "allowed.")
    return run(PERMUTE, (input,), (dims,))


def _T(input):
    return permute(input, tuple(reversed(range(input.ndim))))


def _mT(input):
    return transpose(input, -2, -1)


def _expand_meta(src, attrs, idx, shape):
    st = src.stride()
    lead = len(shape) - src.ndim
    out = [0] * lead + [s if src._shape[i] == shape[i + lead] else 0 for i, s in enumerate(st)]
    return tuple(out), src._offset


EXPAND = defop("expand", lambda self, size, self_sym_sizes: jnp.broadcast_to(self, size),
               attrs=("size", "self_sym_sizes"), view=_expand_meta,
               self=lambda grad, self_sym_sizes: grad.sum_to_size(self_sym_sizes))


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input._shape)}}}, size={list(sizes)}): "
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
    return run(EXPAND, (input,), (tuple(out), input._shape))


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
               lax.index_in_dim(self, index, dim, keepdims=False),
               attrs=("dim", "index", "self_sym_sizes"), view=_select_meta,
               self=lambda grad, dim, index, self_sym_sizes:
               run(SELECT_BACKWARD, (grad,), (self_sym_sizes, dim, index)))


def select(input, dim, index):
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    return run(SELECT, (input,), (d, index % n, input._shape))


def _slice_meta(src, attrs, idx, shape):
    dim, start, end, step = attrs[:4]
    st = list(src.stride())
    off = src._offset + start * st[dim]
    st[dim] *= step
    return tuple(st), off


def _slice_k(a, dim, start, end, step):
    return lax.slice_in_dim(a, start, end, step, axis=dim)


SLICE_BACKWARD = defop("slice_backward", lambda grad_output, input_sizes, dim, start, end, step:
                       jnp.zeros(input_sizes, grad_output.dtype).at[
                           (slice(None),) * dim + (slice(start, end, step),)].set(grad_output),
                       inputs=("grad_output",), attrs=("input_sizes", "dim", "start", "end",
                                                        "step"),
                       node="SliceBackwardBackward0",
                       grad_output=lambda grad, dim, start, end, step:
                       run(SLICE, (grad,), (dim, start, end, step, grad._shape)))
SLICE = defop("slice", lambda self, dim, start, end, step, self_sym_sizes:
              _slice_k(self, dim, start, end, step),
              attrs=("dim", "start", "end", "step", "self_sym_sizes"), view=_slice_meta,
              self=lambda grad, dim, start, end, step, self_sym_sizes:
              run(SLICE_BACKWARD, (grad,), (self_sym_sizes, dim, start, end, step)))


def _slice(input, dim, start, end, step=1):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    n = input._shape[dim]
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return run(SLICE, (input,), (dim, start, end, step, input._shape))


def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    if start < 0:
        start += input._shape[d]
    if start + length > input._shape[d] or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({input._shape[d]}).")
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
        return run(SPLIT, (tensor,), (sizes, d, s))
    sizes = tuple(split_size_or_sections)
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={list(sizes)}")
    return run(SPLIT_SIZES, (tensor,), (sizes, d))


def chunk(input, chunks, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return split(input, max(-(-input._shape[d] // chunks), 1), d)


def unbind(input, dim=0):
    return run(UNBIND, (input,), (_wrap_dim(dim, input.ndim),))


# ---- cat / stack (variadic differentiable input) ---------------------------------------
def _cat_back(grad, dim, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(grad.narrow(dim, start, s))
        start += s
    return out


CAT = defop("cat", lambda *tensors, dim, dtype, sizes:
            jnp.concatenate([t.astype(dtype.np) for t in tensors], axis=dim),
            inputs=("*tensors",), attrs=("dim", "dtype", "sizes"),
            tensors=lambda grad, dim, sizes: _cat_back(grad, dim, sizes))
STACK = defop("stack", lambda *tensors, dim, dtype:
              jnp.stack([t.astype(dtype.np) for t in tensors], axis=dim),
              inputs=("*tensors",), attrs=("dim", "dtype"),
              tensors=lambda grad, dim: grad.unbind(dim))


def cat(tensors, dim=0):
    from ._args import promote
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((t for t in tensors if t._shape != (0,)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if t._shape == (0,):
            continue
        if t.ndim != ref.ndim or any(a != b for j, (a, b) in enumerate(zip(t._shape, ref._shape))
                                     if j != d):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                               f"size {ref._shape[0 if d else 1] if ref.ndim > 1 else ''} but got "
                               f"size {t._shape[0 if d else 1] if t.ndim > 1 else ''} for tensor "
                               f"number {i} in the list.")
    dt = promote(*tensors)
    sizes = tuple(t._shape[d] if t._shape != (0,) else 0 for t in tensors)
    return run(CAT, tuple(tensors), (d, dt, sizes))


concat = concatenate = cat


def stack(tensors, dim=0):
    from ._args import promote
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t._shape != tensors[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0]._shape)} at entry 0 and {list(t._shape)} at "
                               f"entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    return run(STACK, tuple(tensors), (d, promote(*tensors)))


# ---- copies and conversions --------------------------------------------------------------
CLONE = defop("clone", lambda self: jnp.array(self, copy=True), self=lambda grad: grad)
def _to_copy_k(self, dtype, device):
    if jnp.iscomplexobj(self) and dtype._kind < 3:
        self = jnp.real(self)  # torch warns that the imaginary part is discarded
    self = self.astype(dtype.np)
    return self if device is None else jax.device_put(self, device.jax)


TO_COPY = defop("_to_copy", _to_copy_k, attrs=("dtype", "device"), self=lambda grad: grad)


def clone(input, *, memory_format=None):
    return run(CLONE, (input,))


def contiguous(input, memory_format=None):
    return input if input.is_contiguous() else clone(input)


def to(input, *args, dtype=None, device=None, copy=False, non_blocking=False,
       memory_format=None):
    """Tensor.to(dtype) / .to(device) / .to(other): returns self when nothing changes."""
    from ..device import device as _device, put
    from ..tensor import Tensor
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif a is not None:
            device = a
    out = input
    if dtype is not None and D.as_dtype(dtype) is not input.dtype:
        out = run(TO_COPY, (input,), (D.as_dtype(dtype), None))
    if device is not None and _device(device) != input.device:
        out = put(out, _device(device))
    if copy and out is input:
        out = clone(input)
    return out


def type_as(input, other):
    return to(input, other.dtype)
