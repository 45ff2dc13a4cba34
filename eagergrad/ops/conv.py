"""Convolution and pooling as op-table entries, with torch's nodes and saved attributes.

convolution (ConvolutionBackward0) covers conv1d/2d/3d and conv_transpose1d/2d/3d: NC...
input, OI... weight (IO... for transposed), an optional bias that travels as an empty
tensor when not given (torch's `_saved_bias_sym_sizes_opt` then reads (0,), as torch's).
Its backward is the op convolution_backward (ConvolutionBackwardBackward0), so double
backward records torch's node; the three gradients are asked for one at a time (the
`output_mask` attribute), so a double-backward graph has one such node per input.
Pooling: max_pool2d_with_indices (flat per-plane int64 indices, the first max in scan
order wins), avg_pool2d, _adaptive_avg_pool2d, each with its own backward op.
Kernels are jax.lax / jnp with every index computation static (numpy on shapes).
"""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..engine.grad_mode import STATE
from ._autocast import autocast_op
from ._table import call_op, defop

_HI = lax.Precision.HIGHEST


# ---- convolution ---------------------------------------------------------------------------
def _dn(nd):
    sp = "DHW"[3 - nd:]
    return lax.conv_dimension_numbers((1, 1) + (1,) * nd, (1, 1) + (1,) * nd,
                                      ("NC" + sp, "OI" + sp, "NC" + sp))


def _shifted_conv(x, w, stride, padding, dilation):
    """A convolution as the sum of input-channel x kernel-position products of strided
    slices: one elementwise fusion. For a few input channels (an RGB first layer) XLA's
    CPU convolution is several times slower than this (0.4 vs 2 ms for 64x3x32x32 -> 8)."""
    nd = x.ndim - 2
    xp = jnp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    outs = [(n - d * (k - 1) - 1) // s + 1
            for n, k, s, d in zip(xp.shape[2:], w.shape[2:], stride, dilation)]
    out = None
    for c in range(x.shape[1]):
        for pos in itertools.product(*[range(k) for k in w.shape[2:]]):
            start = [0, c] + [q * d for q, d in zip(pos, dilation)]
            limit = [x.shape[0], c + 1] + [b + (o - 1) * s + 1
                                           for b, o, s in zip(start[2:], outs, stride)]
            term = lax.slice(xp, start, limit, (1, 1) + tuple(stride)) * \
                w[(slice(None), c) + pos].reshape((1, -1) + (1,) * nd)
            out = term if out is None else out + term
    return out


def _conv_k(input, weight, bias, stride, padding, dilation, transposed, output_padding,
            groups, shifted=True):
    nd = input.ndim - 2
    if not transposed and shifted and groups == 1 and input.shape[1] <= 4 and \
            input.shape[1] * np.prod(weight.shape[2:]) <= 160:
        out = _shifted_conv(input, weight, stride, padding, dilation)
    elif not transposed:
        out = lax.conv_general_dilated(
            input, weight, stride, [(p, p) for p in padding], rhs_dilation=dilation,
            dimension_numbers=_dn(nd), feature_group_count=groups, precision=_HI)
    else:
        # the transposed convolution as a convolution of the stride-dilated input with
        # the flipped kernel, its in/out channels swapped within each group
        cin, cout_g = weight.shape[:2]
        ks = weight.shape[2:]
        w = weight.reshape((groups, cin // groups, cout_g) + ks)
        w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + ks)
        w = jnp.flip(w, tuple(range(2, 2 + nd)))
        pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
                for k, p, d, op in zip(ks, padding, dilation, output_padding)]
        out = lax.conv_general_dilated(
            input, w, (1,) * nd, pads, lhs_dilation=stride, rhs_dilation=dilation,
            dimension_numbers=_dn(nd), feature_group_count=groups, precision=_HI)
    if bias.shape[0]:
        out = out + bias.reshape((1, -1) + (1,) * nd)
    return out


