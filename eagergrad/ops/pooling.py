"""Pooling ops beyond conv.py's 2-d ones, as op-table entries with torch's nodes: the 3-d
pools (max_pool3d_with_indices, avg_pool3d, _adaptive_avg_pool3d, adaptive_max_pool3d),
fractional_max_pool2d/3d, max_unpool2d/3d, and channel_shuffle (a pixel_shuffle
relative: spatial.py is full). The kernels are conv.py's / spatial.py's, which take any
number of spatial dims; every backward torch differentiates again is an op of its own
(`...BackwardBackward0`). Argument parsing and torch's checks are the callers'
(nn/_functional/pooling.py), except for the ops torch exposes at the top level.
"""
import jax
import jax.numpy as jnp
import numpy as np

from ..engine.grad_mode import STATE
from ._table import call_op, defop
from .conv import (_AVG_ATTRS, _adaptive_back, _adaptive_k, _avgpool_back_k, _avgpool_k,
                   _gather_plane, _max_and_index, _maxpool_k, _scatter_back)
from .spatial import _amp_k
from .pointwise import _not_implemented


def _drop_saved(op, *names):
    """Attributes that only steer the kernel: torch's node does not show them."""
    for k in names:
        delattr(op.Node, "_saved_" + k)
        delattr(op.Node, "_raw_saved_" + k)


def _scatter3d_k(grad_output, self, indices):
    return _scatter_back(grad_output, self, indices, 3)


# ---- max_pool3d_with_indices ---------------------------------------------------------------
_MAX_ATTRS = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

MAXPOOL3D_BACK = defop(
    "max_pool3d_with_indices_backward", _scatter3d_k, inputs=("grad_output", "self", "indices"),
    node="MaxPool3DWithIndicesBackwardBackward0",
    grad_output=lambda grad, indices: _gather_plane(grad, indices, 3),
    self=lambda grad: None)  # zeros, as torch's zeros_like(self)

MAXPOOL3D = defop(
    "max_pool3d_with_indices", _maxpool_k, attrs=_MAX_ATTRS, outputs=("result", "result1"),
    nondiff=(1,), node="MaxPool3DWithIndicesBackward0",
    self=lambda grad, self, result1: call_op(MAXPOOL3D_BACK, (grad, self, result1)))


def _max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    """aten::max_pool3d_with_indices on normalized arguments: (output, int64 indices into
    each D*H*W volume)."""
    return call_op(MAXPOOL3D, (input,), (tuple(kernel_size), tuple(stride), tuple(padding),
                                         tuple(dilation), bool(ceil_mode)))


# ---- avg_pool3d -------------------------------------------------------------------------------
AVGPOOL3D_BACK = defop(
    "avg_pool3d_backward", _avgpool_back_k, inputs=("grad_output", "self"), attrs=_AVG_ATTRS,
    node="AvgPool3DBackwardBackward0",
    grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: call_op(AVGPOOL3D, (grad,), (kernel_size, stride, padding, ceil_mode,
                                                   count_include_pad, divisor_override)),
    self=lambda grad: None)

AVGPOOL3D = defop(
    "avg_pool3d", _avgpool_k, attrs=_AVG_ATTRS, node="AvgPool3DBackward0",
    self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: call_op(AVGPOOL3D_BACK, (grad, self), (
        kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)))


def _avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    """aten::avg_pool3d on normalized arguments."""
    return call_op(AVGPOOL3D, (input,), (tuple(kernel_size), tuple(stride), tuple(padding),
                                         bool(ceil_mode), bool(count_include_pad),
                                         divisor_override))


# ---- _adaptive_avg_pool3d ------------------------------------------------------------------------
_ADAPTIVE3D_SIZES = tuple(f"grad_output_sym_argsize_minus_{k}" for k in (3, 2, 1))


def _adaptive3d_back_k(grad_output, self, grad_output_sym_argsize_minus_3,
                       grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1):
    return _adaptive_back(grad_output, self, 3)


ADAPTIVE3D_BACK = defop(
    "_adaptive_avg_pool3d_backward", _adaptive3d_back_k, inputs=("grad_output", "self"),
    attrs=_ADAPTIVE3D_SIZES, node="AdaptiveAvgPool3DBackwardBackward0",
    grad_output=lambda grad, grad_output_sym_argsize_minus_3, grad_output_sym_argsize_minus_2,
    grad_output_sym_argsize_minus_1: call_op(ADAPTIVE3D, (grad,), ((
        grad_output_sym_argsize_minus_3, grad_output_sym_argsize_minus_2,
        grad_output_sym_argsize_minus_1),)),
    self=lambda grad: None)

