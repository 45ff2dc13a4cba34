"""torch.nn.functional's pooling functions (re-exported by nn.functional), recording
torch's graphs: MaxPool{2,3}DWithIndicesBackward0 / AvgPool{2,3}DBackward0 /
AdaptiveAvgPool{2,3}DBackward0 / AdaptiveMaxPool{2,3}DBackward0 for the 2-d and 3-d pools,
FractionalMaxPool{2,3}DBackward0, MaxUnpool{2,3}DBackward0; the fixed-window 1-d pools
(and max_unpool1d) as torch composes them around the 2-d op (unsqueeze, the op, squeeze),
and lp_pool as torch composes it (pow, avg_pool, sign, relu, pow)."""
import math

import numpy as np

from ..._settings import alert_not_deterministic
from ... import _dtypes as D
from ...creation import rand
from ...ops._autocast import autocast_op
from ...ops.conv import _adaptive_avg_pool2d, _avg_pool2d, _max_pool2d_with_indices, _pool_out_size
from ...ops.pooling import (_adaptive_avg_pool3d, _adaptive_max_pool3d, _avg_pool3d,
                            _check_samples_grad, _fractional_max_pool, _max_pool3d_with_indices,
                            _max_unpool, _values_of)
from ...ops.spatial import _check_adaptive_max, _check_output_dims
from ...ops.spatial import adaptive_max_pool1d as _adaptive_max_pool1d
from ._utils import _dims, _tuple


def _pool_arg(v, name, what, allow_none=False):
    if v is None or (allow_none and not isinstance(v, int) and len(v) == 0):
        return ()
    v = _tuple(v, 2)
    if len(v) != 2:
        extra = "be omitted, " if allow_none else ""
        raise RuntimeError(f"{name}: {what} must either {extra}be a single int, or a tuple of "
                           "two ints")
    return v


def _trunc_div(a, b):
    """C++'s integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _out_size(n, k, p, s, d, ceil_mode):
    """torch's pooling_output_shape, with its checks."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > _trunc_div((k - 1) * d + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation={d}")
    return _pool_out_size(n, k, p, s, d, ceil_mode)


