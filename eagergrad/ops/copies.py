"""The out-of-place ("functional") forms of the view and fill ops: view_copy & co., fill,
as_strided_scatter, and scalar_tensor; unsafe_split_with_sizes (pieces that are not
views) and slice_inverse (a view of a slice's storage, NOTE [slice_inverse]).

A `*_copy` op is its view op's table entry (kernel, attributes, formulas) with a new
tensor as its output instead of a view, and torch's node name for it: the view's node
with `_copy` appended (`ViewBackward0_copy`). The arguments are checked by the view
op's own helpers in shape.py, so the errors are the view's, as in torch.
"""
import math
import operator

import jax.numpy as jnp

from .. import _dtypes as D
from .._mode import FWD
from .._shapes import reorder_dims, wrap_dim as _wrap_dim
from ..creation import _int_tuple, full
from ..engine.grad_mode import STATE
from ..tensor import INFERENCE_MODE, Tensor, _tangent, _zeros_meta
from . import pointwise as P, shape as S, tensor_ops as TO
from .fill import FILL, FILL_T, _fill_call
from .views import check_no_overlap_error
from ._table import call_op, defop, derive


def _copy_of(op, name=None, node=None):
    """`op`'s entry with a new tensor as output (not a view): same kernel, attributes,
    traced attributes and formulas; the node `node` (default: op's node + "_copy")."""
    return derive(op, name or op.name + "_copy", node or op.Node.__name__ + "_copy")


VIEW_COPY = _copy_of(S.VIEW)
ALIAS_COPY = _copy_of(S.ALIAS)
AS_STRIDED_COPY = _copy_of(S.AS_STRIDED)
EXPAND_COPY = _copy_of(S.EXPAND)
PERMUTE_COPY = _copy_of(S.PERMUTE)
SQUEEZE_COPY = {op: _copy_of(op) for op in (S.SQUEEZE0, S.SQUEEZE1, S.SQUEEZE2)}
T_COPY = _copy_of(S.T)
TRANSPOSE_COPY = _copy_of(S.TRANSPOSE)
UNFOLD_COPY = _copy_of(S.UNFOLD)
UNSQUEEZE_COPY = _copy_of(S.UNSQUEEZE)
UNBIND_COPY = _copy_of(S.UNBIND)
SPLIT_SIZES_COPY = _copy_of(S.SPLIT_SIZES)
# (their kernels return a tuple of tensors, one per piece: not the one-output fast path)
UNBIND_COPY.simple = SPLIT_SIZES_COPY.simple = False


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")


