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


def _windows(x, kernel_size, stride, padding, dilation, out_hw, fill):
    """(..., OH, OW, KH*KW) window values of the last two dims, padded with `fill`, and
    the (OH, OW, KH*KW) flat input positions (-1 where padding), a numpy constant. The
    values are KH*KW strided slices of the padded input (a gather is far slower on CPU)."""
    h, w = x.shape[-2:]
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel_size, stride, dilation, out_hw
    ph, pw = padding
    # right padding: what the last window reaches beyond the input (ceil_mode), if any
    rh = max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - ph - h)
    rw = max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - pw - w)
    xp = x
    if ph or pw or rh or rw:
        xp = jnp.pad(x, [(0, 0)] * (x.ndim - 2) + [(ph, rh), (pw, rw)],
                     constant_values=jnp.asarray(fill, x.dtype))
    vals = jnp.stack([
        xp[..., i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
        for i in range(kh) for j in range(kw)], -1)
    rows = np.arange(oh)[:, None] * sh - ph + np.arange(kh)[None, :] * dh  # (oh, kh)
    cols = np.arange(ow)[:, None] * sw - pw + np.arange(kw)[None, :] * dw  # (ow, kw)
    valid = ((rows >= 0) & (rows < h))[:, None, :, None] & \
        ((cols >= 0) & (cols < w))[None, :, None, :]
    flat = np.where(valid, rows[:, None, :, None] * w + cols[None, :, None, :], -1)
    return vals, flat.reshape(oh, ow, kh * kw)


def _out_hw(shape, kernel_size, stride, padding, dilation, ceil_mode):
    return tuple(_pool_out_size(n, k, p, s, d, ceil_mode) for n, k, p, s, d in
                 zip(shape[-2:], kernel_size, padding, stride, dilation))


# ---- max_pool2d_with_indices -----------------------------------------------------------------
def _maxpool_k(self, kernel_size, stride, padding, dilation, ceil_mode):
    stride = stride or kernel_size
    out_hw = _out_hw(self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    vals, flat = _windows(self, kernel_size, stride, padding, dilation, out_hw, -jnp.inf)
    m = jnp.max(vals, axis=-1)
    # the first valid position holding the max (a nan wins, as in torch's scan)
    hit = ((vals == m[..., None]) | jnp.isnan(vals)) & (flat >= 0)
    k = jnp.argmax(hit, axis=-1)
    # the flat input position of window element k: row * W + col, computed, not gathered
    kh, kw = kernel_size
    oh, ow = out_hw
    rows = (np.arange(oh) * stride[0] - padding[0])[:, None] + (k // kw) * dilation[0]
    cols = (np.arange(ow) * stride[1] - padding[1]) + (k % kw) * dilation[1]
    return m, (rows * self.shape[-1] + cols).astype(jnp.int64)


def _maxpool_back_k(grad_output, self, indices):
    h, w = self.shape[-2:]
    lead = self.shape[:-2]
    n = int(np.prod(lead, dtype=np.int64))
    g = grad_output.reshape(n, -1)
    i = indices.reshape(n, -1)
    out = jnp.zeros((n, h * w), grad_output.dtype).at[jnp.arange(n)[:, None], i].add(g)
    return out.reshape(self.shape)


def _maxpool_back(grad, self, indices):
    return call_op(MAXPOOL_BACK, (grad, self, indices))


def _gather_plane(grad, indices):
    """torch's max_pool_double_backward: grad (…, H, W) read at the flat indices."""
    flat = grad.flatten(-2)
    return flat.gather(-1, indices.flatten(-2)).view(indices.shape)


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


# ---- avg_pool2d ---------------------------------------------------------------------------
def _avg_divisor(shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, out_hw):
    """The (OH, OW) divisors, as torch's avg_pool2d kernel counts them."""
    if divisor_override:
        return np.full(out_hw, float(divisor_override))
    counts = []
    for n, k, s, p, o in zip(shape[-2:], kernel_size, stride, padding, out_hw):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start  # includes padding, not the ceil_mode overhang
        if not count_include_pad:
            size = np.minimum(end, n) - np.maximum(start, 0)
        counts.append(size)
    return counts[0][:, None] * counts[1][None, :]


def _avgpool_k(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    stride = stride or kernel_size
    out_hw = _out_hw(self.shape, kernel_size, stride, padding, (1, 1), ceil_mode)
    vals, _ = _windows(self, kernel_size, stride, padding, (1, 1), out_hw, 0)
    div = _avg_divisor(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, out_hw)
    return jnp.sum(vals, axis=-1) / jnp.asarray(div, self.dtype)


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


def _adaptive_k(self, output_size):
    h, w = self.shape[-2:]
    ah = jnp.asarray(_adaptive_matrix(h, output_size[0]), self.dtype)
    aw = jnp.asarray(_adaptive_matrix(w, output_size[1]), self.dtype)
    return jnp.einsum("...hw,oh,pw->...op", self, ah, aw, precision=_HI)


def _adaptive_back_k(grad_output, self, grad_output_sym_argsize_minus_2,
                     grad_output_sym_argsize_minus_1):
    h, w = self.shape[-2:]
    ah = jnp.asarray(_adaptive_matrix(h, grad_output_sym_argsize_minus_2), self.dtype)
    aw = jnp.asarray(_adaptive_matrix(w, grad_output_sym_argsize_minus_1), self.dtype)
    return jnp.einsum("...op,oh,pw->...hw", grad_output, ah, aw, precision=_HI)


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
