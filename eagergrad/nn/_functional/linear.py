"""nn.functional's linear maps (re-exported by nn.functional): `linear` takes ATen's paths
(addmm for 2-D input, view + addmm + view for contiguous input with a vector bias,
matmul + in-place add otherwise) and `bilinear` is ATen's _trilinear composition, so
both record torch's graphs."""
import enum

from ...ops.linalg import _trilinear, addmm, matmul
from ...ops._autocast import autocast_op
from ...tensor import Tensor


def _check_tensors(name, **args):
    for i, (k, v) in enumerate(args.items()):
        if not (isinstance(v, Tensor) or v is None and k == "bias"):
            raise TypeError(f"{name}(): argument '{k}' (position {i + 1}) must be Tensor, not "
                            f"{type(v).__name__}")


def _is_vector(bias):
    """ATen's test for the flattened path: a 1-D bias, or one that squeeze() makes 1-D."""
    return bias.ndim == 1 or sum(s != 1 for s in bias.shape) == 1


@autocast_op("linear")
def linear(input, weight, bias=None):
    """input @ weight.T + bias, as ATen records it (AddmmBackward0 for 2-D input).

    >>> import eagergrad as torch
    >>> torch.nn.functional.linear(torch.ones(2, 3), torch.ones(4, 3), torch.ones(4))
    tensor([[4., 4., 4., 4.],
            [4., 4., 4., 4.]])
    """
    _check_tensors("linear", input=input, weight=weight, bias=bias)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is not None:
        if input.ndim == 2:
            return addmm(bias, input, weight.t())
        if input.is_contiguous() and bias.is_contiguous() and _is_vector(bias):
            # ATen's _flatten_nd_linear
            sizes = input.shape
            rows = 1
            for s in sizes[:-1]:
                rows *= s
            out = addmm(bias, input.view(rows, sizes[-1]), weight.t())
            return out.view(*sizes[:-1], weight.shape[0])
    out = matmul(input, weight.t())
    if bias is not None:
        out.add_(bias)  # in place, as ATen
    return out


def _size(t, d):
    if t.ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return t.size(d)


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b per output feature: weight (out, in1, in2), one TrilinearBackward0.

    >>> import eagergrad as torch
    >>> torch.nn.functional.bilinear(torch.ones(2, 3), torch.ones(2, 4), torch.ones(5, 3, 4))
    tensor([[12., 12., 12., 12., 12.],
            [12., 12., 12., 12., 12.]])
    """
    _check_tensors("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    ts = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        ts["bias"] = bias
    if any(t.dtype is not input1.dtype for t in ts.values()):
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{k}: {t.dtype.cpp_name}" for k, t in ts.items()))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    for k, x, d in (("input1", input1, 1), ("input2", input2, 2)):
        if _size(x, -1) != weight.size(d):
            raise RuntimeError(f"bilinear(): {k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[d]}")
    if bias is not None and _size(bias, 0) != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    out_size = tuple(input1.shape[:-1]) + (weight.shape[0],)
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = _trilinear(x1, weight, x2, (1, 3), (0,), (1, 2), (2, 3)).reshape(out_size)
    return out if bias is None else out + bias


class ScalingType(enum.Enum):
    """How scaled_mm's scales apply (torch's F.ScalingType; eagergrad has no scaled_mm)."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.Enum):
    """scaled_mm's swizzle of block scales (torch's F.SwizzleType)."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType.__name__ = ScalingType.__qualname__ = "_ScalingType"
SwizzleType.__name__ = SwizzleType.__qualname__ = "_SwizzleType"
_ScalingType, _SwizzleType = ScalingType, SwizzleType