def view_copy(input, size, *, out=None):
    """torch.view_copy: input.view(size) as a new tensor (any strides: a reshape's values).

    >>> import eagergrad as torch
    >>> torch.view_copy(torch.arange(6), (2, -1))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    _no_out(out, "view_copy")
    if isinstance(size, D.dtype):
        raise NotImplementedError("eagergrad does not implement torch.view_copy(dtype) yet")
    return call_op(VIEW_COPY, (input,), (S._infer_size(tuple(size), input.numel()),
                                         input._shape))


def alias_copy(input, *, out=None):
    """torch.alias_copy: a copy of input (AliasBackward0_copy)."""
    _no_out(out, "alias_copy")
    return call_op(ALIAS_COPY, (input,))


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """torch.as_strided_copy: input.as_strided(size, stride, storage_offset) as a new
    tensor (eagergrad: of an input that starts its storage contiguously, as as_strided).

    >>> import eagergrad as torch
    >>> torch.as_strided_copy(torch.arange(4), (2, 2), (1, 1))
    tensor([[0, 1],
            [1, 2]])
    """
    _no_out(out, "as_strided_copy")
    return call_op(AS_STRIDED_COPY, (input,),
                   S._as_strided_attrs(input, size, stride, storage_offset, "as_strided_copy"))


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """torch.diagonal_copy: input.diagonal(offset, dim1, dim2) as a new tensor.

    >>> import eagergrad as torch
    >>> torch.diagonal_copy(torch.tensor([[1, 2], [3, 4]]), 1)
    tensor([2])
    """
    _no_out(out, "diagonal_copy")
    return call_op(TO.DIAGONAL_COPY, (input,), S._diagonal_attrs(input, offset, dim1, dim2))


def expand_copy(input, size, *, implicit=False, out=None):
    """torch.expand_copy: input.expand(size) as a new (contiguous) tensor.

    >>> import eagergrad as torch
    >>> torch.expand_copy(torch.tensor([1, 2]), (2, -1))
    tensor([[1, 2],
            [1, 2]])
    """
    _no_out(out, "expand_copy")
    return call_op(EXPAND_COPY, (input,), (S._expanded_size(input, tuple(size)), input._shape))


def permute_copy(input, dims, *, out=None):
    """torch.permute_copy: input.permute(dims) as a new (contiguous) tensor."""
    _no_out(out, "permute_copy")
    return call_op(PERMUTE_COPY, (input,), (S._permutation(input, tuple(dims)),))


def squeeze_copy(input, dim=None, *, out=None):
    """torch.squeeze_copy: input.squeeze(dim) as a new tensor (SqueezeBackward0_copy for
    every dim, 1 for one dim, 2 for a tuple of dims)."""
    _no_out(out, "squeeze_copy")
    op, attrs = S._squeeze_op(input, dim)
    return call_op(SQUEEZE_COPY[op], (input,), attrs)


def t_copy(input, *, out=None):
    """torch.t_copy: input.t() as a new (contiguous) tensor."""
    _no_out(out, "t_copy")
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return call_op(T_COPY, (input,), (0, 1) if input.ndim == 2 else (0, 0))


def transpose_copy(input, dim0, dim1, *, out=None):
    """torch.transpose_copy: input.transpose(dim0, dim1) as a new (contiguous) tensor."""
    _no_out(out, "transpose_copy")
    nd = input.ndim
    return call_op(TRANSPOSE_COPY, (input,), (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


def unfold_copy(input, dimension, size, step, *, out=None):
    """torch.unfold_copy: input.unfold(dimension, size, step) as a new tensor."""
    _no_out(out, "unfold_copy")
    return call_op(UNFOLD_COPY, (input,), S._unfold_attrs(input, dimension, size, step))


def unsqueeze_copy(input, dim, *, out=None):
    """torch.unsqueeze_copy: input.unsqueeze(dim) as a new tensor."""
    _no_out(out, "unsqueeze_copy")
    return call_op(UNSQUEEZE_COPY, (input,), (_wrap_dim(dim, input.ndim + 1),))


def unbind_copy(input, dim=0, *, out=None):
    """torch.unbind_copy: input.unbind(dim) as new tensors, one node for them all.

    >>> import eagergrad as torch
    >>> torch.unbind_copy(torch.tensor([[1, 2], [3, 4]]), 1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    _no_out(out, "unbind_copy")
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return call_op(UNBIND_COPY, (input,), (_wrap_dim(dim, input.ndim),))


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """torch.split_with_sizes_copy: input.split_with_sizes(split_sizes, dim) as new
    tensors, one node for them all."""
    _no_out(out, "split_with_sizes_copy")
    d = _wrap_dim(dim, input.ndim)
    return call_op(SPLIT_SIZES_COPY, (input,), S._split_sizes(input, split_sizes, d))


# ---- detach_copy, select_copy, slice_copy, split_copy, view_as_real/complex_copy ---------
# (torch records detach_copy with a NotImplemented node that fails in backward)
DETACH_COPY = defop("detach_copy", lambda self: self, node="NotImplemented",
                    self=P._not_implemented("detach_copy"))
SELECT_COPY = _copy_of(S.SELECT)
SLICE_COPY = _copy_of(S.SLICE)
SPLIT_COPY = _copy_of(S.SPLIT)
SPLIT_COPY.simple = False
VIEW_AS_REAL_COPY = _copy_of(S.VIEW_AS_REAL)
# no formula: torch's autograd refuses view_as_complex_copy of an input requiring grad
VIEW_AS_COMPLEX_COPY = defop("view_as_complex_copy", S.VIEW_AS_COMPLEX.kernel)


def _int_arg(value, fn, arg, pos):
    """torch's parsing of an int argument, with its TypeError."""
    if isinstance(value, (bool, float)) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")
    return operator.index(value)


def _no_complex_grad(name, input):
    """torch's autograd kernels of select_copy and slice_copy refuse complex results."""
    if input.dtype.is_complex and STATE.grad and input.requires_grad:
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           "with complex dtype.")