ADAPTIVE3D = defop(
    "_adaptive_avg_pool3d", _adaptive_k, attrs=("output_size",),
    node="AdaptiveAvgPool3DBackward0",
    self=lambda grad, self: call_op(ADAPTIVE3D_BACK, (grad, self), tuple(grad._shape[-3:])))
_drop_saved(ADAPTIVE3D, "output_size")


def _adaptive_avg_pool3d(input, output_size):
    """aten::_adaptive_avg_pool3d with a resolved (OD, OH, OW)."""
    return call_op(ADAPTIVE3D, (input,), (tuple(int(s) for s in output_size),))


# ---- adaptive_max_pool3d -----------------------------------------------------------------------
ADAPTIVE_MAX3D_BACK = defop(
    "adaptive_max_pool3d_backward", _scatter3d_k, inputs=("grad_output", "self", "indices"),
    node="AdaptiveMaxPool3DBackwardBackward0",
    grad_output=lambda grad, indices: _gather_plane(grad, indices, 3),
    self=lambda grad: None)

ADAPTIVE_MAX3D = defop(
    "adaptive_max_pool3d", _amp_k, attrs=("output_size",), outputs=("result", "result1"),
    nondiff=(1,), node="AdaptiveMaxPool3DBackward0",
    self=lambda grad, self, result1: call_op(ADAPTIVE_MAX3D_BACK, (grad, self, result1)))
_drop_saved(ADAPTIVE_MAX3D, "output_size")


def _adaptive_max_pool3d(input, output_size):
    """aten::adaptive_max_pool3d with a resolved (OD, OH, OW): (output, int64 indices)."""
    return call_op(ADAPTIVE_MAX3D, (input,), (tuple(int(s) for s in output_size),))


# ---- fractional_max_pool2d / 3d -------------------------------------------------------------
def _intervals(u, n, o, k):
    """ATen's generate_intervals: the window starts of one dim, (..., o) int32, from the
    samples u (...) in u's dtype: int((i + u) * alpha) - int(u * alpha), the last window
    ending at the input's end."""
    if o <= 0:
        return jnp.zeros(u.shape + (0,), jnp.int32)
    last = jnp.full(u.shape + (1,), n - k, jnp.int32)
    if o == 1:
        return last
    dt = u.dtype.type
    alpha = jnp.asarray(dt(n - k) / dt(o - 1), u.dtype)
    i = jnp.arange(o - 1, dtype=u.dtype)
    seq = ((i + u[..., None]) * alpha).astype(jnp.int32) - \
        (u * alpha).astype(jnp.int32)[..., None]
    return jnp.concatenate([seq, last], axis=-1)


def _fmp_k(self, random_samples, kernel_size, output_size):
    nd = len(kernel_size)
    sizes = self.shape[-nd:]
    u = random_samples if self.ndim == nd + 2 else random_samples[0]
    lead = self.shape[:-nd]
    u = u[tuple(slice(0, n) for n in lead)]  # (a larger batch of samples: the first rows)
    flat = jnp.zeros(lead + (1,) * (2 * nd), jnp.int64)
    # the samples of a plane: (W, H) for 2-d, (T, H, W) for 3-d (ATen's order)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    for j, (n, o, k) in enumerate(zip(sizes, output_size, kernel_size)):
        pos = _intervals(u[..., order[j]], n, o, k)[..., :, None] + jnp.arange(k)  # (..., o, k)
        shape = list(lead) + [1] * (2 * nd)
        shape[len(lead) + j], shape[len(lead) + nd + j] = o, k
        flat = flat * n + pos.reshape(shape).astype(jnp.int64)
    flat = flat.reshape(lead + (int(np.prod(output_size, dtype=np.int64)), -1))
    xf = self.reshape(lead + (1, -1))
    vals = jnp.take_along_axis(xf, flat, axis=-1)
    m, k = _max_and_index(vals, jnp.ones(vals.shape, bool))
    ind = jnp.take_along_axis(flat, k[..., None], -1)[..., 0]
    out = lead + tuple(output_size)
    return m.reshape(out), ind.reshape(out)


def _fmp_ops(nd):
    back = defop(
        f"fractional_max_pool{nd}d_backward", lambda grad_output, self, indices:
        _scatter_back(grad_output, self, indices, nd), inputs=("grad_output", "self", "indices"),
        node=f"FractionalMaxPool{nd}DBackwardBackward0",
        grad_output=lambda grad, indices: _gather_plane(grad, indices, nd),
        self=lambda grad: None)
    return defop(
        f"fractional_max_pool{nd}d", _fmp_k, inputs=("self", "random_samples"),
        attrs=("kernel_size", "output_size"), outputs=("result", "result1"), nondiff=(1,),
        node=f"FractionalMaxPool{nd}DBackward0",
        self=lambda grad, self, result1: call_op(back, (grad, self, result1)))