def _conv_back_k(grad_output, input, weight, stride, padding, dilation, transposed,
                 output_padding, groups, output_mask):
    """(grad_input, grad_weight, grad_bias); zeros where output_mask is False. The
    convolution is bilinear: torch's vjp is conj(jax's vjp of conj(grad))."""
    nd = input.ndim - 2
    empty = jnp.zeros((0,), input.dtype)

    def f(x, w):  # (the backward of XLA's convolution is its fast one)
        return _conv_k(x, w, empty, stride, padding, dilation, transposed, output_padding,
                       groups, shifted=False)
    _, vjp = jax.vjp(f, input, weight)
    gi, gw = vjp(jnp.conj(grad_output))
    gi, gw = jnp.conj(gi), jnp.conj(gw)
    gb = jnp.sum(grad_output, axis=(0,) + tuple(range(2, 2 + nd)))
    return (gi if output_mask[0] else jnp.zeros_like(input),
            gw if output_mask[1] else jnp.zeros_like(weight),
            gb if output_mask[2] else jnp.zeros_like(gb))


_CONV_ATTRS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")


def _conv_backward(grad_output, input, weight, attrs, mask):
    return call_op(CONV_BACK, (grad_output, input, weight), tuple(attrs) + (mask,))


def _conv_grad(k):
    def f(grad, input, weight, stride, padding, dilation, transposed, output_padding,
          groups):
        mask = tuple(i == k for i in range(3))
        return _conv_backward(grad, input, weight, (stride, padding, dilation, transposed,
                                                    output_padding, groups), mask)[k]
    return f


def _conv(input, weight, bias, attrs):
    return call_op(CONV, (input, weight, bias), attrs)


def _ggo(grads, input, weight, attrs):
    """torch's _convolution_double_backward: the gradient for grad_output."""
    ggi, ggw, ggb = grads
    nd = input.ndim - 2
    empty = input.new_zeros(0)
    out = _conv(ggi, weight, empty, attrs) + _conv(input, ggw, empty, attrs)
    return out + ggb.reshape((1, -1) + (1,) * nd)


def _bias_meta(tensors, needs_grad):
    return {"bias_sym_sizes_opt": tuple(tensors[2]._shape)}


# fuse=False: inside a fused backward segment XLA's CPU convolution gradients ran slower
# than as kernels of their own (bench/cnn_step: the step took 7.5 ms fused, 6.6 with the
# convolution nodes alone and the rest fused)
CONV = defop("convolution", _conv_k, inputs=("input", "weight", "bias"), attrs=_CONV_ATTRS,
             node="ConvolutionBackward0", fuse=False,
             saved_meta=(("bias_sym_sizes_opt",), _bias_meta),
             input=_conv_grad(0), weight=_conv_grad(1),
             # torch saves input and weight whatever needs a gradient
             bias=lambda grad, input, weight, stride, padding, dilation, transposed,
             output_padding, groups: _conv_backward(
                 grad, input, weight, (stride, padding, dilation, transposed,
                                       output_padding, groups), (False, False, True))[2])

CONV_BACK = defop(
    "convolution_backward", _conv_back_k, inputs=("grad_output", "input", "weight"),
    attrs=_CONV_ATTRS + ("output_mask",), node="ConvolutionBackwardBackward0",
    outputs=("result0", "result1", "result2"),
    grad_output=lambda grads, grad_output, input, weight, stride, padding, dilation,
    transposed, output_padding, groups: _ggo(
        grads, input, weight, (stride, padding, dilation, transposed, output_padding, groups)),
    input=lambda grads, grad_output, input, weight, stride, padding, dilation, transposed,
    output_padding, groups: _conv_backward(
        grad_output, input, grads[1], (stride, padding, dilation, transposed, output_padding,
                                       groups), (True, False, False))[0],
    weight=lambda grads, grad_output, input, weight, stride, padding, dilation, transposed,
    output_padding, groups: _conv_backward(
        grad_output, grads[0], weight, (stride, padding, dilation, transposed, output_padding,
                                        groups), (False, True, False))[1])


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """aten::convolution (checks done by the caller): one ConvolutionBackward0 node."""
    if bias is None:
        bias = input.new_zeros(0)
    return _conv(input, weight, bias, (tuple(stride), tuple(padding), tuple(dilation),
                                       bool(transposed), tuple(output_padding), int(groups)))