def _check_pool(name, input, k, s, p, d, ceil_mode):
    """torch's checks of max_pool2d / avg_pool2d (their meta functions, then Pool.h's
    pool2d_shape_check), in torch's order."""
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    s = s or k
    out = [_out_size(n, kk, pp, ss, dd, ceil_mode)
           for n, kk, pp, ss, dd in zip(input.shape[-2:], k, p, s, d)]
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if any(x <= 0 for x in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} "
                           f"dW: {s[1]}")
    if any(x <= 0 for x in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if not all(input.shape[-3:]) or input.ndim == 3 and not input.shape[0]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{_dims(input.shape)}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if any(o <= 0 for o in out):
        c, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool2d returning (output, indices): flat int64 positions within each H*W plane.

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool2d_with_indices(torch.arange(4.).view(1, 1, 2, 2), 2)[1]
    tensor([[[[3]]]])
    """
    n = "max_pool2d"
    k = _pool_arg(kernel_size, n, "kernel_size")
    s = _pool_arg(stride, n, "stride", allow_none=True)
    p = _pool_arg(padding, n, "padding")
    d = _pool_arg(dilation, n, "dilation")
    _check_pool(n, input, k, s, p, d, ceil_mode)
    return _max_pool2d_with_indices(input, k, s, p, d, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling (stride defaults to kernel_size, padding counts as -inf).

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool2d(torch.arange(16.).view(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    out = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def _one(v, name, arg):
    if isinstance(v, int):
        return v
    v = tuple(v)
    if len(v) != 1:
        raise RuntimeError(f"{name}() {arg} must be a single int, or a tuple of one int")
    return int(v[0])


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool1d returning (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool1d_with_indices(torch.tensor([[1., 3., 2., 0.]]), 2)[1]
    tensor([[1, 2]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for max_pool1d)")
    k, s, p, d = _pool1d_args(kernel_size, stride, padding, dilation)
    out, ind = max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d),
                                       ceil_mode)
    return out.squeeze(-2), ind.squeeze(-2)


def _pool1d_args(kernel_size, stride, padding, dilation):
    k = _one(kernel_size, "max_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _one(stride, "max_pool1d", "stride")
    return k, s, _one(padding, "max_pool1d", "padding"), _one(dilation, "max_pool1d", "dilation")


def _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's max_pool1d checks (MaxPooling.cpp), made without indices."""
    n = input.shape
    if not (len(n) == 2 and n[0] and n[1] or len(n) == 3 and n[1] and n[2]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{_dims(n)}")
    k, s, p, d = _pool1d_args(kernel_size, stride, padding, dilation)
    for what, ok, v in (("kernel_size must be greater than zero", k > 0, k),
                        ("stride must be greater than zero", s > 0, s),
                        ("padding must be non-negative", p >= 0, p)):
        if not ok:
            raise RuntimeError(f"max_pool1d() {what}, but got {v}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    w = _pool_out_size(n[-1], k, p, s, d, ceil_mode)
    if w <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {w}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L) input.

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[3., 2.]])
    """
    if not return_indices:  # (torch's max_pool1d, whose checks differ from with_indices')
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling (AvgPool2DBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.avg_pool2d(torch.arange(16.).view(1, 1, 4, 4), 2)
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """
    n = "avg_pool2d"
    k = _pool_arg(kernel_size, n, "kernel_size")
    s = _pool_arg(stride, n, "stride", allow_none=True)
    p = _pool_arg(padding, n, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool(n, input, k, s, p, (1, 1), ceil_mode)
    return _avg_pool2d(input, k, s, p, ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling: torch's unsqueeze(-2), avg_pool2d, squeeze(-2).

    >>> import eagergrad as torch
    >>> torch.nn.functional.avg_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[2., 1.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{_dims(input.shape)}")
    k = _one(kernel_size, "avg_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _one(stride, "avg_pool1d", "stride")
    p = _one(padding, "avg_pool1d", "padding")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > k // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation=1")
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (OH, OW) output (None keeps that input size); an
    output of 1x1 is torch's mean over the last two dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_avg_pool2d(torch.arange(16.).view(1, 1, 4, 4), 1)
    tensor([[[[7.5000]]]])
    """
    output_size = _list_with_default(output_size, input.size())
    size = _tuple(output_size, 2) if isinstance(output_size, int) else tuple(output_size)
    if len(size) == 1:
        size = size * 2
    size = tuple(input.shape[-2 + i] if v is None else int(v) for i, v in enumerate(size))
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if any(v < 0 for v in size):
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{size[0]}, {size[1]}}}")
    if size == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_dims(input.shape)}")
    if any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                           "non-batch dimensions, but input has sizes "
                           f"{_dims(input.shape)} with dimension {input.ndim - 1} being empty")
    return _adaptive_avg_pool2d(input, size)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) input to a fixed length.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_avg_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[2., 1.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    n = _one(output_size, "adaptive_avg_pool1d", "output_size")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, n)).squeeze(-2)


# ---- adaptive max pooling --------------------------------------------------------------------
def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive 2-d max pooling: (output, flat per-plane indices); None in output_size
    keeps that input size.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool2d_with_indices(
    ...     torch.tensor([[[1.0, 5.0], [4.0, 2.0]]]), 1)
    (tensor([[[5.]]]), tensor([[[1]]]))
    """
    output_size = _list_with_default(output_size, input.size())
    size = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(size) == 1:
        size = size * 2
    return _check_adaptive_max(input, size)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-d max pooling of (N, C, H, W) or (C, H, W) input (AdaptiveMaxPool2DBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool2d(torch.arange(16.).view(1, 4, 4), (2, 1))
    tensor([[[ 7.],
             [15.]]])
    """
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive 1-d max pooling: (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool1d_with_indices(torch.tensor([[1.0, 3.0]]), 1)
    (tensor([[3.]]), tensor([[1]]))
    """
    return _adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-d max pooling of (N, C, L) or (C, L) input.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    out = _adaptive_max_pool1d(input, output_size)
    return out if return_indices else out[0]


# ---- 3-d pooling --------------------------------------------------------------------------
def _three(v, name, what, allow_none=False):
    """An IntArrayRef[3] argument as ATen reads it: an int or a 1-sequence repeated."""
    if v is None or (allow_none and not isinstance(v, int) and len(v) == 0):
        return ()
    v = _tuple(v, 3)
    if len(v) != 3:
        raise RuntimeError(f"{name}: {what}")
    return v


def _dims3(input):
    return input.shape[-4], *input.shape[-3:]


def _check_pool3d(fn, input, k, s, p, d, ceil_mode, avg=False):
    """ATen's max_pool3d / avg_pool3d checks (pooling_output_shape, pool3d_shape_check)."""
    out = []
    for n, kk, pp, ss, dd in zip(input.shape[-3:], k, p, s, d):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
        out.append(_pool_out_size(n, kk, pp, ss, dd, ceil_mode))
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} "
                           f"kH: {k[1]} kW: {k[2]}")
    if any(x <= 0 for x in s):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} "
                           f"dW: {s[2]}")
    if any(x <= 0 for x in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    for i, n in enumerate(input.shape):
        if n <= 0 and not (input.ndim == 5 and i == 0):
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {_dims(input.shape)} and "
                               f"non-batch dimension {n} has length zero!")
    c, t, h, w = _dims3(input)
    if avg and (t < k[0] or h < k[1] or w < k[2]):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if any(kk // 2 < pp for kk, pp in zip(k, p)):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                           f"padH: {p[1]}")
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")


def _check_dtype(input, name, ints=True):
    dt = input.dtype
    if dt.is_complex or dt is D.bool_ or not (ints or dt.is_floating_point):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name}'")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool3d returning (output, indices): flat int64 positions within each D*H*W
    volume (MaxPool3DWithIndicesBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool3d_with_indices(torch.arange(8.).view(1, 1, 2, 2, 2), 2)[1]
    tensor([[[[[7]]]]])
    """
    n = "max_pool3d"
    k = _three(kernel_size, n, "kernel_size must either be a single int, or a tuple of three "
               "ints")
    s = _three(stride, n, "stride must either be omitted, a single int, or a tuple of three "
               "ints", allow_none=True)
    p = _three(padding, n, "padding must either be a single int, or a tuple of three ints")
    d = _three(dilation, n, "dilation must be either a single int, or a tuple of three ints")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    _check_pool3d("max_pool3d_with_indices_out_cpu_template()", input, k, s or k, p, d,
                  ceil_mode)
    _check_dtype(input, "max_pool3d")
    return _max_pool3d_with_indices(input, k, s, p, d, ceil_mode)


@autocast_op("max_pool3d")
def _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode):
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W) input (stride defaults to
    kernel_size, padding counts as -inf).

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool3d(torch.arange(8.).view(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


@autocast_op("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-d average pooling (AvgPool3DBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.avg_pool3d(torch.arange(8.).view(1, 1, 2, 2, 2), 2)
    tensor([[[[[3.5000]]]]])
    """
    n = "avg_pool3d"
    k = _three(kernel_size, n, "kernel_size must be a single int, or a tuple of three ints")
    s = _three(stride, n, "stride must be omitted, a single int, or a tuple of three ints",
               allow_none=True)
    p = _three(padding, n, "padding must be a single int, or a tuple of three ints")
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool3d("avg_pool3d()", input, k, s or k, p, (1, 1, 1), ceil_mode, avg=True)
    _check_dtype(input, "avg_pool3d_out_frame")
    return _avg_pool3d(input, k, s, p, ceil_mode, count_include_pad, divisor_override)


def _adaptive_size3(output_size, input):
    output_size = _list_with_default(output_size, input.size())
    size = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    return size * 3 if len(size) == 1 else size


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (OD, OH, OW) output (None keeps that input size); an
    output of 1x1x1 is torch's mean over the last three dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_avg_pool3d(torch.arange(8.).view(1, 2, 2, 2), 1)
    tensor([[[[3.5000]]]])
    """
    size = _adaptive_size3(output_size, input)
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if any(v < 0 for v in size):
        raise RuntimeError("adaptive_avg_pool3d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{size[0]}, {size[1]},{size[2]}}}")
    if tuple(size) == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_avg_pool3d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_dims(input.shape)} "
                               f"with dimension {i} being empty")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{_dims(input.shape)}")
    _check_dtype(input, "adaptive_avg_pool3d_cpu", ints=False)
    return _adaptive_avg_pool3d(input, size)


@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive 3-d max pooling: (output, flat per-volume indices); None in output_size
    keeps that input size.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool3d_with_indices(
    ...     torch.arange(8.).view(1, 2, 2, 2), 1)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    size = _adaptive_size3(output_size, input)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: "
                           f"{_dims(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool3d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {_dims(input.shape)} "
                               f"with dimension {i} being empty")
    if len(size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    _check_output_dims(input, size)
    _check_dtype(input, "adaptive_max_pool3d_cpu", ints=False)
    return _adaptive_max_pool3d(input, size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3-d max pooling of (N, C, D, H, W) or (C, D, H, W) input
    (AdaptiveMaxPool3DBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_max_pool3d(torch.arange(8.).view(1, 2, 2, 2), (1, 2, 1))
    tensor([[[[5.],
              [7.]]]])
    """
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ---- power-average pooling ------------------------------------------------------------------
def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    """torch's lp_pool{1,2,3}d: (sum over each window of x ** p) ** (1 / p), composed of
    torch's ops (the window sum is avg_pool times the window size)."""
    maxpool, avgpool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d),
                        3: (max_pool3d, avg_pool3d)}[nd]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return maxpool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -maxpool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avgpool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avgpool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    size = kernel_size if nd == 1 else math.prod(_tuple(kernel_size, nd))
    return (out.sign() * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-d power-average pooling: the p-norm of each window (p = inf: max of |x|).

    >>> import eagergrad as torch
    >>> torch.nn.functional.lp_pool1d(torch.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling: the p-norm of each window.

    >>> import eagergrad as torch
    >>> torch.nn.functional.lp_pool2d(torch.ones(1, 2, 2), 1, 2)
    tensor([[[4.]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling: the p-norm of each window.

    >>> import eagergrad as torch
    >>> torch.nn.functional.lp_pool3d(torch.ones(1, 2, 2, 2), 1, 2)
    tensor([[[[8.]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- fractional max pooling -----------------------------------------------------------------
def _check_fractional(nd, input, k, size, samples):
    name = f"fractional_max_pool{nd}d"
    what = "Ints" if nd == 2 else "three Ints"
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {what}")
    if len(size) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {what}")
    fn = f"{name}()" if nd == 2 else "fractional_max_pool3d_out()"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_dims(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{_dims(input.shape)} with dimension {i} "
                               "being empty.")
    sizes = input.shape[-nd:]
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    order = (0, 1) if nd == 2 else (0, 2, 1)  # (ATen checks 3-d's width before its height)
    for j in order:
        ok = size[j] + k[j] - 1 <= sizes[j] if nd == 2 else size[j] + k[j] - 1 < sizes[j]
        if not ok:
            raise RuntimeError(f"{fn}: pool {names[j]} {k[j]} too large relative to input "
                               f"{names[j]} {sizes[j]}")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (1, input.shape[0]) if input.ndim == nd + 1 else input.shape[:2]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    _check_dtype(input, f"fractional_max_pool{nd}d_out_frame", ints=False)
    if 0 in k:
        raise NotImplementedError(f"eagergrad does not implement torch.nn.functional.{name} "
                                  "with an empty kernel (kernel_size 0)")


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             "tuple of Ints.")
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else \
            tuple(output_ratio)
        output_size = [int(input.size(-nd + j) * ratio[j]) for j in range(nd)]
    if _random_samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = rand(batch, input.size(-nd - 1), nd, dtype=input.dtype,
                               device=input.device)
    k = _tuple(kernel_size, nd)
    size = _tuple(output_size, nd)
    _check_samples_grad(nd, _random_samples)
    _check_fractional(nd, input, k, size, _random_samples)
    return _fractional_max_pool(input, k, size, _random_samples)


@autocast_op("fractional_max_pool2d")
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling (Graham, 2015) over (N, C, H, W) or (C, H, W) input: windows
    of `kernel_size` at pseudo-random steps that give `output_size` (or input size times
    `output_ratio`); the steps come from `_random_samples` (N, C, 2) in [0, 1), drawn from
    the global generator when not given. Returns (output, flat per-plane indices).

    >>> import eagergrad as torch
    >>> x = torch.arange(16.).view(1, 1, 4, 4)
    >>> torch.nn.functional.fractional_max_pool2d_with_indices(
    ...     x, 2, output_size=2, _random_samples=torch.full((1, 1, 2), 0.5))[1]
    tensor([[[[ 5,  7],
              [13, 15]]]])
    """
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-d fractional max pooling (FractionalMaxPool2DBackward0); see
    fractional_max_pool2d_with_indices.

    >>> import eagergrad as torch
    >>> torch.nn.functional.fractional_max_pool2d(
    ...     torch.arange(16.).view(1, 4, 4), 3, output_size=1).shape
    torch.Size([1, 1, 1])
    """
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]


@autocast_op("fractional_max_pool3d")
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """3-d fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input, samples
    (N, C, 3): (output, flat per-volume indices).

    >>> import eagergrad as torch
    >>> torch.nn.functional.fractional_max_pool3d_with_indices(
    ...     torch.arange(27.).view(1, 3, 3, 3), 2, output_size=1)[1]
    tensor([[[[26]]]])
    """
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-d fractional max pooling (FractionalMaxPool3DBackward0); see
    fractional_max_pool3d_with_indices.

    >>> import eagergrad as torch
    >>> torch.nn.functional.fractional_max_pool3d(
    ...     torch.arange(27.).view(1, 3, 3, 3), 2, output_size=1)
    tensor([[[[26.]]]])
    """
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]


# ---- max unpooling ------------------------------------------------------------------------------
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    default = [(input.size()[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f"between {lo} and {hi})")
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _check_unpool(nd, input, indices, output_size, stride=None, padding=None):
    """ATen's max_unpooling{2,3}d checks; then (on concrete values) the indices' range."""
    if nd == 2:
        if indices.dtype is not D.int64:
            raise RuntimeError("elements in indices should be type int64 but got: "
                               f"{indices.dtype.scalar_name}")
        if len(output_size) != 2:
            raise RuntimeError("There should be exactly two elements (height, width) in "
                               f"output_size, but got {len(output_size)} elements.")
        if input.ndim not in (3, 4):
            raise RuntimeError("Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                               f"tensor with {input.ndim} dimensions.")
    else:
        if indices.dtype is not D.int64:
            raise RuntimeError("elements in indices should be type int64")
        if input.ndim not in (4, 5):
            raise RuntimeError("Input to max_unpooling3d should be a 4d or 5d Tensor, but got a "
                               f"tensor with {input.ndim} dimensions.")
        for what, v in (("output_size", output_size), ("stride", stride),
                        ("padding", padding)):
            if len(v) != 3:
                colon = "" if what == "output_size" else ":"
                raise RuntimeError("There should be exactly three elements (depth, height, "
                                   f"width) in {what}, but got{colon} {len(v)} elements.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({_dims(input.shape)}) but got indices tensor with shape: "
                           f"{_dims(indices.shape)}")
    fn = f"max_unpooling{nd}d_forward_out_cpu()"
    for i in range(1, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {_dims(input.shape)} with dimension {i} "
                               "being empty.")
    if nd == 3 and any(x <= 0 for x in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: "
                           f"{_dims(stride)}")
    _check_dtype(input, f"max_unpool{nd}d", ints=False)
    idx = _values_of(indices)
    if idx is not None:
        plane = math.prod(output_size)
        bad = np.flatnonzero((idx < 0) | (idx >= plane))
        if bad.size:  # (ATen's threads report one of them; one thread, the last)
            sizes = "x".join(str(s) for s in output_size)
            raise RuntimeError(f"Found an invalid max index: {idx.flat[bad[-1]]} (output volumes "
                               f"are of size {sizes})")


@autocast_op("max_unpool2d")
def _max_unpool2d(input, indices, output_size):
    alert_not_deterministic("max_unpooling2d_forward_out")
    output_size = tuple(int(s) for s in output_size)
    _check_unpool(2, input, indices, output_size)
    return _max_unpool(input, indices, output_size)


@autocast_op("max_unpool3d")
def _max_unpool3d(input, indices, output_size, stride, padding):
    alert_not_deterministic("max_unpooling3d_forward_out")
    output_size = tuple(int(s) for s in output_size)
    _check_unpool(3, input, indices, output_size, stride, padding)
    return _max_unpool(input, indices, output_size, tuple(stride), tuple(padding))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: each value written back at its index, zeros
    elsewhere (max_unpool2d between unsqueeze(-1) and squeeze(-1), as torch's).

    >>> import eagergrad as torch
    >>> F = torch.nn.functional
    >>> out, ind = F.max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2, return_indices=True)
    >>> F.max_unpool1d(out, ind, 2)
    tensor([[0., 3., 2., 0.]])
    """
    kernel_size = _tuple(kernel_size, 1)
    stride = _tuple(stride, 1) if stride is not None else kernel_size
    padding = _tuple(padding, 1)
    size = list(_unpool_output_size(input, kernel_size, stride, padding, output_size))
    return _max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d (MaxUnpool2DBackward0).

    >>> import eagergrad as torch
    >>> F = torch.nn.functional
    >>> out, ind = F.max_pool2d(torch.arange(4.).view(1, 1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(out, ind, 2)
    tensor([[[[0., 0.],
              [0., 3.]]]])
    """
    kernel_size = _tuple(kernel_size, 2)
    stride = _tuple(stride, 2) if stride is not None else kernel_size
    padding = _tuple(padding, 2)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _max_unpool2d(input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (MaxUnpool3DBackward0).

    >>> import eagergrad as torch
    >>> F = torch.nn.functional
    >>> out, ind = F.max_pool3d(torch.arange(8.).view(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(out, ind, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    kernel_size = _tuple(kernel_size, 3)
    stride = _tuple(stride, 3) if stride is not None else kernel_size
    padding = _tuple(padding, 3)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _max_unpool3d(input, indices, size, stride, padding)