FRACTIONAL = {nd: _fmp_ops(nd) for nd in (2, 3)}


def _check_samples_grad(nd, random_samples):
    """torch's autograd kernel refuses samples that require grad (before any other check
    of the op's)."""
    if random_samples.requires_grad and STATE.grad:
        raise RuntimeError(f"The function 'fractional_max_pool{nd}d' is not differentiable "
                           "with respect to argument 'random_samples'. This input cannot have "
                           "requires_grad True.")


def _fractional_max_pool(input, kernel_size, output_size, random_samples):
    """aten::fractional_max_pool{2,3}d on checked arguments: (output, int64 indices)."""
    return call_op(FRACTIONAL[len(kernel_size)], (input, random_samples),
                   (tuple(kernel_size), tuple(output_size)))


# ---- max_unpool2d / 3d ----------------------------------------------------------------------
def _unpool_k(self, indices, output_size, stride=None, padding=None):
    """self's values written at the flat per-plane indices of zeros of output_size
    (stride and padding, max_unpool3d's, only enter torch's checks)."""
    nd = len(output_size)
    lead = self.shape[:-nd]
    n = int(np.prod(lead, dtype=np.int64))
    plane = int(np.prod(output_size, dtype=np.int64))
    out = jnp.zeros((n, plane), self.dtype)
    out = out.at[jnp.arange(n)[:, None], indices.reshape(n, -1)].set(self.reshape(n, -1))
    return out.reshape(lead + tuple(output_size))


MAX_UNPOOL2D = defop(
    "max_unpool2d", _unpool_k, inputs=("self", "indices"), attrs=("output_size",),
    node="MaxUnpool2DBackward0", self=lambda grad, indices: _gather_plane(grad, indices, 2))
MAX_UNPOOL3D = defop(
    "max_unpool3d", _unpool_k, inputs=("self", "indices"),
    attrs=("output_size", "stride", "padding"), node="MaxUnpool3DBackward0",
    self=lambda grad, indices: _gather_plane(grad, indices, 3))
_drop_saved(MAX_UNPOOL2D, "output_size")
_drop_saved(MAX_UNPOOL3D, "output_size", "stride", "padding")


def _max_unpool(input, indices, output_size, stride=None, padding=None):
    """aten::max_unpool2d (stride None) / max_unpool3d on checked arguments."""
    if stride is None:
        return call_op(MAX_UNPOOL2D, (input, indices), (tuple(output_size),))
    return call_op(MAX_UNPOOL3D, (input, indices), (tuple(output_size), tuple(stride),
                                                    tuple(padding)))


# ---- channel_shuffle -----------------------------------------------------------------------------
def _shuffle_k(self, groups):
    n, c = self.shape[:2]
    x = self.reshape((n, groups, c // groups) + self.shape[2:])
    return jnp.swapaxes(x, 1, 2).reshape(self.shape)


CHANNEL_SHUFFLE = defop(
    "channel_shuffle", _shuffle_k, attrs=("groups",),
    self=lambda grad, groups: call_op(CHANNEL_SHUFFLE, (grad,), (grad._shape[1] // groups,)))
NATIVE_CHANNEL_SHUFFLE = defop(
    "native_channel_shuffle", _shuffle_k, attrs=("groups",), node="NotImplemented",
    self=_not_implemented("native_channel_shuffle"))


def _check_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes [{', '.join(str(s) for s in input.shape)}]")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")


def channel_shuffle(input, groups):
    """torch.channel_shuffle: the C channels of (N, C, *) input, seen as (groups, C/groups),
    transposed (ChannelShuffleBackward0).

    >>> import eagergrad as torch
    >>> torch.channel_shuffle(torch.arange(4.).view(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    groups = int(groups)
    _check_shuffle(input, groups)
    return call_op(CHANNEL_SHUFFLE, (input,), (groups,))


def native_channel_shuffle(input, groups):
    """torch.native_channel_shuffle: channel_shuffle's values, with no derivative (its
    node raises in backward, as torch's).

    >>> import eagergrad as torch
    >>> torch.native_channel_shuffle(torch.arange(4.).view(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    groups = int(groups)
    _check_shuffle(input, groups)
    return call_op(NATIVE_CHANNEL_SHUFFLE, (input,), (groups,))


def _values_of(t):
    """t's values as numpy, or None for a tracer (value checks are skipped then)."""
    v = t._value
    return None if isinstance(v, jax.core.Tracer) else np.asarray(v)