# ---- constant_pad_nd (conv's padding='same' with an even kernel) ------------------------------
def _pad_k(self, value, pad):
    cfg = [(0, 0, 0)] * self.ndim
    for i in range(len(pad) // 2):
        cfg[self.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1], 0)
    return lax.pad(self, value.astype(self.dtype), cfg)


def _pad(t, pad, value):
    # the fill value travels as a 0-dim tensor (no edge): torch's node saves only pad
    return call_op(PAD, (t, t.new_full((), value)), (pad,))


PAD = defop("constant_pad_nd", _pad_k, inputs=("self", "value"), attrs=("pad",),
            node="ConstantPadNdBackward0",
            self=lambda grad, pad: _pad(grad, tuple(-p for p in pad), 0))


def constant_pad_nd(input, pad, value=0):
    """Pad the last len(pad)//2 dimensions (pairs from the last dimension backwards).

    >>> import eagergrad as torch
    >>> torch.constant_pad_nd(torch.ones(2), (1, 0))
    tensor([0., 1., 1.])
    """
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {input.ndim} dimensions.")
    return _pad(input, tuple(int(p) for p in pad), value)


# ---- pooling: static window geometry ------------------------------------------------------
def _pool_out_size(size, k, pad, s, d, ceil_mode):
    """torch's pooling_output_shape."""
    num = size + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + pad:
        out -= 1
    return out


def _windows(x, kernel_size, stride, padding, dilation, out_sizes, fill):
    """(..., *out_sizes, prod(kernel_size)) window values of the last len(kernel_size)
    dims, padded with `fill`, and the (*out_sizes, prod(kernel_size)) flat input positions
    (-1 where padding), a numpy constant. The values are one strided slice of the padded
    input per kernel position (a gather is far slower on CPU)."""
    nd = len(kernel_size)
    sizes = x.shape[-nd:]
    # right padding: what the last window reaches beyond the input (ceil_mode), if any
    right = [max(0, (o - 1) * s + (k - 1) * d + 1 - p - n) for o, s, k, d, p, n in
             zip(out_sizes, stride, kernel_size, dilation, padding, sizes)]
    xp = x
    if any(padding) or any(right):
        xp = jnp.pad(x, [(0, 0)] * (x.ndim - nd) + list(zip(padding, right)),
                     constant_values=jnp.asarray(fill, x.dtype))
    lead = (slice(None),) * (x.ndim - nd)
    vals = jnp.stack([
        xp[lead + tuple(slice(i * d, i * d + (o - 1) * s + 1, s) for i, d, o, s in
                        zip(pos, dilation, out_sizes, stride))]
        for pos in itertools.product(*[range(k) for k in kernel_size])], -1)
    flat = np.zeros((1,) * (2 * nd), np.int64)
    valid = np.ones((1,) * (2 * nd), bool)
    for j, (o, s, p, k, d, n) in enumerate(zip(out_sizes, stride, padding, kernel_size,
                                               dilation, sizes)):
        pos = np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d  # (o, k)
        shape = [1] * (2 * nd)
        shape[j], shape[nd + j] = o, k
        flat = flat * n + pos.reshape(shape)
        valid = valid & ((pos >= 0) & (pos < n)).reshape(shape)
    flat = np.where(valid, flat, -1)
    return vals, flat.reshape(tuple(out_sizes) + (-1,))


def _out_hw(shape, kernel_size, stride, padding, dilation, ceil_mode):
    return tuple(_pool_out_size(n, k, p, s, d, ceil_mode) for n, k, p, s, d in
                 zip(shape[-len(kernel_size):], kernel_size, padding, stride, dilation))


def _lowest(dtype):
    """The padding value of max pooling: -inf, or an integer dtype's minimum."""
    return -jnp.inf if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype).min


def _max_and_index(vals, valid):
    """The max over the last axis and the window position torch's CPU kernels pick: the
    first maximum in scan order (`val > maxval`), or the last nan (`|| isnan(val)`)."""
    m = jnp.max(vals, axis=-1)
    nan = jnp.isnan(vals) & valid
    first = jnp.argmax((vals == m[..., None]) & valid, axis=-1)
    n = vals.shape[-1]
    last_nan = n - 1 - jnp.argmax(jnp.flip(nan, -1), axis=-1)
    return m, jnp.where(jnp.any(nan, axis=-1), last_nan, first)