def detach_copy(input, *, out=None):
    """torch.detach_copy: a copy of input; with autograd, a NotImplemented node (as torch:
    its backward raises).

    >>> import eagergrad as torch
    >>> torch.detach_copy(torch.tensor([1., 2.]))
    tensor([1., 2.])
    """
    _no_out(out, "detach_copy")
    if FWD.active and _tangent(input) is not None:
        raise NotImplementedError("Trying to use forward AD with aten::detach_copy that does not "
                                  "support it.")
    return call_op(DETACH_COPY, (input,))


def select_copy(input, dim, index, *, out=None):
    """torch.select_copy: input.select(dim, index) as a new tensor.

    >>> import eagergrad as torch
    >>> torch.select_copy(torch.tensor([[1, 2], [3, 4]]), 1, -1)
    tensor([2, 4])
    """
    _no_out(out, "select_copy")
    index = _int_arg(index, "select_copy", "index", 3)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    _no_complex_grad("select_copy", input)
    return call_op(SELECT_COPY, (input,), (d, index % n, input._shape))


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """torch.slice_copy: input[start:end:step] along `dim` as a new tensor.

    >>> import eagergrad as torch
    >>> torch.slice_copy(torch.arange(6), 0, 1, None, 2)
    tensor([1, 3, 5])
    """
    _no_out(out, "slice_copy")
    start = None if start is None else _int_arg(start, "slice_copy", "start", 3)
    end = None if end is None else _int_arg(end, "slice_copy", "end", 4)
    step = _int_arg(step, "slice_copy", "step", 5)
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    _no_complex_grad("slice_copy", input)
    return call_op(SLICE_COPY, (input,), (d, *_slice_bounds(input._shape[d], start, end), step,
                                          input._shape))


def _slice_bounds(n, start, end):
    """torch's slice: start and end wrapped once and clamped to [0, n], end >= start."""
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start = min(max(start, 0), n)
    return start, min(max(end, start), n)


