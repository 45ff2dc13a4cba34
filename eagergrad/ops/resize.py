"""Tensor.resize_ and resize_as_: a tensor's shape changed in place, as torch's resize_.

NOTE [resize_]: torch's resize_ gives a tensor new sizes and contiguous strides over the
same memory (its storage), which grows when the new size needs more elements (those
uninitialized: zeros here, and NaN / the largest integer with deterministic algorithms on,
as torch then fills them) and never shrinks: elements a smaller size cut off come back
when it grows again. eagergrad's Storage holds its base tensor's array in the base's
shape, so a resize_ replaces that array: the base's elements in memory order (its
strides), the elements an earlier shrink kept (`Storage.spare`), new elements, cut to the
new size and laid out by the new strides. Views, detach() aliases and .data read the
storage array through their own shape and view chain, which a new shape breaks: where
torch would change anything, a resize_ of a view or of a storage another tensor holds
(counted by reference counts, as in-place donation does) raises NotImplementedError.
Changing only the strides (an explicit memory_format) moves no memory in torch; here the
array is laid out anew the same way.
"""
import operator
import sys

import jax.numpy as jnp

from .._layouts import channels_last, channels_last_3d, contiguous_format, preserve_format
from .._mode import CAPTURING, FUNC, FWD
from .._storage import contiguous_strides
from ..creation import _uninitialized
from ..engine.grad_mode import STATE
from ..tensor import Tensor, _tangent
from .inplace import REFCOUNT_EXACT


def _sizes(size, name):
    """torch's parsing of `*size` (a tuple of ints, or ints), with its TypeErrors."""
    def index(s):
        if isinstance(s, float):
            raise TypeError
        return operator.index(s)

    first = size[0]
    if isinstance(first, (tuple, list)) and len(size) == 1:
        rest = first
    else:
        try:
            if isinstance(first, bool):
                raise TypeError
            rest = (index(first),) + size[1:]
        except TypeError:
            if len(size) > 1:
                raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were "
                                "given") from None
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {type(first).__name__}") from None
    out = []
    for i, s in enumerate(rest):
        try:
            out.append(index(s))
        except TypeError:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"") from None
    if any(s < 0 for s in out):
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(out)


def _channels_last_strides(shape):
    """c10's get_channels_last_strides_2d / _3d (no max(size, 1), unlike contiguous)."""
    s = [0] * len(shape)
    s[1] = 1
    s[-1] = shape[1]
    for d in range(len(shape) - 2, 1, -1):
        s[d] = s[d + 1] * shape[d + 1]
    s[0] = s[2] * shape[2]
    return tuple(s)


def _format_strides(shape, fmt):
    """The strides torch's empty_tensor_restride gives `shape` in memory format `fmt`."""
    if fmt is contiguous_format:
        return contiguous_strides(shape)
    if fmt is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    rank, what = (4, "channels_last") if fmt is channels_last else (5, "channels_last_3d")
    if fmt not in (channels_last, channels_last_3d):
        raise TypeError(f"memory_format must be a torch.memory_format, not "
                        f"{type(fmt).__name__}")
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {what} format")
    return _channels_last_strides(shape)


def _memory_order(shape, strides):
    """The dims of a dense (shape, strides) from the outermost in memory, or None when
    the strides are not a permutation of contiguous ones."""
    perm = sorted(range(len(shape)), key=lambda d: -strides[d])
    expected = 1
    for d in reversed(perm):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return None
        expected *= shape[d]
    return perm


def _fill(n, dtype):
    """n new elements: what `empty` holds (torch's fill_empty_deterministic_ values with
    deterministic algorithms on)."""
    return jnp.full((n,), _uninitialized(dtype), dtype.np)


def _relayout(self, shape, strides):
    """self becomes (shape, strides) over its memory, grown if needed (NOTE [resize_])."""
    if shape == self._shape and strides == self.stride():
        return
    # (self's slot and the argument: any other holder is a view, an alias or a saved output;
    # a view holds its base)
    if not REFCOUNT_EXACT or sys.getrefcount(self._storage) != 2:
        what = "a view" if self._base is not None else "a tensor sharing its storage " \
            "(views, detach(), .data)"
        raise NotImplementedError(f"eagergrad does not implement resize_ of {what}")
    old = _memory_order(self._shape, self.stride())
    new = _memory_order(shape, strides)
    if old is None or new is None or self._offset:
        raise NotImplementedError("eagergrad does not implement resize_ of a tensor whose "
                                  "strides are not dense")
    a = self._value  # (through the chain of a tensor an in-place view op changed, alone
    st = self._storage  # on its storage: x.t_(), x.unsqueeze_(0); it becomes a base again)
    mem = jnp.transpose(a, old).reshape(-1)
    spare = getattr(st, "spare", None)
    if spare is not None:
        mem = jnp.concatenate([mem, spare])
    n = 1
    for s in shape:
        n *= s
    if n > mem.size:
        mem = jnp.concatenate([mem, _fill(n - mem.size, self.dtype)])
    st.spare = mem[n:] if n < mem.size else None
    inv = [new.index(d) for d in range(len(shape))]
    st.array = mem[:n].reshape([shape[d] for d in new]).transpose(inv)
    st.generation += 1
    self._vchain = None
    self._shape = shape
    self._stride = None if strides == contiguous_strides(shape) else strides


def _check(self, name):
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if self._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    if FUNC.levels or CAPTURING.n and FUNC.capture is not None:
        raise NotImplementedError(f"eagergrad does not implement {name} inside torch.func "
                                  "transforms")


def _resize_sizes(self, shape):
    """_resize_impl_: new sizes get contiguous strides; the same sizes change nothing."""
    if shape != self._shape:
        _relayout(self, shape, contiguous_strides(shape))


def _after(self):
    """torch's check after the resize (which has happened by then)."""
    if FWD.active and _tangent(self) is not None:
        raise RuntimeError("cannot resize variables that has a forward grad")
    return self


def resize_(self, *size, memory_format=None):
    """Tensor.resize_: self with the given size, contiguous, its elements read in memory
    order; new elements are zeros (NaN / the largest integer with deterministic algorithms
    on); a shrink keeps the cut elements for a later growth (NOTE [resize_]).

    >>> import eagergrad as torch
    >>> torch.arange(6.0).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if not size:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    shape = _sizes(size, "resize_")
    _check(self, "resize_")
    old = self._shape
    _resize_sizes(self, shape)
    if memory_format is not None:
        _relayout(self, shape, _format_strides(shape, memory_format))
    if shape != old:
        self._version_counter.version += 1
    return _after(self)


def resize_as_(self, the_template, *, memory_format=None):
    """Tensor.resize_as_ / torch.resize_as_: resize_(the_template.size()); with
    memory_format, restrided to it (preserve_format: the template's, contiguous here).

    >>> import eagergrad as torch
    >>> torch.arange(4.0).resize_as_(torch.zeros(2, 2))
    tensor([[0., 1.],
            [2., 3.]])
    """
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                        f"not {type(the_template).__name__}")
    _check(self, "resize_as_")
    shape = the_template._shape
    if shape != self._shape:
        _resize_sizes(self, shape)
        self._version_counter.version += 1
    if memory_format is preserve_format:
        if the_template.ndim in (4, 5) and not the_template.is_contiguous():
            raise NotImplementedError("eagergrad does not implement resize_as_("
                                      "memory_format=torch.preserve_format) of a "
                                      "non-contiguous 4-d or 5-d template")
        memory_format = contiguous_format
    if memory_format is not None:
        _relayout(self, shape, _format_strides(shape, memory_format))
    return _after(self)