# ---- max_pool2d_with_indices (and ops/pooling.py's 3-d one) -------------------------------
def _maxpool_k(self, kernel_size, stride, padding, dilation, ceil_mode):
    stride = stride or kernel_size
    out = _out_hw(self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    fill = _lowest(self.dtype)
    vals, flat = _windows(self, kernel_size, stride, padding, dilation, out, fill)
    m, k = _max_and_index(vals, flat >= 0)
    # the flat input position of window element k, computed per dim, not gathered
    nd = len(kernel_size)
    ind = 0
    for j in range(nd):
        kj = (k // int(np.prod(kernel_size[j + 1:], dtype=np.int64))) % kernel_size[j]
        start = (np.arange(out[j]) * stride[j] - padding[j]).reshape(
            (-1,) + (1,) * (nd - 1 - j))
        ind = ind * self.shape[self.ndim - nd + j] + start + kj * dilation[j]
    return m, ind.astype(jnp.int64)


def _scatter_back(grad_output, self, indices, nd):
    """grad_output added into zeros of self's shape at the flat per-plane indices (the
    backward of every max pooling: max_pool_double_backward's transpose)."""
    lead = self.shape[:-nd]
    n = int(np.prod(lead, dtype=np.int64))
    g = grad_output.reshape(n, -1)
    i = indices.reshape(n, -1)
    plane = int(np.prod(self.shape[-nd:], dtype=np.int64))
    out = jnp.zeros((n, plane), grad_output.dtype).at[jnp.arange(n)[:, None], i].add(g)
    return out.reshape(self.shape)


def _maxpool_back_k(grad_output, self, indices):
    return _scatter_back(grad_output, self, indices, 2)


def _maxpool_back(grad, self, indices):
    return call_op(MAXPOOL_BACK, (grad, self, indices))


def _gather_plane(grad, indices, nd=2):
    """torch's max_pool_double_backward: grad (..., *spatial) read at the flat indices
    of its last nd dims."""
    flat = grad.flatten(-nd)
    return flat.gather(-1, indices.flatten(-nd)).view(indices.shape)


MAXPOOL = defop("max_pool2d_with_indices", _maxpool_k,
                attrs=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
                outputs=("result", "result1"), nondiff=(1,),
                node="MaxPool2DWithIndicesBackward0",
                self=lambda grad, self, result1: _maxpool_back(grad, self, result1))

MAXPOOL_BACK = defop("max_pool2d_with_indices_backward", _maxpool_back_k,
                     inputs=("grad_output", "self", "indices"),
                     node="MaxPool2DWithIndicesBackwardBackward0",
                     grad_output=lambda grad, indices: _gather_plane(grad, indices),
                     self=lambda grad: None)  # zero, as torch's zeros_like(self)


def _max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode):
    """aten::max_pool2d_with_indices on normalized arguments: (output, indices)."""
    return call_op(MAXPOOL, (input,), (tuple(kernel_size), tuple(stride), tuple(padding),
                                       tuple(dilation), bool(ceil_mode)))


# ---- avg_pool2d (and ops/pooling.py's 3-d one) ----------------------------------------------
def _avg_divisor(shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, out_sizes):
    """The divisors over the output positions, as torch's avg_pool kernels count them."""
    if divisor_override:
        return np.full(out_sizes, float(divisor_override))
    div = np.ones(())
    for n, k, s, p, o in zip(shape[-len(kernel_size):], kernel_size, stride, padding,
                             out_sizes):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start  # includes padding, not the ceil_mode overhang
        if not count_include_pad:
            size = np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, size)
    return div


def _avgpool_k(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    stride = stride or kernel_size
    ones = (1,) * len(kernel_size)
    out = _out_hw(self.shape, kernel_size, stride, padding, ones, ceil_mode)
    vals, _ = _windows(self, kernel_size, stride, padding, ones, out, 0)
    div = _avg_divisor(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, out)
    total = jnp.sum(vals, axis=-1)
    if jnp.issubdtype(self.dtype, jnp.integer):  # (ATen divides integers, truncating)
        return jax.lax.div(total, jnp.broadcast_to(jnp.asarray(div, self.dtype), total.shape))
    return total / jnp.asarray(div, self.dtype)


def _avgpool_back_k(grad_output, self, kernel_size, stride, padding, ceil_mode,
                    count_include_pad, divisor_override):
    f = lambda x: _avgpool_k(x, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override)
    return jax.vjp(f, jnp.zeros(self.shape, self.dtype))[1](grad_output)[0]


_AVG_ATTRS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
              "divisor_override")

