"""torch.nn.functional's pooling functions (re-exported by nn.functional), recording
torch's graphs: MaxPool2DWithIndicesBackward0 / AvgPool2DBackward0 /
AdaptiveAvgPool2DBackward0 / AdaptiveMaxPool2DBackward0 for the 2-d pools, and the
fixed-window 1-d pools as torch composes them: unsqueeze(-2), the 2-d op, squeeze(-2)."""
from ...ops.conv import _adaptive_avg_pool2d, _avg_pool2d, _max_pool2d_with_indices
from ...ops.spatial import _check_adaptive_max
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


def _check_pool(name, input, k, s, p, d, ceil_mode):
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    s = s or k
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if any(x <= 0 for x in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} "
                           f"dW: {s[1]}")
    if any(x <= 0 for x in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    for kk, pp, dd in zip(k, p, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    from ...ops.conv import _pool_out_size
    out = [_pool_out_size(n, kk, pp, ss, dd, ceil_mode)
           for n, kk, pp, ss, dd in zip(input.shape[-2:], k, p, s, d)]
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


def _check_1d(name, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{_dims(input.shape)}")


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
    _check_1d("max_pool1d", input)
    k = _one(kernel_size, "max_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _one(stride, "max_pool1d", "stride")
    p, d = _one(padding, "max_pool1d", "padding"), _one(dilation, "max_pool1d", "dilation")
    out, ind = max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d),
                                       ceil_mode)
    return out.squeeze(-2), ind.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L) input.

    >>> import eagergrad as torch
    >>> torch.nn.functional.max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[3., 2.]])
    """
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
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (OH, OW) output (None keeps that input size); an
    output of 1x1 is torch's mean over the last two dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.functional.adaptive_avg_pool2d(torch.arange(16.).view(1, 1, 4, 4), 1)
    tensor([[[[7.5000]]]])
    """
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
