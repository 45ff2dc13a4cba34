"""Recurrent layers as op-table entries (MkldnnRnnLayerBackward0: one node per LSTM layer
and direction, as torch records on CPU for float32), plus the two small ops ATen's
composite RNN cells record: unsafe_split / unsafe_chunk (UnsafeSplitBackward0, not views)
and the in-place `transpose_` of an RNN's batch_first output (TransposeBackward1).

mkldnn_rnn_layer runs a whole LSTM layer as ONE jax.lax.scan over time; its workspace
(output 3, not differentiable) keeps the gate activations and cell states, read by
mkldnn_rnn_layer_backward, a second op whose kernel is the reverse scan. As in torch,
the backward under create_graph=True is recomputed from differentiable ops instead
(torch's mkldnn_rnn_layer_differentiable_backward), so double backward works.
"""
import itertools

import jax.numpy as jnp
import numpy as np
from jax import lax

from ..engine.grad_mode import STATE
from ._autocast import autocast_op
from ._table import call_op, defop
from .shape import cat, stack

_HI = lax.Precision.HIGHEST


# ---- unsafe_split / unsafe_chunk --------------------------------------------------------
def _usplit_k(self, dim, split_size, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(lax.slice_in_dim(self, start, start + s, axis=dim))
        start += s
    return tuple(out)


def _self_sizes(tensors, needs_grad):
    return {"self_sym_sizes": tuple(tensors[0]._shape)}


# (two output names declared: the node has one output per piece, not one tensor)
USPLIT = defop("unsafe_split", _usplit_k, attrs=("dim", "split_size", "sizes"),
               outputs=("result0", "result1"),
               saved_meta=(("self_sym_sizes",), _self_sizes),
               self=lambda grads, dim: cat(grads, dim))


def unsafe_split(tensor, split_size, dim=0):
    """split whose outputs are not views (ATen's RNN cells use its chunk form).

    >>> import eagergrad as torch
    >>> [t.tolist() for t in torch.unsafe_split(torch.arange(5.), 2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """
    d = dim + tensor.ndim if dim < 0 else dim
    n = tensor._shape[d]
    sizes = tuple(min(split_size, n - i) for i in range(0, n, split_size)) if n else (0,)
    return call_op(USPLIT, (tensor,), (d, int(split_size), sizes))


def unsafe_chunk(input, chunks, dim=0):
    """chunk whose outputs are not views.

    >>> import eagergrad as torch
    >>> len(torch.unsafe_chunk(torch.zeros(2, 8), 4, 1))
    4
    """
    d = dim + input.ndim if dim < 0 else dim
    return unsafe_split(input, max(-(-input._shape[d] // chunks), 1), d)


# ---- transpose_ of a fresh result (TransposeBackward1, not a view) ---------------------
TRANSPOSE1 = defop("_rnn_transpose_", lambda self, dim0, dim1: jnp.swapaxes(self, dim0, dim1),
                   attrs=("dim0", "dim1"), node="TransposeBackward1",
                   self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))


def _transpose_inplace_result(t, dim0, dim1):
    """ATen's `output.transpose_(0, 1)` on an RNN's fresh output: the same node."""
    return call_op(TRANSPOSE1, (t,), (dim0, dim1))


# ---- mkldnn_rnn_layer: one LSTM layer and direction, one scan ---------------------------
_LSTM_ATTRS = ("reverse", "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases",
               "bidirectional", "batch_first", "train")
_LSTM_INPUTS = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")


def _lstm_k(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, has_biases, **_):
    """(output, hy, cy, workspace): workspace (T, B, 5H) = sigmoid/tanh gates and c_t
    in processing order (reversed time for reverse=True)."""
    x = jnp.flip(input, 0) if reverse else input
    xw = jnp.einsum("tbi,gi->tbg", x, weight0, precision=_HI)
    if has_biases:
        xw = xw + (weight2 + weight3)
    w_hh = weight1.T

    def step(carry, xg):
        h, c = carry
        g = xg + jnp.dot(h, w_hh, precision=_HI)
        i, f, gg, o = jnp.split(g, 4, axis=-1)
        i, f, gg, o = lax.logistic(i), lax.logistic(f), jnp.tanh(gg), lax.logistic(o)
        c2 = f * c + i * gg
        h2 = o * jnp.tanh(c2)
        return (h2, c2), (h2, jnp.concatenate([i, f, gg, o, c2], -1))

    (hy, cy), (out, ws) = lax.scan(step, (hx_, cx_), xw)
    if reverse:
        out = jnp.flip(out, 0)
    return out, hy, cy, ws


def _lstm_back_k(input, weight0, weight1, hx_, cx_, output, grad_output, grad_hy, grad_cy,
                 workspace, reverse, has_biases, **_):
    """The reverse scan over the saved gates: (dinput, dw_ih, dw_hh, db, db, dhx, dcx)."""
    hs = hx_.shape[-1]
    x, out, dout = input, output, grad_output
    if reverse:
        x, out, dout = jnp.flip(x, 0), jnp.flip(out, 0), jnp.flip(dout, 0)
    acts, cs = workspace[..., :4 * hs], workspace[..., 4 * hs:]
    h_prev = jnp.concatenate([hx_[None], out[:-1]], 0)
    c_prev = jnp.concatenate([cx_[None], cs[:-1]], 0)

    def step(carry, inp):
        dh, dc = carry
        dout_t, a, c_t, cp = inp
        i, f, g, o = jnp.split(a, 4, axis=-1)
        dh = dh + dout_t
        tc = jnp.tanh(c_t)
        dc = dc + dh * o * (1 - tc * tc)
        dpre = jnp.concatenate([dc * g * i * (1 - i), dc * cp * f * (1 - f),
                                dc * i * (1 - g * g), dh * tc * o * (1 - o)], -1)
        return (jnp.dot(dpre, weight1, precision=_HI), dc * f), dpre

    (dhx, dcx), dpre = lax.scan(step, (grad_hy, grad_cy), (dout, acts, cs, c_prev),
                                reverse=True)
    dx = jnp.einsum("tbg,gi->tbi", dpre, weight0, precision=_HI)
    if reverse:
        dx = jnp.flip(dx, 0)
    dw0 = jnp.einsum("tbg,tbi->gi", dpre, x, precision=_HI)
    dw1 = jnp.einsum("tbg,tbh->gh", dpre, h_prev, precision=_HI)
    db = jnp.sum(dpre, axis=(0, 1))
    return dx, dw0, dw1, db, db, dhx, dcx


LSTM_BACK = defop(
    "mkldnn_rnn_layer_backward", _lstm_back_k,
    inputs=("input", "weight1", "weight2", "hx_", "cx_tmp", "output", "grad_output",
            "grad_hy", "grad_cy", "workspace"),
    attrs=("reverse", "has_biases"),
    outputs=tuple(f"result{i}" for i in range(7)))


def _lstm_diff_backward(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                        has_biases):
    """torch's mkldnn_rnn_layer_differentiable_backward: the same gradients from
    recorded ops (gates recomputed), so that create_graph=True gives a graph."""
    gout, ghy, gcy = grads[0], grads[1], grads[2]
    xs = input.unbind(0)
    douts = gout.unbind(0)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    h, c = hx_, cx_
    saved = []
    for t in order:
        g = xs[t] @ weight0.t() + h @ weight1.t()
        if has_biases:
            g = g + weight2 + weight3
        i, f, gg, o = g.chunk(4, 1)
        i, f, gg, o = i.sigmoid(), f.sigmoid(), gg.tanh(), o.sigmoid()
        c2 = f * c + i * gg
        tc = c2.tanh()
        saved.append((t, h, c, i, f, gg, o, tc))
        h, c = o * tc, c2
    dh, dc = ghy, gcy
    dxs = [None] * len(xs)
    dw0 = dw1 = db = None
    for t, hp, cp, i, f, gg, o, tc in reversed(saved):
        dh = dh + douts[t]
        dc = dc + dh * o * (1 - tc * tc)
        dpre = cat([dc * gg * i * (1 - i), dc * cp * f * (1 - f), dc * i * (1 - gg * gg),
                    dh * tc * o * (1 - o)], 1)
        dxs[t] = dpre @ weight0
        w0, w1, b = dpre.t() @ xs[t], dpre.t() @ hp, dpre.sum(0)
        dw0, dw1, db = (w0, w1, b) if dw0 is None else (dw0 + w0, dw1 + w1, db + b)
        dh, dc = dpre @ weight1, dc * f
    return stack(dxs, 0), dw0, dw1, db, db, dh, dc


def _lstm_grads(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, result0,
                result3, reverse, has_biases):
    if STATE.grad:  # create_graph=True: torch's differentiable backward
        return _lstm_diff_backward(grads, input, weight0, weight1, weight2, weight3, hx_,
                                   cx_, reverse, has_biases)
    return call_op(LSTM_BACK, (input, weight0, weight1, hx_, cx_, result0, grads[0],
                               grads[1], grads[2], result3), (reverse, has_biases))


def _lstm_formula(k):
    def f(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1,
          result2, result3, reverse, has_biases):
        return _lstm_grads(grads, input, weight0, weight1, weight2, weight3, hx_, cx_,
                           result0, result3, reverse, has_biases)[k]
    return f


LSTM_LAYER = defop(
    "mkldnn_rnn_layer", _lstm_k, inputs=_LSTM_INPUTS, attrs=_LSTM_ATTRS,
    node="MkldnnRnnLayerBackward0", outputs=("result0", "result1", "result2", "result3"),
    nondiff=(3,), **{n: _lstm_formula(k) for k, n in enumerate(_LSTM_INPUTS)})


@autocast_op("mkldnn_rnn_layer")
def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                     batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                     batch_first, train):
    """One LSTM layer, one direction (time-major input (T, B, I); hx_/cx_ (B, H)):
    (output, hy, cy, workspace), one MkldnnRnnLayerBackward0 node.

    >>> import eagergrad as torch
    >>> x, w0, w1, b = torch.ones(2, 1, 3), torch.zeros(8, 3), torch.zeros(8, 2), torch.zeros(8)
    >>> h = torch.zeros(1, 2)
    >>> torch.mkldnn_rnn_layer(x, w0, w1, b, b, h, h, False, [], 2, 2, 1, True, False,
    ...                        False, True)[0].shape
    torch.Size([2, 1, 2])
    """
    if mode != 2:
        raise RuntimeError("mkldnn_rnn_layer: eagergrad implements the LSTM mode (2) only")
    if batch_first:
        raise NotImplementedError("eagergrad does not implement torch.mkldnn_rnn_layer with "
                                  "batch_first=True yet")
    return call_op(LSTM_LAYER, (input, weight0, weight1, weight2, weight3, hx_, cx_),
                   (bool(reverse), tuple(batch_sizes), int(mode), int(hidden_size),
                    int(num_layers), bool(has_biases), bool(bidirectional),
                    bool(batch_first), bool(train)))


# attributes that only steer a kernel: torch's nodes do not show them
for _op, _k in ((USPLIT, "sizes"),):
    delattr(_op.Node, "_saved_" + _k)
    delattr(_op.Node, "_raw_saved_" + _k)


# ---- _pack_padded_sequence (PackPaddedSequenceBackward0) -------------------------------
def _pack_index(shape, lengths, batch_first):
    """Flat positions (into the time-major (T*B) rows) of the packed rows, and batch_sizes
    (numpy on the static lengths)."""
    _t, b = (shape[1], shape[0]) if batch_first else (shape[0], shape[1])
    batch_sizes = [sum(1 for n in lengths if n > s) for s in range(lengths[0])]
    rows = [s * b + j for s, bs in enumerate(batch_sizes) for j in range(bs)]
    return np.asarray(rows, np.int64), np.asarray(batch_sizes, np.int64)


def _pack_k(input, batch_first, lengths):
    x = jnp.swapaxes(input, 0, 1) if batch_first else input
    rows, bs = _pack_index(input.shape, lengths, batch_first)
    flat = x.reshape((-1,) + x.shape[2:])
    return flat[rows], jnp.asarray(bs)


def _pack_back_k(grad, input, batch_first, lengths):
    shape = input.shape
    tm = (shape[1], shape[0]) + shape[2:] if batch_first else shape
    rows, _ = _pack_index(shape, lengths, batch_first)
    out = jnp.zeros((tm[0] * tm[1],) + tm[2:], grad.dtype).at[rows].set(grad).reshape(tm)
    return jnp.swapaxes(out, 0, 1) if batch_first else out


def _in_sizes(tensors, needs_grad):
    return {"input_sym_sizes": tuple(tensors[0]._shape)}


PACK_BACK = defop("_pack_padded_sequence_backward", _pack_back_k, inputs=("grad", "input"),
                  attrs=("batch_first", "lengths"),
                  grad=lambda grad, batch_first, lengths: call_op(PACK, (grad,),
                                                                   (batch_first, lengths))[0],
                  input=lambda grad: None)

PACK = defop("_pack_padded_sequence", _pack_k, attrs=("batch_first", "lengths"),
             outputs=("result0", "result1"), nondiff=(1,),
             saved_meta=(("input_sym_sizes",), _in_sizes),
             # (result1, batch_sizes, is saved as torch's node saves it)
             self=lambda grad, self, result1, batch_first, lengths: call_op(
                 PACK_BACK, (grad, self), (batch_first, lengths)))


def _pack_padded_sequence(input, lengths, batch_first):
    """aten::_pack_padded_sequence: (data, batch_sizes); `lengths` an int64 CPU tensor."""
    ls = [int(v) for v in lengths.tolist()]
    batch_size = input.shape[0] if batch_first else input.shape[1]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(ls) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(ls)} (batch_size={batch_size})")
    if ls[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in itertools.pairwise(ls)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    return call_op(PACK, (input,), (bool(batch_first), tuple(ls)))


for _op, _k in ((PACK, "lengths"), (PACK_BACK, "lengths")):
    delattr(_op.Node, "_saved_" + _k)
    delattr(_op.Node, "_raw_saved_" + _k)
