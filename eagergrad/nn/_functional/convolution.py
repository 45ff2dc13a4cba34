"""torch.nn.functional's convolution functions (re-exported by nn.functional), recording
torch's graphs: one ConvolutionBackward0 per convolution (unsqueeze/squeeze around it for
unbatched input, ConstantPadNdBackward0 before it for an asymmetric padding='same'; complex
convolution runs as one complex kernel, torch composes three real ones); unfold / fold,
Im2ColBackward0 / Col2ImBackward0 on the kernels of ops/spatial.py."""
from ...ops.conv import conv_tbc, constant_pad_nd, convolution  # noqa: F401 - conv_tbc
from ...ops._autocast import autocast_op
from ...ops.spatial import _col2im, _im2col
from ._utils import _dims, _tuple


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


@autocast_op("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C_in, L) input with (C_out, C_in/groups, k) weight.

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2))
    tensor([[[2., 2., 2.]]])
    """
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C_in, H, W) input with (C_out, C_in/groups, kH, kW) weight;
    padding may be 'valid' or 'same'.

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 2, 2])
    """
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
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


@autocast_op("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-d convolution, weight (C_in, C_out/groups, k).

    >>> import eagergrad as torch
    >>> torch.nn.functional.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2))
    tensor([[[1., 2., 1.]]])
    """
    return _conv_t(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


@autocast_op("conv_transpose2d")
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


@autocast_op("conv_transpose3d")
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


# ---- unfold / fold ---------------------------------------------------------------------------
def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _fold_args(kernel_size, dilation, padding, stride):
    return tuple(_pair(v) for v in (kernel_size, dilation, padding, stride))


def _check_blocks(spatial, k, d, p, s):
    blocks = tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                   for n, kk, dd, pp, ss in zip(spatial, k, d, p, s))
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(spatial)}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least "
                           "one.")
    return blocks


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) input as columns (N, C*kh*kw, L) (Im2ColBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.unfold(torch.arange(4.).view(1, 1, 2, 2), 1)
    tensor([[[0., 1., 2., 3.]]])
    """
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[input.ndim - 3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{_dims(input.shape)}")
    _check_blocks(input.shape[-2:], k, d, p, s)
    return _im2col(input, k, d, p, s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns (N, C*kh*kw, L) of sliding blocks back into (N, C, *output_size)
    (Col2ImBackward0): the adjoint of unfold.

    >>> import eagergrad as torch
    >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    out = _pair(output_size)
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[input.ndim - 2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{_dims(input.shape)}")
    c = input.shape[-2]
    if c % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c} and kernel_size={k}.")
    blocks = _check_blocks(out, k, d, p, s)
    if input.shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"Given output_size={out}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={input.shape[-1]}.")
    return _col2im(input, out, k, d, p, s)