AVGPOOL = defop("avg_pool2d", _avgpool_k, attrs=_AVG_ATTRS, node="AvgPool2DBackward0",
                self=lambda grad, self, kernel_size, stride, padding, ceil_mode,
                count_include_pad, divisor_override: call_op(
                    AVGPOOL_BACK, (grad, self), (kernel_size, stride, padding, ceil_mode,
                                                 count_include_pad, divisor_override)))

# self is only read for its shape: torch's node saves no tensor
AVGPOOL_BACK = defop(
    "avg_pool2d_backward", _avgpool_back_k, inputs=("grad_output", "self"), attrs=_AVG_ATTRS,
    node="AvgPool2DBackwardBackward0",
    grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: call_op(AVGPOOL, (grad,), (kernel_size, stride, padding, ceil_mode,
                                                 count_include_pad, divisor_override)),
    self=lambda grad: None)


def _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    """aten::avg_pool2d on normalized arguments."""
    return call_op(AVGPOOL, (input,), (tuple(kernel_size), tuple(stride), tuple(padding),
                                       bool(ceil_mode), bool(count_include_pad),
                                       divisor_override))


# ---- _adaptive_avg_pool2d -------------------------------------------------------------------
def _adaptive_matrix(n, o):
    """(o, n): row i averages input positions floor(i*n/o) .. ceil((i+1)*n/o) - 1."""
    m = np.zeros((o, n))
    for i in range(o):
        a, b = (i * n) // o, -((-(i + 1) * n) // o)
        m[i, a:b] = 1.0 / (b - a)
    return m


_IN, _OUT = "abcdefgh", "pqrstuvw"  # einsum letters of the input / output spatial dims


def _adaptive_k(self, output_size):
    """The last len(output_size) dims contracted with their (out, in) averaging matrices."""
    nd = len(output_size)
    mats = [jnp.asarray(_adaptive_matrix(n, o), self.dtype)
            for n, o in zip(self.shape[-nd:], output_size)]
    specs = ",".join(_OUT[j] + _IN[j] for j in range(nd))
    return jnp.einsum(f"...{_IN[:nd]},{specs}->...{_OUT[:nd]}", self, *mats, precision=_HI)


def _adaptive_back(grad_output, self, nd):
    """The transpose: grad_output spread back over self's last nd sizes."""
    mats = [jnp.asarray(_adaptive_matrix(n, o), self.dtype)
            for n, o in zip(self.shape[-nd:], grad_output.shape[-nd:])]
    specs = ",".join(_OUT[j] + _IN[j] for j in range(nd))
    return jnp.einsum(f"...{_OUT[:nd]},{specs}->...{_IN[:nd]}", grad_output, *mats,
                      precision=_HI)


def _adaptive_back_k(grad_output, self, grad_output_sym_argsize_minus_2,
                     grad_output_sym_argsize_minus_1):
    return _adaptive_back(grad_output, self, 2)


ADAPTIVE = defop("_adaptive_avg_pool2d", _adaptive_k, attrs=("output_size",),
                 node="AdaptiveAvgPool2DBackward0",
                 self=lambda grad, self: call_op(ADAPTIVE_BACK, (grad, self),
                                                 tuple(grad._shape[-2:])))

ADAPTIVE_BACK = defop(
    "_adaptive_avg_pool2d_backward", _adaptive_back_k, inputs=("grad_output", "self"),
    attrs=("grad_output_sym_argsize_minus_2", "grad_output_sym_argsize_minus_1"),
    node="AdaptiveAvgPool2DBackwardBackward0",
    grad_output=lambda grad, grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1:
    call_op(ADAPTIVE, (grad,), ((grad_output_sym_argsize_minus_2,
                                 grad_output_sym_argsize_minus_1),)),
    self=lambda grad: None)