def split_copy(input, split_size, dim=0, *, out=None):
    """torch.split_copy: input.split(split_size, dim) (an int size) as new tensors, one
    node for them all.

    >>> import eagergrad as torch
    >>> torch.split_copy(torch.arange(5), 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    _no_out(out, "split_copy")
    s = _int_arg(split_size, "split_copy", "split_size", 2)
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    d = _wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if s == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    sizes = tuple(min(s, n - i) for i in range(0, n, s)) if n else (0,)
    return call_op(SPLIT_COPY, (input,), (sizes, d, s))


def view_as_real_copy(input, *, out=None):
    """torch.view_as_real_copy: the real and imaginary parts of complex input along a new
    last dim, as a new tensor (of a conjugate too, resolved).

    >>> import eagergrad as torch
    >>> torch.view_as_real_copy(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    _no_out(out, "view_as_real_copy")
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return call_op(VIEW_AS_REAL_COPY, (input,))


def view_as_complex_copy(input, *, out=None):
    """torch.view_as_complex_copy: the pairs of input's last dim (of size 2, stride 1) as
    complex numbers, a new tensor; torch's autograd refuses an input requiring grad.

    >>> import eagergrad as torch
    >>> torch.view_as_complex_copy(torch.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    _no_out(out, "view_as_complex_copy")
    if input.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype.scalar_name}")
    if not input.ndim:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    stride = input.stride()
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if input.dtype is D.float16:
        raise NotImplementedError("eagergrad does not implement complex32 (view_as_complex_copy "
                                  "of a float16 tensor)")
    if input.requires_grad and STATE.grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return call_op(VIEW_AS_COMPLEX_COPY, (input,))


# ---- unsafe_split_with_sizes -------------------------------------------------------------
# (two output names declared: the node has one output per piece, not one tensor)
UNSAFE_SPLIT_SIZES = defop("unsafe_split_with_sizes",
                           lambda self, split_sizes, dim: S._split_k(self, split_sizes, dim),
                           attrs=("split_sizes", "dim"), outputs=("result0", "result1"),
                           saved_meta=(("self_sym_sizes",), lambda tensors, needs_grad: {
                               "self_sym_sizes": tuple(tensors[0]._shape)}),
                           self=lambda grads, dim: S.cat(grads, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """torch.unsafe_split_with_sizes: split_with_sizes whose pieces are not views (one
    UnsafeSplitWithSizesBackward0 for them all).

    >>> import eagergrad as torch
    >>> torch.unsafe_split_with_sizes(torch.arange(5), [2, 3])
    (tensor([0, 1]), tensor([2, 3, 4]))
    """
    sizes = _int_tuple(split_sizes, "unsafe_split_with_sizes", "split_sizes", 2)
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input.ndim)
    return call_op(UNSAFE_SPLIT_SIZES, (input,), S._split_sizes(input, sizes, d))


# ---- slice_inverse -----------------------------------------------------------------------
def _slice_inverse_k(storage, *_, size, stride, storage_offset, dim, start, end, step,
                     self_sizes):
    # (only the storage is read: called with it alone, this is also the view chain's step)
    return S._as_strided_k(storage, size, stride, storage_offset)


def _slice_of(grad, dim, start, end, step):
    """grad.slice(dim, start, end, step), torch's Tensor.slice with its checks."""
    d = _wrap_dim(dim, grad.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return call_op(S.SLICE, (grad,), (d, *_slice_bounds(grad._shape[d], start, end), step,
                                      grad._shape))


# NOTE [slice_inverse]: torch's slice_inverse(self, src, ...) is
# self.as_strided(src.size(), src.stride(), src.storage_offset()): a view of self's
# storage with src's geometry (src, when self is src's slice: the inverse of a slice),
# differentiated as the inverse of the slice (self gets grad.slice(...), src the rest).
# A chain from self's array cannot reach the memory outside self, so the view is made
# from the tensor whose array is the storage: it is the op's first input, read by the
# kernel and never differentiated; self and src, which the kernel does not read, are the
# node's inputs.
SLICE_INVERSE = defop("slice_inverse", _slice_inverse_k, inputs=("storage", "self", "src"),
                      attrs=("size", "stride", "storage_offset", "dim", "start", "end", "step",
                             "self_sizes"),
                      view=lambda s, a, i, sh: (a[1], a[2]),
                      self=lambda grad, dim, start, end, step: _slice_of(grad, dim, start, end,
                                                                         step),
                      src=lambda grad, dim, start, end, step, self_sizes: TO.slice_scatter(
                          grad, _zeros_meta(self_sizes, grad.dtype), dim, start, end, step))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """torch.slice_inverse: input.as_strided(src.size(), src.stride(),
    src.storage_offset()), a view of input's storage (src again when input is its slice
    `src.slice(dim, start, end, step)`), with the slice's inverse as its gradient
    (NOTE [slice_inverse]; eagergrad: a storage that is a contiguous base tensor's).

    >>> import eagergrad as torch
    >>> x = torch.arange(4.)
    >>> torch.slice_inverse(x[1:], x, 0, 1)
    tensor([0., 1., 2., 3.])
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"slice_inverse(): argument 'src' (position 2) must be Tensor, not "
                        f"{type(src).__name__}")
    if input.dtype.is_complex and not STATE.inference and (
            input.requires_grad or STATE.grad and src.requires_grad):
        raise RuntimeError("slice_inverse does not support automatic differentiation for "
                           "outputs with complex dtype.")
    if FWD.active and (_tangent(input) is not None or _tangent(src) is not None):
        raise NotImplementedError("eagergrad does not implement forward AD through "
                                  "slice_inverse")
    owner = input._base if input._base is not None else input
    if owner._vchain is not None or not owner.is_contiguous() or owner._offset or \
            owner.dtype is not input.dtype or getattr(owner._storage, "spare", None) is not None:
        raise NotImplementedError("eagergrad does not implement slice_inverse of a tensor whose "
                                  "storage is not a contiguous base tensor's")
    size, stride, offset, _ = S._as_strided_attrs(owner, src._shape, src.stride(), src._offset,
                                                  "slice_inverse")
    out = call_op(SLICE_INVERSE, (owner, input, src),
                  (size, stride, offset, dim, start, end, step, input._shape))
    if input._base is not None and out._base is not None and (
            out._creation_meta is None or input._creation_meta == INFERENCE_MODE):
        out._creation_meta = input._creation_meta  # (torch's propagate_creation_meta)
    return out


# ---- fill: fill_'s kernels and formulas, out of place (torch's fill.Scalar, fill.Tensor) -
FILL_SCALAR = _copy_of(FILL, "fill_functional", "FillBackward0")
FILL_TENSOR = _copy_of(FILL_T, "fill_tensor_functional", "FillBackward1")


def fill(input, value):
    """torch.fill: a new tensor of input's shape and dtype filled with `value` (a number
    or a 0-dim tensor, which gets the sum of the gradient).

    >>> import eagergrad as torch
    >>> torch.fill(torch.zeros(2), 3)
    tensor([3., 3.])
    """
    return _fill_call(input, value, FILL_SCALAR, FILL_TENSOR)


# ---- as_strided_scatter ------------------------------------------------------------------
def _as_strided_scatter_k(self, src, size, stride, storage_offset, order):
    n = math.prod(self.shape)
    at = S._as_strided_k(jnp.arange(n).reshape(self.shape), size, stride, storage_offset)
    at = jnp.transpose(at, order).reshape(-1)
    # an element the slice covers more than once (overlapping strides) gets the value
    # torch's copy_ writes last: `order` is its loop order (jax's scatter picks any)
    last = jnp.full(n, -1, at.dtype).at[at].max(jnp.arange(at.shape[0], dtype=at.dtype))
    vals = jnp.transpose(src.astype(self.dtype), order).reshape(-1)[jnp.maximum(last, 0)]
    return jnp.where(last >= 0, vals, self.reshape(-1)).reshape(self.shape)


def _copy_order(size, stride, src_stride):
    """The dims of torch's copy_ of src into a view of `size` and `stride`, outermost
    first: TensorIterator's reorder_dimensions (smaller strides inside, the output's
    first, a tie of strides put the smaller dim inside)."""
    def should_swap(d0, d1):
        for st in (stride, src_stride):
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if size[d0] > size[d1]:
                return 1
        return 0

    return tuple(reorder_dims(len(size), should_swap)[::-1])


def _as_strided_scatter_self(grad, size, stride, storage_offset):
    # torch's as_strided_scatter_backward: the gradient at the elements the slice covers
    # (not at the others: torch's formula, which assumes nothing of self is kept)
    return call_op(AS_STRIDED_SCATTER, (P._zeros(grad), _strided(grad, size, stride,
                                                                 storage_offset)),
                   (size, stride, storage_offset, tuple(range(len(size)))))


def _strided(grad, size, stride, storage_offset):
    return S.as_strided(S.contiguous(grad), size, stride, storage_offset)


AS_STRIDED_SCATTER = defop("as_strided_scatter", _as_strided_scatter_k, inputs=("self", "src"),
                           attrs=("size", "stride", "storage_offset", "order"),
                           dynamic=("storage_offset",), self=_as_strided_scatter_self,
                           src=_strided)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter: a copy of input with input.as_strided(size, stride,
    storage_offset) replaced by src (eagergrad: an input that starts its storage
    contiguously, as as_strided).

    >>> import eagergrad as torch
    >>> torch.as_strided_scatter(torch.zeros(4), torch.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    if input.requires_grad and not input.is_contiguous():
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous "
                           "inputs")
    size, stride, offset, _ = S._as_strided_attrs(input, size, stride, storage_offset,
                                                  "as_strided_scatter")
    if tuple(src._shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._shape)}, slice size = {list(size)}")
    if any(n > 1 and s == 0 for n, s in zip(size, stride)):
        check_no_overlap_error()  # (copy_ into a slice with internal overlap)
    return call_op(AS_STRIDED_SCATTER, (input, src),
                   (size, stride, offset, _copy_order(size, stride, src.stride())))


# ---- scalar_tensor -----------------------------------------------------------------------
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """torch.scalar_tensor: a 0-dim tensor of the number `s`, of the default dtype unless
    `dtype` is given (never inferred from `s`).

    >>> import eagergrad as torch
    >>> torch.scalar_tensor(3)
    tensor(3.)
    """
    if isinstance(s, Tensor):
        s = s.item()
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    name = P._CONVERT_NAMES.get(dt, dt.cpp_name)
    if dt is D.bool_:
        s = bool(s)
    elif not dt.is_complex and isinstance(s, complex):
        if s.imag != 0:  # (torch's checked_convert)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        s = s.real
    if dt._kind == 1:
        P.check_scalar(s, dt)
    elif s.__class__ is int and not -2 ** 63 <= s < 2 ** 64:
        raise OverflowError("int too big to convert")
    elif dt is D.float32 and math.isfinite(s) and abs(s) > 3.4028234663852886e38:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return full((), s, dtype=dt, device=device, layout=layout, requires_grad=requires_grad)
