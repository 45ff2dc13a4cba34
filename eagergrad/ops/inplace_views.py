"""In-place view ops: `squeeze_`, `unsqueeze_`, `t_`, `transpose_` (`swapaxes_`,
`swapdims_`) and `as_strided_` give a tensor a new shape, strides and storage offset over
the same storage; and `fill_diagonal_`, a fill through views of the diagonal.

NOTE [in-place view ops]: torch changes the tensor's own sizes and strides, bumps its
version once and, when it records, sets the tensor's history to the op's node
(`UnsqueezeBackward1`; set_history, not the CopySlices rebase of other in-place ops on a
view). eagergrad runs the op's view twin on the tensor (a view whose node is that node)
and moves the view's chain, shape, strides, offset and node into the tensor, which stays
the same object: a base stays a base (`_is_view()` False) that now reads its storage
through a chain of its own, a view stays a view of its base. The views of a base made
before the op read the storage through the base's old chain: the chain from the base to
them (a regenerated grad_fn, a CopySlices) first undoes the base's new chain elements
(`_storage.relative_chain`), so each op registers its inverse. as_strided_ has none (its
view may leave elements out): autograd through such a view raises NotImplementedError.
"""
import numbers

import jax.numpy as jnp

from .._mode import FWD
from .._shapes import wrap_dim as _wrap_dim
from .._storage import register_inverse
from ..engine.grad_mode import STATE
from ..tensor import INFERENCE_MODE, Tensor, _tangent
from . import shape as S
from ._table import call_op, defop
from .inplace import _check_view


def _unsqueeze_k(self, dim):
    return jnp.expand_dims(self, dim)


def _squeeze_k(self, dim, self_sym_sizes):
    return jnp.squeeze(self, dim)


def _transpose_k(self, dim0, dim1):
    return jnp.swapaxes(self, dim0, dim1) if self.ndim else self


def _as_strided_k(self, size, stride, storage_offset, self_sym_sizes):
    return S._as_strided_k(self, size, stride, storage_offset)


UNSQUEEZE_ = defop("unsqueeze_", _unsqueeze_k, attrs=("dim",), node="UnsqueezeBackward1",
                   view=S._unsqueeze_meta, self=lambda grad, dim: grad.squeeze(dim))


def _squeeze_op(name, node):
    return defop(name, _squeeze_k, attrs=("dim", "self_sym_sizes"), node=node,
                 view=S._squeeze_meta, self=lambda grad, self_sym_sizes:
                 grad.reshape(self_sym_sizes))


# squeeze_(), squeeze_(dim), squeeze_(dims): torch's overloads, one node each
SQUEEZE_ = _squeeze_op("squeeze_", "SqueezeBackward3")
SQUEEZE_DIM_ = _squeeze_op("squeeze_dim_", "SqueezeBackward4")
SQUEEZE_DIMS_ = _squeeze_op("squeeze_dims_", "SqueezeBackward5")
_SQUEEZE_OF = {S.SQUEEZE0: SQUEEZE_, S.SQUEEZE1: SQUEEZE_DIM_, S.SQUEEZE2: SQUEEZE_DIMS_}
TRANSPOSE_ = defop("transpose_", _transpose_k, attrs=("dim0", "dim1"),
                   node="TransposeBackward1", view=S._perm_meta,
                   self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))
T_ = defop("t_", _transpose_k, attrs=("dim0", "dim1"), node="TBackward1", view=S._perm_meta,
           self=lambda grad: grad.t())
AS_STRIDED_ = defop("as_strided_", _as_strided_k,
                    attrs=("size", "stride", "storage_offset", "self_sym_sizes"),
                    node="AsStridedBackward1", view=lambda s, a, i, sh: (a[1], a[2]),
                    dynamic=("storage_offset",),
                    self=lambda grad, size, stride, storage_offset, self_sym_sizes:
                    call_op(S.AS_STRIDED_BACKWARD, (grad,),
                            (self_sym_sizes, size, stride, storage_offset)))

register_inverse(_unsqueeze_k, lambda dim: (S.SQUEEZE1.fwd(((dim,), None)), None))
register_inverse(_squeeze_k, lambda dim, self_sym_sizes:
                 (S.VIEW.fwd((self_sym_sizes, None)), None))
register_inverse(_transpose_k, lambda dim0, dim1: (S.TRANSPOSE.fwd((dim0, dim1)), None))


def _inplace_view(self, op, attrs):
    """`self` given the shape, strides and offset of its view by `op` (see the NOTE)."""
    if self._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    base = self._base
    rg = self._requires_grad or base is not None and base._requires_grad
    record = STATE.grad and rg
    if record:  # torch's check_inplace
        if base is not None:
            _check_view(self)
        if self._grad_fn is None and rg:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    tangent = _tangent(self) if FWD.active else None
    out = call_op(op, (self,), attrs)
    self._vchain, self._arr, self._gen = out._vchain, out._arr, out._gen
    self._shape, self._stride, self._offset = out._shape, out._stride, out._offset
    vc = self._version_counter
    vc.version += 1
    if record:  # torch's set_history
        old, old_nr = self._grad_fn, self._out_nr
        self._grad_fn, self._out_nr = out._grad_fn, 0
        if base is not None:
            self._attr_version = vc.version
        elif self._retains_grad and old is not None:  # retain_grad follows the tensor
            old._retain_hooks.pop(old_nr, None)
            self._attach_retain()
    if tangent is not None:  # the tangent changes with it (torch's self_t.unsqueeze_(dim))
        _inplace_view(tangent, op, attrs)
    return self


