"""Pooling layers: Max/Avg/AdaptiveMax/AdaptiveAvg/LP pooling in 1-3 d, MaxUnpool1d/2d/3d,
FractionalMaxPool2d/3d, as torch's (attributes, reprs, forward through nn.functional)."""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"]


def _ntuple(v, n):
    """torch's _single/_pair/_triple: an iterable as a tuple, anything else repeated."""
    try:
        return tuple(v)
    except TypeError:
        return (v,) * n


class _MaxPoolNd(Module):
    __constants__ = ("kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode")

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling; return_indices gives (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.MaxPool1d(2)(torch.tensor([[1., 3., 2., 0.]]))
    tensor([[3., 2.]])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling; return_indices gives (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """1-d average pooling.

    >>> import eagergrad as torch
    >>> torch.nn.AvgPool1d(2)(torch.tensor([[1., 3., 2., 0.]]))
    tensor([[2., 1.]])
    """
    __constants__ = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        one = lambda v: (v,) if isinstance(v, int) else tuple(v)
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(Module):
    """2-d average pooling.

    >>> import eagergrad as torch
    >>> torch.nn.AvgPool2d(2)
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    """
    __constants__ = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override")

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ("output_size",)

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output length.

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveAvgPool1d(2)(torch.tensor([[1., 3., 2., 0.]]))
    tensor([[2., 1.]])
    """

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed (OH, OW) output (None keeps that input size).

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveAvgPool2d((None, 3))
    AdaptiveAvgPool2d(output_size=(None, 3))
    """

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ("output_size", "return_indices")

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive 1-d max pooling to `output_size`; return_indices gives (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveMaxPool1d(2)(torch.tensor([[1., 3., 2., 0.]]))
    tensor([[3., 2.]])
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive 2-d max pooling to `output_size` (None keeps that input size).

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveMaxPool2d((3, None))
    AdaptiveMaxPool2d(output_size=(3, None))
    """

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W) input; return_indices gives
    (output, indices).

    >>> import eagergrad as torch
    >>> torch.nn.MaxPool3d(2)(torch.arange(8.).view(1, 2, 2, 2))
    tensor([[[[7.]]]])
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(Module):
    """3-d average pooling.

    >>> import eagergrad as torch
    >>> torch.nn.AvgPool3d(2)
    AvgPool3d(kernel_size=2, stride=2, padding=0)
    """
    __constants__ = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override")

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def __setstate__(self, d):
        super().__setstate__(d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed (OD, OH, OW) output (None keeps that input size).

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveAvgPool3d((1, None, 2))(torch.ones(1, 2, 3, 4)).shape
    torch.Size([1, 1, 3, 2])
    """

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive 3-d max pooling to `output_size` (None keeps that input size).

    >>> import eagergrad as torch
    >>> torch.nn.AdaptiveMaxPool3d(1)(torch.arange(8.).view(1, 2, 2, 2))
    tensor([[[[7.]]]])
    """

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    __constants__ = ("norm_type", "kernel_size", "stride", "ceil_mode")

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: the `norm_type`-norm of each window.

    >>> import eagergrad as torch
    >>> torch.nn.LPPool1d(2, 2)(torch.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling.

    >>> import eagergrad as torch
    >>> torch.nn.LPPool2d(1.5, (2, 3), stride=1)
    LPPool2d(norm_type=1.5, kernel_size=(2, 3), stride=1, ceil_mode=False)
    """

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling.

    >>> import eagergrad as torch
    >>> torch.nn.LPPool3d(1, 2)(torch.ones(1, 2, 2, 2))
    tensor([[[[8.]]]])
    """

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if (stride is not None) else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: values back at their indices, zeros elsewhere.

    >>> import eagergrad as torch
    >>> torch.nn.MaxUnpool1d(2)(torch.tensor([[3.0]]), torch.tensor([[1]]))
    tensor([[0., 3.]])
    """
    _n = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d.

    >>> import eagergrad as torch
    >>> torch.nn.MaxUnpool2d(2, stride=1, padding=1)
    MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(1, 1))
    """
    _n = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d.

    >>> import eagergrad as torch
    >>> torch.nn.MaxUnpool3d(2)(torch.tensor([[[[3.0]]]]), torch.tensor([[[[7]]]])).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 3.])
    """
    _n = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class _FractionalMaxPoolNd(Module):
    __constants__ = ("kernel_size", "return_indices", "output_size", "output_ratio")
    _n = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self._n, type(self).__name__
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling: windows at pseudo-random steps giving `output_size` (or
    the input size times `output_ratio`), drawn from the global generator at every call
    unless `_random_samples` (N, C, 2) is given.

    >>> import eagergrad as torch
    >>> m = torch.nn.FractionalMaxPool2d(2, output_size=2)
    >>> m(torch.ones(1, 3, 5, 5)).shape
    torch.Size([1, 3, 2, 2])
    """
    _n = 2

    def forward(self, input):
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling; `_random_samples` (N, C, 3).

    >>> import eagergrad as torch
    >>> torch.nn.FractionalMaxPool3d(2, output_ratio=0.5)(torch.ones(2, 5, 5, 5)).shape
    torch.Size([2, 2, 2, 2])
    """
    _n = 3

    def forward(self, input):
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)
