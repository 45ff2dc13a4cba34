"""Spatial ops as op-table entries: non-constant padding, upsampling, adaptive max pooling,
unfold/fold, pixel shuffle, grid_sample, embedding_bag, with torch's node names and
`_saved_*` values. Each backward that torch differentiates again is an op of its own
(`...BackwardBackward0`), as conv.py does. Kernels are jax with every index computation
static (numpy on shapes), so they are tracer-safe.

The F-level entry points (argument parsing, torch's checks and errors) live in
nn/_functional/ (vision.py, pooling.py, convolution.py). (Over 800 lines: the op families
above, each a short section, sharing their helpers; splitting them would scatter one slice
of the table.)
"""
import inspect
import itertools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import from_jax
from ..tensor import typename
from .._mode import AUTOCAST
from ._autocast import autocast_inputs, autocast_op
from ._table import OPS, call_op, defop
from .conv import _gather_plane, _max_and_index, _maxpool_back_k

_HI = jax.lax.Precision.HIGHEST


def _linear_transpose(f, x_shape, dtype, g):
    """The transpose of the linear map f (real coefficients) applied to g."""
    return jax.vjp(f, jnp.zeros(x_shape, dtype))[1](g)[0]


# ---- reflection / replication padding -------------------------------------------------------
def _pad_index(n, lo, hi, reflect):
    j = np.arange(-lo, n + hi)
    if reflect:
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    return np.clip(j, 0, n - 1)