def _adaptive_avg_pool2d(input, output_size):
    """aten::_adaptive_avg_pool2d with a resolved (OH, OW)."""
    return call_op(ADAPTIVE, (input,), (tuple(int(s) for s in output_size),))


# attributes that only steer the kernel: torch's nodes do not show them
for _node, _k in ((CONV_BACK.Node, "output_mask"), (ADAPTIVE.Node, "output_size")):
    delattr(_node, "_saved_" + _k)
    delattr(_node, "_raw_saved_" + _k)


# ---- conv_tbc (time, batch, channel) ------------------------------------------------------------
def _tbc_k(self, weight, bias, pad):
    k = weight.shape[0]
    x = lax.pad(self, jnp.zeros((), self.dtype), [(pad, pad, 0), (0, 0, 0), (0, 0, 0)])
    t = max(x.shape[0] - k + 1, 0)
    out = jnp.zeros((t,) + self.shape[1:2] + weight.shape[2:], self.dtype) + bias
    for i in range(k):
        out = out + jnp.einsum("tbc,co->tbo", x[i:i + t], weight[i], precision=_HI)
    return out


def _tbc_backward(grad, self, weight, pad, which):
    """ATen's conv_tbc_backward (a composite: zeros, then each tap's matmul added in place
    into a narrowed view, so its graph is torch's CopySlices chain): grad_input (which 0)
    or grad_weight (1)."""
    ilen, batch, planes_in = self.shape
    kw, out_planes = weight.shape[0], weight.shape[2]
    olen = ilen - kw + 1 + pad * 2
    real_pad = (olen - ilen + kw - 1) // 2
    out = (self if which == 0 else weight).new_zeros(
        tuple(self.shape if which == 0 else weight.shape))
    for k in range(kw):
        i_shift, o_shift = max(0, k - real_pad), max(0, real_pad - k)
        t = min(ilen + real_pad - k, olen) - o_shift
        if t <= 0:
            continue
        g = grad.narrow(0, o_shift, t).view(t * batch, out_planes)
        if which == 0:
            out.narrow(0, i_shift, t).view(t * batch, planes_in).addmm_(g, weight[k].t())
        else:
            x = self.narrow(0, i_shift, t).view(t * batch, planes_in).t()
            out[k].addmm_(x, g)
    return out


def _tbc_bias(grad, bias):
    """conv_tbc_backward's grad_bias: the sum over time and batch, copied into zeros (a
    CopyBackwards over SumBackward1, as torch's graph has it)."""
    out = grad.new_zeros(tuple(bias.shape))
    out.copy_(grad.sum(0).sum(0))
    return out


# (bias in every formula: torch's node saves it, as conv_tbc_backward takes it)
TBC = defop("conv_tbc", _tbc_k, inputs=("self", "weight", "bias"), attrs=("pad",),
            node="ConvTbcBackward0",
            self=lambda grad, self, weight, bias, pad: _tbc_backward(grad, self, weight, pad, 0),
            weight=lambda grad, self, weight, bias, pad: _tbc_backward(grad, self, weight, pad,
                                                                       1),
            bias=lambda grad, self, weight, bias, pad: _tbc_bias(grad, bias))


# torch's node shows a negative pad as its unsigned 64-bit wrap
TBC.Node._saved_pad = property(lambda node: node._attrs[0] % 2 ** 64)


@autocast_op("conv_tbc")
def conv_tbc(input, weight, bias, pad=0):
    """torch.conv_tbc: a 1-d convolution over time of (time, batch, channel) input with a
    (kernel width, in channels, out channels) weight, `pad` zeros at both ends of time.

    >>> import eagergrad as torch
    >>> torch.conv_tbc(torch.ones(3, 1, 1), torch.ones(2, 1, 1), torch.zeros(1), 1).flatten()
    tensor([1., 2., 2., 1.])
    """
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.dtype is not weight.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}")
    if input.dtype.is_complex and STATE.grad and any(
            t.requires_grad for t in (input, weight, bias)):
        raise RuntimeError("conv_tbc does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return call_op(TBC, (input, weight, bias), (int(pad),))