def unsqueeze_(input, dim):
    """Tensor.unsqueeze_: a size-1 dim inserted at `dim`, in place.

    >>> import eagergrad as torch
    >>> x = torch.zeros(3)
    >>> x.unsqueeze_(0).shape, x._version
    (torch.Size([1, 3]), 1)
    """
    return _inplace_view(input, UNSQUEEZE_, (_wrap_dim(dim, input.ndim + 1),))


def squeeze_(input, dim=None):
    """Tensor.squeeze_: the size-1 dims (of `dim`, an int or a tuple, when given) removed,
    in place.

    >>> import eagergrad as torch
    >>> torch.zeros(2, 1, 3).squeeze_().shape
    torch.Size([2, 3])
    """
    op, attrs = S._squeeze_op(input, dim)
    return _inplace_view(input, _SQUEEZE_OF[op], attrs)


def transpose_(input, dim0, dim1):
    """Tensor.transpose_: dims `dim0` and `dim1` swapped, in place.

    >>> import eagergrad as torch
    >>> x = torch.zeros(2, 3)
    >>> x.transpose_(0, 1).shape, x.stride()
    (torch.Size([3, 2]), (1, 3))
    """
    nd = input.ndim
    return _inplace_view(input, TRANSPOSE_, (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


def swapaxes_(input, axis0, axis1):
    """Tensor.swapaxes_: transpose_."""
    return transpose_(input, axis0, axis1)


def swapdims_(input, dim0, dim1):
    """Tensor.swapdims_: transpose_."""
    return transpose_(input, dim0, dim1)


def t_(input):
    """Tensor.t_: a matrix transposed in place (a tensor of fewer dims is left as it is,
    its version moved).

    >>> import eagergrad as torch
    >>> torch.zeros(2, 3).t_().shape
    torch.Size([3, 2])
    """
    nd = input.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _inplace_view(input, T_, (0, 1) if nd == 2 else (0, 0))


def as_strided_(input, size, stride, storage_offset=None):
    """Tensor.as_strided_: the tensor given `size`, `stride` and `storage_offset` over its
    storage, in place (as as_strided: eagergrad reads the storage of a base tensor, or of a
    view that starts its storage contiguously).

    >>> import eagergrad as torch
    >>> torch.arange(6.0).as_strided_((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    st = input._storage.array
    if input._vchain is not None and input.is_contiguous() and not input._offset:
        size_, stride_ = tuple(size), tuple(stride)
        off = input._offset if storage_offset is None else storage_offset
        need = 0 if any(n == 0 for n in size_) else \
            off + sum((n - 1) * s for n, s in zip(size_, stride_)) + 1
        if input.numel() < need and need * input.dtype.itemsize <= st.size * st.dtype.itemsize:
            raise NotImplementedError("eagergrad does not implement as_strided_ beyond the "
                                      "elements of a view yet")
    return _inplace_view(input, AS_STRIDED_,
                         S._as_strided_attrs(input, size, stride, storage_offset,
                                             "as_strided_"))


def fill_diagonal_(input, fill_value, wrap=False):
    """Tensor.fill_diagonal_: `fill_value` written on the main diagonal (of a matrix, or of
    a tensor whose dims are all equal: the elements at (i, i, ..., i)); with `wrap`, a tall
    matrix's diagonal starts again every `width + 1` rows, as torch's storage does.

    >>> import eagergrad as torch
    >>> torch.zeros(5, 2).fill_diagonal_(1.0, wrap=True)
    tensor([[1., 0.],
            [0., 1.],
            [0., 0.],
            [1., 0.],
            [0., 1.]])
    """
    if isinstance(fill_value, Tensor) and not fill_value.ndim and \
            not fill_value.requires_grad:  # (torch's Scalar: a 0-dim tensor's number)
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be "
                        f"Number, not {type(fill_value).__name__}")
    nd = input.ndim
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = input._shape[:2]
    if nd > 2 and any(n != h for n in input._shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    # ATen: fill_ on as_strided views of the storage, the diagonal of size min(h, w), the
    # strides' sum apart; with wrap, `count` more from storage offset stride(0) * (w + 1),
    # stride(0) + stride(1) apart (the rows w + 1 + k while k < w, past that the later rows
    # again where the storage holds the matrix row by row, else whatever it holds there)
    strides = input.stride()
    base = input._base if input._base is not None else input
    diag = _storage_view(input, base, (min(h, w),), (sum(strides),), input._offset)
    if diag is None:  # (a storage eagergrad's as_strided cannot read: the same elements)
        diag = input
        for _ in range(nd - 1):
            diag = diag.diagonal(0, 0, 1)
    diag.fill_(fill_value)
    if wrap and nd == 2 and h > w + 1:
        count = (h * w + w) // (w + 1) - w
        s0, s1 = strides
        part = _storage_view(input, base, (count,), (s0 + s1,), input._offset + s0 * (w + 1))
        if part is None and count <= w:
            part = input[w + 1:].diagonal()
        elif part is None and (s0, s1) == (w, 1):
            part = input.view(-1)[w * (w + 1)::w + 1]
        elif part is None:
            raise NotImplementedError("eagergrad does not implement fill_diagonal_(wrap=True) "
                                      "past the last column of this strided matrix yet")
        part.fill_(fill_value)
    return input


def _storage_view(input, base, size, stride, offset):
    """ATen's input.as_strided(size, stride, offset), a view of input's base (None when the
    base does not read its storage from the start, contiguously): its creation meta is
    input's, as torch propagates it to a view of a view."""
    if base._offset or not base.is_contiguous() or base.dtype is not input.dtype or \
            S.is_conj(input):  # (as_strided of the base would drop a conj view's conj)
        return None
    part = base.as_strided(size, stride, offset)
    meta = input._creation_meta if input._base is not None else None
    if meta is not None and part._base is not None and (part._creation_meta is None or
                                                         meta == INFERENCE_MODE):
        part._creation_meta = meta
    return part