def _padder(reflect):
    def k(self, padding):
        for i in range(len(padding) // 2):
            axis = self.ndim - 1 - i
            idx = _pad_index(self.shape[axis], padding[2 * i], padding[2 * i + 1], reflect)
            self = jnp.take(self, idx, axis=axis)
        return self
    return k


def _pad_ops(kind, nd):
    reflect = kind == "reflection"
    fwd = _padder(reflect)
    title = f"{kind.capitalize()}Pad{nd}D"

    def back_k(grad_output, self, padding):
        return _linear_transpose(lambda x: fwd(x, padding), self.shape, self.dtype,
                                 grad_output)

    ops = {}
    ops["fwd"] = defop(f"{kind}_pad{nd}d", fwd, attrs=("padding",), node=title + "Backward0",
                       self=lambda grad, self, padding: call_op(ops["back"], (grad, self),
                                                                (padding,)))
    ops["back"] = defop(f"{kind}_pad{nd}d_backward", back_k, inputs=("grad_output", "self"),
                        attrs=("padding",), node=title + "BackwardBackward0",
                        grad_output=lambda grad, padding: call_op(ops["fwd"], (grad,),
                                                                  (padding,)),
                        self=lambda grad: None)  # zeros, as torch's zeros_like(self)
    return ops["fwd"]


PAD_OPS = {(kind, nd): _pad_ops(kind, nd) for kind in ("reflection", "replication")
           for nd in (1, 2, 3)}


def _unsigned(attr):
    # torch's nodes show a negative SymInt[] entry as its unsigned 64-bit wrap
    return property(lambda node: tuple(p % 2 ** 64 for p in node._attrs[attr]))


for _op in PAD_OPS.values():
    for _node in (_op.Node, OPS[_op.name + "_backward"].Node):
        _node._saved_padding = _node._raw_saved_padding = _unsigned(0)


def _reflect_replicate_pad(input, padding, kind):
    """aten::reflection_pad{1,2,3}d / replication_pad{1,2,3}d (checked by the caller)."""
    padding = tuple(int(p) for p in padding)
    if AUTOCAST.n:  # (float32 for reflection_pad{1,2}d, replication_pad{1,2,3}d)
        input, = autocast_inputs(f"{kind}_pad{len(padding) // 2}d", input)
    return call_op(PAD_OPS[(kind, len(padding) // 2)], (input,), (padding,))


# ---- upsampling -------------------------------------------------------------------------------
# Every mode is separable: one static (out, in) gather or weight matrix per spatial dim,
# its entries computed as ATen's CPU kernels compute them (UpSample.h).
def _scale_value(scale, n_in, n_out, dtype=np.float64):
    """compute_scales_value: 1/scale when a scale factor was given, else in/out."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(n_in) / dtype(n_out)


def _nearest_index(n_in, n_out, scale, exact):
    j = np.arange(n_out)
    if not exact and n_out == n_in:
        return j
    if not exact and n_out == 2 * n_in:
        return j >> 1
    s = _scale_value(scale, n_in, n_out, np.float32)  # float, as ATen's
    src = np.floor((j.astype(np.float32) + np.float32(0.5 if exact else 0)) * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _source_index(n_in, n_out, scale, align_corners, cubic):
    j = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        return s * j
    src = _scale_value(scale, n_in, n_out) * (j + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _guard(src, n_in):
    i = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    return i, np.clip(src - i, 0.0, 1.0)


def _linear_matrix(n_in, n_out, scale, align_corners):
    i0, lam = _guard(_source_index(n_in, n_out, scale, align_corners, False), n_in)
    i1 = i0 + (i0 < n_in - 1)
    m = np.zeros((n_out, n_in))
    r = np.arange(n_out)
    np.add.at(m, (r, i0), 1.0 - lam)
    np.add.at(m, (r, i1), lam)
    return m


def _cubic_matrix(n_in, n_out, scale, align_corners):
    a = -0.75
    i0, t = _guard(_source_index(n_in, n_out, scale, align_corners, True), n_in)

    def cc1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def cc2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    coeffs = (cc2(t + 1.0), cc1(t), cc1(1.0 - t), cc2(2.0 - t))
    m = np.zeros((n_out, n_in))
    r = np.arange(n_out)
    for k, c in enumerate(coeffs):
        np.add.at(m, (r, np.clip(i0 - 1 + k, 0, n_in - 1)), c)
    return m


def _resample(x, mode, output_size, align_corners, scales):
    nd = len(output_size)
    for i, (n_out, scale) in enumerate(zip(output_size, scales)):
        axis = x.ndim - nd + i
        n_in = x.shape[axis]
        if mode in ("nearest", "nearest_exact"):
            x = jnp.take(x, _nearest_index(n_in, n_out, scale, mode == "nearest_exact"),
                         axis=axis)
            continue
        if mode == "linear" and n_in == n_out:
            continue  # ATen's linear kernels skip a dimension whose size is kept
        m = (_cubic_matrix if mode == "bicubic" else _linear_matrix)(
            n_in, n_out, scale, align_corners)
        y = jnp.tensordot(jnp.asarray(m, x.dtype), x, axes=([1], [axis]), precision=_HI)
        x = jnp.moveaxis(y, 0, axis)
    return x


def _self_sizes(tensors, needs_grad):
    return {"self_sym_sizes": tuple(tensors[0]._shape)}


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h",
                                                                  "scales_w")}


def _with_signature(f, names):
    """f(*args) exposing the parameter names `names` (the op table reads a formula's
    needs off its signature)."""
    f.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return f


def _upsample_ops(name, title, mode, nd, complex_name):
    ac = mode in ("linear", "bicubic")
    attrs = ("output_size", "input_size") + (("align_corners",) if ac else ()) + \
        _SCALE_NAMES[nd]

    def unpack(kw):
        return (kw["output_size"], kw.get("align_corners", False),
                tuple(kw[k] for k in _SCALE_NAMES[nd]))

    def fwd(self, **kw):
        return _resample(self, mode, *unpack(kw))

    def back_k(grad_output, **kw):
        if mode == "bicubic" and tuple(kw["input_size"]) == tuple(kw["output_size"]):
            return grad_output  # ATen's bicubic backward copies when no size changes
        return _linear_transpose(lambda x: fwd(x, **kw), (grad_output.shape[:2] +
                                 tuple(kw["input_size"])), grad_output.dtype, grad_output)

    ops = {}
    err = (NotImplementedError, f"\"{complex_name}\" not implemented for '{{}}'")
    ops["fwd"] = defop(
        name, fwd, attrs=attrs, node=title + "Backward0", complex_error=err,
        saved_meta=(("self_sym_sizes",), _self_sizes),
        self=_with_signature(lambda grad, *a: call_op(ops["back"], (grad,), tuple(a)),
                             ("grad",) + attrs))
    ops["back"] = defop(
        name + "_backward", back_k, inputs=("grad_output",), attrs=attrs,
        node=title + "BackwardBackward0",
        grad_output=_with_signature(lambda grad, *a: call_op(ops["fwd"], (grad,), tuple(a)),
                                    ("grad",) + attrs))
    for op in ops.values():
        delattr(op.Node, "_saved_input_size")
        delattr(op.Node, "_raw_saved_input_size")
    return ops["fwd"]


UPSAMPLE_OPS = {}
for _mode, _nd, _name, _title, _cname in (
        ("nearest", 1, "upsample_nearest1d", "UpsampleNearest1D",
         "compute_indices_weights_nearest"),
        ("nearest", 2, "upsample_nearest2d", "UpsampleNearest2D",
         "upsample_nearest2d_channels_last"),
        ("nearest", 3, "upsample_nearest3d", "UpsampleNearest3D",
         "compute_indices_weights_nearest"),
        ("nearest_exact", 1, "_upsample_nearest_exact1d", "UpsampleNearestExact1D",
         "compute_indices_weights_nearest"),
        ("nearest_exact", 2, "_upsample_nearest_exact2d", "UpsampleNearestExact2D",
         "upsample_nearest2d_channels_last"),
        ("nearest_exact", 3, "_upsample_nearest_exact3d", "UpsampleNearestExact3D",
         "compute_indices_weights_nearest"),
        ("linear", 1, "upsample_linear1d", "UpsampleLinear1D", "compute_indices_weights_linear"),
        ("linear", 2, "upsample_bilinear2d", "UpsampleBilinear2D",
         "upsample_bilinear2d_channels_last"),
        ("linear", 3, "upsample_trilinear3d", "UpsampleTrilinear3D",
         "compute_indices_weights_linear"),
        ("bicubic", 2, "upsample_bicubic2d", "UpsampleBicubic2D",
         "compute_indices_weights_cubic")):
    UPSAMPLE_OPS[(_mode, _nd)] = _upsample_ops(_name, _title, _mode, _nd, _cname)


def _upsample(input, mode, output_size, input_size, align_corners, scales):
    """aten::upsample_* (checked by the caller); mode: nearest, nearest_exact, linear
    (linear/bilinear/trilinear by the number of sizes), bicubic."""
    op = UPSAMPLE_OPS[(mode, len(output_size))]
    attrs = (tuple(output_size), tuple(input_size))
    if mode in ("linear", "bicubic"):
        attrs += (bool(align_corners),)
    return call_op(op, (input,), attrs + tuple(None if s is None else float(s)
                                               for s in scales))


# ---- adaptive_max_pool2d ----------------------------------------------------------------------
def _adaptive_windows(n, o):
    """(o, K) input positions of each adaptive window (floor(i*n/o) .. ceil((i+1)*n/o) - 1),
    padded to the widest window K with -1."""
    starts = [(i * n) // o for i in range(o)]
    ends = [-((-(i + 1) * n) // o) for i in range(o)]
    k = max([e - s for s, e in zip(starts, ends)] + [1])
    pos = np.full((o, k), -1)
    for i, (a, b) in enumerate(zip(starts, ends)):
        pos[i, :b - a] = np.arange(a, b)
    return pos


def _amp_k(self, output_size):
    nd = len(output_size)
    sizes = self.shape[-nd:]
    wins = [_adaptive_windows(n, o) for n, o in zip(sizes, output_size)]  # (o, K) each
    flat = np.zeros((1,) * (2 * nd), np.int64)
    valid = np.ones((1,) * (2 * nd), bool)
    for j, (n, pos) in enumerate(zip(sizes, wins)):
        shape = [1] * (2 * nd)
        shape[j], shape[nd + j] = pos.shape
        flat = flat * n + pos.reshape(shape)
        valid = valid & (pos >= 0).reshape(shape)
    flat = np.where(valid, flat, -1).reshape(tuple(output_size) + (-1,))
    xf = self.reshape(self.shape[:-nd] + (-1,))
    vals = jnp.take(xf, np.maximum(flat, 0), axis=-1)
    vals = jnp.where(flat >= 0, vals, jnp.asarray(-jnp.inf, self.dtype))
    m, k = _max_and_index(vals, flat >= 0)
    ind = jnp.take_along_axis(jnp.broadcast_to(flat, vals.shape), k[..., None], -1)[..., 0]
    return m, ind.astype(jnp.int64)


ADAPTIVE_MAX = defop(
    "adaptive_max_pool2d", _amp_k, attrs=("output_size",), outputs=("result", "result1"),
    nondiff=(1,), node="AdaptiveMaxPool2DBackward0",
    complex_error=(NotImplementedError, "\"adaptive_max_pool2d\" not implemented for '{}'"),
    self=lambda grad, self, result1: call_op(ADAPTIVE_MAX_BACK, (grad, self, result1)))

ADAPTIVE_MAX_BACK = defop(
    "adaptive_max_pool2d_backward", _maxpool_back_k, inputs=("grad_output", "self", "indices"),
    node="AdaptiveMaxPool2DBackwardBackward0",
    grad_output=lambda grad, indices: _gather_plane(grad, indices),
    self=lambda grad: None)  # zeros, as torch's zeros_like(self)
for _k in ("output_size",):
    delattr(ADAPTIVE_MAX.Node, "_saved_" + _k)
    delattr(ADAPTIVE_MAX.Node, "_raw_saved_" + _k)


def _adaptive_max_pool2d(input, output_size):
    """aten::adaptive_max_pool2d with a resolved (OH, OW): (output, int64 indices)."""
    return call_op(ADAPTIVE_MAX, (input,), (tuple(int(s) for s in output_size),))


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: (output, indices) over the last dimension of (N, C, L)
    or (C, L) input (adaptive_max_pool2d between unsqueeze(-2) and squeeze(-2)).

    >>> import eagergrad as torch
    >>> torch.adaptive_max_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if not isinstance(output_size, int):
        output_size = tuple(output_size)
        if len(output_size) != 1:
            raise RuntimeError("adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    out, ind = _check_adaptive_max(input.unsqueeze(-2), (1, int(output_size)))
    return out.squeeze(-2), ind.squeeze(-2)


def _check_adaptive_max(input, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    if input.ndim not in (3, 4):
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"[{', '.join(str(s) for s in input.shape)}]")
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes [{', '.join(str(s) for s in input.shape)}] "
                f"with dimension {d} being empty")
    _check_output_dims(input, output_size)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError("\"adaptive_max_pool2d\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _adaptive_max_pool2d(input, output_size)


def _check_output_dims(input, output_size):
    """ATen's error for an output with a negative size (made after the op's checks)."""
    shape = tuple(input.shape[:input.ndim - len(output_size)]) + tuple(output_size)
    bad = [s for s in shape if s < 0]
    if bad:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad[0]}: "
                           f"[{', '.join(str(s) for s in shape)}]")


# ---- embedding_bag ---------------------------------------------------------------------------
# attrs: scale_grad_by_freq, mode (0 sum, 1 mean, 2 max), sparse, include_last_offset,
# padding_idx (2**64 - 1 for none: torch's node shows -1 as its unsigned wrap),
# weight_sym_argsize_0. An absent per_sample_weights travels as an empty tensor.
_NO_PAD = 2 ** 64 - 1


def _pad_value(padding_idx):
    return -1 if padding_idx == _NO_PAD else padding_idx


def _bags(indices, offsets, include_last_offset):
    """Each position's bag (ATen's offset2bag) and the number of bags."""
    b = offsets.shape[0] - (1 if include_last_offset else 0)
    pos = jnp.arange(indices.shape[0])
    bag = jnp.searchsorted(offsets[:b], pos, side="right") - 1
    return jnp.clip(bag, 0, max(b - 1, 0)), b


def _embag_k(weight, indices, offsets, per_sample_weights, scale_grad_by_freq, mode, sparse,
             include_last_offset, padding_idx, weight_sym_argsize_0):
    bag, b = _bags(indices, offsets, include_last_offset)
    n, d = indices.shape[0], weight.shape[1]
    valid = indices != _pad_value(padding_idx)
    rows = jnp.take(weight, indices, axis=0, mode="clip")
    count = jnp.zeros((b,), jnp.int64).at[bag].add(valid.astype(jnp.int64))
    zeros_b = jnp.zeros((b,), jnp.int64)
    if mode == 2:
        vals = jnp.where(valid[:, None], rows, -jnp.inf)
        m = jnp.full((b, d), -jnp.inf, weight.dtype).at[bag].max(vals)
        out = jnp.where(count[:, None] > 0, m, 0).astype(weight.dtype)
        # the first position holding the max (ATen's strict >)
        hit = (rows == m[bag]) & valid[:, None]
        first = jnp.full((b, d), n).at[bag].min(jnp.where(hit, jnp.arange(n)[:, None], n))
        result3 = jnp.where(first < n, indices[jnp.clip(first, 0, max(n - 1, 0))], 0) \
            if n else jnp.zeros((b, d), jnp.int64)
        result2 = count
    else:
        w = rows * valid[:, None].astype(weight.dtype)
        if per_sample_weights.shape[0]:
            w = w * per_sample_weights[:, None]
        out = jnp.zeros((b, d), weight.dtype).at[bag].add(w)
        if mode == 1:
            out = out / jnp.maximum(count, 1)[:, None].astype(weight.dtype)
            result2 = count
        else:
            result2 = zeros_b
        result3 = result2
    # ATen's sum fast path (float weight, no padding_idx) leaves offset2bag empty
    fast = mode == 0 and weight.dtype == jnp.float32 and padding_idx == _NO_PAD
    result1 = jnp.zeros((0,), jnp.int64) if fast else bag.astype(jnp.int64)
    return out, result1, result2.astype(jnp.int64), result3.astype(jnp.int64)


def _embag_back_k(grad, indices, offsets, result2, result3, per_sample_weights,
                  num_weights, scale_grad_by_freq, mode, padding_idx, include_last_offset):
    """_embedding_bag_dense_backward: rows of grad scattered back to the rows they came
    from (per-sample weights, the mean's 1/bag size, the max's argmax per column)."""
    bag, _ = _bags(indices, offsets, include_last_offset)
    d = grad.shape[1]
    out = jnp.zeros((num_weights, d), grad.dtype)
    if mode == 2:
        nonempty = (result2 > 0)[:, None]
        return out.at[result3, jnp.arange(d)[None, :]].add(jnp.where(nonempty, grad, 0))
    valid = indices != _pad_value(padding_idx)
    g = grad[bag] * valid[:, None].astype(grad.dtype)
    if mode == 1:
        g = g / jnp.maximum(result2, 1)[bag][:, None].astype(grad.dtype)
    elif per_sample_weights.shape[0]:
        g = g * per_sample_weights[:, None]
    if scale_grad_by_freq:
        # as ATen's CPU kernel: the k-th distinct index (in sorted order) is divided by the
        # count of sorted_indices[k], not by its own count
        counts = jnp.zeros((num_weights,), grad.dtype).at[indices].add(1)
        srt = jnp.sort(indices)
        new = jnp.concatenate([jnp.ones((1,), bool), srt[1:] != srt[:-1]])
        rank = (jnp.cumsum(new) - 1)[jnp.searchsorted(srt, indices, side="left")]
        g = g / counts[srt[rank]][:, None]
    return out.at[indices].add(g)


def _embag_psw_back_k(grad, weight, indices, offsets, padding_idx, include_last_offset):
    bag, _ = _bags(indices, offsets, include_last_offset)
    rows = jnp.take(weight, indices, axis=0, mode="clip")
    g = jnp.sum(grad[bag] * rows, axis=1)
    return jnp.where(indices != _pad_value(padding_idx), g, 0)


def _nyi_embag(grad):
    raise NotImplementedError("the derivative for '_embedding_bag_backward' is not implemented.")


def _nyi_psw(grad):
    raise RuntimeError("derivative for aten::_embedding_bag_per_sample_weights_backward is "
                       "not implemented")


EMBAG_BACK = defop(
    "_embedding_bag_backward", _embag_back_k,
    inputs=("grad", "indices", "offsets", "result2", "result3", "per_sample_weights"),
    attrs=("num_weights", "scale_grad_by_freq", "mode", "padding_idx", "include_last_offset"),
    node="EmbeddingBagBackwardBackward0", grad=_nyi_embag)

EMBAG_PSW_BACK = defop(
    "_embedding_bag_per_sample_weights_backward", _embag_psw_back_k,
    inputs=("grad", "weight", "indices", "offsets"),
    attrs=("padding_idx", "include_last_offset"), node="NotImplemented",
    grad=_nyi_psw, weight=_nyi_psw)


def _psw_meta(tensors, needs_grad):
    p = tensors[3]
    return {"per_sample_weights": None if tuple(p._shape) == (0,) else p}


EMBAG = defop(
    "embedding_bag", _embag_k, inputs=("weight", "indices", "offsets", "per_sample_weights"),
    attrs=("scale_grad_by_freq", "mode", "sparse", "include_last_offset", "padding_idx",
           "weight_sym_argsize_0"),
    outputs=("result", "result1", "result2", "result3"), nondiff=(1, 2, 3),
    node="EmbeddingBagBackward0", saved_meta=(("per_sample_weights",), _psw_meta),
    weight=lambda grad, indices, offsets, result1, result2, result3, per_sample_weights,
    weight_sym_argsize_0, scale_grad_by_freq, mode, padding_idx, include_last_offset: call_op(
        EMBAG_BACK, (grad, indices, offsets, result2, result3, per_sample_weights),
        (weight_sym_argsize_0, scale_grad_by_freq, mode, padding_idx, include_last_offset)),
    per_sample_weights=lambda grad, weight, indices, offsets, result1, mode, padding_idx,
    include_last_offset: call_op(EMBAG_PSW_BACK, (grad, weight, indices, offsets),
                                 (padding_idx, include_last_offset)))
for _k in ("include_last_offset",):
    delattr(EMBAG.Node, "_saved_" + _k)
    delattr(EMBAG.Node, "_raw_saved_" + _k)


def _check_embag(weight, indices, offsets, per_sample_weights, padding_idx, mode):
    for t in (indices, offsets):
        if t.dtype not in (D.int64, D.int32):
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"{typename(t)} instead (while checking arguments for "
                               "embedding_bag)")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as "
                           "tensor for argument #1 'per_sample_weights'; but type "
                           f"{typename(weight)} does not equal {typename(per_sample_weights)} "
                           "(while checking arguments for embedding_bag)")
    n = weight.shape[0]
    if padding_idx is not None and not -n <= padding_idx < n:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through "
                           f"{n - 1}, but got {padding_idx}")
    # value checks read the data (skipped on tracers)
    iv, ov = indices._value, offsets._value
    if isinstance(iv, jax.core.Tracer) or isinstance(ov, jax.core.Tracer):
        return
    o = np.asarray(ov)
    if o.size and o[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {o[0]}\n"
                           "[ torch.LongTensor{} ]")
    if o.size and o[-1] > indices.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{indices.shape[0]} but got offsets[-1] of {o[-1]}")
    i = np.asarray(iv)
    bad = np.flatnonzero((i < 0) | (i >= n))
    if bad.size and mode != 2 and padding_idx is None and weight.dtype == D.float32:
        # (ATen's index_select fast path checks with its own message)
        raise RuntimeError(f"Index {bad[0]} of input takes value {i[bad[0]]} which is not in "
                           f"the valid range [0, {n})")
    bad = i[bad]
    if bad.size:
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {bad[0]}")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag: (output, offset2bag, bag_size, max_indices); bags of rows of
    `weight` summed (mode 0), averaged (1) or maxed (2), one EmbeddingBagBackward0.

    >>> import eagergrad as torch
    >>> torch.embedding_bag(torch.eye(3), torch.tensor([0, 1, 2]), torch.tensor([0, 2]))[0]
    tensor([[1., 1., 0.],
            [0., 0., 1.]])
    """
    _check_embag(weight, indices, offsets, per_sample_weights, padding_idx, mode)
    if sparse:
        raise NotImplementedError("eagergrad does not implement torch.sparse yet "
                                  "(embedding_bag with sparse=True)")
    if padding_idx is None:
        pad = _NO_PAD
    else:
        pad = int(padding_idx) + (weight.shape[0] if padding_idx < 0 else 0)
    psw = weight.new_zeros(0) if per_sample_weights is None else per_sample_weights
    return call_op(EMBAG, (weight, indices.long(), offsets.long(), psw),
                   (bool(scale_grad_by_freq), int(mode), bool(sparse),
                    bool(include_last_offset), pad, int(weight.shape[0])))


# ---- im2col / col2im (F.unfold / F.fold) ------------------------------------------------------
def _blocks(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _im2col_k(self, kernel_size, dilation, padding, stride, self_sym_argsize_minus_2,
              self_sym_argsize_minus_1):
    h, w = self.shape[-2:]
    oh, ow = (_blocks(n, k, d, p, s) for n, k, d, p, s in
              zip((h, w), kernel_size, dilation, padding, stride))
    cfg = [(0, 0, 0)] * (self.ndim - 2) + [(p, p, 0) for p in padding]
    x = jax.lax.pad(self, jnp.zeros((), self.dtype), cfg)
    patches = []
    for i in range(kernel_size[0]):
        for j in range(kernel_size[1]):
            a, b = i * dilation[0], j * dilation[1]
            patches.append(x[..., a:a + stride[0] * (oh - 1) + 1:stride[0],
                             b:b + stride[1] * (ow - 1) + 1:stride[1]])
    cols = jnp.stack(patches, axis=-3)  # (..., C, kh*kw, oh, ow)
    lead = self.shape[:-3]
    return cols.reshape(lead + (self.shape[-3] * len(patches), oh * ow))


def _col2im_k(self, output_size, kernel_size, dilation, padding, stride):
    k = kernel_size[0] * kernel_size[1]
    shape = self.shape[:-2] + (self.shape[-2] // k,) + tuple(output_size)
    return _linear_transpose(lambda x: _im2col_k(x, kernel_size, dilation, padding, stride,
                                                 *output_size), shape, self.dtype, self)


_FOLD_ATTRS = ("kernel_size", "dilation", "padding", "stride")

IM2COL = defop(
    "im2col", _im2col_k,
    attrs=_FOLD_ATTRS + ("self_sym_argsize_minus_2", "self_sym_argsize_minus_1"),
    node="Im2ColBackward0",
    self=lambda grad, kernel_size, dilation, padding, stride, self_sym_argsize_minus_2,
    self_sym_argsize_minus_1: call_op(COL2IM, (grad,), (
        (self_sym_argsize_minus_2, self_sym_argsize_minus_1), kernel_size, dilation, padding,
        stride)))

COL2IM = defop(
    "col2im", _col2im_k, attrs=("output_size",) + _FOLD_ATTRS, node="Col2ImBackward0",
    self=lambda grad, kernel_size, dilation, padding, stride: call_op(
        IM2COL, (grad,), (kernel_size, dilation, padding, stride) + tuple(grad._shape[-2:])))
delattr(COL2IM.Node, "_saved_output_size")
delattr(COL2IM.Node, "_raw_saved_output_size")


def _im2col(input, kernel_size, dilation, padding, stride):
    """aten::im2col on normalized (pair) arguments (checked by the caller)."""
    return call_op(IM2COL, (input,), (tuple(kernel_size), tuple(dilation), tuple(padding),
                                      tuple(stride)) + tuple(input.shape[-2:]))


def _col2im(input, output_size, kernel_size, dilation, padding, stride):
    """aten::col2im on normalized (pair) arguments (checked by the caller)."""
    return call_op(COL2IM, (input,), (tuple(output_size), tuple(kernel_size), tuple(dilation),
                                      tuple(padding), tuple(stride)))


# ---- pixel_shuffle / pixel_unshuffle ------------------------------------------------------------
def _shuffle_k(self, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = self.shape
    x = self.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _unshuffle_k(self, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = self.shape
    x = self.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


SHUFFLE = defop("pixel_shuffle", _shuffle_k, attrs=("upscale_factor",),
                self=lambda grad, upscale_factor: call_op(UNSHUFFLE, (grad,), (upscale_factor,)))
UNSHUFFLE = defop("pixel_unshuffle", _unshuffle_k, attrs=("downscale_factor",),
                  self=lambda grad, downscale_factor: call_op(SHUFFLE, (grad,),
                                                              (downscale_factor,)))


def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r) (PixelShuffleBackward0).

    >>> import eagergrad as torch
    >>> torch.pixel_shuffle(torch.arange(4.).view(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]])
    """
    if input.ndim < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    return call_op(SHUFFLE, (input,), (r,))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W) (PixelUnshuffleBackward0).

    >>> import eagergrad as torch
    >>> torch.pixel_unshuffle(torch.arange(4.).view(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    if input.ndim < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is "
                               f"not divisible by {r}")
    return call_op(UNSHUFFLE, (input,), (r,))


# ---- grid_sampler_2d (F.grid_sample) ------------------------------------------------------------
# interpolation_mode: 0 bilinear, 1 nearest; padding_mode: 0 zeros, 1 border, 2 reflection.
def _reflect_coords(x, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = jnp.abs(x - lo)
    extra = jnp.fmod(x, span)
    flips = jnp.floor(x / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _clip_coords(c, size):
    """c clipped to [0, size - 1], its derivative 0 on the borders too (torch's
    clip_coordinates_set_grad: "borders are considered out of bounds"; jnp.clip's is 1/2
    there)."""
    return jnp.where(c <= 0, jnp.zeros_like(c),
                     jnp.where(c >= size - 1, jnp.full_like(c, size - 1), c))


def _source_coords(coord, size, padding_mode, align_corners):
    c = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == 1:
        c = _clip_coords(c, size)
    elif padding_mode == 2:
        c = _reflect_coords(c, 0, 2 * (size - 1)) if align_corners else \
            _reflect_coords(c, -1, 2 * size - 1)
        c = _clip_coords(c, size)
    return c


def _gs_nd(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_2d/3d's forward: `input` (N, C, *spatial) sampled at the points of
    `grid` (N, *points, nd), whose last axis is (x, y[, z]), the last spatial dim's first.

    The corners (2**nd, x fastest; nearest: one) are an axis of arrays, and all their
    values come from one gather of C-long rows (the input as (N * prod(spatial), C)),
    masked, weighted and summed at once: XLA compiles the first and second derivatives
    of that program several times faster than those of one gather, mask and weight per
    corner (the 3-d double backward took ~8 s to compile per shape, ~2 s so), and the
    backward of a row gather runs faster too."""
    n, c, *spatial = input.shape
    nd = len(spatial)
    pts = grid.shape[1:-1]
    sizes = tuple(spatial[::-1])  # (W, H[, D]): the grid's order
    coords = jnp.stack([_source_coords(grid[..., i], size, padding_mode, align_corners)
                        for i, size in enumerate(sizes)], -1)  # (N, *points, nd)
    if interpolation_mode == 1:  # nearest: nearbyint, half to even
        corners, weights = jnp.round(coords)[..., None, :], None
    else:
        bits = np.array(list(itertools.product((0, 1), repeat=nd)))[:, ::-1] == 1
        low = jnp.floor(coords)[..., None, :]
        corners = low + bits  # (N, *points, corners, nd)
        x = coords[..., None, :]
        w = jnp.where(bits, x - low, low + 1 - x)
        weights = w[..., 0]
        for i in range(1, nd):  # x * y [* z]
            weights = weights * w[..., i]
    top = np.array(sizes) - 1
    inside = jnp.all((corners >= 0) & (corners <= top), axis=-1)
    strides = np.cumprod((1,) + sizes[:-1]).astype(np.int32)
    idx = jnp.sum(jnp.clip(corners, 0, top).astype(jnp.int32) * strides, axis=-1)
    volume = int(np.prod(spatial))
    rows = jnp.moveaxis(input.reshape(n, c, volume), 1, 2).reshape(n * volume, c)
    idx = idx + (jnp.arange(n, dtype=jnp.int32) * volume).reshape((n,) + (1,) * (len(pts) + 1))
    values = jnp.take(rows, idx.reshape(-1), axis=0, mode="clip").reshape(idx.shape + (c,))
    values = jnp.where(inside[..., None], values, 0)
    out = values[..., 0, :] if weights is None else \
        jnp.sum(values * weights[..., None], axis=-2)
    return jnp.moveaxis(out, -1, 1)  # (N, C, *points)


def _gs_back_k(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
               output_mask):
    f = lambda x, g: _gs_nd(x, g, interpolation_mode, padding_mode, align_corners)
    gi, gg = jax.vjp(f, input, grid)[1](grad_output)
    return (gi if output_mask[0] else jnp.zeros_like(input),
            gg if output_mask[1] else jnp.zeros_like(grid))


def _gs_back2_k(ggi, ggg, grad_output, input, grid, interpolation_mode, padding_mode,
                align_corners):
    """The second-order terms: the vjp of the backward (grad_output, input, grid) ->
    (grad_input, grad_grid) with the incoming (ggi, ggg)."""
    f = lambda go, x, g: _gs_back_k(go, x, g, interpolation_mode, padding_mode,
                                    align_corners, (True, True))
    return jax.vjp(f, grad_output, input, grid)[1]((ggi, ggg))


_GS_ATTRS = ("interpolation_mode", "padding_mode", "align_corners")


def _nyi_third(*grads):
    raise NotImplementedError("eagergrad does not implement the third derivative of "
                              "torch.grid_sampler_2d yet")


GS_BACK2 = defop(
    "_grid_sampler_2d_double_backward", _gs_back2_k,
    inputs=("ggi", "ggg", "grad_output", "input", "grid"), attrs=_GS_ATTRS,
    outputs=("result0", "result1", "result2"), node="NotImplemented",
    ggi=lambda grads: _nyi_third(), ggg=lambda grads: _nyi_third(),
    grad_output=lambda grads: _nyi_third(), input=lambda grads: _nyi_third(),
    grid=lambda grads: _nyi_third())


def _gs_second(k):
    def f(grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners):
        return call_op(GS_BACK2, (grads[0], grads[1], grad_output, input, grid),
                       (interpolation_mode, padding_mode, align_corners))[k]
    return f


GS_BACK = defop(
    "grid_sampler_2d_backward", _gs_back_k, inputs=("grad_output", "input", "grid"),
    attrs=_GS_ATTRS + ("output_mask",), outputs=("result0", "result1"),
    node="GridSampler2DBackwardBackward0",
    grad_output=_gs_second(0), input=_gs_second(1), grid=_gs_second(2))
delattr(GS_BACK.Node, "_saved_output_mask")
delattr(GS_BACK.Node, "_raw_saved_output_mask")


def _gs_first(k):
    def f(grad, input, grid, interpolation_mode, padding_mode, align_corners):
        mask = tuple(i == k for i in range(2))
        return call_op(GS_BACK, (grad, input, grid),
                       (interpolation_mode, padding_mode, align_corners, mask))[k]
    return f


GRID_SAMPLER = defop(
    "grid_sampler_2d", _gs_nd, inputs=("input", "grid"), attrs=_GS_ATTRS,
    node="GridSampler2DBackward0", input=_gs_first(0), grid=_gs_first(1))


@autocast_op("grid_sampler_2d")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler_2d: `input` (N, C, H, W) sampled at the normalized (x, y) points
    of `grid` (N, Hg, Wg, 2); modes 0 bilinear / 1 nearest, padding 0 zeros / 1 border /
    2 reflection.

    >>> import eagergrad as torch
    >>> x = torch.arange(4.).view(1, 1, 2, 2)
    >>> torch.grid_sampler_2d(x, torch.tensor([[[[0.0, 0.0]]]]), 0, 0, True)
    tensor([[[[1.5000]]]])
    """
    _check_grid_sampler(input, grid, 4)
    _check_grid_dtypes(input, grid, "grid_sampler_2d_cpu_kernel_impl")
    if int(interpolation_mode) == 2:
        raise NotImplementedError("eagergrad does not implement torch.nn.functional."
                                  "grid_sample(mode='bicubic') yet")
    if int(interpolation_mode) not in (0, 1) or int(padding_mode) not in (0, 1, 2):
        raise NotImplementedError(f"eagergrad does not implement torch.grid_sampler_2d with "
                                  f"interpolation_mode={interpolation_mode}, "
                                  f"padding_mode={padding_mode}")
    return call_op(GRID_SAMPLER, (input, grid), (int(interpolation_mode), int(padding_mode),
                                                 bool(align_corners)))


# ---- grid_sampler_3d (F.grid_sample of 5-D input) ----------------------------------------------
def _nyi_third_3d(*grads):
    raise NotImplementedError("eagergrad does not implement the third derivative of "
                              "torch.grid_sampler_3d yet")


GS3_BACK2 = defop(
    "_grid_sampler_3d_double_backward", _gs_back2_k,
    inputs=("ggi", "ggg", "grad_output", "input", "grid"), attrs=_GS_ATTRS,
    outputs=("result0", "result1", "result2"), node="NotImplemented",
    ggi=lambda grads: _nyi_third_3d(), ggg=lambda grads: _nyi_third_3d(),
    grad_output=lambda grads: _nyi_third_3d(), input=lambda grads: _nyi_third_3d(),
    grid=lambda grads: _nyi_third_3d())


def _gs3_second(k):
    def f(grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners):
        return call_op(GS3_BACK2, (grads[0], grads[1], grad_output, input, grid),
                       (interpolation_mode, padding_mode, align_corners))[k]
    return f


GS3_BACK = defop(
    "grid_sampler_3d_backward", _gs_back_k, inputs=("grad_output", "input", "grid"),
    attrs=_GS_ATTRS + ("output_mask",), outputs=("result0", "result1"),
    node="GridSampler3DBackwardBackward0",
    grad_output=_gs3_second(0), input=_gs3_second(1), grid=_gs3_second(2))
delattr(GS3_BACK.Node, "_saved_output_mask")
delattr(GS3_BACK.Node, "_raw_saved_output_mask")


def _gs3_first(k):
    def f(grad, input, grid, interpolation_mode, padding_mode, align_corners):
        mask = tuple(i == k for i in range(2))
        return call_op(GS3_BACK, (grad, input, grid),
                       (interpolation_mode, padding_mode, align_corners, mask))[k]
    return f


GRID_SAMPLER_3D = defop(
    "grid_sampler_3d", _gs_nd, inputs=("input", "grid"), attrs=_GS_ATTRS,
    node="GridSampler3DBackward0", input=_gs3_first(0), grid=_gs3_first(1))


def _sizes_str(t):
    return "[" + ", ".join(map(str, t.shape)) + "]"


def _check_grid_sampler(input, grid, nd):
    """ATen's check_grid_sampler_common and check_grid_sampler_2d / _3d (nd: 4 / 5)."""
    si, sg = _sizes_str(input), _sizes_str(grid)
    if input.size(0) != grid.size(0):
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {si} and grid with sizes {sg}")
    if grid.size(-1) != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {sg}")
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {si} with dimension {i} "
                               "being empty")
    if input.ndim != nd or grid.ndim != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number "
                           f"of dimensions, but got input with sizes {si} and grid with "
                           f"sizes {sg}")


def _check_grid_dtypes(input, grid, kernel):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{grid.dtype.scalar_name}")


@autocast_op("grid_sampler_3d")
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler_3d: `input` (N, C, D, H, W) sampled at the normalized (x, y, z)
    points of `grid` (N, Dg, Hg, Wg, 3); modes 0 trilinear / 1 nearest, padding 0 zeros /
    1 border / 2 reflection; with torch's checks.

    >>> import eagergrad as torch
    >>> x = torch.arange(8.).view(1, 1, 2, 2, 2)
    >>> torch.grid_sampler_3d(x, torch.zeros(1, 1, 1, 1, 3), 0, 0, True)
    tensor([[[[[3.5000]]]]])
    """
    _check_grid_sampler(input, grid, 5)
    if int(interpolation_mode) == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if int(interpolation_mode) not in (0, 1) or int(padding_mode) not in (0, 1, 2):
        raise NotImplementedError(f"eagergrad does not implement torch.grid_sampler_3d with "
                                  f"interpolation_mode={interpolation_mode}, "
                                  f"padding_mode={padding_mode}")
    _check_grid_dtypes(input, grid, "grid_sampler3d_cpu")
    return call_op(GRID_SAMPLER_3D, (input, grid), (int(interpolation_mode),
                                                    int(padding_mode), bool(align_corners)))



@autocast_op("grid_sampler")
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: grid_sampler_2d for a 4-D input, else grid_sampler_3d (ATen's
    composite; its cuDNN branch is CUDA's).

    >>> import eagergrad as torch
    >>> x = torch.arange(4.).view(1, 1, 2, 2)
    >>> torch.grid_sampler(x, torch.zeros(1, 1, 1, 2), 0, 0, True)
    tensor([[[[1.5000]]]])
    """
    if input.dim() == 4:
        return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
    return grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)


def cudnn_is_acceptable(input):
    """torch.cudnn_is_acceptable: whether cuDNN would take this tensor; False for every
    eagergrad tensor (no cuDNN), as for torch's CPU tensors.

    >>> import eagergrad as torch
    >>> torch.cudnn_is_acceptable(torch.ones(2))
    False
    """
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError("cudnn_is_acceptable(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return False

# ---- affine_grid_generator (2-D) -----------------------------------------------------------------
def _linspace_neg_one(n, align_corners):
    if n <= 1:
        return np.zeros((max(n, 0),)) if n == 0 else np.zeros((1,))
    r = np.linspace(-1.0, 1.0, n)
    return r if align_corners else r * (n - 1) / n


def _base_grid(h, w, align_corners):
    """(H, W, 3): x, y, 1 at every output point (ATen's make_base_grid_4D)."""
    xs, ys = _linspace_neg_one(w, align_corners), _linspace_neg_one(h, align_corners)
    base = np.ones((h, w, 3))
    base[..., 0] = xs[None, :]
    base[..., 1] = ys[:, None]
    return base


def _affine_k(theta, size, align_corners):
    _, _, h, w = size
    base = jnp.asarray(_base_grid(h, w, align_corners), theta.dtype)
    return jnp.einsum("hwj,nij->nhwi", base, theta, precision=_HI)


def _affine_back(grad, size, align_corners):
    # ATen's affine_grid_generator_4D_backward: base^T @ grad, transposed (bmm/transpose)
    n, _, h, w = size
    base = from_jax(jnp.asarray(_base_grid(h, w, align_corners), grad.dtype.np))
    base = base.view(1, h * w, 3).expand(n, h * w, 3)
    return base.transpose(1, 2).bmm(grad.reshape(n, h * w, 2)).transpose(1, 2)


AFFINE_GRID = defop("affine_grid_generator", _affine_k, inputs=("theta",),
                    attrs=("size", "align_corners"), node="AffineGridGeneratorBackward0",
                    theta=lambda grad, size, align_corners: _affine_back(grad, size,
                                                                         align_corners))


def affine_grid_generator(theta, size, align_corners):
    """torch.affine_grid_generator: the (N, H, W, 2) sampling grid of the affine maps
    theta (N, 2, 3) over an output of `size` (N, C, H, W).

    >>> import eagergrad as torch
    >>> torch.affine_grid_generator(torch.tensor([[[1.0, 0, 0], [0, 1, 0]]]),
    ...                             (1, 1, 1, 2), True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    size = tuple(int(s) for s in size)
    if len(size) != 4:
        raise NotImplementedError("eagergrad does not implement torch.affine_grid_generator "
                                  "for 3-D (5-D size) transforms yet")
    return call_op(AFFINE_GRID, (theta,), (size, bool(align_corners)))
