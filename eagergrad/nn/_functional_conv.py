"""nn.functional's convolutions and pooling (re-exported by nn.functional), recording
torch's graphs: one ConvolutionBackward0 per convolution (unsqueeze/squeeze around it for
unbatched input, ConstantPadNdBackward0 before it for an asymmetric padding='same'),
MaxPool2DWithIndicesBackward0 / AvgPool2DBackward0 / AdaptiveAvgPool2DBackward0 for the
2-d pools, and the 1-d pools as torch composes them: unsqueeze(-2), the 2-d op, squeeze(-2).
Complex convolution runs as one complex kernel (torch composes three real ones)."""
from ..ops.conv import (
    _adaptive_avg_pool2d,
    _avg_pool2d,
    _max_pool2d_with_indices,
    constant_pad_nd,
    convolution,
)

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "conv1d",
           "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices"]


def _dims(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tuple(v, n):
    """An int (or a 1-sequence) repeated n times, as torch's IntArrayRef[n] parser does."""
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 else v


def _expand(v, name, dim):
    if len(v) == 1:
        return v * dim
    if len(v) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(v)}")
    return v


def _check_conv(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's _convolution argument and shape checks; the expanded parameters."""
    k = weight.ndim
    if k < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = k - 2
    stride, padding, dilation, output_padding = (
        _expand(v, n, dim) for v, n in ((stride, "stride"), (padding, "padding"),
                                        (dilation, "dilation"),
                                        (output_padding, "output_padding")))
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    ws = _dims(weight.shape)
    if input.ndim != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight {ws}, "
                           f"but got {input.ndim}-dimensional input of size "
                           f"{_dims(input.shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {ws} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size [{ws}] instead")
    c = input.shape[1]
    if not transposed:
        if c != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input"
                               f"{_dims(input.shape)} to have {weight.shape[1] * groups} "
                               f"channels, but got {c} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
            raise RuntimeError(f"Given weight of size {ws}, expected bias to be 1-dimensional "
                               f"with {weight.shape[0]} elements, but got bias of size "
                               f"{_dims(bias.shape)} instead")
        ins = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
        ks = [d * (s - 1) + 1 for d, s in zip(dilation, weight.shape[2:])]
        if any(i < j for i, j in zip(ins, ks)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, ins))}). "
                f"Kernel size: ({' x '.join(map(str, ks))}). Kernel size can't be greater "
                "than actual input size")
    else:
        if c != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input"
                               f"{_dims(input.shape)} to have {weight.shape[0]} channels, but "
                               f"got {c} channels instead")
        n_out = weight.shape[1] * groups
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != n_out):
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected bias to be "
                               f"1-dimensional with {n_out} elements, but got bias of size "
                               f"{_dims(bias.shape)} instead")
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            if dim == 2:
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    f"output_padding_height: {output_padding[0]} output_padding_width: "
                    f"{output_padding[1]} stride_height: {stride[0]} stride_width: "
                    f"{stride[1]} dilation_height: {dilation[0]} dilation_width: "
                    f"{dilation[1]}")
            raise RuntimeError("output padding must be smaller than either stride or "
                               "dilation")
    for t in (weight, bias):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                               f"{t.dtype.scalar_name}")
    return stride, padding, dilation, output_padding


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    """aten::convolution with ATen's checks."""
    p = _check_conv(input, weight, bias, stride, padding, dilation, transposed,
                    output_padding, groups)
    stride, padding, dilation, output_padding = p
    return convolution(input, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups)


def _batched(input, nd, name, fn):
    """fn on input with a batch dimension: torch's unsqueeze(0) ... squeeze(0) for
    unbatched input."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {_dims(input.shape)}")
    if input.ndim == nd + 1:
        return fn(input.unsqueeze(0)).squeeze(0)
    return fn(input)


def _conv_same(input, weight, bias, stride, dilation, groups):
    """ATen's _convolution_mode for padding='same': symmetric padding, or the difference
    padded explicitly first (constant_pad_nd)."""
    dim = weight.ndim - 2
    stride = _expand(stride, "stride", max(dim, 1))
    dilation = _expand(dilation, "dilation", max(dim, 1))
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, right = [], []
    for d, k in zip(dilation, weight.shape[2:]):
        total = d * (k - 1)
        left.append(total // 2)
        right.append(total - total // 2)
    if left == right:
        return _convolution(input, weight, bias, stride, tuple(left), dilation, False,
                            (0,), groups)
    pad = [0] * (2 * dim)
    for i in range(dim):
        delta = right[i] - left[i]
        j = 2 * (dim - 1 - i)
        if delta > 0:
            pad[j + 1] = delta
        else:
            pad[j] = delta
            left[i] = right[i]
    return _convolution(constant_pad_nd(input, pad, 0), weight, bias, stride, tuple(left),
                        dilation, False, (0,), groups)


def _conv_nd(nd, name, input, weight, bias, stride, padding, dilation, groups):
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            return _batched(input, nd, name, lambda x: _conv_same(
                x, weight, bias, _tuple(stride, nd), _tuple(dilation, nd), groups))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    return _batched(input, nd, name, lambda x: _convolution(
        x, weight, bias, _tuple(stride, nd), _tuple(padding, nd), _tuple(dilation, nd), False,
        (0,), groups))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C_in, L) input with (C_out, C_in/groups, k) weight.

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2))
    tensor([[[2., 2., 2.]]])
    """
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C_in, H, W) input with (C_out, C_in/groups, kH, kW) weight;
    padding may be 'valid' or 'same'.

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 2, 2])
    """
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over (N, C_in, D, H, W) input.

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv3d(torch.ones(1, 1, 3, 3, 3), torch.ones(2, 1, 2, 2, 2)).shape
    torch.Size([1, 2, 2, 2, 2])
    """
    return _conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_t(nd, name, input, weight, bias, stride, padding, output_padding, groups, dilation):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    return _batched(input, nd, name, lambda x: _convolution(
        x, weight, bias, _tuple(stride, nd), _tuple(padding, nd), _tuple(dilation, nd), True,
        _tuple(output_padding, nd), groups))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-d convolution, weight (C_in, C_out/groups, k).

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2))
    tensor([[[1., 2., 1.]]])
    """
    return _conv_t(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-d convolution, weight (C_in, C_out/groups, kH, kW).

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 3, 2, 2),
    ...                                      stride=2).shape
    torch.Size([1, 3, 4, 4])
    """
    return _conv_t(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-d convolution, weight (C_in, C_out/groups, kD, kH, kW).

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv_transpose3d(torch.ones(1, 1, 1, 1, 1),
    ...                                      torch.ones(1, 1, 2, 2, 2)).shape
    torch.Size([1, 1, 2, 2, 2])
    """
    return _conv_t(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


# ---- pooling ----------------------------------------------------------------------------------
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
    from ..ops.conv import _pool_out_size
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
